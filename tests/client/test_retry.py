"""Retries on the client models: concurrent (sent back to the broker) and orderly (retried in place)."""

import pytest

from rmqlib.client.retry import concurrent_retry_timeline, orderly_retry_timeline


def test_concurrent_retries_end_in_the_dead_letter_queue_after_sixteen():
    timeline = concurrent_retry_timeline("G")
    assert len(timeline) == 18 and timeline[-1].topic == "%DLQ%G"
    assert concurrent_retry_timeline("G", max_reconsume_times=2)[-1].number == 3


def test_orderly_retries_in_place_every_second_and_by_default_never_stops():
    forever = orderly_retry_timeline(limit=30)
    assert len(forever) == 30 and all(a.topic == "TopicTest" for a in forever)
    assert [a.at_ms for a in forever[:4]] == [0, 1_000, 2_000, 3_000]


def test_orderly_with_a_limit_sends_the_message_to_the_dead_letter_queue():
    timeline = orderly_retry_timeline("G", max_reconsume_times=3)
    assert [a.topic for a in timeline] == ["TopicTest"] * 4 + ["%DLQ%G"] and timeline[-1].at_ms == 3_000


def test_the_suspend_time_is_clamped_like_javas():
    assert orderly_retry_timeline(max_reconsume_times=1, suspend_current_queue_time_millis=1)[1].at_ms == 10
    assert orderly_retry_timeline(max_reconsume_times=1, suspend_current_queue_time_millis=60_000)[1].at_ms == 30_000


def test_limit_is_checked():
    with pytest.raises(ValueError, match="limit"):
        orderly_retry_timeline(limit=0)

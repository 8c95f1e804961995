"""CONSUMER_SEND_MSG_BACK: the retry topic after level 3 + reconsumeTimes, then the dead-letter queue."""

import pytest

from rmqlib.broker.send_back import (
    DELAY_LEVEL_MILLIS,
    MAX_DELAY_LEVEL,
    consumer_send_msg_back,
    delay_level_millis,
    retry_timeline,
)


def test_the_delay_levels_are_the_stores_eighteen():
    assert MAX_DELAY_LEVEL == 18 and DELAY_LEVEL_MILLIS[0] == 1_000 and DELAY_LEVEL_MILLIS[-1] == 2 * 3_600_000
    assert delay_level_millis(3) == 10_000 and delay_level_millis(25) == delay_level_millis(18)  # capped


def test_a_failed_message_goes_to_the_retry_topic_one_level_later_each_time():
    first, second = consumer_send_msg_back("G", 0), consumer_send_msg_back("G", 1)
    assert first == ("%RETRY%G", 1, 3, 10_000) and second == ("%RETRY%G", 2, 4, 30_000)
    assert consumer_send_msg_back("G", 0, delay_level=1).delay_ms == 1_000  # the listener may choose the level


def test_after_max_reconsume_times_it_goes_to_the_dead_letter_queue():
    assert not consumer_send_msg_back("G", 15).dead and consumer_send_msg_back("G", 16).dead
    assert consumer_send_msg_back("G", 16).topic == "%DLQ%G"
    assert consumer_send_msg_back("G", 0, delay_level=-1).dead  # a negative level: straight to the DLQ
    assert not consumer_send_msg_back("G", 16, max_reconsume_times=17).dead


def test_sixteen_retries_take_four_hours_and_three_quarters():
    timeline = retry_timeline("G")
    assert [a.number for a in timeline] == list(range(18)) and timeline[-1].topic == "%DLQ%G"
    assert all(a.topic == "%RETRY%G" for a in timeline[1:-1])
    assert timeline[-1].at_ms == sum(delay_level_millis(level) for level in range(3, 19)) == 17_140_000


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(reconsume_times=-1), ValueError),
        (dict(reconsume_times=1.0), TypeError),
        (dict(consumer_group=""), ValueError),
        (dict(delay_level=True), TypeError),
    ],
)
def test_bad_arguments_are_named(kwargs, error):
    args = dict(consumer_group="G", reconsume_times=0) | kwargs
    with pytest.raises(error, match=next(iter(kwargs))):
        consumer_send_msg_back(**args)

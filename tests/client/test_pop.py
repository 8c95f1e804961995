"""The Pop consumer's client side: PopProcessQueue and PopRequest."""

import pytest

from rmqlib.client import PopProcessQueue, PopRequest
from rmqlib.model import MessageQueue


def test_pop_process_queue_counts_and_expires_after_120s():
    pq = PopProcessQueue(now_ms=0)
    pq.inc_found_msg(3)
    assert pq.ack() == 3 and pq.get_wai_ack_msg_count() == 2
    pq.dec_found_msg(-2)
    assert pq.get_wai_ack_msg_count() == 0
    assert not pq.is_pull_expired(120_000) and pq.is_pull_expired(120_001)


def test_pop_requests_are_equal_by_topic_group_and_queue_not_by_process_queue():
    mq = MessageQueue("T", "broker-a", -1)
    a, b = PopRequest("T", "G", mq, PopProcessQueue(0)), PopRequest("T", "G", mq, PopProcessQueue(5))
    assert a == b and hash(a) == hash(b)
    assert a != PopRequest("T", "G2", mq, PopProcessQueue(0))
    assert a != PopRequest("T", "G", MessageQueue("T", "broker-a", 0), PopProcessQueue(0))


@pytest.mark.parametrize(
    "field, value", [("topic", 3), ("message_queue", "T@0"), ("init_mode", 2), ("pop_process_queue", None)]
)
def test_pop_request_refuses_bad_fields_by_name(field, value):
    args = dict(
        topic="T",
        consumer_group="G",
        message_queue=MessageQueue("T", "b", 0),
        pop_process_queue=PopProcessQueue(0),
        init_mode=1,
    )
    args[field] = value
    with pytest.raises((TypeError, ValueError), match=field):
        PopRequest(**args)

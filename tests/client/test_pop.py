"""The Pop consumer's client side: PopProcessQueue, PopRequest, and what the client keeps of a pop's answer."""

import random

import pytest

from rmqlib.broker import BrokerConfig, MessageStore, PopMessageProcessor
from rmqlib.client import PopProcessQueue, PopRequest, process_pop_result
from rmqlib.model import MessageQueue
from rmqlib.protocol import SubscriptionData


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


def popped(tags, reconsume_times=0):
    """What one pop with ``*`` answers for messages tagged ``tags`` in order (None: untagged)."""
    store = MessageStore(BrokerConfig())
    store.create_topic("T", 1)
    for tag in tags:
        store.put_message("T", 0, now_ms=0, tags=tag, reconsume_times=reconsume_times)
    store.reput(0)
    return PopMessageProcessor(store, rng=random.Random(0)).pop("G", "T", 0, 32, 60_000, now_ms=1).messages


def test_a_pop_answer_keeps_the_tags_its_subscription_lists_and_drops_the_rest_untagged_included():
    answer = popped(["TagA", "TagB", None, "TagC", "TagA"])
    kept, dropped = process_pop_result(answer, SubscriptionData("T", "TagA || TagC"))
    assert [m.message.tags for m in kept] == ["TagA", "TagC", "TagA"]
    assert [m.message.tags for m in dropped] == ["TagB", None]
    assert sorted(kept + dropped, key=lambda m: m.message.queue_offset) == answer  # nothing lost or made up


def test_a_pop_answer_keeps_every_message_under_a_star_subscription():
    answer = popped(["TagA", None, "TagB"])
    assert process_pop_result(answer, SubscriptionData("T", "*")) == (answer, [])


@pytest.mark.parametrize("max_reconsume_times, limit", [(-1, 16), (0, 0), (3, 3)])
def test_a_pop_answer_drops_messages_reconsumed_more_than_the_limit(max_reconsume_times, limit):
    at_limit, past_limit = popped(["TagA"], limit), popped(["TagA"], limit + 1)
    star = SubscriptionData("T", "*")
    assert process_pop_result(at_limit, star, max_reconsume_times) == (at_limit, [])
    assert process_pop_result(past_limit, star, max_reconsume_times) == ([], past_limit)


@pytest.mark.parametrize(
    "args, name",
    [
        (([object()], SubscriptionData("T", "*")), "popped"),
        (([], "TagA"), "subscription"),
        (([], SubscriptionData("T", "*"), -2), "max_reconsume_times"),
    ],
)
def test_process_pop_result_refuses_bad_arguments_by_name(args, name):
    with pytest.raises((TypeError, ValueError), match=name):
        process_pop_result(*args)

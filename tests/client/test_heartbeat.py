"""The client's second-way heartbeat (useHeartbeatV2): its fingerprint, and when it sends the subscriptions."""

import pytest

from rmqlib.client import ConsumeFromWhere, ConsumeType, MessageModel, SubscriptionData
from rmqlib.client.api import ConsumerData
from rmqlib.client.heartbeat import HeartbeatV2State, heartbeat_fingerprint


def data(*subs, version=0, group="GID"):
    return [
        ConsumerData(
            group,
            ConsumeType.CONSUME_PASSIVELY,
            MessageModel.CLUSTERING,
            ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
            [SubscriptionData(topic, expression, version) for topic, expression in subs],
        )
    ]


def test_the_fingerprint_ignores_subscription_versions_and_order_but_not_topics_tags_or_group():
    base = heartbeat_fingerprint(data(("TopicTest", "*"), ("TopicOrders", "TagA")))
    assert base == heartbeat_fingerprint(data(("TopicOrders", "TagA"), ("TopicTest", "*"), version=123))
    others = [
        data(("TopicTest", "*")),
        data(("TopicTest", "*"), ("TopicOrders", "TagB")),
        data(("TopicTest", "*"), ("TopicOrders", "TagA"), group="GID2"),
    ]
    assert len({base, *map(heartbeat_fingerprint, others)}) == 4
    assert all(heartbeat_fingerprint(d) != 0 and -(2**31) <= heartbeat_fingerprint(d) < 2**31 for d in others)


def test_subscriptions_go_until_a_broker_that_supports_the_second_way_took_this_fingerprint():
    state = HeartbeatV2State()
    assert state.with_sub("a", 7)
    state.answered("a", 7, with_sub=True, support_v2=False, sub_change=False)  # an old broker: always with them
    assert state.with_sub("a", 7)
    state.answered("a", 7, with_sub=True, support_v2=True, sub_change=False)
    assert not state.with_sub("a", 7) and state.with_sub("a", 8) and state.with_sub("b", 7)


def test_a_sub_change_answer_or_a_rebalance_sends_them_again():
    state = HeartbeatV2State()
    state.answered("a", 7, with_sub=True, support_v2=True, sub_change=True)  # another member's fingerprint was last
    assert state.with_sub("a", 7)
    state.answered("a", 7, with_sub=True, support_v2=True, sub_change=False)
    state.answered("a", 7, with_sub=False, support_v2=True, sub_change=True)  # a bare one, and the group changed
    assert state.with_sub("a", 7)
    state.answered("a", 7, with_sub=True, support_v2=True, sub_change=False)
    state.reset()  # the queues changed: sendHeartbeatToAllBrokerV2(isRebalance=true)
    assert state.with_sub("a", 7) and state.broker_support_v2 == {"a"}


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(TypeError, match="consumers"):
        heartbeat_fingerprint(["GID"])
    with pytest.raises(TypeError, match="fingerprint"):
        HeartbeatV2State().with_sub("a", "7")
    with pytest.raises(TypeError, match="sub_change"):
        HeartbeatV2State().answered("a", 7, True, True, None)

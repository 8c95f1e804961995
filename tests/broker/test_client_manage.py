"""ClientManageProcessor: the consumer part of a heartbeat, the first way and the second (useHeartbeatV2)."""

import pytest

from rmqlib.broker import BrokerConfig, ClientChannelInfo, ConsumerManager, SubscriptionData
from rmqlib.broker.client_manage import ClientManageProcessor

G = "GID"
PUSH, CLUSTER, LAST = "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET"


def beat(processor, channel, topics, now, fingerprint=0, without_sub=False):
    subs = [SubscriptionData(t, "*", now) for t in topics]
    info = ClientChannelInfo(channel, f"cid-{channel}")
    return processor.heart_beat(G, info, PUSH, CLUSTER, LAST, subs, now, fingerprint, without_sub=without_sub)


def topics(processor):
    return set(processor.consumer_manager.get_consumer_group_info(G).subscription_table)


@pytest.fixture
def processor():
    return ClientManageProcessor(ConsumerManager([], BrokerConfig()))


def test_the_first_way_always_answers_sub_change_and_stores_no_fingerprint(processor):
    for now in (0, 30_000):
        answer = beat(processor, "ch1", ["TopicTest"], now)
        assert answer.support_v2 and answer.sub_change
    assert processor.consumer_group_heartbeat_table == {G: 0}
    assert beat(processor, "ch1", ["TopicTest"], 60_000).changed is False  # nothing new on the channel


def test_the_second_way_reports_a_change_only_when_the_groups_last_fingerprint_differs(processor):
    assert beat(processor, "ch1", ["TopicTest"], 0, fingerprint=7).sub_change is False  # the group's first
    assert beat(processor, "ch2", ["TopicTest"], 1, fingerprint=7).sub_change is False
    assert beat(processor, "ch2", ["TopicOrders"], 2, fingerprint=9).sub_change is True  # one per group, any member
    assert beat(processor, "ch1", ["TopicTest"], 3, fingerprint=7).sub_change is True
    assert processor.consumer_group_heartbeat_table == {G: 7}
    # after a first-way heartbeat (stored as 0), any second-way fingerprint is a change
    beat(processor, "ch1", ["TopicTest"], 4)
    assert beat(processor, "ch1", ["TopicTest"], 5, fingerprint=7).sub_change is True


def test_a_heartbeat_without_subscriptions_registers_its_channel_and_keeps_the_groups_topics(processor):
    beat(processor, "ch1", ["TopicTest"], 0, fingerprint=7)
    answer = beat(processor, "ch2", ["TopicOrders"], 1, fingerprint=9, without_sub=True)
    assert answer.changed and answer.sub_change  # a new channel; the group's fingerprint was 7
    assert topics(processor) == {"TopicTest"}  # a full heartbeat would have replaced it with TopicOrders
    assert processor.consumer_manager.get_consumer_id_list(G) == ["cid-ch1", "cid-ch2"]
    assert beat(processor, "ch2", ["TopicOrders"], 2, fingerprint=9).changed  # with them: the topics swap
    assert topics(processor) == {"TopicOrders"}


def test_bad_heartbeats_are_refused_naming_the_argument(processor):
    with pytest.raises(ValueError, match="without_sub"):
        beat(processor, "ch1", ["TopicTest"], 0, without_sub=True)
    with pytest.raises(ValueError, match="heartbeat_fingerprint"):
        beat(processor, "ch1", ["TopicTest"], 0, fingerprint=2**31)
    with pytest.raises(TypeError, match="without_sub"):
        beat(processor, "ch1", ["TopicTest"], 0, fingerprint=1, without_sub=1)
    with pytest.raises(TypeError, match="consumer_manager"):
        ClientManageProcessor(object())

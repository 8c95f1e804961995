"""The lite pull consumer's rebalance (RebalanceLitePullImpl) and its subscribe/assign modes."""

import pytest

from rmqlib.allocation import allocate_group, make_cids, make_queues
from rmqlib.broker import ClientChannelInfo, ConsumerManager
from rmqlib.client import InMemoryClientBrokerAPI, RebalanceImpl
from rmqlib.client.config import PushConsumerConfig
from rmqlib.client.lite_pull import SUBSCRIPTION_CONFLICT, DefaultLitePullConsumer
from rmqlib.client.offset_store import ReadOffsetType
from rmqlib.protocol import ConsumeFromWhere, ConsumeType
from rmqlib.strategies import AllocateMessageQueueAveragely

QUEUES = make_queues("TopicTest", ["broker-a", "broker-b"], 4)


def _subscribed(api, cid):
    consumer = DefaultLitePullConsumer("GID_lite", cid, api)
    consumer.subscribe("TopicTest")
    consumer.update_topic_subscribe_info("TopicTest", QUEUES)
    return consumer


def test_subscribe_mode_shares_the_queues_exactly_as_the_strategy_says():
    api = InMemoryClientBrokerAPI()
    cids = make_cids(3)
    api.consumer_ids["GID_lite"] = cids
    members = {cid: _subscribed(api, cid) for cid in cids}
    for member in members.values():
        assert member.do_rebalance(0)
    expected = allocate_group(AllocateMessageQueueAveragely(), QUEUES, cids)
    assert {cid: m.assignment() for cid, m in members.items()} == {cid: set(q) for cid, q in expected.items()}
    # no PullRequest is dispatched (a push consumer's would wait 500 ms in its PullMessageService)
    assert all(
        not m.rebalance_impl.pull_service.pending and not len(m.rebalance_impl.pull_service) for m in members.values()
    )
    push = RebalanceImpl("GID_lite", cids[0], api, AllocateMessageQueueAveragely())
    push.subscribe("TopicTest")
    push.update_topic_subscribe_info("TopicTest", QUEUES)
    push.do_rebalance(False, 0)
    assert push.pull_service.pending


def test_subscribe_and_assign_are_mutually_exclusive_and_assign_needs_queues():
    consumer = DefaultLitePullConsumer("GID_lite", "c1", InMemoryClientBrokerAPI())
    consumer.subscribe("TopicTest")
    with pytest.raises(ValueError, match=SUBSCRIPTION_CONFLICT):
        consumer.assign(QUEUES[:1])
    with pytest.raises(ValueError, match="at least one queue"):
        DefaultLitePullConsumer("GID_lite", "c2", InMemoryClientBrokerAPI()).assign([])


def test_assign_mode_reads_what_it_was_given_and_no_round_changes_it():
    api = InMemoryClientBrokerAPI()
    api.consumer_ids["GID_lite"] = ["c1", "c2"]
    consumer = DefaultLitePullConsumer("GID_lite", "c1", api)
    consumer.assign(QUEUES[:3])
    consumer.do_rebalance(0)
    assert consumer.assignment() == set(QUEUES[:3])
    data = consumer.consumer_data()
    assert data.consume_type is ConsumeType.CONSUME_ACTIVELY and data.subscription_data_set == []


def test_no_retry_topic_and_an_active_consume_type_in_subscribe_mode():
    consumer = _subscribed(InMemoryClientBrokerAPI(), "c1")
    assert sorted(consumer.rebalance_impl.subscription_inner) == ["TopicTest"]
    assert consumer.consumer_data().consume_type is ConsumeType.CONSUME_ACTIVELY


def test_an_assign_mode_member_of_a_subscribed_group_gets_a_share_it_never_reads():
    registry, api = ConsumerManager(), InMemoryClientBrokerAPI()
    subscribed = [_subscribed(api, cid) for cid in ("10.0.0.1@1", "10.0.0.2@2")]
    assigner = DefaultLitePullConsumer("GID_lite", "10.0.0.3@3", api)
    assigner.assign(QUEUES[:2])
    for consumer in subscribed + [assigner]:  # every heartbeat reaches the broker's registry
        data, cid = consumer.consumer_data(), consumer.rebalance_impl.client_id
        registry.register_consumer(
            "GID_lite",
            ClientChannelInfo(f"{cid}-channel", cid),
            data.consume_type,
            data.message_model,
            data.consume_from_where,
            data.subscription_data_set,
            True,
            0,
        )
    api.consumer_ids["GID_lite"] = registry.get_consumer_id_list("GID_lite")
    assert len(api.consumer_ids["GID_lite"]) == 3
    for consumer in subscribed:
        consumer.do_rebalance(0)
    read = set().union(*(c.assignment() for c in subscribed)) | assigner.assignment()
    share = allocate_group(AllocateMessageQueueAveragely(), QUEUES, api.consumer_ids["GID_lite"])["10.0.0.3@3"]
    assert set(QUEUES) - read == set(share) - assigner.assignment() != set()


def test_a_new_queue_starts_from_the_offset_in_memory_first():
    api = InMemoryClientBrokerAPI()
    mq = QUEUES[0]
    api.offsets[("GID_lite", mq)] = 10
    lite = DefaultLitePullConsumer("GID_lite", "c1", api).rebalance_impl
    push = RebalanceImpl("GID_lite", "c1", api, AllocateMessageQueueAveragely())
    for impl in (lite, push):
        impl.offset_store.update_offset(mq, 42, False)
    assert lite.compute_pull_from_where(mq) == 42  # MEMORY_FIRST_THEN_STORE
    assert push.compute_pull_from_where(mq) == 10  # READ_FROM_STORE
    assert lite.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE) == 10


def test_giving_a_queue_up_persists_its_offset_and_never_waits():
    api = InMemoryClientBrokerAPI()
    api.consumer_ids["GID_lite"] = ["c1"]
    consumer = _subscribed(api, "c1")
    consumer.do_rebalance(0)
    mq = QUEUES[0]
    consumer.rebalance_impl.offset_store.update_offset(mq, 7, False)
    consumer.update_topic_subscribe_info("TopicTest", QUEUES[1:])
    consumer.do_rebalance(1_000)
    assert mq not in consumer.assignment() and api.offsets[("GID_lite", mq)] == 7


def test_its_heartbeat_says_the_last_offset_and_its_rounds_stay_on_the_client_whatever_the_config():
    """DefaultLitePullConsumerImpl#consumeFromWhere always answers CONSUME_FROM_LAST_OFFSET, and the lite pull
    consumer keeps RebalanceImpl's clientRebalance (always true), not the push consumer's setting."""
    config = PushConsumerConfig(consume_from_where="CONSUME_FROM_FIRST_OFFSET", client_rebalance=False)
    consumer = DefaultLitePullConsumer("GID_lite", "c1", InMemoryClientBrokerAPI(), config=config)
    assert consumer.consumer_data().consume_from_where is ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    assert consumer.rebalance_impl.client_rebalance("TopicTest") is True
    assert consumer.rebalance_impl.config.consume_from_where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET


@pytest.mark.parametrize(
    "deprecated", ["CONSUME_FROM_MIN_OFFSET", "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"]
)
def test_a_deprecated_start_position_is_refused_by_name(deprecated):
    """DefaultLitePullConsumer#setConsumeFromWhere takes only the first offset, the last offset or a timestamp."""
    with pytest.raises(ValueError, match="consume_from_where"):
        DefaultLitePullConsumer(
            "GID_lite", "c1", InMemoryClientBrokerAPI(), config=PushConsumerConfig(consume_from_where=deprecated)
        )

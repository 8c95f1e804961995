"""RebalanceImpl (push): what RebalancePushImplTest pins down, plus scenarios."""

import pytest

from rmqlib.client import (
    ConsumeFromWhere,
    MessageModel,
    MQClientError,
    PushConsumerConfig,
    RebalanceImpl,
    retry_topic,
)
from rmqlib.client.rebalance import REBALANCE_REQUESTS_KEPT, UNLOCK_DELAY_TIME_MILLS
from rmqlib.model import MessageQueue

MQ = MessageQueue("topic1", "broker1", 0)
RETRY_MQ = MessageQueue("%RETRY%group", "broker1", 0)


def owned(impl, topic="TopicA"):
    return sorted(q.queue_id for q in impl.get_working_message_queue(topic))


# ------------------------------------------------------- computePullFromWhere
@pytest.mark.parametrize("cfw", ["CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP"])
def test_stored_offset_wins_for_every_consume_from_where(consumer, api, cfw):
    impl = consumer(config=PushConsumerConfig(consume_from_where=cfw))
    api.offsets[("G", MQ)] = 0
    api.max_offsets[MQ] = 500
    assert impl.compute_pull_from_where_with_exception(MQ) == 0


def test_last_offset_without_stored_offset_uses_max_offset_but_zero_on_retry_topic(consumer, api):
    impl = consumer()
    api.max_offsets[MQ] = 12345
    api.max_offsets[RETRY_MQ] = 777
    assert impl.compute_pull_from_where_with_exception(MQ) == 12345
    assert impl.compute_pull_from_where_with_exception(RETRY_MQ) == 0


@pytest.mark.parametrize(
    "cfw",
    ["CONSUME_FROM_MIN_OFFSET", "CONSUME_FROM_MAX_OFFSET", "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"],
)
def test_deprecated_consume_from_values_behave_like_last_offset(consumer, api, cfw):
    impl = consumer(config=PushConsumerConfig(consume_from_where=cfw))
    api.max_offsets[MQ] = 9
    assert impl.compute_pull_from_where_with_exception(MQ) == 9


def test_first_offset_without_stored_offset_starts_at_zero(consumer, api):
    impl = consumer(config=PushConsumerConfig(consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET))
    api.max_offsets[MQ] = 500
    assert impl.compute_pull_from_where_with_exception(MQ) == 0


def test_timestamp_searches_by_timestamp_but_retry_topic_uses_max_offset(consumer, api):
    impl = consumer(config=PushConsumerConfig(consume_from_where="CONSUME_FROM_TIMESTAMP"), now_ms=40 * 60 * 1000)
    api.timestamp_offsets[(MQ, 10 * 60 * 1000)] = 12345  # creation time minus 30 min
    api.max_offsets[RETRY_MQ] = 23456
    assert impl.compute_pull_from_where_with_exception(MQ) == 12345
    assert impl.compute_pull_from_where_with_exception(RETRY_MQ) == 23456


def test_failed_offset_query_raises_and_plain_variant_returns_minus_one(consumer, api):
    impl = consumer()
    api.fail.add("query_consumer_offset")
    with pytest.raises(MQClientError):
        impl.compute_pull_from_where_with_exception(MQ)
    assert impl.compute_pull_from_where(MQ) == -1


def test_failed_max_offset_query_raises(consumer, api):
    impl = consumer()
    api.fail.add("get_max_offset")
    with pytest.raises(MQClientError):
        impl.compute_pull_from_where_with_exception(MQ)


# ------------------------------------------------------- messageQueueChanged
def test_message_queue_changed_splits_topic_count_threshold_over_queues(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:2])
    impl.config.pull_threshold_for_queue = 1024
    impl.do_rebalance(False, 0)
    impl.message_queue_changed("TopicA", set(mqs[:2]), set(mqs[:2]), 0)
    assert impl.config.pull_threshold_for_queue == 1024
    impl.config.pull_threshold_for_topic = 1024
    impl.message_queue_changed("TopicA", set(mqs[:2]), set(mqs[:2]), 0)
    assert impl.config.pull_threshold_for_queue == 512
    impl.update_topic_subscribe_info("TopicA", mqs[:3])
    impl.do_rebalance(False, 1)
    assert impl.config.pull_threshold_for_queue == 341


def test_message_queue_changed_splits_topic_size_threshold_over_queues(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:2], config=PushConsumerConfig(pull_threshold_size_for_topic=1024))
    impl.do_rebalance(False, 0)
    assert impl.config.pull_threshold_size_for_queue == 512
    impl.update_topic_subscribe_info("TopicA", mqs[:3])
    impl.do_rebalance(False, 1)
    assert impl.config.pull_threshold_size_for_queue == 341


def test_message_queue_changed_bumps_sub_version_heartbeats_and_calls_listener(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    seen = []
    impl = consumer("c1", mqs)
    impl.message_queue_listener = lambda t, a, d: seen.append((t, len(a), len(d)))
    impl.do_rebalance(False, 5000)
    assert impl.subscription_inner["TopicA"].sub_version == 5000
    assert api.heartbeats and api.heartbeats[-1][0] == 5000
    sent = {s.topic: s.sub_version for s in api.heartbeats[-1][2][0].subscription_data_set}
    assert sent["TopicA"] == 5000
    assert seen == [("TopicA", 4, 4)]
    assert api.rebalance_heartbeats == [5000]  # sendHeartbeatToAllBrokerWithLockV2(true)
    impl.send_heartbeat(6000)  # the periodic one is not
    assert api.rebalance_heartbeats == [5000] and api.heartbeats[-1][0] == 6000


def test_unchanged_rebalance_does_not_notify(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.do_rebalance(False, 0)
    n = len(api.heartbeats)
    assert impl.do_rebalance(False, 100)
    assert len(api.heartbeats) == n


# ------------------------------------------------------- allocation & tables
def test_clustering_rebalance_takes_own_share_and_dispatches_pulls_500ms_later(consumer, api, mqs):
    api.consumer_ids["G"] = ["c2", "c1"]  # sorted to c1, c2
    impl = consumer("c1", mqs)
    assert impl.do_rebalance(False, 1000) is True
    assert owned(impl) == [0, 1]
    assert all(pq.locked for pq in impl.process_queue_table.values())
    assert [t for t, _ in impl.pull_service.pending] == [1500, 1500]
    assert {r.message_queue for _, r in impl.pull_service.pending} == set(mqs[:2])


def test_membership_change_drops_and_creates_the_right_queues_and_persists_offsets(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.do_rebalance(False, 0)
    assert owned(impl) == [0, 1, 2, 3]
    for mq in mqs:
        impl.offset_store.update_offset(mq, 10 + mq.queue_id, True)
    old = dict(impl.process_queue_table)
    api.consumer_ids["G"] = ["c1", "c0"]  # c0 sorts first and takes 0, 1
    assert impl.do_rebalance(False, 1000)
    assert owned(impl) == [2, 3]
    assert old[mqs[0]].dropped and old[mqs[1]].dropped
    assert not old[mqs[2]].dropped and impl.process_queue_table[mqs[2]] is old[mqs[2]]
    assert api.offsets == {("G", mqs[0]): 10, ("G", mqs[1]): 11}
    assert impl.offset_store.clone_offset_table("TopicA").keys() == {mqs[2], mqs[3]}
    # c0 leaves: queues come back, starting from the persisted offsets
    api.consumer_ids["G"] = ["c1"]
    impl.do_rebalance(False, 2000)
    starts = {r.message_queue.queue_id: r.next_offset for t, r in impl.pull_service.pending if t == 2500}
    assert starts == {0: 10, 1: 11}


def test_client_not_in_consumer_list_gets_nothing(consumer, api, mqs):
    api.consumer_ids["G"] = ["other"]
    impl = consumer("c1", mqs)
    assert impl.do_rebalance(False, 0)
    assert owned(impl) == []


def test_missing_consumer_list_skips_topic_and_keeps_queues(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.do_rebalance(False, 0)
    api.fail.add("find_consumer_id_list")
    assert impl.do_rebalance(False, 100)
    assert owned(impl) == [0, 1, 2, 3]


def test_strategy_returning_none_means_empty_assignment(consumer, api, mqs, fixed_strategy):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs, strategy=fixed_strategy(None))
    assert impl.do_rebalance(False, 0)
    assert owned(impl) == []


def test_strategy_exception_makes_round_unbalanced(consumer, api, mqs, broken_strategy):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs, strategy=broken_strategy)
    assert impl.do_rebalance(False, 0) is False


def test_strategy_gets_java_sorted_queues_and_cids(consumer, api):
    seen = {}

    class Spy:
        name = "SPY"

        def allocate(self, g, cid, mq_all, cid_all):
            seen["mq"], seen["cid"] = mq_all, cid_all
            return []

    mqs = [MessageQueue("TopicA", b, q) for b in ("b2", "b1") for q in (1, 0)]
    api.consumer_ids["G"] = ["c\ue000", "c\U0001f600", "c1"]
    impl = consumer("c1", mqs, strategy=Spy())
    impl.do_rebalance(False, 0)
    assert [(m.broker_name, m.queue_id) for m in seen["mq"]] == [("b1", 0), ("b1", 1), ("b2", 0), ("b2", 1)]
    assert seen["cid"] == ["c1", "c\U0001f600", "c\ue000"]  # UTF-16 order


def test_unknown_topic_route_reports_changed_with_empty_sets(consumer, api):
    api.consumer_ids["G"] = ["c1"]
    calls = []
    impl = consumer("c1", subscribe=False)
    impl.subscribe("Ghost")
    impl.message_queue_listener = lambda t, a, d: calls.append(t)
    assert impl.do_rebalance(False, 0)
    assert calls == ["Ghost"]  # the retry topic without a route is silent


def test_retry_topic_is_subscribed_in_clustering_and_rebalanced_like_any_topic(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1", "c2"]
    impl = consumer("c1", mqs)
    rt = retry_topic("G")
    assert rt in impl.subscription_inner
    retry_mqs = [MessageQueue(rt, "broker-a", 0)]
    impl.update_topic_subscribe_info(rt, retry_mqs)
    impl.do_rebalance(False, 0)
    assert impl.get_working_message_queue(rt) == set(retry_mqs)
    other = consumer("c2", mqs)
    other.update_topic_subscribe_info(rt, retry_mqs)
    other.do_rebalance(False, 0)
    assert other.get_working_message_queue(rt) == set()  # one retry queue: only the first cid


def test_retry_topic_errors_do_not_make_round_unbalanced(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.update_topic_subscribe_info(retry_topic("G"), [MessageQueue(retry_topic("G"), "b", 0)])
    real = api.find_consumer_id_list
    failing = set()

    def flaky(topic, group):
        if topic in failing:
            raise ConnectionError("broker unreachable")
        return real(topic, group)

    api.find_consumer_id_list = flaky
    failing.add(retry_topic("G"))
    assert impl.do_rebalance(False, 0) is True
    failing.add("TopicA")
    assert impl.do_rebalance(False, 1000) is False


def test_strategy_exception_on_retry_topic_still_counts_as_unbalanced(consumer, api, mqs):
    """Java catches allocate() errors inside rebalanceByTopic and returns false there,
    so the retry-topic exemption of doRebalance does not apply."""
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.update_topic_subscribe_info(retry_topic("G"), [MessageQueue(retry_topic("G"), "b", 0)])

    class BreaksOnRetry:
        name = "X"

        def allocate(self, g, cid, mq_all, cid_all):
            if mq_all[0].topic.startswith("%RETRY%"):
                raise RuntimeError("boom")
            return list(mq_all)

    impl.allocate_message_queue_strategy = BreaksOnRetry()
    assert impl.do_rebalance(False, 0) is False


def test_broadcasting_takes_every_queue_without_locking_even_orderly(consumer, api, mqs):
    cfg = PushConsumerConfig(message_model=MessageModel.BROADCASTING)
    impl = consumer("c1", mqs, config=cfg, orderly=True)
    assert retry_topic("G") not in impl.subscription_inner
    assert impl.do_rebalance(True, 0)
    assert owned(impl) == [0, 1, 2, 3]
    assert api.lock_calls == []


def test_truncate_drops_queues_of_unsubscribed_topics_without_persisting(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.do_rebalance(False, 0)
    impl.offset_store.update_offset(mqs[0], 5, True)
    pqs = list(impl.process_queue_table.values())
    impl.unsubscribe("TopicA")
    impl.do_rebalance(False, 100)
    assert impl.process_queue_table == {}
    assert all(pq.dropped for pq in pqs)
    assert api.offsets == {}


def test_new_queue_with_failed_start_offset_is_skipped_and_retried(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1])
    api.fail.add("get_max_offset")
    assert impl.do_rebalance(False, 0) is False
    assert impl.process_queue_table == {}
    api.fail.clear()
    assert impl.do_rebalance(False, 1000) is True
    assert owned(impl) == [0]


def test_pull_expired_queue_is_recreated_in_the_same_pass(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1])
    impl.do_rebalance(False, 0)
    old = impl.process_queue_table[mqs[0]]
    impl.offset_store.update_offset(mqs[0], 33, True)
    assert impl.do_rebalance(False, 120_000)  # idle exactly 120 s: not expired
    assert impl.process_queue_table[mqs[0]] is old
    assert impl.do_rebalance(False, 120_001)
    new = impl.process_queue_table[mqs[0]]
    assert new is not old and old.dropped and not new.dropped
    assert api.offsets[("G", mqs[0])] == 33
    assert impl.pull_service.pending[-1] == (120_501, impl.pull_service.pending[-1][1])
    assert impl.pull_service.pending[-1][1].next_offset == 33


# ------------------------------------------------------------------ orderly
def test_orderly_lock_failure_skips_queue_and_rebalances_500ms_later(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    api.locks[("G", mqs[1])] = ("someone-else", 0)
    impl = consumer("c1", mqs[:2], orderly=True)
    assert impl.do_rebalance(True, 10_000) is False
    assert owned(impl) == [0]
    assert list(impl.rebalance_requests) == [(10_000, 500)]
    assert api.locks[("G", mqs[0])] == ("c1", 10_000)
    # the other holder's lock expires on the broker after 60 s
    assert impl.do_rebalance(True, 60_001) is True
    assert owned(impl) == [0, 1]


def test_orderly_lock_rpc_error_counts_as_lock_failure(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    api.fail.add("lock_batch_mq")
    impl = consumer("c1", mqs[:1], orderly=True)
    assert impl.do_rebalance(True, 0) is False
    assert impl.process_queue_table == {}


def test_orderly_queue_being_consumed_is_not_given_away_until_unlock_delay(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1], orderly=True)
    impl.do_rebalance(True, 0)
    pq = impl.process_queue_table[mqs[0]]
    impl.offset_store.update_offset(mqs[0], 7, False)
    pq.acquire_consume_lock()  # a listener call is running
    api.consumer_ids["G"] = ["c0", "c1"]  # c0 now owns the only queue
    # Java reports "balanced" here: the target is empty and a dropped queue is not "working".
    assert impl.do_rebalance(True, 1000) is True
    assert mqs[0] in impl.process_queue_table and pq.dropped
    assert impl.consume_lock_waits == {mqs[0]: (pq, 1500)}  # the round waits up to 500 ms for the listener
    assert api.offsets[("G", mqs[0])] == 7  # persisted before trying
    assert ("G", mqs[0]) in api.locks
    assert impl.consume_lock_released(mqs[0], pq, 1200) is False  # the call has not returned yet
    impl.do_rebalance(True, UNLOCK_DELAY_TIME_MILLS)  # not yet "> 20 s" since the last lock
    assert pq.try_unlock_times == 1 and mqs[0] in impl.process_queue_table  # the first wait ran out
    impl.do_rebalance(True, UNLOCK_DELAY_TIME_MILLS + 1)  # forced
    assert pq.try_unlock_times == 2 and impl.process_queue_table == {} and impl.consume_lock_waits == {}
    assert not pq.locked and ("G", mqs[0]) not in api.locks


def test_orderly_force_unlock_waits_for_the_consumers_own_unlock_delay(consumer, api, mqs):
    """-Drocketmq.client.unlockDelayTimeMills: a consumer started with 45 s keeps a dropped queue whose listener
    call runs for 45 s after its last lock, not 20 s."""
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1], orderly=True, unlock_delay_time_mills=45_000)
    impl.do_rebalance(True, 0)
    pq = impl.process_queue_table[mqs[0]]
    pq.acquire_consume_lock()  # a listener call is running
    api.consumer_ids["G"] = ["c0", "c1"]  # c0 now owns the only queue
    impl.do_rebalance(True, UNLOCK_DELAY_TIME_MILLS + 1)
    impl.do_rebalance(True, 45_000)  # not yet "> 45 s" since the last lock
    assert mqs[0] in impl.process_queue_table and pq.locked
    impl.do_rebalance(True, 45_001)
    assert impl.process_queue_table == {} and not pq.locked and ("G", mqs[0]) not in api.locks


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_unlock_delay_must_be_a_non_negative_int(consumer, mqs, bad, error):
    with pytest.raises(error, match="unlock_delay_time_mills"):
        consumer("c1", mqs[:1], orderly=True, unlock_delay_time_mills=bad)


@pytest.mark.parametrize("returns_at, given_up", [(1500, True), (1501, False)])
def test_orderly_queue_is_given_up_when_its_listener_call_returns_within_the_rounds_wait(
    consumer, api, mqs, returns_at, given_up
):
    """tryRemoveOrderMessageQueue's tryLock(500 ms): a call that returns in time lets the round give the queue up
    then, with the offset the call committed; a later one leaves it dropped in the table."""
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1], orderly=True)
    impl.do_rebalance(True, 0)
    pq = impl.process_queue_table[mqs[0]]
    impl.offset_store.update_offset(mqs[0], 7, False)
    pq.acquire_consume_lock()
    api.consumer_ids["G"] = ["c0", "c1"]
    impl.do_rebalance(True, 1000)
    pq.release_consume_lock()  # the listener returns, and the consume request commits its batch
    impl.offset_store.update_offset(mqs[0], 8, False)
    assert impl.consume_lock_released(mqs[0], pq, returns_at) is given_up
    assert impl.consume_lock_waits == {}
    if given_up:
        assert impl.process_queue_table == {} and not pq.locked and ("G", mqs[0]) not in api.locks
        assert api.offsets[("G", mqs[0])] == 8 and pq.try_unlock_times == 0
    else:
        assert mqs[0] in impl.process_queue_table and ("G", mqs[0]) in api.locks and pq.try_unlock_times == 1


def test_orderly_idle_queue_is_unlocked_at_once(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:1], orderly=True)
    impl.do_rebalance(True, 0)
    api.consumer_ids["G"] = ["c0", "c1"]
    assert impl.do_rebalance(True, 1000)
    assert impl.process_queue_table == {}
    assert api.unlock_calls == [("broker-a", "c1", frozenset({mqs[0]}))]


def test_lock_all_renews_granted_and_unlocks_refused(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs[:2], orderly=True)
    impl.do_rebalance(True, 0)
    api.locks[("G", mqs[1])] = ("thief", 90_000)
    impl.lock_all(90_000)
    assert impl.process_queue_table[mqs[0]].last_lock_timestamp == 90_000
    assert impl.process_queue_table[mqs[0]].locked
    assert not impl.process_queue_table[mqs[1]].locked
    impl.unlock_all(True, 91_000)
    assert not impl.process_queue_table[mqs[0]].locked
    assert ("G", mqs[0]) not in api.locks


def test_rebalance_requests_keep_only_the_latest(consumer, mqs):
    """A member of a big group is woken once per join of every other member; the log keeps the latest few."""
    impl = consumer("c1", mqs)
    asked = REBALANCE_REQUESTS_KEPT + 10
    for k in range(asked):
        impl.rebalance_immediately(1_000 + k)
    impl.rebalance_later(500, 9_999)
    kept = list(impl.rebalance_requests)
    assert len(kept) == REBALANCE_REQUESTS_KEPT
    assert kept[-1] == (9_999, 500)
    assert kept[0] == (1_000 + asked + 1 - REBALANCE_REQUESTS_KEPT, 0)


def test_paused_consumer_reports_unbalanced_without_rebalancing(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", mqs)
    impl.paused = True
    assert impl.try_rebalance(0) is False
    assert impl.process_queue_table == {}


def test_constructor_rejects_bad_arguments(api, avg):
    with pytest.raises(ValueError, match="consumer_group"):
        RebalanceImpl("", "c1", api, avg)
    with pytest.raises(ValueError, match="client_id"):
        RebalanceImpl("G", "", api, avg)
    with pytest.raises(ValueError, match="strategy"):
        RebalanceImpl("G", "c1", api, object())


def test_route_for_other_topic_is_rejected(consumer):
    impl = consumer("c1")
    with pytest.raises(ValueError, match="mqs"):
        impl.update_topic_subscribe_info("TopicA", [MQ])

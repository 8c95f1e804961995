"""Consume-result handling and end-to-end offset scenarios."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlib.client import (
    ConsumeConcurrentlyStatus as CS,
)
from rmqlib.client import (
    ConsumeOrderlyStatus as OS,
)
from rmqlib.client import (
    Message,
    MessageModel,
    OffsetStore,
    ProcessQueue,
    ReadOffsetType,
    process_consume_result_concurrently,
    process_consume_result_orderly,
)
from rmqlib.model import MessageQueue

MQ = MessageQueue("T", "b", 0)


def batch(n, start=0):
    return [Message(topic="T", broker_name="b", queue_id=0, queue_offset=start + i, body_size=1) for i in range(n)]


def mem(store):
    return store.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY)


def test_offset_committed_after_concurrent_consumption_is_lowest_unacked(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(10, start=100)
    pq.put_message(msgs)
    # consume threads finish out of order; message 102 is slow
    for i in [0, 1, 3, 4, 5, 6, 7, 8, 9]:
        process_consume_result_concurrently(pq, MQ, [msgs[i]], CS.CONSUME_SUCCESS, offset_store=store)
    assert mem(store) == 102
    process_consume_result_concurrently(pq, MQ, [msgs[2]], CS.CONSUME_SUCCESS, offset_store=store)
    assert mem(store) == 110


def test_crash_before_persist_redelivers_from_persisted_offset(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(10)
    pq.put_message(msgs)
    process_consume_result_concurrently(pq, MQ, msgs[:4], CS.CONSUME_SUCCESS, offset_store=store)
    store.persist(MQ)
    process_consume_result_concurrently(pq, MQ, msgs[4:8], CS.CONSUME_SUCCESS, offset_store=store)
    assert mem(store) == 8
    restarted = OffsetStore("G", api)
    assert restarted.read_offset(MQ, ReadOffsetType.READ_FROM_STORE) == 4  # 4..7 come again


def test_result_for_dropped_process_queue_is_discarded(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(3)
    pq.put_message(msgs)
    pq.dropped = True
    out = process_consume_result_concurrently(pq, MQ, msgs, CS.CONSUME_SUCCESS, offset_store=store)
    assert not out.processed and pq.msg_count == 3 and mem(store) == -1


def test_reconsume_later_sends_back_and_still_acknowledges_in_clustering(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(3)
    pq.put_message(msgs)
    out = process_consume_result_concurrently(pq, MQ, msgs, CS.RECONSUME_LATER, offset_store=store)
    assert out.sent_back == msgs and mem(store) == 3


def test_failed_send_back_keeps_message_and_resubmits_it(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(3)
    pq.put_message(msgs)
    out = process_consume_result_concurrently(
        pq, MQ, msgs, CS.RECONSUME_LATER, offset_store=store, send_back=lambda m: m.queue_offset != 1
    )
    assert out.resubmit == [msgs[1]] and msgs[1].reconsume_times == 1
    assert out.resubmit_delay_ms == 5000
    assert pq.msg_tree.keys() == [1] and mem(store) == 1


def test_ack_index_acknowledges_prefix_only(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(4)
    pq.put_message(msgs)
    out = process_consume_result_concurrently(pq, MQ, msgs, CS.CONSUME_SUCCESS, offset_store=store, ack_index=1)
    assert out.sent_back == msgs[2:]


def test_broadcasting_drops_failures_without_send_back(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    msgs = batch(2)
    pq.put_message(msgs)
    out = process_consume_result_concurrently(
        pq, MQ, msgs, CS.RECONSUME_LATER, offset_store=store, message_model=MessageModel.BROADCASTING
    )
    assert out.sent_back == [] and mem(store) == 2


def test_orderly_success_commits_with_plain_update(api):
    store = OffsetStore("G", api)
    store.update_offset(MQ, 50, False)
    pq = ProcessQueue()
    pq.put_message(batch(3))
    taken = pq.take_messages(2)
    out = process_consume_result_orderly(pq, MQ, taken, OS.SUCCESS, offset_store=store)
    assert out.continue_consume and out.commit_offset == 2
    assert mem(store) == 2  # moved back: not increase-only


def test_orderly_suspend_puts_batch_back_and_suspends_queue(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    pq.put_message(batch(3))
    taken = pq.take_messages(2)
    out = process_consume_result_orderly(
        pq, MQ, taken, OS.SUSPEND_CURRENT_QUEUE_A_MOMENT, offset_store=store, suspend_current_queue_time_millis=5
    )
    assert not out.continue_consume and out.resubmit_delay_ms == 10  # clamped to >= 10
    assert pq.msg_tree.keys() == [0, 1, 2] and all(m.reconsume_times == 1 for m in taken)
    assert mem(store) == -1


@pytest.mark.parametrize(
    "consumer_ms, context_ms, delay_ms",
    [(1000, -1, 1000), (2500, -1, 2500), (2500, 5000, 5000), (-1, -1, 10), (2500, 60_000, 30_000), (2500, 0, 10)],
)
def test_orderly_suspend_lasts_the_listeners_context_time_else_the_consumers(api, consumer_ms, context_ms, delay_ms):
    """ConsumeMessageOrderlyService#submitConsumeRequestLater: the context's suspend time (-1 by default) stands for
    the consumer's suspendCurrentQueueTimeMillis; the result is held to 10 ms..30 s."""
    pq = ProcessQueue()
    pq.put_message(batch(1))
    out = process_consume_result_orderly(
        pq,
        MQ,
        pq.take_messages(1),
        OS.SUSPEND_CURRENT_QUEUE_A_MOMENT,
        offset_store=OffsetStore("G", api),
        suspend_current_queue_time_millis=consumer_ms,
        context_suspend_current_queue_time_millis=context_ms,
    )
    assert out.resubmit_delay_ms == delay_ms


def test_orderly_context_suspend_time_must_be_an_int(api):
    pq = ProcessQueue()
    pq.put_message(batch(1))
    with pytest.raises(TypeError, match="context_suspend_current_queue_time_millis"):
        process_consume_result_orderly(
            pq,
            MQ,
            pq.take_messages(1),
            OS.SUSPEND_CURRENT_QUEUE_A_MOMENT,
            offset_store=OffsetStore("G", api),
            context_suspend_current_queue_time_millis=1.5,
        )


def test_orderly_suspend_out_of_retries_sends_back_and_commits(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    pq.put_message(batch(2))
    taken = pq.take_messages(2)
    for m in taken:
        m.reconsume_times = 3
    out = process_consume_result_orderly(
        pq, MQ, taken, OS.SUSPEND_CURRENT_QUEUE_A_MOMENT, offset_store=store, max_reconsume_times=3
    )
    assert out.continue_consume and out.sent_back == taken and mem(store) == 2


def test_orderly_manual_rollback_returns_batch(api):
    store = OffsetStore("G", api)
    pq = ProcessQueue()
    pq.put_message(batch(2))
    taken = pq.take_messages(2)
    out = process_consume_result_orderly(pq, MQ, taken, OS.ROLLBACK, offset_store=store, auto_commit=False)
    assert not out.continue_consume and pq.msg_tree.keys() == [0, 1]


@given(st.lists(st.integers(0, 19), unique=True), st.randoms(use_true_random=False))
def test_committed_offset_never_passes_an_unacknowledged_message(acked, rnd):
    store = OffsetStore("G", None)
    pq = ProcessQueue()
    msgs = batch(20)
    pq.put_message(msgs)
    order = list(acked)
    rnd.shuffle(order)
    for i in order:
        process_consume_result_concurrently(pq, MQ, [msgs[i]], CS.CONSUME_SUCCESS, offset_store=store)
        unacked = set(range(20)) - set(order[: order.index(i) + 1])
        expected = min(unacked) if unacked else 20
        assert mem(store) <= expected
        assert mem(store) == expected  # the store holds exactly the lowest unacked offset
        pq._check()


def test_stress_concurrent_consume_random_seed():
    for seed in range(10):
        rng = random.Random(seed)
        store = OffsetStore("G", None)
        pq = ProcessQueue()
        nxt = 0
        inflight = []
        for _ in range(300):
            if rng.random() < 0.4:
                new = batch(rng.randint(1, 5), start=nxt)
                nxt += len(new)
                pq.put_message(new)
                inflight.extend(new)
            elif inflight:
                m = inflight.pop(rng.randrange(len(inflight)))
                status = CS.CONSUME_SUCCESS if rng.random() < 0.8 else CS.RECONSUME_LATER
                process_consume_result_concurrently(
                    pq, MQ, [m], status, offset_store=store, send_back=lambda _m, rng=rng: rng.random() < 0.9
                )
                if pq.contains_message(m):
                    inflight.append(m)  # send-back failed: consumed again later
            pq._check()
            held = pq.msg_tree.keys()
            if mem(store) >= 0:
                assert not held or mem(store) <= held[0]


# ---- ConsumeMessageOrderlyService: one ConsumeRequest's turns ------------------------------------


class _Rebalance:
    """What the orderly service needs of a consumer: its message model, offset store and lock()."""

    def __init__(self, api, message_model=MessageModel.CLUSTERING, grant=True):
        self.message_model, self.offset_store, self.grant = message_model, OffsetStore("G", api), grant
        self.locks = []

    def lock(self, mq, now_ms):
        self.locks.append((mq, now_ms))
        return self.grant

    def consume_lock_released(self, mq, pq, now_ms):
        return False


def _orderly(api, **kw):
    from rmqlib.client import ConsumeMessageOrderlyService

    rebalance = _Rebalance(api, **kw)
    return rebalance, ConsumeMessageOrderlyService(rebalance, consume_batch_size=4, lock_max_live_time_ms=30_000)


def _locked_pq(now_ms=0, n=6):
    pq = ProcessQueue()
    pq.put_message(batch(n))
    pq.locked, pq.last_lock_timestamp = True, now_ms
    return pq


def test_orderly_request_runs_once_per_queue(api):
    _, service = _orderly(api)
    assert service.start(MQ) and not service.start(MQ)
    service.done(MQ)
    assert service.start(MQ)


def test_orderly_turn_without_a_fresh_lock_tries_the_lock_later_then_reconsumes_by_the_answer(api):
    """ConsumeRequest#run: a stale or missing lock means tryLockLaterAndReconsume, 100 ms later before the
    request's first batch and 10 ms later after one; that task locks the queue, and a new request follows 10 ms
    after a granted lock, 3 s after a refused one."""
    rebalance, service = _orderly(api)
    pq = _locked_pq(now_ms=0)
    step = service.next_step(MQ, pq, 30_001)  # the local lock is older than 30 s
    assert (step.action, step.delay_ms) == ("lock later", 100) and rebalance.locks == []
    pq.locked = False
    assert service.next_step(MQ, pq, 1, consuming_since_ms=0, after_batch=True) == ("lock later", (), 10)
    assert service.try_lock_later_and_reconsume(MQ, 30_101) == 10 and rebalance.locks == [(MQ, 30_101)]
    rebalance.grant = False
    assert service.try_lock_later_and_reconsume(MQ, 30_200) == 3_000


def test_the_orderly_service_settles_with_the_consumers_retry_limit_and_suspend_time(api):
    """processConsumeResult reads maxReconsumeTimes and suspendCurrentQueueTimeMillis from the consumer."""
    from rmqlib.client import ConsumeMessageOrderlyService

    service = ConsumeMessageOrderlyService(
        _Rebalance(api), consume_batch_size=4, max_reconsume_times=2, suspend_current_queue_time_millis=2_500
    )
    pq = _locked_pq()
    outcomes = []
    for now in (10, 20, 30):  # two suspends use up the two retries; the third settles by sending the batch back
        msgs = service.next_step(MQ, pq, now).msgs
        service.finish(pq)
        outcomes.append(service.process_consume_result(MQ, pq, msgs, OS.SUSPEND_CURRENT_QUEUE_A_MOMENT))
    assert [o.resubmit_delay_ms for o in outcomes] == [2_500, 2_500, None]
    assert [len(o.sent_back) for o in outcomes] == [0, 0, 4] and outcomes[-1].commit_offset == 4
    msgs = service.next_step(MQ, pq, 40).msgs  # the listener sets its context's suspend time for this batch
    service.finish(pq)
    outcome = service.process_consume_result(MQ, pq, msgs, OS.SUSPEND_CURRENT_QUEUE_A_MOMENT, 7_000)
    assert outcome.resubmit_delay_ms == 7_000


def test_orderly_turn_consumes_a_batch_in_order_under_the_consume_lock(api):
    rebalance, service = _orderly(api)
    pq = _locked_pq()
    step = service.next_step(MQ, pq, 10)
    assert step.action == "consume" and [m.queue_offset for m in step.msgs] == [0, 1, 2, 3]
    assert not pq.try_consume_write_lock()  # the rebalance cannot take the queue mid-batch
    service.finish(pq)
    assert pq.try_consume_write_lock()
    outcome = service.process_consume_result(MQ, pq, step.msgs)
    assert outcome.commit_offset == 4 and mem(rebalance.offset_store) == 4
    assert [m.queue_offset for m in service.next_step(MQ, pq, 20).msgs] == [4, 5]
    assert rebalance.locks == []


def test_orderly_turn_stops_when_dropped_or_empty(api):
    _, service = _orderly(api)
    pq = _locked_pq(n=0)
    assert service.next_step(MQ, pq, 0).action == "stop"
    pq = _locked_pq()
    pq.dropped = True
    assert service.next_step(MQ, pq, 0).action == "stop"


def test_an_orderly_request_gives_its_thread_up_after_60_s_of_continuous_consumption(api):
    """ConsumeRequest#run: past MAX_TIME_CONSUME_CONTINUOUSLY the request ends and is submitted again 10 ms later,
    before it takes another batch (the lock is checked first)."""
    _, service = _orderly(api)
    pq = _locked_pq(now_ms=59_000)
    assert service.next_step(MQ, pq, 60_000, consuming_since_ms=0).action == "consume"
    later = service.next_step(MQ, pq, 60_001, consuming_since_ms=0)
    assert (later.action, later.delay_ms, later.msgs) == ("consume later", 10, ())
    assert len(pq.consuming_msg_orderly) == 4  # the first turn took 4 of the 6; the second took none


def test_orderly_broadcasting_needs_no_lock(api):
    rebalance, service = _orderly(api, message_model=MessageModel.BROADCASTING)
    pq = _locked_pq()
    pq.locked = False
    assert service.next_step(MQ, pq, 0).action == "consume" and rebalance.locks == []


def test_an_offset_store_of_the_callers_own_gets_the_update_through_its_public_method():
    """Any object with update_offset(mq, offset, increase_only) can take the library's stores' place."""

    class Recording:
        def __init__(self):
            self.calls = []

        def update_offset(self, mq, offset, increase_only):
            self.calls.append((mq, offset, increase_only))

    store, pq, msgs = Recording(), ProcessQueue(), batch(4, start=20)
    pq.put_message(msgs)
    out = process_consume_result_concurrently(pq, MQ, msgs[1:], CS.CONSUME_SUCCESS, offset_store=store, now_ms=5)
    process_consume_result_concurrently(pq, MQ, msgs[:1], CS.CONSUME_SUCCESS, offset_store=store, now_ms=7)
    assert out.offset == 20 and store.calls == [(MQ, 20, True), (MQ, 24, True)]
    assert pq.last_consume_timestamp == 7


def test_a_frozen_offset_stays_frozen_when_the_consume_service_updates_it(api):
    store, pq, msgs = OffsetStore("G", api), ProcessQueue(), batch(3, start=50)
    store.update_and_freeze_offset(MQ, 10)
    pq.put_message(msgs)
    process_consume_result_concurrently(pq, MQ, msgs, CS.CONSUME_SUCCESS, offset_store=store)
    assert mem(store) == 10

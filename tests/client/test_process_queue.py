"""ProcessQueue: the behaviours ProcessQueueTest pins down, plus our edge cases."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlib.client import PROPERTY_MAX_OFFSET, Message, ProcessQueue
from rmqlib.client.process_queue import PULL_MAX_IDLE_TIME, REBALANCE_LOCK_MAX_LIVE_TIME, _OffsetMap


def batch(n, start=0, body=123):
    return [Message(topic="T", queue_id=0, queue_offset=start + i, body_size=body) for i in range(n)]


def test_new_process_queue_has_java_defaults():
    pq = ProcessQueue(now_ms=7)
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max) == (0, 0, 0)
    assert not pq.dropped and not pq.locked and not pq.consuming
    assert pq.last_pull_timestamp == pq.last_consume_timestamp == pq.last_lock_timestamp == 7
    assert pq.try_unlock_times == 0
    assert not pq.has_temp_message()
    pq._check()


def test_cached_message_count_follows_put_commit_and_remove():
    pq = ProcessQueue()
    pq.put_message(batch(100))
    assert pq.msg_count == 100
    pq.take_messages(10)
    pq.commit()
    assert pq.msg_count == 90
    pq.remove_message([pq.msg_tree.get(pq.msg_tree.last_key())])
    assert pq.msg_count == 89
    pq._check()


def test_cached_message_size_follows_put_commit_and_remove():
    pq = ProcessQueue()
    pq.put_message(batch(100))
    assert pq.msg_size == 100 * 123
    pq.take_messages(10)
    pq.commit()
    assert pq.msg_size == 90 * 123
    pq.remove_message([pq.msg_tree.get(pq.msg_tree.last_key())])
    assert pq.msg_size == 89 * 123
    pq._check()


def test_contains_message_is_by_queue_offset():
    pq = ProcessQueue()
    m0, m1 = batch(2)
    pq.put_message([m0])
    assert pq.contains_message(m0)
    assert not pq.contains_message(m1)
    assert not pq.contains_message(None)


def test_put_message_dispatches_only_when_not_already_consuming():
    pq = ProcessQueue()
    assert pq.put_message(batch(3)) is True
    assert pq.consuming
    assert pq.put_message(batch(3, start=3)) is False
    assert pq.put_message([]) is False


def test_put_message_empty_batch_on_empty_queue_does_not_dispatch():
    pq = ProcessQueue()
    assert pq.put_message([]) is False
    assert not pq.consuming


def test_put_message_counts_only_new_offsets_and_sets_queue_offset_max():
    pq = ProcessQueue()
    pq.put_message(batch(5))
    assert pq.queue_offset_max == 4
    pq.put_message(batch(3, start=3))  # 3, 4 already held; 5 new
    assert pq.msg_count == 6
    assert pq.msg_size == 6 * 123
    assert pq.queue_offset_max == 5
    pq._check()


def test_put_message_same_offset_different_size_is_rejected():
    pq = ProcessQueue()
    pq.put_message(batch(1))
    with pytest.raises(ValueError, match="msgs: offset 0"):
        pq.put_message([Message(topic="T", queue_id=0, queue_offset=0, body_size=5)])
    pq._check()


def test_put_message_of_in_flight_offset_is_rejected():
    pq = ProcessQueue()
    pq.put_message(batch(2))
    pq.take_messages(1)
    with pytest.raises(ValueError, match="in flight"):
        pq.put_message(batch(1))
    pq._check()


def test_put_message_rejects_non_messages():
    pq = ProcessQueue()
    with pytest.raises(TypeError, match="msgs"):
        pq.put_message([1, 2])
    with pytest.raises(TypeError, match="msgs"):
        pq.put_message(batch(1)[0])


def test_put_message_records_accumulated_count_from_max_offset_property():
    pq = ProcessQueue()
    msgs = batch(3)
    msgs[-1].properties[PROPERTY_MAX_OFFSET] = "10"
    pq.put_message(msgs)
    assert pq.msg_acc_cnt == 8


def test_remove_message_returns_lowest_unacked_offset():
    pq = ProcessQueue()
    msgs = batch(5, start=10)
    pq.put_message(msgs)
    assert pq.remove_message([msgs[1], msgs[3]]) == 10
    assert pq.remove_message([msgs[0]]) == 12
    assert pq.remove_message([msgs[2], msgs[4]]) == 15  # empty: queue_offset_max + 1
    pq._check()


def test_remove_message_on_empty_queue_returns_minus_one_and_stamps_consume_time():
    pq = ProcessQueue(now_ms=0)
    assert pq.remove_message(batch(1), now_ms=99) == -1
    assert pq.last_consume_timestamp == 99


def test_remove_message_never_put_is_a_noop_like_java():
    pq = ProcessQueue()
    pq.put_message(batch(3))
    assert pq.remove_message(batch(1, start=50)) == 0
    assert pq.msg_count == 3 and pq.msg_size == 3 * 123
    pq._check()


def test_remove_message_resets_size_when_count_hits_zero():
    pq = ProcessQueue()
    msgs = batch(2)
    pq.put_message(msgs)
    pq.remove_message(msgs)
    assert (pq.msg_count, pq.msg_size) == (0, 0)


def test_get_max_span_is_last_minus_first_offset():
    pq = ProcessQueue()
    assert pq.get_max_span() == 0
    msgs = batch(1, start=3) + batch(1, start=2500)
    pq.put_message(msgs)
    assert pq.get_max_span() == 2497


def test_pull_expired_only_after_more_than_120_seconds():
    pq = ProcessQueue(now_ms=1000)
    assert not pq.is_pull_expired(1000 + PULL_MAX_IDLE_TIME)
    assert pq.is_pull_expired(1000 + PULL_MAX_IDLE_TIME + 1)


def test_lock_expired_only_after_more_than_30_seconds():
    pq = ProcessQueue(now_ms=0)
    pq.last_lock_timestamp = 500
    assert not pq.is_lock_expired(500 + REBALANCE_LOCK_MAX_LIVE_TIME)
    assert pq.is_lock_expired(500 + REBALANCE_LOCK_MAX_LIVE_TIME + 1)


def test_take_messages_moves_head_messages_in_flight_in_order():
    pq = ProcessQueue()
    pq.put_message(list(reversed(batch(5))))
    taken = pq.take_messages(3, now_ms=42)
    assert [m.queue_offset for m in taken] == [0, 1, 2]
    assert pq.consuming_msg_orderly.keys() == [0, 1, 2]
    assert pq.msg_tree.keys() == [3, 4]
    assert pq.msg_count == 5  # in-flight messages still count
    assert pq.last_consume_timestamp == 42
    pq._check()


def test_take_messages_on_empty_queue_clears_consuming():
    pq = ProcessQueue()
    pq.put_message(batch(1))
    pq.take_messages(5)
    assert pq.consuming
    assert pq.take_messages(5) == []
    assert not pq.consuming


def test_take_messages_rejects_batch_size_below_one():
    with pytest.raises(ValueError, match="batch_size"):
        ProcessQueue().take_messages(0)


def test_commit_returns_next_offset_after_in_flight_batch():
    pq = ProcessQueue()
    pq.put_message(batch(5))
    pq.take_messages(2)
    assert pq.commit() == 2
    assert pq.msg_count == 3 and pq.msg_size == 3 * 123
    assert len(pq.consuming_msg_orderly) == 0
    pq._check()


def test_commit_with_nothing_in_flight_returns_minus_one():
    pq = ProcessQueue()
    assert pq.commit() == -1


def test_rollback_returns_all_in_flight_messages():
    pq = ProcessQueue()
    pq.put_message(batch(4))
    pq.take_messages(3)
    pq.rollback()
    assert len(pq.consuming_msg_orderly) == 0
    assert pq.msg_tree.keys() == [0, 1, 2, 3]
    assert pq.msg_count == 4
    pq._check()


def test_make_message_to_consume_again_returns_given_messages_only():
    pq = ProcessQueue()
    pq.put_message(batch(4))
    taken = pq.take_messages(3)
    pq.make_message_to_consume_again(taken[1:])
    assert pq.consuming_msg_orderly.keys() == [0]
    assert pq.msg_tree.keys() == [1, 2, 3]
    assert pq.commit() == 1
    pq._check()


def test_make_message_to_consume_again_rejects_unknown_message():
    pq = ProcessQueue()
    with pytest.raises(ValueError, match="not held"):
        pq.make_message_to_consume_again(batch(1))


def test_clean_expired_msg_returns_expired_head_and_removes_it():
    pq = ProcessQueue()
    msgs = batch(3)
    pq.put_message(msgs)
    msgs[0].consume_start_timestamp = 0
    msgs[1].consume_start_timestamp = 0
    msgs[2].consume_start_timestamp = 10 * 60 * 1000
    expired = pq.clean_expired_msg(now_ms=20 * 60 * 1000, consume_timeout=15)
    assert expired == msgs[:2]
    assert pq.msg_tree.keys() == [2]
    pq._check()


def test_clean_expired_msg_stops_at_first_unexpired_head():
    pq = ProcessQueue()
    msgs = batch(2)
    pq.put_message(msgs)
    msgs[1].consume_start_timestamp = 0  # expired but not at the head
    assert pq.clean_expired_msg(now_ms=10**9) == []


def test_clean_expired_msg_uses_strictly_greater_than_timeout():
    pq = ProcessQueue()
    msgs = batch(1)
    pq.put_message(msgs)
    msgs[0].consume_start_timestamp = 0
    assert pq.clean_expired_msg(now_ms=15 * 60 * 1000) == []
    assert pq.clean_expired_msg(now_ms=15 * 60 * 1000 + 1) == msgs


def test_clean_expired_msg_checks_at_most_16_messages():
    pq = ProcessQueue()
    msgs = batch(20)
    for m in msgs:
        m.consume_start_timestamp = 0
    pq.put_message(msgs)
    assert len(pq.clean_expired_msg(now_ms=10**9)) == 16
    assert pq.msg_count == 4


def test_clean_expired_msg_does_nothing_for_orderly():
    pq = ProcessQueue()
    msgs = batch(1)
    msgs[0].consume_start_timestamp = 0
    pq.put_message(msgs)
    assert pq.clean_expired_msg(now_ms=10**9, orderly=True) == []


def test_consume_write_lock_fails_while_listener_holds_read_lock():
    pq = ProcessQueue()
    pq.acquire_consume_lock()
    assert pq.consume_in_progress and not pq.try_consume_write_lock()
    pq.release_consume_lock()
    assert pq.try_consume_write_lock()
    with pytest.raises(ValueError):
        pq.release_consume_lock()


def test_clear_forgets_everything():
    pq = ProcessQueue()
    pq.put_message(batch(3))
    pq.take_messages(1)
    pq.clear()
    assert (pq.msg_count, pq.msg_size, pq.queue_offset_max) == (0, 0, 0)
    pq._check()


def test_message_rejects_negative_offset_and_size():
    with pytest.raises(ValueError, match="queue_offset"):
        Message(topic="T", queue_id=0, queue_offset=-1, body_size=1)
    with pytest.raises(ValueError, match="body_size"):
        Message(topic="T", queue_id=0, queue_offset=0, body_size=-1)


@pytest.mark.parametrize("seed", range(30))
def test_stress_random_operations_keep_invariants(seed):
    rng = random.Random(seed)
    pq = ProcessQueue()
    next_offset = 0
    orderly = seed % 2 == 0
    now = 0
    for _ in range(400):
        now += rng.randint(0, 1000)
        op = rng.random()
        if op < 0.35:
            n = rng.randint(0, 8)
            msgs = [
                Message(topic="T", queue_id=0, queue_offset=next_offset + i, body_size=rng.randint(0, 300))
                for i in range(n)
            ]
            next_offset += n
            rng.shuffle(msgs)
            pq.put_message(msgs)
        elif not orderly:
            held = pq.msg_tree.values()
            if held and op < 0.8:
                chosen = rng.sample(held, rng.randint(1, len(held)))
                expected_rest = sorted(set(pq.msg_tree.keys()) - {m.queue_offset for m in chosen})
                off = pq.remove_message(chosen, now_ms=now)
                assert off == (expected_rest[0] if expected_rest else pq.queue_offset_max + 1)
            else:
                for m in pq.msg_tree.values()[:3]:
                    m.consume_start_timestamp = now - rng.randint(0, 2 * 15 * 60 * 1000)
                pq.clean_expired_msg(now_ms=now)
        else:
            if op < 0.6:
                pq.take_messages(rng.randint(1, 5), now_ms=now)
            elif op < 0.75:
                inflight = pq.consuming_msg_orderly.keys()
                off = pq.commit()
                assert off == (inflight[-1] + 1 if inflight else -1)
            elif op < 0.85:
                pq.rollback()
            else:
                inflight = pq.consuming_msg_orderly.values()
                if inflight:
                    pq.make_message_to_consume_again(rng.sample(inflight, rng.randint(1, len(inflight))))
        pq._check()


def msg(offset, body_size=10, **kw) -> Message:
    return Message("TopicA", 0, offset, body_size, broker_name="broker-a", **kw)


def test_process_queue_checks_every_element_before_changing_anything():
    pq = ProcessQueue()
    pq.put_message([msg(5)])
    with pytest.raises(TypeError, match="msgs: elements must be Message, got int"):
        pq.put_message([msg(6), 7])
    # a non-Message later in the list is reported before an earlier conflicting offset
    with pytest.raises(TypeError, match="msgs: elements must be Message, got str"):
        pq.put_message([msg(5, body_size=99), "x"])
    with pytest.raises(TypeError, match="msgs: elements must be Message, got NoneType"):
        pq.remove_message([msg(5), None])
    assert pq.msg_tree.keys() == [5] and pq.msg_count == 1 and pq.msg_size == 10
    pq._check()


def test_process_queue_takes_message_subclasses_and_removes_anywhere():
    class Sub(Message):
        __slots__ = ()

    pq = ProcessQueue()
    held = [Sub("TopicA", 0, o, 10, broker_name="broker-a") for o in (3, 1, 2)] + [msg(7)]
    assert pq.put_message(held)
    assert pq.msg_tree.keys() == [1, 2, 3, 7] and pq.queue_offset_max == 7 and pq.msg_size == 40
    assert pq.remove_message([held[0], held[0]]) == 1  # not the head; a duplicate is ignored
    assert pq.remove_message([held[1]]) == 2
    assert pq.msg_count == 2 and pq.msg_size == 20
    assert pq.remove_message(held) == 8
    assert (pq.msg_count, pq.msg_size) == (0, 0)
    pq._check()


# ------------------------------------------------- the offset map's batch methods
def _state(mp: _OffsetMap) -> list:
    return [(k, mp.get(k)) for k in mp.keys()]


OFFSET_BATCHES = st.lists(st.lists(st.integers(0, 40), max_size=12), max_size=6)


@given(OFFSET_BATCHES, st.lists(st.integers(0, 45), max_size=20))
def test_put_many_equals_repeated_put_and_remove_many_equals_repeated_remove(batches, gone):
    one, many = _OffsetMap(), _OffsetMap()
    for offsets in batches:
        batch = [Message("T", 0, o, o % 7) for o in offsets]
        assert many.put_many(batch) == [one.put(m.queue_offset, m) for m in batch]
        assert _state(many) == _state(one)
    assert many.remove_many(gone) == [one.remove(o) for o in gone]
    assert _state(many) == _state(one) and len(many) == len(one)
    assert many.span() == (one.last_key() - one.first_key() if len(one) else 0)
    one._check("one")
    many._check("many")


def test_put_many_returns_what_each_put_replaced():
    mp = _OffsetMap()
    a, b, a2 = Message("T", 0, 5, 1), Message("T", 0, 3, 1), Message("T", 0, 5, 1)
    assert mp.put_many([a, b]) == [None, None]
    assert mp.put_many([a2]) == [a] and mp.get(5) is a2 and mp.keys() == [3, 5]
    assert mp.remove_many([3, 9, 3]) == [b, None, None] and mp.keys() == [5]

"""ConsumerOrderInfoManager: the batches orderly pops lend, and when a queue blocks the next pop."""

import pytest

from rmqlib.broker import ConsumerOrderInfoManager, OrderInfo
from rmqlib.broker.consumer_order_info import ORDER_INFO_ILLEGAL, ORDER_INFO_NO_COMMIT, ConsumerOrderInfoLockManager


def lend(manager, offsets, pop_time=100, invisible=30_000, attempt="a1", queue_id=0):
    return manager.update(attempt, "T", "G", queue_id, pop_time, invisible, offsets, pop_time)


def test_the_offset_list_is_kept_compact_and_read_back_as_queue_offsets():
    info = OrderInfo("a", 0, 1000, OrderInfo.build_offset_list([7, 8, 10]), 0)
    assert info.offset_list == [7, 1, 3]
    assert [info.queue_offset(i) for i in range(3)] == [7, 8, 10]
    assert OrderInfo.build_offset_list([5]) == [5]


def test_acks_in_any_order_commit_up_to_the_first_unacked_message():
    manager = ConsumerOrderInfoManager()
    lend(manager, [5, 6, 7])
    assert manager.commit_and_next("T", "G", 0, 6, 100, 300) == 5  # message 5 still out
    assert manager.commit_and_next("T", "G", 0, 5, 100, 300) == 7
    assert manager.commit_and_next("T", "G", 0, 7, 100, 300) == 8  # all acked: past the batch


def test_an_ack_outside_the_batch_is_illegal_and_one_of_an_older_batch_commits_nothing():
    manager = ConsumerOrderInfoManager()
    assert manager.commit_and_next("T", "G", 0, 3, 100, 300) == 4  # no batch recorded: just past the ack
    lend(manager, [5, 6])
    assert manager.commit_and_next("T", "G", 0, 9, 100, 300) == ORDER_INFO_ILLEGAL
    assert manager.commit_and_next("T", "G", 0, 5, 99, 300) == ORDER_INFO_NO_COMMIT


def test_a_batch_blocks_other_attempts_until_acked_or_visible_again():
    manager = ConsumerOrderInfoManager()
    lend(manager, [0, 1], pop_time=100, invisible=1000)
    assert manager.check_block("b1", "T", "G", 0, 1000, now_ms=500)
    assert not manager.check_block("a1", "T", "G", 0, 1000, now_ms=500)  # the same attempt, retried
    assert not manager.check_block("b1", "T", "G", 1, 1000, now_ms=500)  # another queue
    assert not manager.check_block("b1", "T", "G", 0, 1000, now_ms=1100)  # popTime + invisibleTime reached
    manager.commit_and_next("T", "G", 0, 0, 100, 300)
    manager.commit_and_next("T", "G", 0, 1, 100, 300)
    assert not manager.check_block("b1", "T", "G", 0, 1000, now_ms=500)


def test_a_changed_invisible_time_keeps_only_that_message_out_longer():
    manager = ConsumerOrderInfoManager()
    lend(manager, [0, 1], pop_time=100, invisible=1000)
    manager.update_next_visible_time("T", "G", 0, 1, 100, 5000, 400)
    manager.update_next_visible_time("T", "G", 0, 0, 99, 9000, 400)  # an older batch's handle: ignored
    manager.commit_and_next("T", "G", 0, 0, 100, 300)
    assert manager.check_block("b1", "T", "G", 0, 1000, now_ms=4999)
    assert not manager.check_block("b1", "T", "G", 0, 1000, now_ms=5000)
    assert manager.table[("T", "G")][0].lock_free_timestamp(4000) == 5000


def test_each_lending_again_counts_one_more_consumption_but_a_retried_attempt_does_not():
    manager = ConsumerOrderInfoManager()
    assert lend(manager, [2, 3], attempt="a1") == {2: 0, 3: 0}
    assert lend(manager, [2, 3, 4], attempt="b1") == {2: 1, 3: 1, 4: 0}
    assert lend(manager, [3, 4], attempt="c1") == {3: 2, 4: 1}
    assert lend(manager, [3, 4], attempt="c1") == {3: 2, 4: 1}  # the same attempt again: counts kept


def test_clear_block_forgets_the_batch():
    manager = ConsumerOrderInfoManager()
    lend(manager, [0])
    manager.clear_block("T", "G", 0)
    assert not manager.check_block("b1", "T", "G", 0, 1000, now_ms=200)


def test_bad_batches_are_refused_by_name():
    manager = ConsumerOrderInfoManager()
    with pytest.raises(ValueError, match="queue_offsets"):
        lend(manager, [])
    with pytest.raises(ValueError, match="queue_offsets"):
        lend(manager, list(range(65)))  # one bit per message in a Java long
    with pytest.raises(ValueError, match="queue_offsets\\[1\\]"):
        lend(manager, [0, -1])


def test_each_change_of_a_batch_moves_its_queue_lock_free_timer_to_the_wheels_next_tick():
    manager = ConsumerOrderInfoManager()
    timers = manager.lock_manager
    lend(manager, [0, 1], pop_time=100, invisible=1000)  # the wheel starts with this first timer, at 100 ms
    assert timers.wheel_start_ms == 100
    assert timers.due == {("T", "G", 0): 1200} and timers.next_due_ms() == 1200  # free at 1100, a tick: the next one
    manager.update_next_visible_time("T", "G", 0, 0, 100, 5050, now_ms=200)  # the first unacked one shows at 5050
    assert timers.due[("T", "G", 0)] == 5100
    manager.commit_and_next("T", "G", 0, 0, 100, now_ms=300)
    assert timers.due[("T", "G", 0)] == 1200  # message 1 blocks until its own visible time now
    manager.commit_and_next("T", "G", 0, 1, 100, now_ms=430)
    assert timers.due[("T", "G", 0)] == 500  # all acked: free at once, noticed at the next tick
    assert timers.take_due(499) == [] and timers.take_due(500) == [("T", "G", 0)] and timers.due == {}


def test_a_restarted_broker_sets_timers_on_a_new_wheel_only_for_queues_still_blocked():
    manager = ConsumerOrderInfoManager()
    lend(manager, [0], pop_time=100, invisible=1000, queue_id=0)  # free at 1100
    lend(manager, [5], pop_time=100, invisible=30_000, queue_id=1)  # free at 30 100
    manager.recover(now_ms=2_050)  # back at 2 050 ms: queue 0 is free already, queue 1 still blocked
    timers = manager.lock_manager
    assert timers.wheel_start_ms == 2_050 and timers.due == {("T", "G", 1): 30_150}


def test_no_timer_when_notifying_after_a_lock_release_is_off():
    manager = ConsumerOrderInfoManager(lock_manager=ConsumerOrderInfoLockManager(enabled=False))
    lend(manager, [0])
    assert manager.lock_manager.next_due_ms() is None

"""A 4.x Pop consumer's consume request (ConsumeMessagePopConcurrentlyService.ConsumeRequest#run): a batch whose
invisible time is over, or whose queue was dropped, is left to the broker's revive service, not consumed or acked."""

import pytest

from rmqlib.sim import scenarios, simulate

SEEDS = [1, 2]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_batch_past_its_invisible_time_is_not_consumed_and_one_that_passes_it_in_the_listener_is_not_acked(seed):
    """One thread at 300 ms a message against 10 s invisible: popped batches wait in the pool past their time. Those
    are skipped (isPopTimeout before the listener); those whose time ends during the listener are consumed but not
    acked, so they alone come back and are consumed twice, and every message is acked exactly once."""
    run = simulate(
        scenarios.pop_mode(consume_time_ms=300.0, consume_threads=1, pop_invisible_time_ms=10_000), seed=seed
    )
    late, skipped = run.counters["pops timed out while consumed"], run.counters["pops timed out before consumption"]
    assert late > 0 and skipped > 0
    assert run.duplicates == late and run.counters["acks"] == run.produced and run.lost == []


@pytest.mark.parametrize("seed", SEEDS)
def test_a_batch_of_a_queue_dropped_by_a_rebalance_is_not_consumed_and_not_acked(seed):
    """popShareQueueNum 1: a member that joins takes queues over, and what the old owner popped but had not yet
    consumed stays with the broker until it revives; what it was consuming is not acked and is consumed twice."""
    run = simulate(
        scenarios.scale_out(consume_mode="POP", pop_share_queue_num=1, consume_time_ms=200.0, consume_threads=2),
        seed=seed,
    )
    assert run.counters["pops dropped before consumption"] > 0
    assert run.duplicates == run.counters["pops dropped while consumed"] > 0
    assert run.counters["acks"] == run.produced and run.lost == []

"""Orderly consumers with slow listener calls across a scale-out: a moved queue whose call still runs more than
unlockDelayTimeMills (20 s) after its last lock renewal is force-unlocked, and its new owner consumes the same
message while that call runs (scenarios.orderly_slow_listener, chapter 09)."""

from functools import cache

import pytest

from support import given_up_during

from rmqlib.sim import scenarios, simulate

SEEDS = range(12)


@cache
def run(seed, **overrides):
    return simulate(scenarios.orderly_slow_listener(**overrides), seed=seed)


def test_some_seeds_show_two_members_on_one_message_and_some_do_not():
    clashing = [seed for seed in SEEDS if run(seed).overlapping_calls()]
    assert 0 < len(clashing) < len(SEEDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_overlap_is_a_call_that_outlived_its_queues_lock_by_the_unlock_delay(seed):
    """The old call started before its queue moved; the old owner let the lock go while the call ran, at a round
    more than 20 s after its last lockAll before the move (dropped queues are not renewed); only then did the new
    owner start, on the very message the old call was still consuming."""
    result = run(seed)
    for queue, pairs in result.overlapping_calls().items():
        for old, new in pairs:
            moved, unlocked, renewed = given_up_during(result, queue, old)
            assert old.start_ms < moved < unlocked < new.start_ms < old.end_ms, (queue, old, new)
            assert unlocked > renewed + result.scenario.unlock_delay_ms
            assert set(old.offsets) & set(new.offsets), (queue, old, new)


def test_a_longer_unlock_delay_keeps_the_lock_until_the_call_returns():
    """-Drocketmq.client.unlockDelayTimeMills=60000: the old owner holds a busy queue's lock as long as the broker
    keeps it (60 s), longer than any call of these runs."""
    for seed in SEEDS:
        result = run(seed, unlock_delay_ms=60_000)
        assert result.overlapping_calls() == {}, seed
        assert result.lost == []


def test_without_the_newcomers_no_message_is_consumed_by_two_members_at_once():
    for seed in SEEDS:
        group = run(seed).scenario.consumers[:2]
        assert run(seed, consumers=group).overlapping_calls() == {}, seed

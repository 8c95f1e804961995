"""An orderly group across a broker restart: the restarted broker's lock table and consumer registry start empty,
so for a while two members can consume one queue (scenarios.orderly_broker_restart, chapter 09)."""

from functools import cache

import pytest

from support import broker_of

from rmqlib.sim import scenarios, simulate

SEEDS = range(12)


@cache
def run(seed, **overrides):
    return simulate(scenarios.orderly_broker_restart(**overrides), seed=seed)


def lock_holder(result, queue, time_ms):
    held = [i.holder for i in result.lock_ownership.get(queue, ()) if i.start_ms <= time_ms < i.end_ms]
    return held[0] if held else None


def test_some_seeds_show_two_members_on_one_queue_and_some_do_not():
    """Which broker each round asks for the member list is random (MQClientInstance#findBrokerAddrByTopic)."""
    clashing = [seed for seed in SEEDS if run(seed).overlapping_calls()]
    assert 0 < len(clashing) < len(SEEDS)
    assert max(sum(map(len, run(seed).overlapping_calls().values())) for seed in clashing) > 100


def test_without_the_restart_no_orderly_queue_is_consumed_by_two_members():
    for seed in SEEDS:
        assert run(seed, outages=()).overlapping_calls() == {}


@pytest.mark.parametrize("seed", SEEDS)
def test_overlaps_only_on_the_restarted_brokers_queues_after_it_is_back(seed):
    result = run(seed)
    [outage] = result.scenario.outages
    for queue, pairs in result.overlapping_calls().items():
        assert broker_of(queue) == outage.broker, queue
        assert all(b.start_ms >= outage.up_ms for _, b in pairs), queue
    redelivered = result.redelivered_offsets()
    assert all(broker_of(queue) == outage.broker for queue in redelivered)
    assert bool(redelivered) == bool(result.overlapping_calls())


@pytest.mark.parametrize("seed", SEEDS)
def test_the_member_without_the_broker_lock_stops_at_its_next_lock_all(seed):
    """The stale owner trusts its own lock (ProcessQueue, 30 s) until its next lockAll finds the queue locked by
    another member; every call it starts while the other holds the broker lock starts before that lockAll."""
    result = run(seed)
    lock_alls: dict[str, list[int]] = {}
    for event in result.events_of("lock"):
        if event.detail == "lockAll":
            lock_alls.setdefault(event.who, []).append(event.time_ms)
    stale_calls = 0
    for queue, pairs in result.overlapping_calls().items():
        for a, b in pairs:
            holder = lock_holder(result, queue, b.start_ms)
            assert holder in (a.consumer, b.consumer), (queue, a, b)
            stale = b if holder == a.consumer else a
            taken = max(i.start_ms for i in result.lock_ownership[queue] if i.start_ms <= b.start_ms)
            next_lock_all = min(t for t in lock_alls[stale.consumer] if t >= taken)
            assert stale.start_ms <= next_lock_all, (queue, stale, next_lock_all)
            assert next_lock_all - taken <= result.scenario.lock_renew_interval_ms
            stale_calls += 1
    assert stale_calls == sum(map(len, result.overlapping_calls().values()))


def test_overlapping_calls_finds_every_pair_of_calls_by_two_consumers_that_ran_at_once():
    result = run(8)
    naive = {}
    for queue, batches in result.consumption.items():
        pairs = [
            (a, b) if (a.start_ms, a.end_ms) <= (b.start_ms, b.end_ms) else (b, a)
            for i, a in enumerate(batches)
            for b in batches[i + 1 :]
            if a.consumer != b.consumer and max(a.start_ms, b.start_ms) < min(a.end_ms, b.end_ms)
        ]
        if pairs:
            naive[queue] = sorted(pairs)
    assert {q: sorted(p) for q, p in result.overlapping_calls().items()} == naive != {}

"""SimResult.stalls: stretches in which a queue's messages waited and none was consumed, for every kind of group."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlib.broker.consumer_order_info import TIMER_TICK_MS
from rmqlib.sim import scenarios, simulate
from rmqlib.sim.kafka_group import simulate_kafka_group
from rmqlib.sim.result import STALL_MIN_MS, stall_spans

END_MS = 60


def _stalls_by_the_millisecond(messages, end_ms, min_ms):
    """The stalls of integer store and consume times, found one millisecond at a time: millisecond (t, t+1) is
    stalled when a message waits through it; a run of them ends where a message is consumed."""
    consumed_at = {min(d, end_ms) for _, d in messages}
    spans, start = [], None
    for t in range(end_ms + 1):
        if start is not None and t in consumed_at:
            spans.append((start, t))
            start = None
        waiting = t < end_ms and any(s <= t and min(d, end_ms) >= t + 1 for s, d in messages)
        if waiting and start is None:
            start = t
        elif not waiting and start is not None:
            spans.append((start, t))
            start = None
    return [(a, b) for a, b in spans if b - a >= max(min_ms, 1)]


messages = st.lists(
    st.tuples(st.integers(0, END_MS), st.integers(0, END_MS + 5) | st.just(math.inf)).map(
        lambda m: (m[0], m[1] if m[1] == math.inf else max(m)),  # consumed no earlier than stored
    ),
    max_size=12,
)


@given(messages, st.integers(0, 10))
def test_stalls_are_the_stretches_a_message_waits_with_none_consumed(messages, min_ms):
    waits = np.array(messages, dtype=float).reshape(-1, 2)
    assert stall_spans(waits, END_MS, min_ms) == _stalls_by_the_millisecond(messages, END_MS, min_ms)


def test_a_message_never_consumed_waits_to_the_end_and_one_consumption_ends_a_stall():
    waits = np.array([[10, 40], [20, math.inf], [50, 55]], dtype=float)
    # the second message waits on past the first's consumption; the third's splits its wait in two
    assert stall_spans(waits, 100, 0) == [(10, 40), (40, 55), (55, 100)]
    assert stall_spans(waits, 100, 30) == [(10, 40), (55, 100)]
    assert stall_spans(np.empty((0, 2)), 100, 0) == []


@pytest.fixture(scope="module")
def fifo_crash():
    return simulate(scenarios.grpc_fifo_crash(), seed=1)


def test_a_crashed_fifo_member_stalls_the_queues_it_held_until_the_proxy_drops_it(fifo_crash):
    """Chapter 11: no pause (every member may receive from every queue), but the queues it held stand still."""
    crashed = fifo_crash.events_of("leave")[0].time_ms
    dropped = fifo_crash.events_of("proxy unregistered")[0].time_ms
    assert fifo_crash.total_pause_ms() == 0
    long_ones = {q: spans for q, spans in fifo_crash.stalls(min_ms=30_000).items() if spans}
    held = {e.detail for e in fifo_crash.events_of("proxy cleared")}  # the queues whose batches the proxy let go
    assert held and {f"TopicTest@{q[-2]}" for q in long_ones} == held
    for [(start, stop)] in long_ones.values():
        # a batch stored just before, which the lock-free timer's tick may have kept from a pop
        assert crashed - fifo_crash.scenario.produce_batch_ms - TIMER_TICK_MS <= start <= crashed
        assert dropped < stop <= dropped + 2_000  # handed back a second after the drop, consumed at once
    assert fifo_crash.longest_stall_ms() == max(stop - start for [(start, stop)] in long_ones.values())


def test_a_standard_pop_group_keeps_its_queues_moving_while_a_crashed_members_messages_wait():
    """Other messages of the same queues are consumed meanwhile: the queues stall only once the producers stop
    and nothing but the crashed member's messages is left, until the broker revives them."""
    run = simulate(scenarios.pop_crash(), seed=1)
    crashed = run.events_of("leave")[0].time_ms
    revived = min(e.time_ms for e in run.events_of("revive") if e.time_ms > crashed)
    assert run.latencies_ms.max() > 60_000  # a message waited a minute ...
    for spans in run.stalls().values():  # ... but its queue stood still only after the producers stopped
        assert all(start >= run.scenario.duration_ms and stop > revived for start, stop in spans)


def test_a_broker_away_pauses_its_queues_but_stalls_nothing_when_producers_send_elsewhere():
    """The consumers take broker-b's queues back some 20 s after it returns (a pause each), but no message waited
    on them: the producers sent broker-b's share elsewhere while it was away."""
    run = simulate(scenarios.broker_outage(), seed=1)
    outage = run.scenario.outages[0]
    on_b = run.queues_on(outage.broker, "TopicTest")
    pauses, stalls = run.pauses(), run.stalls()
    for queue in on_b:
        assert any(a == outage.up_ms and b - a > 20_000 for a, b in pauses[queue]) and stalls[queue] == []
    assert run.total_stall_ms() < run.total_pause_ms() / 20


def test_a_lost_host_stalls_its_queues_as_long_as_they_pause():
    run = simulate(scenarios.host_loss(), seed=1)
    paused, stalled = run.total_pause_ms(), run.total_stall_ms()
    assert paused > 100_000 and abs(stalled - paused) < 0.05 * paused


def test_messages_never_consumed_stall_their_queues_to_the_end():
    run = simulate(scenarios.mixed_subscriptions(), seed=1)
    unconsumed = run.unconsumed()
    assert unconsumed
    stalls = run.stalls()
    assert all(stalls[q][-1][1] == run.scenario.end_ms for q in unconsumed)


def test_a_kafka_group_counts_stalls_the_same_way():
    run = simulate_kafka_group(scenarios.crash(duration_ms=60_000, drain_ms=20_000), "eager", seed=1)
    assert set(run.stalls()) == set(run.queues) and run.total_pause_ms() > 0
    assert run.total_stall_ms() > 0


def test_the_summary_carries_the_stalls_and_bad_thresholds_are_refused(fifo_crash):
    row = fifo_crash.summary()
    assert (row["stall_ms"], row["longest_stall_ms"]) == (fifo_crash.total_stall_ms(), fifo_crash.longest_stall_ms())
    assert fifo_crash.total_stall_ms(0) > fifo_crash.total_stall_ms() == fifo_crash.total_stall_ms(STALL_MIN_MS)
    with pytest.raises(ValueError, match="min_ms"):
        fifo_crash.stalls(-1)
    with pytest.raises(TypeError, match="min_ms"):
        fifo_crash.stalls(1.5)


def test_when_broadcasting_a_message_moves_with_its_first_members_listener_call():
    """Every member consumes every message; the stall measure takes the earliest member's call on it."""
    scenario = scenarios.steady_state(
        message_model="BROADCASTING", duration_ms=30_000, drain_ms=10_000, consume_time_dist="exponential"
    )  # so that members finish at different times
    run = simulate(scenario, seed=1)
    spread = 0.0
    for queue, batches in run.consumption.items():
        first: dict[int, float] = {}
        for batch in batches:
            step = (batch.end_ms - batch.start_ms) / len(batch.offsets)
            for k, offset in enumerate(batch.offsets):
                done = batch.start_ms + (k + 1) * step
                spread = max(spread, abs(done - first.get(offset, done)))
                first[offset] = min(first.get(offset, math.inf), done)
        assert len({b.consumer for b in batches}) == len(run.scenario.consumers)  # every member read the queue
        assert run.waits[queue][:, 1].tolist() == [first[offset] for offset in range(len(run.waits[queue]))]
    assert spread > 0  # the members' calls on one message did end at different times


def test_when_broadcasting_each_member_has_its_own_waits():
    """``member_waits[cid]`` holds the end of that member's own first listener call on each message."""
    scenario = scenarios.steady_state(
        message_model="BROADCASTING", duration_ms=30_000, drain_ms=10_000, consume_time_dist="exponential"
    )
    run = simulate(scenario, seed=1)
    assert set(run.member_waits) == {spec.client_id for spec in scenario.consumers}
    for cid, waits in run.member_waits.items():
        for queue, batches in run.consumption.items():
            first: dict[int, float] = {}
            for batch in (b for b in batches if b.consumer == cid):
                step = (batch.end_ms - batch.start_ms) / len(batch.offsets)
                for k, offset in enumerate(batch.offsets):
                    first.setdefault(offset, batch.start_ms + (k + 1) * step)
            assert waits[queue][:, 1].tolist() == [first[offset] for offset in range(len(waits[queue]))]
            assert (waits[queue][:, 0] == run.waits[queue][:, 0]).all()  # the same messages, stored at the same time
    for queue, waits in run.waits.items():  # the group's wait is its first member's
        assert (np.min([w[queue][:, 1] for w in run.member_waits.values()], axis=0) == waits[:, 1]).all()


def test_a_slow_broadcasting_member_falls_behind_alone():
    scenario = scenarios.slow_member(message_model="BROADCASTING", duration_ms=42_000, drain_ms=60_000)
    run = simulate(scenario, seed=1)
    slow = scenario.consumers[3].client_id
    most = {cid: sum(run.backlog(consumer=cid).values()).max() for cid in run.member_waits}
    # every message reaches it: 80 a second in, 10 out, for 30 s
    assert 1_800 < most[slow] < 2_300 and all(n < 40 for cid, n in most.items() if cid != slow)
    assert sum(run.backlog().values()).max() < 40  # the group's count follows its fastest member: it cannot see this
    assert run.stalls(consumer=slow) != {} and run.longest_stall_ms() == 0
    assert run.consumed_by()[slow] < run.produced == run.consumed_by()[scenario.consumers[0].client_id]


@pytest.mark.parametrize(
    "message_model, consumer, match",
    [("CLUSTERING", "10.0.0.1@1001", "only a BROADCASTING run"), ("BROADCASTING", "10.0.0.9@1009", "one of")],
)
def test_a_members_own_waits_are_asked_of_a_member_of_a_broadcasting_run(message_model, consumer, match):
    run = simulate(scenarios.steady_state(message_model=message_model, duration_ms=20_000, drain_ms=5_000), seed=1)
    for ask in (run.stalls, run.backlog):
        with pytest.raises(ValueError, match=f"consumer: {match}"):
            ask(consumer=consumer)
    assert (run.member_waits == {}) is (message_model == "CLUSTERING")

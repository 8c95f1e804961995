"""A gRPC group in the simulator: members ask the proxy, pop through it, and are dropped only by their heartbeats."""

from collections import Counter

import pytest

from rmqlib.client.grpc_push import (
    HEART_BEAT_INITIAL_DELAY_MS,
    HEART_BEAT_PERIOD_MS,
    RECEIVING_FLOW_CONTROL_BACKOFF_DELAY_MS,
)
from rmqlib.sim import ConsumerSpec, scenarios, simulate

SEEDS = [1, 2]


def crash_of(result):
    [leave] = result.events_of("leave")
    return leave


def test_a_receive_the_broker_cannot_hold_is_answered_too_many_requests_and_sent_again_20_ms_later():
    """With popPollingSize 0 a broker holds one pop per queue of the group: every other member's empty receive comes
    back TOO_MANY_REQUESTS ("polling full") and goes out again after 20 ms, where other errors wait 1 s."""
    run = simulate(scenarios.grpc_crash(pop_polling_size=0), seed=1)
    failed = run.events_of("receive failed")
    assert failed and {e.detail for e in failed} == {"broker-a: TOO_MANY_REQUESTS: polling full"}
    round_trip = 4 * run.scenario.rpc_latency_ms  # client -> proxy -> broker and back
    gaps = Counter()
    for member in {e.who for e in failed}:
        times = [e.time_ms for e in failed if e.who == member]
        gaps.update(b - a for a, b in zip(times, times[1:]))
    assert min(gaps) == RECEIVING_FLOW_CONTROL_BACKOFF_DELAY_MS + round_trip
    assert gaps.most_common(1)[0][0] == RECEIVING_FLOW_CONTROL_BACKOFF_DELAY_MS + round_trip
    assert run.lost == [] and run.duplicates == 0 and run.unconsumed() == {}
    assert simulate(scenarios.grpc_crash(), seed=1).events_of("receive failed") == []  # the default holds 1,025


@pytest.mark.parametrize("seed", SEEDS)
def test_what_a_crashed_member_held_waits_for_the_proxy_to_drop_it_not_for_the_invisible_time(seed):
    grpc, pop = simulate(scenarios.grpc_crash(), seed=seed), simulate(scenarios.pop_crash(), seed=seed)
    crash = crash_of(grpc)
    [dropped] = grpc.events_of("proxy unregistered")
    assert dropped.who == crash.who
    # the registry's 10 s scan drops a client whose last heartbeat (1 s after start, then every 10 s) is over 120 s old
    member = next(s for s in grpc.scenario.consumers if s.client_id == crash.who)
    beats = [t for t in range(member.join_ms + HEART_BEAT_INITIAL_DELAY_MS, crash.time_ms + 1, HEART_BEAT_PERIOD_MS)]
    assert (
        dropped.time_ms % 10_000 == 0 and 0 < dropped.time_ms - beats[-1] - grpc.scenario.channel_expired_ms <= 10_001
    )
    cleared = grpc.events_of("proxy cleared")
    assert cleared and {e.time_ms for e in cleared} == {dropped.time_ms}
    # so the longest wait, store to consume, is about two minutes through the proxy, about one without it
    assert grpc.latencies_ms.max() > dropped.time_ms - crash.time_ms
    assert pop.latencies_ms.max() < pop.scenario.pop_invisible_time_ms + 20_000 < grpc.latencies_ms.max()
    assert grpc.lost == [] == pop.lost and pop.duplicates == 0


@pytest.mark.parametrize("seed", [2, 3])  # seeds in which the FIFO member's receive is answered after it died too
def test_a_crashed_members_receive_answered_after_the_crash_is_handed_back_twice(seed):
    """The proxy cannot write the answer, so it hands each message back at once (1 s), but it has already taken the
    messages into the member's receipt handles, renews those until it drops the member, then clears them: each is
    consumed twice. A FIFO group is spared: by then the group's offset has passed them, and the broker ignores the
    change."""
    standard, fifo = simulate(scenarios.grpc_crash(), seed=seed), simulate(scenarios.grpc_fifo_crash(), seed=seed)
    assert standard.duplicates == standard.counters["proxy nacked"] > 0
    assert fifo.duplicates == 0 < fifo.counters["proxy nacked"]
    host_lost = simulate(scenarios.grpc_crash(consumers=_with_leave("host_loss")), seed=seed)
    assert host_lost.duplicates == 0 and "proxy nacked" not in host_lost.counters  # its stream never closes


@pytest.mark.parametrize("seed", SEEDS)
def test_a_fifo_group_consumes_each_queue_in_order_and_one_member_at_a_time(seed):
    run = simulate(scenarios.grpc_fifo_crash(), seed=seed)
    assert run.lost == [] and run.duplicates == 0
    crash = crash_of(run)
    assert run.latencies_ms.max() > run.events_of("proxy unregistered")[0].time_ms - crash.time_ms
    for queue, batches in run.consumption.items():
        batches = sorted(batches, key=lambda b: (b.start_ms, b.end_ms))
        offsets = [o for b in batches for o in b.offsets]
        assert offsets == sorted(offsets), queue  # never out of order, even across the crash
        assert all(a.end_ms <= b.start_ms for a, b in zip(batches, batches[1:])), queue  # never two at once


def test_a_fifo_member_starts_its_next_message_when_the_last_ones_ack_is_answered_four_network_delays_later():
    """The ack goes to the proxy, on to the broker, and its answer comes back the same way before the next message
    of the batch is consumed (FifoConsumeService#consumeIteratively)."""
    run = simulate(scenarios.grpc_fifo_crash(rpc_latency_ms=3), seed=1)
    gaps: Counter[int] = Counter()
    for batches in run.consumption.values():
        batches = sorted(batches, key=lambda b: b.start_ms)
        gaps.update(b.start_ms - a.end_ms for a, b in zip(batches, batches[1:]) if a.consumer == b.consumer)
    [(commonest, _)] = gaps.most_common(1)
    assert min(gaps) == commonest == 4 * run.scenario.rpc_latency_ms


def test_a_standard_group_does_not_keep_order():
    run = simulate(scenarios.grpc_crash(consume_time_ms=50.0, produce_rate_per_queue=20.0), seed=1)
    overlapping = 0
    for batches in run.consumption.values():
        batches = sorted(batches, key=lambda b: b.start_ms)
        overlapping += sum(a.end_ms > b.start_ms for a, b in zip(batches, batches[1:]))
    assert overlapping > 0  # messages of one queue consumed at once by several threads or members


def test_a_member_that_shuts_down_finishes_what_it_runs_and_leaves_the_proxy_at_once():
    run = simulate(scenarios.grpc_fifo_crash(consumers=_with_leave("shutdown")), seed=1)
    [leave] = run.events_of("leave")
    [dropped] = run.events_of("proxy unregistered")
    assert dropped.detail == "NotifyClientTermination" and dropped.time_ms - leave.time_ms < 35_000
    assert run.lost == [] and run.duplicates == 0 and run.latencies_ms.max() < 35_000
    assert "proxy nacked" not in run.counters
    # a FIFO batch's next message, refused by the shut pool, waits unacked with the rest of its batch until the proxy
    # clears them 1 s later
    assert run.counters["proxy clear group"] >= run.counters["consumption refused"] >= 1
    assert {e.time_ms for e in run.events_of("proxy cleared")} <= {dropped.time_ms}


def test_a_lost_host_is_dropped_like_a_crash():
    crash = simulate(scenarios.grpc_crash(), seed=1)
    lost = simulate(scenarios.grpc_crash(consumers=_with_leave("host_loss")), seed=1)
    assert lost.events_of("proxy unregistered")[0].time_ms == crash.events_of("proxy unregistered")[0].time_ms
    assert lost.lost == [] and lost.latencies_ms.max() > lost.scenario.channel_expired_ms


def _with_leave(how):
    base = scenarios.grpc_crash().consumers
    return base[:-1] + (ConsumerSpec(base[-1].client_id, leave_ms=base[-1].leave_ms, leave=how),)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"consume_mode": "POP"}, "consume_mode"),
        ({"message_model": "BROADCASTING"}, "message_model"),
        ({"slaves": ("broker-a",)}, "client"),
    ],
)
def test_what_a_grpc_group_does_not_model_is_refused_by_name(changes, field):
    with pytest.raises(ValueError, match=field):
        scenarios.grpc_crash(**changes)

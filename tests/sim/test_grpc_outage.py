"""A gRPC group across a broker outage: the proxy's cached routes decide when receives and acks stop failing."""

import pytest

from rmqlib.client.grpc_push import (
    ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS,
    LONG_POLLING_TIMEOUT_MS,
    RECEIVING_FAILURE_BACKOFF_DELAY_MS,
    REQUEST_TIMEOUT_MS,
    SCAN_ASSIGNMENTS_PERIOD_MS,
)
from rmqlib.proxy import DEFAULT_INVISIBLE_TIME_MILLS, TOPIC_ROUTE_CACHE_REFRESH_MS
from rmqlib.sim import BrokerOutage, ConsumerSpec, scenarios, simulate
from rmqlib.sim.proxy_node import GRPC_MAX_LONG_POLLING_MS

SEEDS = [1, 2, 3]


def outage_of(result) -> BrokerOutage:
    [outage] = result.scenario.outages
    return outage


@pytest.mark.parametrize("seed", SEEDS)
def test_receives_for_the_stopped_broker_fail_a_second_apart_until_the_proxy_reloads_the_topics_route(seed):
    run = simulate(scenarios.grpc_broker_outage(), seed=seed)
    stop = outage_of(run)
    failed = run.events_of("receive failed")
    assert failed and all(e.detail.startswith("broker-b:") for e in failed)
    assert stop.down_ms <= min(e.time_ms for e in failed)
    # the topic's entry was written at most 20 s before the stop, and a read (each member scans every 5 s) reloads it
    assert max(e.time_ms for e in failed) < stop.down_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + SCAN_ASSIGNMENTS_PERIOD_MS
    by_member: dict[str, list[int]] = {}
    for e in failed:
        by_member.setdefault(e.who, []).append(e.time_ms)
    # the request to the proxy, the proxy's pop to the broker, the refused connection's way back, the answer's way
    # back, then the client's 1 s back-off
    gaps = {b - a for times in by_member.values() for a, b in zip(times, times[1:])}
    assert gaps == {RECEIVING_FAILURE_BACKOFF_DELAY_MS + 4 * run.scenario.rpc_latency_ms}
    # once the route has lost broker-b, a receive that still names it pops broker-a, until the member's next scan
    # drops broker-b's process queue
    assert run.counters["receives redirected"] > 0
    dropped = {e.who: e.time_ms for e in run.events_of("drop") if "brokerName=broker-b" in e.detail}
    assert set(dropped) == {s.client_id for s in run.scenario.consumers}
    assert max(e.time_ms for e in failed) < min(dropped.values())
    assert max(dropped.values()) < stop.down_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + 2 * SCAN_ASSIGNMENTS_PERIOD_MS


@pytest.mark.parametrize("seed", SEEDS)
def test_acks_refused_as_invalid_receipt_handles_are_not_retried_and_their_messages_come_twice(seed):
    run = simulate(scenarios.grpc_broker_outage(), seed=seed)
    stop = outage_of(run)
    refused = run.events_of("ack refused")
    assert refused and all(e.detail == "broker-b" for e in refused)
    assert run.counters["acks refused"] == len(refused) == run.duplicates
    # the acks that failed to connect first went out again, a second apart
    assert run.counters["acks retried"] > 0
    # one refused during the outage, once the proxy's route of the topic named after broker-b has lost it; and the
    # first one after broker-b's return, because that route still lacks broker-b until the read that reloads it
    assert any(stop.down_ms < e.time_ms < stop.up_ms for e in refused)
    after = [e.time_ms for e in refused if e.time_ms > stop.up_ms]
    assert len(after) == 1
    acked_from_b_after_return = [
        b.end_ms for q, batches in run.consumption.items() if "brokerName=broker-b" in q
        for b in batches if b.end_ms > stop.up_ms
    ]  # fmt: skip
    assert after[0] <= min(acked_from_b_after_return) + 3 * run.scenario.rpc_latency_ms
    # each refused message is revived by broker-b once its invisible time has passed and it is up
    revived = [e.time_ms for e in run.events_of("revive") if e.who == "broker-b"]
    assert revived and all(t > stop.up_ms for t in revived)
    assert run.lost == [] and run.unconsumed() == {}


@pytest.mark.parametrize("latency_ms", [1, 25, 50])
def test_an_ack_on_its_way_to_a_broker_as_it_stops_fails_and_is_retried_so_every_duplicate_was_refused(latency_ms):
    """With 25 ms network delays an ack reaches broker-b just after it stops: the proxy's connection fails and the
    client hears so (four delays after sending) and tries again a second later, until the proxy refuses it."""
    run = simulate(scenarios.grpc_broker_outage(rpc_latency_ms=latency_ms), seed=1)
    assert run.duplicates == run.counters["acks refused"] > 0
    assert run.counters["acks retried"] > 0 and run.lost == []


def test_without_the_outage_nothing_fails_and_nothing_comes_twice():
    run = simulate(scenarios.grpc_broker_outage(outages=()), seed=1)
    assert run.events_of("receive failed") == [] and run.events_of("ack refused") == []
    assert "receives redirected" not in run.counters and "acks retried" not in run.counters
    assert run.duplicates == 0 and run.lost == []


def test_messages_held_through_the_outage_are_no_longer_renewed_and_come_back_after_their_invisible_time():
    """A listener of 55 s: what a member holds from broker-b needs renewing 50 s after its pop, while broker-b is
    down; the renewals fail and the proxy drops them, so those messages show again at broker-b."""
    consumers = tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}", join_ms=1_000) for i in range(1, 3))
    run = simulate(
        scenarios.grpc_broker_outage(consumers=consumers, consume_time_ms=55_000.0, produce_rate_per_queue=0.05),
        seed=1,
    )
    assert run.counters["proxy renew failed"] > 0
    assert run.counters.get("proxy renew", 0) > 0  # broker-a's are renewed as usual
    assert run.lost == [] and run.duplicates > 0


@pytest.mark.parametrize("seconds", [10, 60])
def test_a_fifo_group_keeps_each_queue_in_order_across_the_outage_and_repeats_only_what_refused_acks_left(seconds):
    """An orderly queue lends again from its first unacked message: a refused ack brings back its message and the
    ones after it in that batch, once the invisible time is over, and nothing comes out of order."""
    back = 70_000 + seconds * 1_000
    outage = BrokerOutage("broker-b", 70_000, back)
    fifo = scenarios.grpc_broker_outage(
        consume_mode="ORDERLY", outages=(outage,), duration_ms=max(120_000, back + 60_000)
    )
    run = simulate(fifo, seed=1)
    assert run.counters["acks refused"] > 0 and run.duplicates >= run.counters["acks refused"]
    assert run.lost == [] and run.unconsumed() == {}
    repeated_on = set()
    for queue, batches in run.consumption.items():
        first_seen: list[int] = []
        for batch in sorted(batches, key=lambda b: (b.start_ms, b.end_ms)):
            repeated_on |= {queue for o in batch.offsets if o in first_seen}
            first_seen += [o for o in batch.offsets if o not in first_seen]
        assert first_seen == sorted(first_seen), queue
    assert repeated_on and all("brokerName=broker-b" in queue for queue in repeated_on)  # whose acks were refused


def vanishes(back_ms=None, **overrides):
    """grpc_broker_outage with broker-b's host vanishing at 70 s (no connection closes), back at ``back_ms``."""
    outage = BrokerOutage("broker-b", 70_000, back_ms, silent=True)
    return simulate(scenarios.grpc_broker_outage(outages=(outage,), **overrides), seed=1)


def test_receives_to_a_vanished_broker_fail_only_at_the_clients_23_s_deadline_until_the_name_server_drops_it():
    """The push consumer's long poll is the proxy's maximum, which the proxy's settings give it at start-up."""
    run = vanishes()
    [removed] = run.events_of("route removed")  # 120 s after broker-b's last registration, at the scan
    assert removed.time_ms > 70_000 + 100_000
    by_member: dict[str, list[int]] = {}
    for e in run.events_of("receive failed"):
        by_member.setdefault(e.who, []).append(e.time_ms)
    assert set(by_member) == {s.client_id for s in run.scenario.consumers}
    deadline = LONG_POLLING_TIMEOUT_MS + REQUEST_TIMEOUT_MS
    assert LONG_POLLING_TIMEOUT_MS == GRPC_MAX_LONG_POLLING_MS and deadline == 23_000
    for times in by_member.values():
        before = [t for t in times if t <= removed.time_ms]
        assert 70_000 + deadline - 1_000 <= before[0] <= 70_000 + deadline  # the receive held when it vanished
        assert {b - a for a, b in zip(before, before[1:])} <= {deadline + RECEIVING_FAILURE_BACKOFF_DELAY_MS}
    # an ack nobody answers is sent again after its 3 s deadline and 1 s, until its message's 60 s have ended and
    # the proxy refuses the expired handle, long before the name server drops broker-b
    assert run.counters["acks retried"] > 0
    refused = run.events_of("ack refused")
    expired_by = (
        70_000 + DEFAULT_INVISIBLE_TIME_MILLS + REQUEST_TIMEOUT_MS + ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS
    )  # and one more try
    assert refused and max(e.time_ms for e in refused) < expired_by < removed.time_ms
    dropped = {e.who for e in run.events_of("drop") if "brokerName=broker-b" in e.detail}
    assert dropped == set(by_member)  # every member's loop went on, and left broker-b out
    assert run.lost == [] and run.duplicates == 0


def test_a_vanished_broker_back_before_the_name_server_drops_it_costs_only_the_held_receives():
    """Back at 90 s, before the receives held at 70 s reach their 23 s deadline: those fail, the next ones are
    answered."""
    run = vanishes(back_ms=90_000, duration_ms=180_000)
    assert run.events_of("route removed") == [] and run.events_of("ack refused") == []
    failed = run.events_of("receive failed")
    assert len(failed) == len(run.scenario.consumers)  # one each: the receive held when it vanished
    assert run.counters["acks retried"] > 0 and run.duplicates == 0 and run.lost == []


def test_a_vanished_broker_back_just_after_the_name_server_dropped_it_repeats_only_the_message_refused_meanwhile():
    """Every handle of broker-b expired by 130 s, so the proxy stopped looking broker-b up: its cached entry, read
    again only after the return, still names broker-b, and no ack is refused in a burst (as after a short stop)."""
    run = vanishes(back_ms=200_000, duration_ms=240_000)
    [removed] = run.events_of("route removed")
    refused = [e.time_ms for e in run.events_of("ack refused")]
    expired_by = 70_000 + DEFAULT_INVISIBLE_TIME_MILLS + REQUEST_TIMEOUT_MS + ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS
    assert refused and max(refused) < expired_by < removed.time_ms < 200_000
    assert run.duplicates == len(refused) and run.lost == []
    assert any(b.start_ms > 200_000 for q, bs in run.consumption.items() if "brokerName=broker-b" in q for b in bs)

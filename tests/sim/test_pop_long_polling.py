"""Held pops in the simulator are PopLongPollingService's: the broker holds an empty pop until an arrival wakes it
(the first held pop of its key, one per arrival) or its scan answers it just before its 15 s poll time ends; the
client sends the next pop when the answer arrives."""

from functools import cache

from rmqlib.broker.pop_long_polling import POLLING_SCAN_INTERVAL_MS, POP_POLL_TIME_MILLIS, TIMEOUT_MARGIN_MS
from rmqlib.sim import scenarios, simulate


@cache
def run(**overrides):
    return simulate(scenarios.pop_mode(**overrides), seed=2)


def test_with_nothing_to_pop_each_member_sends_one_pop_per_poll_time():
    """No messages: every pop is held and answered by the broker's scan 50 ms before it expires, on the scan's 20 ms
    grid, so each member sends a pop every 14.95-14.97 s plus the round trip (one per broker: a queueId -1 pop)."""
    result = run(produce_rate_per_queue=0.0, duration_ms=120_000, drain_ms=0)
    sc = result.scenario
    cycle_min = POP_POLL_TIME_MILLIS - TIMEOUT_MARGIN_MS + 2 * sc.rpc_latency_ms
    cycle_max = cycle_min + POLLING_SCAN_INTERVAL_MS
    # the first pops go out once the members have their assignments, within the start jitter and the first rounds
    first_ms, last_ms = sc.start_jitter_ms + 2 * sc.rebalance_interval_ms, sc.duration_ms
    members = len(sc.consumers)
    pops = result.counters["pops"]
    assert members * ((last_ms - first_ms) // cycle_max) <= pops <= members * (last_ms // cycle_min + 1)
    assert result.produced == 0 and result.counters.get("pops_failed", 0) == 0


def test_an_arrival_wakes_one_held_pop_not_every_one():
    """Six members hold a pop each; a message arriving wakes the first held pop only, which takes it, so the group
    sends about one pop per message (plus one per member per poll time), not one per member per message."""
    result = run(produce_rate_per_queue=1.0, duration_ms=60_000, drain_ms=10_000)
    sc = result.scenario
    members = len(sc.consumers)
    timeouts = members * (sc.end_ms // (POP_POLL_TIME_MILLIS - TIMEOUT_MARGIN_MS) + 1)
    pops = result.counters["pops"]
    assert result.produced > 100 and pops <= result.produced + timeouts
    assert pops < members * result.produced / 2  # what waking every held pop would cost
    assert len(result.lost) == 0 and result.duplicates == 0
    assert result.counters["acks"] == result.produced  # one ack per message, each sent once

"""The FIFO hand-over through the proxy: a crashed gRPC member is noticed by its heartbeats, a hung one by nothing."""

import pytest

from rmqlib.broker import BrokerConfig
from rmqlib.client.grpc_push import HEART_BEAT_INITIAL_DELAY_MS, HEART_BEAT_PERIOD_MS
from rmqlib.proxy import (
    CUSTOMIZED_RETRY_MILLIS,
    DEFAULT_INVISIBLE_TIME_MILLS,
    RENEW_AHEAD_TIME_MILLIS,
    RENEW_MAX_TIME_MILLIS,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    RENEW_STRATEGY_MILLIS,
)
from rmqlib.sim.grpc_fifo import MemberLeave, fifo_handover

SCAN_MS = 10_000  # the registry's housekeeping scan
EXPIRED_MS = BrokerConfig().channel_expired_timeout


def expected_unregistration(left_ms: int) -> int:
    """The first registry scan that finds the last heartbeat before ``left_ms`` more than 120 s old."""
    last = max(t for t in range(HEART_BEAT_INITIAL_DELAY_MS, left_ms + 1, HEART_BEAT_PERIOD_MS))
    return next(t for t in range(SCAN_MS, 10**9, SCAN_MS) if t - last > EXPIRED_MS)


@pytest.mark.parametrize("left_ms", [3_000, 25_000, 200_000])
@pytest.mark.parametrize("leave", [MemberLeave.CRASH, MemberLeave.HOST_LOSS])
def test_a_crashed_member_keeps_its_batch_until_its_heartbeats_are_120_s_old(leave, left_ms):
    run = fifo_handover(leave, left_ms)
    assert run.unregistered_ms == expected_unregistration(left_ms)
    assert run.taken_ms == run.unregistered_ms + 1_000  # cleared: visible again 1 s later
    assert run.taken == ("m0", "m1", "m2")  # A's batch, whole and in order
    assert run.wait_ms > EXPIRED_MS  # minutes, not the second a closed connection would take
    assert run.renewals >= 1  # the proxy kept renewing what a dead client held


def test_a_crash_and_a_host_loss_look_the_same_to_the_proxy():
    crash, lost = fifo_handover("crash"), fifo_handover("host_loss")
    for field in ("unregistered_ms", "taken_ms", "taken", "renewals"):
        assert getattr(crash, field) == getattr(lost, field)
    assert [row for row in crash.timeline if row[1] != "A"] == [row for row in lost.timeline if row[1] != "A"]


def test_a_hung_member_keeps_its_batch_until_a_renewal_falls_past_3_h():
    run = fifo_handover("hang")
    # the renewals, derived here from the proxy's constants: a scan every 5 s renews a message within 10 s of showing
    visible, renew_times, now, popped = 1_000 + DEFAULT_INVISIBLE_TIME_MILLS, 0, 0, 1_000
    while True:
        now += RENEW_SCHEDULE_PERIOD_MILLIS
        if visible - now > RENEW_AHEAD_TIME_MILLIS:
            continue
        if now - popped >= RENEW_MAX_TIME_MILLIS:
            break
        visible = now + RENEW_STRATEGY_MILLIS[min(renew_times, len(RENEW_STRATEGY_MILLIS) - 1)]
        renew_times += 1
    assert run.unregistered_ms is None
    assert run.renewals == renew_times
    assert run.taken_ms == now + CUSTOMIZED_RETRY_MILLIS[2]  # handed back after the first retry delay
    assert RENEW_MAX_TIME_MILLIS < run.taken_ms < RENEW_MAX_TIME_MILLIS + 3_600_000  # past 3 h, within the last hour
    assert run.taken == ("m0", "m1", "m2")
    assert run.timeline[-2][2].startswith("stop renew")


def test_a_hung_member_holds_past_a_short_horizon():
    run = fifo_handover("hang", horizon_ms=600_000)
    assert (run.taken_ms, run.taken, run.wait_ms) == (None, (), None)


def test_a_member_that_shuts_down_acks_first_so_the_next_member_reads_on():
    run = fifo_handover("shutdown", 5_000)
    assert run.taken_ms == 5_000 and run.taken == ("m3", "m4")  # nothing redelivered
    assert run.renewals == 0 and run.unregistered_ms is None  # B read before A's NotifyClientTermination


def test_the_next_member_never_reads_out_of_order():
    for leave in MemberLeave:
        for left_ms in (2_000, 61_000):
            run = fifo_handover(leave, left_ms, horizon_ms=600_000)
            first = ("m0", "m1", "m2") if leave is not MemberLeave.SHUTDOWN else ("m3", "m4")
            assert run.taken in (first, ()), (leave, left_ms)


def test_same_arguments_same_replay():
    assert fifo_handover("crash", 7_000, messages=9, batch=4) == fifo_handover("crash", 7_000, messages=9, batch=4)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"leave": "vanish"}, "leave"),
        ({"leave": "crash", "left_ms": 2_500}, "left_ms"),
        ({"leave": "crash", "left_ms": 1_000}, "left_ms"),
        ({"leave": "crash", "batch": 0}, "batch"),
        ({"leave": "crash", "messages": 0}, "messages"),
        ({"leave": "crash", "horizon_ms": 10**12}, "horizon_ms"),
        ({"leave": "crash", "seed": "x"}, "seed"),
    ],
)
def test_bad_arguments_are_named(kwargs, named):
    with pytest.raises((ValueError, TypeError), match=named):
        fifo_handover(**kwargs)

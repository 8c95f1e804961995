"""RebalanceService as a schedule."""

import pytest

from rmqlib.client import MIN_INTERVAL, WAIT_INTERVAL, RebalanceService
from rmqlib.client.rebalance_service import RUNS_KEPT


class Stub:
    def __init__(self, results):
        self.results = list(results)
        self.calls = []
        self.rebalance_service = None

    def try_rebalance(self, now_ms):
        self.calls.append(now_ms)
        r = self.results.pop(0) if self.results else True
        if isinstance(r, Exception):
            raise r
        return r


def test_java_intervals():
    assert (WAIT_INTERVAL, MIN_INTERVAL) == (20_000, 1_000)


def test_balanced_round_waits_20s_unbalanced_round_1s():
    svc = RebalanceService(now_ms=0)
    c = Stub([True, False, True])
    svc.register(c)
    assert svc.next_run_ms == 20_000
    assert svc.run_due(19_999) is None and c.calls == []
    assert svc.run_due(20_000) is True
    assert svc.next_run_ms == 40_000
    assert svc.run_due(40_000) is False
    assert svc.next_run_ms == 41_000
    assert svc.run_due(41_000) is True
    assert svc.next_run_ms == 61_000
    assert list(svc.runs) == [(20_000, True), (40_000, False), (41_000, True)]


def test_the_round_log_keeps_only_the_latest_rounds():
    """A consumer runs a round every 20 s for as long as it lives: the log must not keep them all."""
    svc = RebalanceService(wait_interval=10, min_interval=0)
    svc.register(Stub([True] * (RUNS_KEPT + 5)))
    for _ in range(RUNS_KEPT + 5):
        svc.run_due(svc.next_run_ms)
    assert len(svc.runs) == RUNS_KEPT and svc.runs[0] == (60, True) and svc.runs[-1] == (10 * (RUNS_KEPT + 5), True)


def test_register_attaches_service_to_consumer():
    svc = RebalanceService()
    c = Stub([])
    svc.register(c)
    assert c.rebalance_service is svc
    with pytest.raises(ValueError):
        svc.register(c)
    with pytest.raises(ValueError):
        svc.register(object())


def test_wakeups_coalesce_into_one_run():
    svc = RebalanceService(now_ms=0)
    c = Stub([])
    svc.register(c)
    svc.wakeup(5000)
    svc.wakeup(5001)
    svc.wakeup(5002)
    assert svc.next_run_ms == 5000
    assert svc.run_due(5002) is True
    assert c.calls == [5002]
    assert svc.next_run_ms == 25_002


def test_wakeup_within_min_interval_waits_for_the_remainder():
    svc = RebalanceService(now_ms=0)
    c = Stub([])
    svc.register(c)
    svc.wakeup(5000)
    assert svc.run_due(5000) is True
    svc.wakeup(5300)
    assert svc.run_due(5300) is None  # only 300 ms since the last round
    assert svc.next_run_ms == 6000
    assert svc.run_due(6000) is True
    assert c.calls == [5000, 6000]


def test_first_wakeup_right_after_start_respects_min_interval():
    svc = RebalanceService(now_ms=0)
    c = Stub([])
    svc.register(c)
    svc.wakeup(10)
    assert svc.run_due(10) is None
    assert svc.next_run_ms == 1000


def test_rebalance_later_schedules_a_wakeup():
    svc = RebalanceService(now_ms=0)
    c = Stub([])
    svc.register(c)
    svc.rebalance_later(500, now_ms=3000)
    assert svc.next_run_ms == 3500
    assert svc.run_due(3499) is None
    assert svc.run_due(3500) is True


def test_one_unbalanced_consumer_makes_the_round_unbalanced_and_errors_are_ignored():
    svc = RebalanceService(now_ms=0)
    a, b, c = Stub([True]), Stub([False]), Stub([RuntimeError("x")])
    for x in (a, b, c):
        svc.register(x)
    assert svc.run_due(20_000) is False
    svc2 = RebalanceService(now_ms=0)
    svc2.register(Stub([RuntimeError("x")]))
    assert svc2.run_due(20_000) is True  # an exception does not count as unbalanced


def test_lock_failure_in_rebalance_triggers_a_run_500ms_later(consumer, api, mqs):
    api.consumer_ids["G"] = ["c1"]
    api.locks[("G", mqs[1])] = ("other", 0)
    impl = consumer("c1", mqs[:2], orderly=True)
    svc = RebalanceService(now_ms=0)
    svc.register(impl)
    assert svc.run_due(20_000) is False
    assert svc.next_run_ms == 20_500  # rebalanceLater(500) beats the 1 s retry
    assert svc.run_due(20_500) is None  # but the min interval still applies
    assert svc.next_run_ms == 21_000
    assert svc.run_due(21_000) is False


def test_negative_intervals_are_rejected():
    with pytest.raises(ValueError, match="min_interval"):
        RebalanceService(min_interval=-1)

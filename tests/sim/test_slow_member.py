"""One member slower than the rest (``ConsumerSpec.consume_time_ms``), and the backlog it leaves
(``SimResult.backlog``): the strategies share queues, not work (chapter 10)."""

import math

import numpy as np
import pytest

from rmqlib.sim import ConsumerSpec, Scenario, scenarios, simulate
from rmqlib.sim.kafka_group import simulate_kafka_group
from rmqlib.sim.scenarios import client_ids

SLOW_MS = 2_000  # 20 listener threads at 2 s a message: 10 messages/s, half of its two queues' 20


def _group(slow_ms=SLOW_MS):
    return tuple(ConsumerSpec(cid, consume_time_ms=slow_ms if i == 3 else None) for i, cid in enumerate(client_ids(4)))


def _run(**overrides):
    fields = dict(start_jitter_ms=0, produce_start_ms=0, duration_ms=60_000, drain_ms=90_000)
    return simulate(scenarios.slow_member(**(fields | overrides)), seed=1)


@pytest.fixture(scope="module")
def pulled():
    return _run()


@pytest.fixture(scope="module")
def popped():
    return _run(consume_mode="POP")


@pytest.mark.parametrize(
    "run",
    [
        lambda sc: simulate(sc, seed=1),
        lambda sc: simulate(Scenario(**(vars(sc) | {"client": "GRPC"})), seed=1),
        lambda sc: simulate(Scenario(**(vars(sc) | {"client": "GRPC_SIMPLE"})), seed=1),
        lambda sc: simulate_kafka_group(sc, seed=1),
    ],
    ids=["remoting", "grpc push", "grpc simple", "kafka"],
)
def test_each_listener_call_takes_its_members_own_time_per_message(run):
    scenario = Scenario(consumers=_group(slow_ms=7), consume_time_ms=3, duration_ms=10_000, drain_ms=10_000)
    result = run(scenario)
    slow = scenario.consumers[3].client_id
    calls = [batch for batches in result.consumption.values() for batch in batches]
    assert {b.consumer for b in calls} == {spec.client_id for spec in scenario.consumers}
    for batch in calls:
        per_message = 7 if batch.consumer == slow else 3
        assert batch.end_ms - batch.start_ms == math.ceil(per_message * len(batch.offsets)), batch


def test_the_rebalance_gives_a_slow_member_its_full_share_and_its_queues_pile_up(pulled):
    slow = pulled.scenario.consumers[3].client_id
    assert len(set(pulled.consumed_by().values())) == 1  # every member consumed as many messages: 2 queues each
    [slow_queues] = [queues for cid, queues in pulled.owned_at(30_000).items() if cid == slow]
    at_60s = {queue: int(series[60]) for queue, series in pulled.backlog().items()}
    # its two queues gain 20 messages/s and lose 10: about 600 waiting when the producers stop
    assert 550 < sum(at_60s[q] for q in slow_queues) < 650
    assert all(n <= 10 for q, n in at_60s.items() if q not in slow_queues)  # the others keep up
    assert pulled.latency_percentile(100) > 55_000 and pulled.lost == []


def test_with_pop_the_others_take_what_the_slow_member_cannot(pulled, popped):
    consumed = popped.consumed_by()
    slow = popped.scenario.consumers[3].client_id
    assert all(consumed[slow] < n for cid, n in consumed.items() if cid != slow)
    total = sum(popped.backlog().values())
    # at most what the slow member holds: it stops popping a broker beyond popThresholdForQueue (96) + a batch (32)
    assert 150 < total.max() <= 2 * (96 + 32) < sum(pulled.backlog().values()).max()
    assert popped.latency_percentile(100) < pulled.latency_percentile(100) / 2 and popped.lost == []


def test_a_grpc_push_member_receives_until_its_cache_is_full_so_a_small_cache_spreads_the_work(pulled):
    hoarded, shared = _run(client="GRPC"), _run(client="GRPC", push_max_cache_message_count=64)
    slow = hoarded.scenario.consumers[3].client_id
    consumed = hoarded.consumed_by()  # 4,096 hold its quarter of everything, as with pulls
    assert max(consumed.values()) < 1.1 * consumed[slow] and sum(consumed.values()) == hoarded.produced
    most_pulled, most_hoarded, most_shared = (sum(run.backlog().values()).max() for run in (pulled, hoarded, shared))
    assert abs(most_hoarded - most_pulled) < 30 and most_shared <= 2 * 64
    assert all(shared.consumed_by()[slow] < n for cid, n in shared.consumed_by().items() if cid != slow)
    assert hoarded.duplicates == shared.duplicates == 0 and hoarded.lost == shared.lost == []


def test_backlog_counts_the_messages_stored_and_not_yet_consumed(pulled):
    step = 7_000
    backlog = pulled.backlog(step)
    assert set(backlog) == set(pulled.waits) and pulled.waits
    for queue, series in backlog.items():
        stored, consumed = pulled.waits[queue][:, 0], pulled.waits[queue][:, 1]
        assert len(series) == pulled.scenario.end_ms // step + 1
        for i, count in enumerate(series):
            t = i * step
            assert count == int(np.sum((stored <= t) & (consumed > t)))


def test_what_waits_at_the_end_is_what_was_never_consumed():
    result = _run(drain_ms=20_000)  # too short to drain the slow member's queues
    at_end = {queue: int(series[-1]) for queue, series in result.backlog(result.scenario.end_ms).items()}
    assert {q: n for q, n in at_end.items() if n} == result.unconsumed() != {}


@pytest.mark.parametrize("bad", [-1, float("nan"), "fast", True])
def test_a_bad_listener_time_is_refused_naming_the_member(bad):
    with pytest.raises(ValueError, match=r"consumers.*10\.0\.0\.4@1004: consume_time_ms"):
        Scenario(consumers=_group(slow_ms=bad))


@pytest.mark.parametrize("bad", [0, -64, 1.5, "64"])
def test_a_push_cache_that_is_not_a_positive_count_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="push_max_cache_message_count"):
        scenarios.slow_member(client="GRPC", push_max_cache_message_count=bad)


@pytest.mark.parametrize("step_ms, error", [(0, ValueError), (10**9, ValueError), (1.5, TypeError)])
def test_a_bad_backlog_step_is_refused_by_name(pulled, step_ms, error):
    with pytest.raises(error, match="step_ms"):
        pulled.backlog(step_ms)

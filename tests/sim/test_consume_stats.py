"""A dashboard polling GET_CONSUME_STATS during a run (Scenario.consume_stats_interval_ms, SimResult.diff_total)."""

import pytest

from rmqlib.sim import scenarios, simulate


@pytest.fixture(scope="module")
def polled():
    return simulate(scenarios.steady_state(duration_ms=60_000, drain_ms=30_000, consume_stats_interval_ms=1_000), 1)


def test_every_master_answers_every_poll_with_a_line_per_read_queue(polled):
    sc = polled.scenario
    instants = list(range(1_000, sc.end_ms, 1_000))  # the run stops at end_ms, before a poll then
    assert [(when, broker) for when, broker, _ in polled.consume_stats] == [
        (when, broker) for when in instants for broker in sc.brokers
    ]
    for _, broker, stats in polled.consume_stats:
        assert sorted(str(mq) for mq in stats.offset_table) == polled.queues_on(broker, "TopicTest")
    assert [when for when, _ in polled.diff_total()] == instants


def test_the_diff_counts_from_the_committed_offset_so_it_trails_the_consumption(polled):
    waiting = sum(polled.backlog().values())
    diffs = dict(polled.diff_total())
    stop = polled.scenario.duration_ms
    after = [when for when in diffs if when > stop]  # no message arrives now: only consumption and commits move
    assert all(diffs[when] >= waiting[when // 1000] for when in after)
    assert any(diffs[when] > waiting[when // 1000] == 0 for when in after)  # consumed, not yet committed
    assert diffs[max(diffs)] == 0  # every persist has landed
    committed = {
        (str(mq), wrapper.consumer_offset)
        for _, _, stats in polled.consume_stats[-2:]
        for mq, wrapper in stats.offset_table.items()
    }
    assert {offset for _, offset in committed} and all(offset == polled.stored[q] for q, offset in committed)


def test_a_broker_that_is_down_answers_nothing():
    run = simulate(scenarios.broker_outage(consume_stats_interval_ms=5_000), seed=1)
    outage = run.scenario.outages[0]
    asked_b = [when for when, broker, _ in run.consume_stats if broker == outage.broker]
    assert asked_b and not [when for when in asked_b if outage.down_ms <= when < outage.up_ms]
    assert any(outage.down_ms <= when < outage.up_ms for when, broker, _ in run.consume_stats)  # the other answers


def test_nobody_polls_by_default_and_a_bad_interval_is_refused_by_name():
    assert simulate(scenarios.steady_state(duration_ms=20_000, drain_ms=5_000), seed=1).diff_total() == []
    for bad in (-1, 1.5, "5s"):
        with pytest.raises(ValueError, match="consume_stats_interval_ms"):
            scenarios.steady_state(consume_stats_interval_ms=bad)

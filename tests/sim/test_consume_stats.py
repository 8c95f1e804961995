"""A dashboard polling GET_CONSUME_STATS during a run (Scenario.consume_stats_interval_ms, SimResult.diff_total)."""

import numpy as np
import pytest

from rmqlib.sim import scenarios, simulate


@pytest.fixture(scope="module")
def polled():
    return simulate(scenarios.steady_state(duration_ms=60_000, drain_ms=30_000, consume_stats_interval_ms=1_000), 1)


def test_each_broker_answers_for_the_topics_the_group_has_committed_offsets_of_there(polled):
    sc = polled.scenario
    # at 1 s no member has registered yet and nothing is committed: an empty table, and nobody online
    assert polled.consume_stats_errors == [(1_000, f"no consume stats of {sc.consumer_group}: no member is online")]
    instants = list(range(2_000, sc.end_ms, 1_000))  # the run stops at end_ms, before a poll then
    assert [(when, broker) for when, broker, _ in polled.consume_stats] == [
        (when, broker) for when in instants for broker in sc.brokers
    ]
    lines = {(when, broker): sorted(map(str, stats.offset_table)) for when, broker, stats in polled.consume_stats}
    for broker in sc.brokers:
        retry = [q for q in polled.queues_on(broker) if "%RETRY%" in q]
        assert retry and lines[2_000, broker] == []  # members online, nothing committed: no topic to answer for
        assert lines[sc.end_ms - 1_000, broker] == sorted(polled.queues_on(broker, "TopicTest") + retry)
        # a topic appears with the first commit of it and stays
        first = next(when for when in instants if lines[when, broker])
        assert all(lines[when, broker] for when in instants if when >= first)
    assert [when for when, _ in polled.diff_total()] == instants


def test_the_inflight_diff_counts_what_the_members_pulled_and_have_not_committed(polled):
    inflight = [stats.compute_inflight_total_diff() for _, _, stats in polled.consume_stats]
    assert all(w.pull_offset >= w.consumer_offset for _, _, s in polled.consume_stats for w in s.offset_table.values())
    assert max(inflight) > 0 and inflight[-1] == inflight[-2] == 0  # all pulled is committed by the end
    # a pull offset is never past the queue's end
    assert all(w.pull_offset <= w.broker_offset for _, _, s in polled.consume_stats for w in s.offset_table.values())


def test_a_named_topic_is_answered_for_from_the_first_poll():
    run = simulate(
        scenarios.steady_state(
            duration_ms=20_000, drain_ms=5_000, consume_stats_interval_ms=1_000, consume_stats_topic="TopicTest"
        ),
        seed=1,
    )
    for _, broker, stats in run.consume_stats:
        assert sorted(map(str, stats.offset_table)) == run.queues_on(broker, "TopicTest")
    with pytest.raises(ValueError, match="consume_stats_topic"):
        scenarios.steady_state(consume_stats_topic="NoSuchTopic")


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
    assert {offset for _, offset in committed} and all(offset == polled.stored.get(q, 0) for q, offset in committed)


def test_a_broker_that_is_down_answers_nothing():
    run = simulate(scenarios.broker_outage(consume_stats_interval_ms=5_000), seed=1)
    outage = run.scenario.outages[0]
    asked_b = [when for when, broker, _ in run.consume_stats if broker == outage.broker]
    assert asked_b and not [when for when in asked_b if outage.down_ms <= when < outage.up_ms]
    assert any(outage.down_ms <= when < outage.up_ms for when, broker, _ in run.consume_stats)  # the other answers


def test_while_a_master_is_away_the_dashboard_asks_its_slave_whose_offsets_are_a_stale_copy():
    run = simulate(scenarios.broker_outage_with_slave(consume_stats_interval_ms=5_000), seed=1)
    outage = run.scenario.outages[0]
    rows = {(when, who): stats for when, who, stats in run.consume_stats}
    polls = sorted({when for when, _ in rows})
    away = [when for when in polls if outage.down_ms <= when < outage.up_ms]
    slave = f"{outage.broker}/slave"
    assert away and not run.consume_stats_errors
    assert [when for when, who in rows if who == slave] == away  # the slave, exactly while the master is away
    assert all((when, outage.broker) not in rows for when in away)
    last = rows[max(when for when in polls if when < outage.down_ms), outage.broker]
    first, late = rows[away[0], slave], rows[away[-1], slave]
    assert first.offset_table.keys() == last.offset_table.keys()
    # the slave stores every message its master stored, and nothing new arrives while the master is away
    assert all(first.offset_table[mq].broker_offset >= w.broker_offset for mq, w in last.offset_table.items())
    assert all(late.offset_table[mq].broker_offset == w.broker_offset for mq, w in first.offset_table.items())
    # its offsets are its last copy of the master's (about once a minute): the diff jumps for consumed messages
    assert first.compute_total_diff() > last.compute_total_diff() + 100
    assert all(first.offset_table[mq].consumer_offset <= w.consumer_offset for mq, w in last.offset_table.items())
    # the members commit to the slave once their routes show the master gone: the diff comes back down
    assert late.compute_total_diff() <= last.compute_total_diff()


def test_a_routed_replica_that_does_not_answer_fails_the_whole_poll():
    run = simulate(scenarios.broker_vanishes(consume_stats_interval_ms=5_000), seed=1)
    outage = run.scenario.outages[0]
    removed = min(e.time_ms for e in run.events_of("route removed") if e.who == outage.broker)
    polls = range(5_000, run.scenario.end_ms, 5_000)
    failed = [when for when in polls if outage.down_ms <= when <= removed]
    assert removed > outage.down_ms + 100_000  # the name server keeps routing it for two minutes
    assert run.consume_stats_errors == [(when, f"{outage.broker} does not answer") for when in failed]
    answered = sorted({when for when, _, _ in run.consume_stats})
    assert answered == [when for when in polls if when not in failed]  # not even broker-a's answers are shown
    assert {who for when, who, _ in run.consume_stats if when > removed} == {"broker-a"}


@pytest.mark.parametrize("name", ["broker_outage_with_slave", "broker_vanishes", "slow_member"])
def test_polling_changes_nothing_in_the_run(name):
    build = getattr(scenarios, name)
    quiet, polled = simulate(build(), seed=3), simulate(build(consume_stats_interval_ms=5_000), seed=3)
    assert polled.consume_stats or polled.consume_stats_errors
    for record in ("delivered", "ownership", "lock_ownership", "events", "consumption"):
        assert getattr(quiet, record) == getattr(polled, record), record
    assert quiet.waits.keys() == polled.waits.keys()
    assert all(np.array_equal(quiet.waits[q], polled.waits[q]) for q in quiet.waits)
    assert np.array_equal(quiet.latencies_ms, polled.latencies_ms)
    # only the dashboard's own simulation events are more
    assert {k: v for k, v in quiet.counters.items() if k != "simpy_events"} == {
        k: v for k, v in polled.counters.items() if k != "simpy_events"
    }


def test_nobody_polls_by_default_and_a_bad_interval_is_refused_by_name():
    assert simulate(scenarios.steady_state(duration_ms=20_000, drain_ms=5_000), seed=1).diff_total() == []
    for bad in (-1, 1.5, "5s"):
        with pytest.raises(ValueError, match="consume_stats_interval_ms"):
            scenarios.steady_state(consume_stats_interval_ms=bad)


@pytest.fixture(scope="module")
def traced():
    """Polled every 10 s, on the masters' sampling instants; producers from 12 s to 60 s."""
    sc = scenarios.steady_state(duration_ms=60_000, drain_ms=90_000, consume_stats_interval_ms=10_000)
    return simulate(sc, seed=1, trace=True)


def _handed_out(run, broker, until_ms):
    """Messages of the run's topic that ``broker``'s pull answers carried before ``until_ms``, from the trace (an
    answer at a sampling instant comes after the sample: the sampling task's timer was set 10 s earlier)."""
    return sum(
        int(e.detail.split(": TopicTest@")[1].split()[1])
        for e in run.events_of("pull answered")
        if e.who == broker and ": TopicTest@" in e.detail and e.time_ms < until_ms
    )


def test_the_consume_tps_is_the_messages_handed_out_over_the_last_minute_of_samples(traced):
    tps = {(when, broker): stats.consume_tps for when, broker, stats in traced.consume_stats}
    for broker in traced.scenario.brokers:
        # the first sample after the first message (at 20 s) reaches back to 10 s; at 70 s seven samples span 10-70 s
        assert tps[20_000, broker] == pytest.approx(_handed_out(traced, broker, 20_000) / 10)
        assert tps[70_000, broker] == pytest.approx(_handed_out(traced, broker, 70_000) / 60)
        # then the minute slides past the last answer (about 60 s): 0 from 130 s on
        assert tps[80_000, broker] == pytest.approx(
            (_handed_out(traced, broker, 80_000) - _handed_out(traced, broker, 20_000)) / 60
        )
        assert tps[120_000, broker] > 0 and tps[130_000, broker] == 0
    # stale answers count too: a pull held for a queue its member gave away is answered when messages come
    assert sum(_handed_out(traced, b, 70_000) for b in traced.scenario.brokers) > traced.produced
    assert dict(traced.consume_tps())[70_000] == pytest.approx(sum(tps[70_000, b] for b in traced.scenario.brokers))


def test_a_restarted_broker_counts_from_zero():
    run = simulate(scenarios.broker_outage(consume_stats_interval_ms=5_000), seed=1)
    outage = run.scenario.outages[0]
    tps = {when: stats.consume_tps for when, broker, stats in run.consume_stats if broker == outage.broker}
    before = max(when for when in tps if when < outage.down_ms)
    after = min(when for when in tps if when >= outage.up_ms)
    assert tps[before] > 0 and after < outage.up_ms + 10_000 and tps[after] == 0


def test_the_consume_rate_counts_first_consumptions_in_each_window(traced):
    ends = sorted(float(t) for waits in traced.waits.values() for t in waits[:, 1])
    rate = traced.consume_rate(5_000, 30_000)
    for k, value in enumerate(rate):
        t = 5_000 * k
        assert value == pytest.approx(sum(1 for e in ends if t - 30_000 < e <= t) / 30)
    assert rate.max() > 0 and len(rate) == traced.scenario.end_ms // 5_000 + 1
    with pytest.raises(ValueError, match="window_ms"):
        traced.consume_rate(1_000, 0)

"""Timeline and sweep figures plot exactly what the SimResult (or the sweep rows) say."""

import pytest

from rmqlib.sim import run_variants, scenarios, simulate, sweep, sweep_stats
from rmqlib.viz import (
    PALETTE,
    backlog_figure,
    consumed_by_queue_figure,
    dashboard_figure,
    latency_figure,
    load_figure,
    lock_timeline_figure,
    ownership_timeline_figure,
    short_queue,
    sweep_figure,
)
from rmqlib.viz.style import plain_title


@pytest.fixture(scope="module")
def crash():
    return simulate(scenarios.crash(duration_ms=90_000, drain_ms=30_000), seed=3)


@pytest.fixture(scope="module")
def orderly():
    return simulate(scenarios.orderly_crash(duration_ms=120_000, drain_ms=60_000, produce_rate_per_queue=5.0), seed=1)


def _bars(fig):
    """holder -> sorted (queue label, start s, end s) read back from the bar traces."""
    out = {}
    for t in fig.data:
        if t.type == "bar" and t.name != "no owner (pause)":
            out[t.name] = sorted((y, b, b + x) for y, b, x in zip(t.y, t.base, t.x))
    return out


def test_short_queue_label():
    assert short_queue("MessageQueue [topic=T, brokerName=broker-a, queueId=3]") == "T/broker-a:3"
    assert short_queue("whatever") == "whatever"


def test_ownership_timeline_has_one_bar_per_interval_in_the_consumers_colour(crash):
    fig = ownership_timeline_figure(crash)
    bars = _bars(fig)
    expected = {}
    for queue in crash.queues:
        for iv in crash.ownership.get(queue, []):
            expected.setdefault(iv.holder, []).append(
                (short_queue(queue).split("/", 1)[1], iv.start_ms / 1000, iv.end_ms / 1000)
            )
    assert bars == {h: sorted(v) for h, v in expected.items()}
    cids = [s.client_id for s in crash.scenario.consumers]
    for t in fig.data:
        if t.type == "bar" and t.name in cids:
            assert t.marker.color == PALETTE[cids.index(t.name)]
    assert fig.layout.meta["intervals"] == {
        q: [[i.holder, i.start_ms, i.end_ms] for i in sorted(ivs, key=lambda i: (i.start_ms, i.holder))]
        for q, ivs in crash.ownership.items()
    }


def test_ownership_timeline_marks_events_and_pauses(crash):
    fig = ownership_timeline_figure(crash)
    markers = {t.name: len(t.x) for t in fig.data if t.type == "scatter"}
    for kind in ("join", "leave", "notify", "rebalance", "channel closed"):
        assert markers.get(kind, 0) == len(crash.events_of(kind))
    assert markers["leave"] == 1 and markers["notify"] > 0
    pauses = crash.pauses()
    assert fig.layout.meta["pauses"] == {q: [list(p) for p in pauses[q]] for q in crash.queues}
    shaded = [t for t in fig.data if t.name == "no owner (pause)"]
    n = sum(len(v) for v in pauses.values())
    assert (len(shaded[0].x) if shaded else 0) == n


def test_rare_events_are_drawn_over_frequent_ones_and_listed_in_the_order_asked(crash):
    kinds = ("leave", "channel closed", "notify", "rebalance", "join")
    fig = ownership_timeline_figure(crash, events=kinds)
    drawn = [(t.name, len(t.x)) for t in fig.data if t.type == "scatter"]
    assert [name for name, _ in drawn] != list(kinds)  # the counts differ from the order asked: drawing moved them
    assert [count for _, count in drawn] == sorted((len(crash.events_of(k)) for k in kinds), reverse=True)
    assert drawn[-1][1] == 1 and drawn[0][0] in ("notify", "rebalance")  # the one leave on top of the rounds
    listed = sorted((t for t in fig.data if t.type == "scatter"), key=lambda t: t.legendrank)
    assert [t.name for t in listed] == list(kinds)
    assert all(t.legendrank is None for t in fig.data if t.type == "bar")  # bars keep plotly's default, first


def test_host_loss_pause_is_shaded_on_the_lost_consumers_queues():
    r = simulate(scenarios.host_loss(duration_ms=200_000, drain_ms=20_000), seed=0)
    fig = ownership_timeline_figure(r)
    [shaded] = [t for t in fig.data if t.name == "no owner (pause)"]
    longest = max(x for x in shaded.x)
    assert longest * 1000 == pytest.approx(r.longest_pause_ms()) and longest > 60
    assert "longest" in plain_title(fig.layout)  # headline and detail


def test_lock_timeline_plots_the_broker_lock_table_and_every_listener_call(orderly):
    fig = lock_timeline_figure(orderly)
    queues = set(orderly.queues)
    assert fig.layout.meta["locks"] == {
        q: [[i.holder, i.start_ms, i.end_ms] for i in sorted(v, key=lambda i: (i.start_ms, i.holder))]
        for q, v in orderly.lock_ownership.items()
    }
    lock_bars = sum(len(t.x) for t in fig.data if t.type == "bar")
    assert lock_bars == sum(len(orderly.lock_ownership.get(q, [])) for q in queues)
    ticks = sum(len(t.x) for t in fig.data if t.type == "scatter" and t.name.startswith("consumed"))
    assert ticks == sum(len(orderly.consumption.get(q, [])) for q in queues) == fig.layout.meta["consume_batches"]


def test_lock_timeline_marks_calls_of_two_consumers_at_once_and_shows_only_the_time_range_asked():
    restart = simulate(scenarios.orderly_broker_restart(), seed=8)
    fig = lock_timeline_figure(restart, events=("broker down", "broker up"), time_range_ms=(60_000, 100_000))
    assert fig.layout.xaxis.range == (60, 100) and fig.layout.meta["time_range_ms"] == [60_000, 100_000]
    ticks = [x for t in fig.data if t.type == "scatter" and t.name.startswith("consumed") for x in t.x]
    in_range = [b for q in restart.queues for b in restart.consumption.get(q, ()) if 60_000 <= b.start_ms <= 100_000]
    assert sorted(ticks) == sorted(b.start_ms / 1000 for b in in_range) and len(ticks) < sum(
        len(restart.consumption.get(q, ())) for q in restart.queues
    )
    [crosses] = [t for t in fig.data if t.name == "two consumers at once"]
    at_once = {b for pairs in restart.overlapping_calls().values() for pair in pairs for b in pair}
    assert sorted(crosses.x) == sorted(b.start_ms / 1000 for b in at_once) and len(crosses.x) > 100
    assert {t.name for t in fig.data if t.type == "scatter" and t.y[0] == "events"} == {"broker down", "broker up"}
    # the crash run has no call overlapping another consumer's, so no crosses and no legend entry for them
    assert not [t for t in lock_timeline_figure(simulate(scenarios.orderly_crash(), seed=1)).data if "once" in t.name]
    for bad in [(5, 5), (1,), (0, restart.scenario.end_ms + 1)]:
        with pytest.raises(ValueError, match="time_range_ms"):
            lock_timeline_figure(restart, time_range_ms=bad)


def test_load_figure_rows_are_the_per_second_counts_averaged_over_the_window(crash):
    fig = load_figure(crash, window_ms=5_000)
    (heat,) = fig.data
    rows = dict(zip(heat.y, (list(z) for z in heat.z)))
    assert set(rows) == set(crash.load)
    for cid, series in crash.load.items():
        per = 5_000 // crash.load_bucket_ms
        want = [sum(series[i : i + per]) / (per * crash.load_bucket_ms / 1000) for i in range(0, len(series), per)]
        assert rows[cid][: len(want)] == pytest.approx(want, abs=1e-3)
        assert sum(rows[cid]) * per * crash.load_bucket_ms / 1000 == pytest.approx(sum(series), abs=0.05)
    assert fig.layout.meta["totals"] == crash.consumed_by()
    with pytest.raises(ValueError, match="window_ms"):
        load_figure(crash, window_ms=0)


def test_load_figure_marks_each_event_on_its_consumers_row_and_a_brokers_on_an_events_row_on_top():
    outage = simulate(scenarios.pop_broker_outage(), seed=1)
    fig = load_figure(outage, events=("pop failed", "broker down", "broker up", "revive"))
    plain = load_figure(outage)
    heat, *marks = fig.data
    by_name = {t.name: t for t in marks}
    assert set(by_name) == {"pop failed", "broker down", "broker up", "revive"}
    failed, fails = outage.events_of("pop failed"), by_name["pop failed"]
    assert sorted(zip(fails.x, fails.y)) == sorted((e.time_ms / 1000, e.who) for e in failed)
    assert len({e.who for e in failed}) > 1  # the markers lie on several consumers' rows
    on_top = [t for t in marks if t is not fails]
    assert {y for t in on_top for y in t.y} == {"events"}
    assert sorted(x for t in on_top for x in t.x) == sorted(
        e.time_ms / 1000 for e in outage.events if e.kind in ("broker down", "broker up", "revive")
    )
    assert fig.layout.meta["events"]["pop failed"] == len(failed) > 0
    # the events row is the heatmap's top row, empty (plotly.js draws nothing on a category its heatmap lacks);
    # below it, the load as drawn without events
    assert list(fig.layout.yaxis.categoryarray) == list(heat.y)[::-1] and heat.y[0] == "events"
    # x holds the windows' edges, one more than the columns: each cell spans its window, not centred on its start
    assert len(heat.x) == len(heat.z[0]) + 1 and heat.x[0] == 0 and list(heat.customdata[0]) == list(heat.x[:-1])
    assert list(heat.z[0]) == [None] * len(heat.z[0])
    assert list(heat.y[1:]) == list(plain.data[0].y) and list(heat.z[1:]) == list(plain.data[0].z)
    # without events, only the load: no markers and no events row
    assert len(plain.data) == 1 and "events" not in plain.layout.yaxis.categoryarray
    assert fig.layout.showlegend is True and plain.layout.showlegend is False


def test_load_figure_keys_a_single_event_kind_in_its_legend():
    late = simulate(scenarios.scale_out(), seed=1)
    fig = load_figure(late, events=("join",))
    [joins] = fig.data[1:]
    assert joins.name == "join" and fig.layout.showlegend is True  # plotly would show no legend for one trace


def test_latency_figure_reports_the_runs_percentiles(crash, orderly):
    fig = latency_figure({"crash": crash, "orderly": orderly})
    meta = fig.layout.meta["percentiles"]
    assert meta["crash"]["99"] == crash.latency_percentile(99)
    assert meta["orderly"]["50"] == orderly.latency_percentile(50)
    for t in fig.data:
        assert list(t.y) == sorted(t.y) and t.y[-1] == 1.0  # an ECDF ends at 1


def test_backlog_figure_draws_each_runs_messages_waiting_summed_over_its_queues(crash, orderly):
    fig = backlog_figure({"crash": crash, "orderly": orderly}, step_ms=2_000)
    for trace, run in zip(fig.data, (crash, orderly)):
        total = sum(run.backlog(2_000).values())
        assert list(trace.y) == total.tolist() and list(trace.x) == [2.0 * i for i in range(len(total))]
        assert fig.layout.meta["most"][trace.name] == total.max() > 0
    assert [t.name for t in fig.data] == ["crash", "orderly"]
    assert plain_title(fig.layout).startswith(f"Messages waiting: crash at most {int(max(fig.data[0].y)):,} (")


def test_dashboard_figure_sets_what_a_dashboard_showed_beside_what_the_run_did(crash):
    run = simulate(scenarios.slow_member(duration_ms=40_000, drain_ms=70_000, consume_stats_interval_ms=5_000), 1)
    fig = dashboard_figure(run)
    diff, waiting, tps, consumed = fig.data
    polls = [when / 1000 for when, _ in run.diff_total()]
    assert list(diff.x) == list(tps.x) == polls and len(polls) == run.scenario.end_ms // 5_000 - 1
    assert list(diff.y) == [d for _, d in run.diff_total()] and list(tps.y) == [v for _, v in run.consume_tps()]
    assert list(waiting.y) == sum(run.backlog().values()).tolist()
    assert list(consumed.y) == run.consume_rate(1_000, 10_000).tolist() and max(consumed.y) > 0
    assert [t.yaxis for t in fig.data] == ["y", "y", "y2", "y2"] and diff.line.shape == tps.line.shape == "hv"
    assert fig.layout.meta["most"]["the dashboard's consume TPS"] == max(tps.y) > max(consumed.y)
    assert plain_title(fig.layout).startswith(
        f"What a dashboard shows, and what the run did: the diff at most {max(diff.y):,}"
    )
    with pytest.raises(ValueError, match="result: a run a dashboard polled"):
        dashboard_figure(crash)
    with pytest.raises(TypeError, match="result"):
        dashboard_figure({"a": run})


def test_dashboard_figure_breaks_its_lines_at_a_failed_poll_and_marks_it():
    run = simulate(scenarios.broker_vanishes(produce_rate_per_queue=2.0, consume_stats_interval_ms=5_000), seed=0)
    failed = [when for when, _ in run.consume_stats_errors]
    fig = dashboard_figure(run)
    diff, _, tps, _, marks = fig.data
    answered = dict(run.diff_total())
    assert failed and not set(failed) & set(answered)
    assert list(diff.x) == [when / 1000 for when in sorted({*answered, *failed})]
    assert [y is None for y in diff.y] == [x * 1000 in failed for x in diff.x] == [y is None for y in tps.y]
    assert list(marks.x) == [when / 1000 for when in failed] and set(marks.y) == {0} and marks.mode == "markers"
    assert marks.name == "a poll that failed" and fig.layout.meta["failed"] == len(failed)
    assert plain_title(fig.layout).endswith(f"; {len(failed)} polls failed")
    # a run whose every poll failed still draws what the run did, and says so
    group_view = simulate(scenarios.steady_state(message_model="BROADCASTING", consume_stats_interval_ms=10_000), 1)
    every = dashboard_figure(group_view)
    assert all(y is None for y in every.data[0].y) and every.layout.meta["failed"] == len(
        group_view.consume_stats_errors
    )


def test_sweep_figure_shows_every_seed_not_a_single_run():
    rows = sweep(
        scenarios.steady_state(duration_ms=30_000, drain_ms=10_000),
        "rebalance_interval_ms",
        [5_000, 20_000],
        seeds=[0, 1, 2],
        progress=False,
    )
    fig = sweep_figure(rows, "rebalance_interval_ms", "rebalances")
    [box] = fig.data
    assert box.type == "box" and box.boxpoints == "all" and len(box.y) == 6
    assert fig.layout.meta["values"][""] == {
        str(v): [r["rebalances"] for r in rows if r["rebalance_interval_ms"] == v] for v in (5_000, 20_000)
    }
    stats = sweep_stats(rows, "rebalance_interval_ms", "rebalances")[""]
    assert stats[5_000][1] > stats[20_000][1]  # rebalancing more often runs more rounds
    rng = sweep_figure(rows, "rebalance_interval_ms", "rebalances", kind="range")
    [line] = rng.data
    assert list(line.y) == [stats[5_000][1], stats[20_000][1]]
    assert list(line.error_y.array) == [stats[v][2] - stats[v][1] for v in (5_000, 20_000)]
    with pytest.raises(ValueError, match="no column"):
        sweep_figure(rows, "nope", "rebalances")
    with pytest.raises(ValueError, match="kind"):
        sweep_figure(rows, "rebalance_interval_ms", "rebalances", kind="line")


def test_run_variants_groups_rows_and_adds_extra_columns():
    rows = run_variants(
        {
            "steady": scenarios.steady_state(duration_ms=20_000, drain_ms=5_000),
            "out": scenarios.scale_out(duration_ms=80_000, drain_ms=5_000),
        },
        seeds=[0, 1],
        extra={"handovers": lambda r: r.handovers(after_ms=30_000)},
    )
    assert [(r["variant"], r["seed"]) for r in rows] == [("steady", 0), ("steady", 1), ("out", 0), ("out", 1)]
    assert all(r["handovers"] == 0 for r in rows[:2]) and all(r["handovers"] > 0 for r in rows[2:])
    fig = sweep_figure(rows, "variant", "handovers")
    assert len(fig.data[0].y) == 4


def test_latency_axis_is_log_only_when_latencies_span_more_than_20x(crash):
    lat = sorted(crash.latencies_ms)
    fig = latency_figure(crash)
    assert fig.layout.xaxis.type == ("log" if max(lat[-1], 0.5) / max(lat[0], 0.5) > 20 else "linear")
    low, high = max(lat[0], 0.5), max(lat[-1], 0.5)
    lo, hi = fig.layout.xaxis.range
    if fig.layout.xaxis.type == "log":
        assert 10**lo < low and 10**hi > high  # the fastest and slowest messages lie inside the plot
    else:
        assert lo == 0 and hi > high
    [line] = fig.data  # climbs to 1 at the slowest message, then runs flat to the right edge
    right = 10**hi if fig.layout.xaxis.type == "log" else hi
    assert list(line.x[-2:]) == [high, pytest.approx(right)] and list(line.y[-2:]) == [1.0, 1.0]


def test_consumed_by_queue_stacks_each_consumers_messages_beside_what_the_queue_stores():
    twins = simulate(scenarios.shared_client_id(duration_ms=30_000, drain_ms=10_000), seed=1)
    fig = consumed_by_queue_figure(twins)
    labels = {short_queue(q).split("/", 1)[-1]: q for q in twins.stored}
    bars = {t.name: dict(zip(t.x, t.y)) for t in fig.data if t.type == "bar"}
    [stored] = [t for t in fig.data if t.type == "scatter"]
    assert {labels[x]: y for x, y in zip(stored.x, stored.y)} == twins.stored
    never = twins.unconsumed()
    assert never and {labels[x]: y for x, y in bars.pop("never consumed").items() if y} == never
    for q, label in ((q, label) for label, q in labels.items()):
        consumed = sum(bars[member].get(label, 0) for member in bars)
        assert consumed == sum(len(b.offsets) for b in twins.consumption.get(q, ()))
        assert consumed == twins.stored[q] * (2 if any("#2" in m and bars[m].get(label) for m in bars) else 1) or (
            q in never and consumed == 0
        )
    assert "never consumed" not in {
        t.name
        for t in consumed_by_queue_figure(
            simulate(scenarios.steady_state(duration_ms=20_000, drain_ms=10_000), seed=1)
        ).data
    }

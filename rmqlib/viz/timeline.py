"""Figures of simulated runs: who owned which queue when, locks, load, latency, and sweeps over seeds.

Every builder takes what :mod:`rmqlib.sim` returns (a ``SimResult`` or the
rows of ``sweep``) and returns a ``plotly.graph_objects.Figure``; nothing here
runs a simulation except :func:`run_variants`, a small helper that runs named
scenarios over seeds. As in :mod:`rmqlib.viz.figures`, each figure carries the
numbers it plots in ``layout.meta`` so tests can compare it with the run.

Time is shown in seconds of simulated time. Consumers keep their colour from
:mod:`rmqlib.viz.colors`, in the order the scenario lists them (start order).
Sweep figures always show every seed (a box with all points, or mean with a
min..max bar), never a single run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from rmqlib.broker.send_back import Attempt
from rmqlib.checks import ArgumentTypeError, check_bool, check_each, check_instance, check_int, check_str
from rmqlib.protocol import MessageModel
from rmqlib.sim.result import SimResult
from rmqlib.sim.sweep import sweep_stats, sweep_values
from rmqlib.viz.colors import UNASSIGNED_COLOR, consumer_colors
from rmqlib.viz.i18n import phrase, text
from rmqlib.viz.style import ROW_LABEL_STANDOFF_PX, house_style

#: Event kinds drawn as markers on the ownership timeline, with their marker symbol.
TIMELINE_EVENTS: dict[str, str] = {
    "join": "triangle-up",
    "leave": "x",
    "notify": "diamond",
    "rebalance": "circle",
    "channel closed": "square",
    "channel expired": "square-x",
    # routes that change (chapter 10b)
    "topic change": "star",
    "route": "hexagon-open",
    "route removed": "x-thin-open",
    "route reduced": "diamond-open",
    "broker down": "triangle-down",
    "broker up": "triangle-up-open",
    "pull refused": "line-ns-open",
    "slave sync": "square-open",
    # Pop across a broker outage (chapter 11)
    "pop failed": "x-thin-open",
    "revive": "star-open",
    # a gRPC group's proxy (chapter 11)
    "proxy unregistered": "square-x-open",
    "proxy cleared": "circle-open",
    "receive failed": "x-thin-open",
    "ack refused": "hourglass",  # filled: it is drawn over the receives that fail beside it
    "change refused": "bowtie-open",
}

PAUSE_COLOR = "rgba(251,13,13,0.18)"


def _result(result, name: str = "result") -> SimResult:
    return check_instance(result, name, SimResult)


def _event_kinds(events) -> list[str]:
    return check_each(events, "events", lambda v, label: check_str(v, label), max_len=len(TIMELINE_EVENTS) * 4)


def _title(title):
    return None if title is None else phrase(check_str(title, "title", empty=True))


def kind_label(kind: str) -> str:
    """An event kind as the figures name it (in the current language; a kind the book does not draw as it is)."""
    return text(kind) if kind in TIMELINE_EVENTS or kind in _OTHER_KINDS else phrase(kind)


_OTHER_KINDS = (
    "heartbeat",
    "find consumer ids",
    "step",
    "take",
    "drop",
    "lock",
    "unlock",
    "pull",
    "pull held",
    "reput",
    "pull answered",
    "pull woken",
    "pop",
    "subscription",
)


# --------------------------------------------------------------------------- helpers


def _s(ms: float) -> float:
    return ms / 1000.0


def short_queue(queue: str) -> str:
    """``MessageQueue [topic=T, brokerName=broker-a, queueId=3]`` -> ``broker-a:3`` (topic kept if not the only one)."""
    check_str(queue, "queue", empty=True)
    if not queue.startswith("MessageQueue [") or not queue.endswith("]"):
        return queue
    fields = dict(part.partition("=")[::2] for part in queue[len("MessageQueue [") : -1].split(", "))
    return f"{fields.get('topic', '?')}/{fields.get('brokerName', '?')}:{fields.get('queueId', '?')}"


def _queue_labels(queues: Sequence[str]) -> dict[str, str]:
    labels = {q: short_queue(q) for q in queues}
    topics = {label.split("/", 1)[0] for label in labels.values() if "/" in label}
    if len(topics) <= 1:
        labels = {q: label.split("/", 1)[-1] for q, label in labels.items()}
    return labels


def _consumer_order(result) -> list[str]:
    return [spec.client_id for spec in result.scenario.consumers]


def _interval_traces(
    intervals_by_queue: Mapping[str, Sequence],
    labels: Mapping[str, str],
    colors: Mapping[str, str],
    order: Sequence[str],
    opacity: float = 0.9,
    legendgroup_prefix: str = "",
) -> list[go.Bar]:
    """One horizontal Bar trace per holder: a bar per interval, at its queue's row."""
    by_holder: dict[str, list] = {}
    for intervals in intervals_by_queue.values():
        for iv in intervals:
            by_holder.setdefault(iv.holder, []).append(iv)
    traces = []
    for holder in [h for h in order if h in by_holder] + sorted(h for h in by_holder if h not in order):
        ivs = sorted(by_holder[holder], key=lambda i: (labels.get(i.queue, i.queue), i.start_ms))
        traces.append(
            go.Bar(
                orientation="h",
                name=holder,
                legendgroup=legendgroup_prefix + holder,
                y=[labels.get(i.queue, i.queue) for i in ivs],
                base=[_s(i.start_ms) for i in ivs],
                x=[_s(i.end_ms - i.start_ms) for i in ivs],
                marker=dict(color=colors.get(holder, UNASSIGNED_COLOR), line=dict(width=0)),
                opacity=opacity,
                customdata=[[i.queue, i.start_ms, i.end_ms] for i in ivs],
                hovertemplate=(
                    f"{holder}<br>%{{customdata[0]}}<br>%{{customdata[1]}} .. %{{customdata[2]}} ms<extra></extra>"
                ),
            )
        )
    return traces


EVENT_LEGEND_RANK = 1001  # plotly's default rank is 1000: event kinds come after the bars' entries


def _event_traces(result, kinds: Iterable[str], row: str, own_rows: Sequence[str] = ()) -> list[go.Scatter]:
    """A marker trace per event kind that occurred: on the row named by the event's ``who`` when it is one of
    ``own_rows`` (a consumer's row), else on ``row``. The legend lists them in the order of ``kinds``, after the
    figure's other entries; the rarer kinds are drawn over the more frequent ones (one broker going down is not
    hidden under the rebalance rounds beside it)."""
    traces = []
    own = set(own_rows)
    for rank, kind in enumerate(kinds, start=EVENT_LEGEND_RANK):
        events = result.events_of(kind)
        if not events:
            continue
        traces.append(
            go.Scatter(
                legendrank=rank,
                x=[_s(e.time_ms) for e in events],
                y=[e.who if e.who in own else row for e in events],
                mode="markers",
                name=kind_label(kind),
                legendgroup=f"event {kind}",  # one group per kind: a shared group would stack in a column
                marker=dict(
                    symbol=TIMELINE_EVENTS.get(kind, "circle"), size=9, color="#444", line=dict(width=1, color="#fff")
                ),
                customdata=[[e.time_ms, e.who, e.detail] for e in events],
                hovertemplate=text(
                    "{kind} at %{{customdata[0]}} ms<br>%{{customdata[1]}} %{{customdata[2]}}<extra></extra>",
                    kind=kind_label(kind),
                ),
            )
        )
    return sorted(traces, key=lambda trace: -len(trace.x))


def _intervals_meta(intervals_by_queue) -> dict:
    return {
        q: [[i.holder, i.start_ms, i.end_ms] for i in sorted(ivs, key=lambda i: (i.start_ms, i.holder))]
        for q, ivs in intervals_by_queue.items()
    }


# --------------------------------------------------------------------------- ownership


def _rows_axis(rows: list[str]) -> dict:
    """A y axis of named rows, the first on top, the names standing off the plot's left edge."""
    return dict(
        type="category",
        categoryorder="array",
        categoryarray=rows[::-1],
        ticklabelstandoff=ROW_LABEL_STANDOFF_PX,
        title=None,
    )


def ownership_timeline_figure(
    result,
    events: Sequence[str] = ("join", "leave", "notify", "rebalance", "channel closed", "channel expired"),
    min_pause_ms: int = 0,
    title: str | None = None,
) -> go.Figure:
    """Queues on the y axis, time on x: a bar per ownership interval, coloured by consumer.

    Red bands mark pauses (stretches where no live consumer believed it owned the
    queue, :meth:`SimResult.pauses`); markers on the top row are the run's events
    of the given ``kinds`` (join, leave, notify, rebalance, ...).
    """
    _result(result)
    events = _event_kinds(events)
    min_pause_ms = check_int(min_pause_ms, "min_pause_ms", 0)
    title = _title(title)
    order = _consumer_order(result)
    colors = consumer_colors(order)
    labels = _queue_labels(result.queues)
    pauses = result.pauses(min_pause_ms)
    fig = go.Figure()
    pause_spans = [(q, a, b) for q in result.queues for a, b in pauses.get(q, ())]
    if pause_spans:
        fig.add_trace(
            go.Bar(
                orientation="h",
                name=text("no owner (pause)"),
                y=[labels[q] for q, _, _ in pause_spans],
                base=[_s(a) for _, a, _ in pause_spans],
                x=[_s(b - a) for _, a, b in pause_spans],
                marker=dict(color=PAUSE_COLOR, line=dict(color="#FB0D0D", width=1)),
                customdata=[[q, a, b] for q, a, b in pause_spans],
                hovertemplate=text(
                    "no owner<br>%{customdata[0]}<br>%{customdata[1]} .. %{customdata[2]} ms<extra></extra>"
                ),
            )
        )
    for trace in _interval_traces({q: result.ownership.get(q, []) for q in result.queues}, labels, colors, order):
        fig.add_trace(trace)
    row = text("events")
    for trace in _event_traces(result, events, row):
        fig.add_trace(trace)
    rows = [row] + [labels[q] for q in result.queues]
    overlaps = result.overlaps()
    if title is None:
        title = text(
            "{name} (seed {seed}): who owned which queue; total pause {total:.1f} s, longest {longest:.1f} s, "
            "{overlaps} overlap(s)",
            name=result.scenario.name,
            seed=result.seed,
            total=result.total_pause_ms(min_pause_ms) / 1000,
            longest=result.longest_pause_ms() / 1000,
            overlaps=sum(map(len, overlaps.values())),
        )
    fig.update_layout(
        barmode="overlay",
        title=title,
        height=max(320, 90 + 26 * len(rows)),
        xaxis=dict(title=text("simulated time (s)"), range=[0, _s(result.scenario.end_ms)]),
        yaxis=_rows_axis(rows),
        legend=dict(title=text("consumer")),
        meta={
            "view": "ownership_timeline",
            "scenario": result.scenario.name,
            "seed": result.seed,
            "queues": list(result.queues),
            "intervals": _intervals_meta(result.ownership),
            "pauses": {q: [list(p) for p in pauses.get(q, ())] for q in result.queues},
            "events": {k: len(result.events_of(k)) for k in events},
            "overlaps": {q: [list(o) for o in v] for q, v in overlaps.items()},
        },
    )
    return house_style(fig)


# --------------------------------------------------------------------------- locks


def lock_timeline_figure(
    result,
    show_consumption: bool = True,
    title: str | None = None,
    events: Sequence[str] = ("leave",),
    time_range_ms: tuple[int, int] | None = None,
) -> go.Figure:
    """Orderly mode: wide pale bars are broker lock ownership (``lock_ownership``), narrow dots the
    listener calls (``consumption``) at their start time, both coloured by consumer. A listener call that ran
    while another consumer's call on the same queue was running (:meth:`SimResult.overlapping_calls`) is also
    marked with a black cross. Markers on the top row are the run's events of the given kinds; ``time_range_ms``
    (start, end) shows only that stretch of the run, and only the listener calls that start in it."""
    _result(result)
    show_consumption = check_bool(show_consumption, "show_consumption")
    title = _title(title)
    events = _event_kinds(events)
    end_ms = result.scenario.end_ms
    if time_range_ms is None:
        shown = (0, end_ms)
    else:
        pair = check_each(time_range_ms, "time_range_ms", lambda v, label: check_int(v, label, 0, end_ms), max_len=2)
        if len(pair) != 2 or pair[0] >= pair[1]:
            raise ValueError(f"time_range_ms must be (start, end) with start < end, got {time_range_ms!r}")
        shown = (pair[0], pair[1])
    order = _consumer_order(result)
    colors = consumer_colors(order)
    labels = _queue_labels(result.queues)
    fig = go.Figure()
    for trace in _interval_traces(
        {q: result.lock_ownership.get(q, []) for q in result.queues},
        labels,
        colors,
        order,
        opacity=0.45,
        legendgroup_prefix="lock ",
    ):
        trace.name = text("lock: {cid}", cid=trace.name)
        fig.add_trace(trace)
    batches_total = 0
    if show_consumption:
        by_consumer: dict[str, list] = {}
        for q in result.queues:
            for b in result.consumption.get(q, ()):
                if shown[0] <= b.start_ms <= shown[1]:
                    by_consumer.setdefault(b.consumer, []).append(b)
        for cid in [c for c in order if c in by_consumer]:
            batches = by_consumer[cid]
            batches_total += len(batches)
            fig.add_trace(
                go.Scatter(
                    x=[_s(b.start_ms) for b in batches],
                    y=[labels[b.queue] for b in batches],
                    mode="markers",
                    name=text("consumed: {cid}", cid=cid),
                    legendgroup="consumed " + cid,
                    marker=dict(symbol="line-ns-open", size=10, color=colors[cid]),
                    customdata=[[b.start_ms, len(b.offsets)] for b in batches],
                    hovertemplate=text(
                        "{cid} consumed %{{customdata[1]}} at %{{customdata[0]}} ms<extra></extra>", cid=cid
                    ),
                )
            )
        overlapping = {b for pairs in result.overlapping_calls().values() for pair in pairs for b in pair}
        at_once = sorted(
            (b for b in overlapping if shown[0] <= b.start_ms <= shown[1] and b.queue in labels),
            key=lambda b: (b.start_ms, b.queue, b.consumer),
        )
        if at_once:
            fig.add_trace(
                go.Scatter(
                    x=[_s(b.start_ms) for b in at_once],
                    y=[labels[b.queue] for b in at_once],
                    mode="markers",
                    name=text("two consumers at once"),
                    # black, outlined in white: no consumer's bar or tick hides it (the palette's fourth is red)
                    marker=dict(symbol="x", size=11, color="#111111", line=dict(color="white", width=1.5)),
                    customdata=[[b.consumer, b.start_ms] for b in at_once],
                    hovertemplate=text(
                        "%{customdata[0]} consumed at %{customdata[1]} ms while another consumer's call on this "
                        "queue ran<extra></extra>"
                    ),
                )
            )
    for trace in _event_traces(result, events, text("events")):
        fig.add_trace(trace)
    rows = [text("events")] + [labels[q] for q in result.queues]
    if title is None:
        title = text(
            "{name} (seed {seed}): broker lock table (bars) and listener calls (ticks); broker lock expiry "
            "{expiry:.0f} s",
            name=result.scenario.name,
            seed=result.seed,
            expiry=result.scenario.broker_lock_expiry_ms / 1000,
        )
    fig.update_layout(
        barmode="overlay",
        title=title,
        height=max(320, 90 + 26 * len(rows)),
        xaxis=dict(title=text("simulated time (s)"), range=[_s(shown[0]), _s(shown[1])]),
        yaxis=_rows_axis(rows),
        meta={
            "view": "lock_timeline",
            "locks": _intervals_meta(result.lock_ownership),
            "consume_batches": batches_total,
            "time_range_ms": list(shown),
        },
    )
    return house_style(fig)


# --------------------------------------------------------------------------- load and latency


def _per_second(series: Sequence[int], buckets: int, bucket_ms: int) -> list[float]:
    """Messages per second in consecutive windows of ``buckets`` buckets of ``bucket_ms`` each."""
    seconds = buckets * bucket_ms / 1000
    return [round(sum(series[i : i + buckets]) / seconds, 3) for i in range(0, len(series), buckets)]


def load_figure(result, title: str | None = None, window_ms: int = 5_000, events: Sequence[str] = ()) -> go.Figure:
    """Messages consumed per second by each consumer, one row each, averaged over ``window_ms``.

    A heatmap rather than lines: consumers with the same load would hide each other, and an idle
    consumer is an empty row. Averaging over a few seconds removes the aliasing of bursts against
    one-second buckets. The run's events of the kinds in ``events`` are markers over it: on their consumer's row,
    or (a broker's, say) on an events row on top.
    """
    _result(result)
    title = _title(title)
    if isinstance(window_ms, bool) or not isinstance(window_ms, int) or window_ms <= 0:
        raise ValueError(f"window_ms must be a positive int, got {window_ms!r}")
    events = _event_kinds(events)
    order = _consumer_order(result)
    bucket = result.load_bucket_ms
    per = max(1, window_ms // bucket)
    loads = [_per_second(result.load.get(cid, []), per, bucket) for cid in order]
    width = max((len(r) for r in loads), default=0)
    loads = [r + [0.0] * (width - len(r)) for r in loads]
    idle = result.idle_consumers()
    row = text("events")
    marks = _event_traces(result, events, row, order)
    rows = order
    if any(row in trace.y for trace in marks):  # the events row on top, an empty row of the heatmap (plotly.js
        rows, loads = [row] + order, [[None] * width] + loads  # cannot draw one on a category it does not have)
    fig = go.Figure(
        go.Heatmap(
            z=loads,
            x=[_s(i * per * bucket) for i in range(width + 1)],  # the windows' edges: each cell spans its window
            customdata=[[_s(i * per * bucket) for i in range(width)]] * len(rows),
            y=rows,
            xgap=1,
            ygap=2,
            colorscale=[[0, "#F4F6FA"], [1, "#2E91E5"]],
            zmin=0,
            colorbar=dict(title=text("msg/s"), thickness=12),
            hovertemplate=text("%{y}<br>from %{customdata} s: %{z} msg/s<extra></extra>"),
            hoverongaps=False,
            name=text("load"),
            showscale=True,
        )
    )
    for trace in marks:
        fig.add_trace(trace)
    totals = result.consumed_by()
    if title is None:
        title = text(
            "{name} (seed {seed}): messages consumed per second, {window:g} s averages; idle: {idle}",
            name=result.scenario.name,
            seed=result.seed,
            window=per * bucket / 1000,
            idle=len(idle),
        )
    fig.update_layout(
        title=title,
        showlegend=bool(marks),  # plotly shows no legend for a single trace: one event kind would have no key
        height=max(260, 120 + 34 * len(rows)),
        xaxis=dict(title=text("simulated time (s)")),
        yaxis=_rows_axis(rows),
        meta={
            "view": "load",
            "totals": totals,
            "bucket_ms": bucket,
            "window_ms": per * bucket,
            "idle": idle,
            "events": {k: len(result.events_of(k)) for k in events},
        },
    )
    return house_style(fig)


def consumed_by_queue_figure(result, title: str | None = None) -> go.Figure:
    """For each queue of the scenario's topics, how many of its messages each consumer's listener took, stacked,
    beside how many the queue stores: a queue consumed once is as tall as its marker, one consumed twice twice as
    tall, and what nobody consumed is a hatched red bar of its own (the colour of a pause)."""
    _result(result)
    title = _title(title)
    queues = [q for q in result.queues if q in result.stored]
    labels = _queue_labels(queues)
    order = _consumer_order(result)
    colors = consumer_colors(order)
    counts: dict[str, dict[str, int]] = {q: {} for q in queues}
    for q in queues:
        for batch in result.consumption.get(q, ()):
            counts[q][batch.consumer] = counts[q].get(batch.consumer, 0) + len(batch.offsets)
    never = result.unconsumed()
    x = [labels[q] for q in queues]
    fig = go.Figure()
    for member in order:
        y = [counts[q].get(member, 0) for q in queues]
        if any(y):
            fig.add_trace(
                go.Bar(
                    x=x,
                    y=y,
                    name=member,
                    marker=dict(color=colors[member], line=dict(width=0)),
                    hovertemplate=f"{member}<br>%{{x}}: %{{y}}<extra></extra>",
                )
            )
    if any(never.get(q, 0) for q in queues):
        fig.add_trace(
            go.Bar(
                x=x,
                y=[never.get(q) or None for q in queues],  # no zero-high bar: its red outline would show
                name=text("never consumed"),
                marker=dict(color=PAUSE_COLOR, line=dict(color="#FB0D0D", width=1), pattern=dict(shape="/")),
                hovertemplate=text("never consumed<br>%{x}: %{y}<extra></extra>"),
            )
        )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[result.stored[q] for q in queues],
            mode="markers",
            name=text("messages stored"),
            marker=dict(symbol="line-ew-open", size=28, color="#222A2A", line=dict(width=3)),
            hovertemplate=text("%{x}: %{y} stored<extra></extra>"),
        )
    )
    if title is None:
        title = text(
            "{name} (seed {seed}): each queue's messages, by consumer",
            name=result.scenario.name,
            seed=result.seed,
        )
    fig.update_layout(
        barmode="stack",
        title=title,
        height=420,
        xaxis=dict(title=text("queue")),
        yaxis=dict(title=text("messages")),
        legend=dict(title=text("consumer"), traceorder="normal"),
        meta={
            "view": "consumed_by_queue",
            "queues": queues,
            "counts": counts,
            "never": {q: never.get(q, 0) for q in queues},
            "stored": {q: result.stored[q] for q in queues},
        },
    )
    return house_style(fig)


def _labelled_results(results) -> dict[str, SimResult]:
    """``results`` as a mapping label -> SimResult: a single run is labelled with its scenario and seed (shown
    through phrase())."""
    if not isinstance(results, Mapping):
        _result(results, "results")
        return {f"{results.scenario.name} (seed {results.seed})": results}
    for label, r in results.items():
        check_str(label, "results: a label", empty=True)
        _result(r, f"results[{label!r}]")
    return dict(results)


def latency_figure(results, max_points: int = 1500, title: str | None = None) -> go.Figure:
    """Empirical CDF of end-to-end latency (store to consume), one line per run.

    ``results`` is a SimResult or a mapping label -> SimResult. The x axis is
    logarithmic when latencies span more than 20x (most messages take milliseconds,
    the ones caught in a pause take seconds). Each line climbs to 1 at its slowest
    message and runs on to the plot's right edge. ``max_points`` (2..100,000)
    points are drawn per line at most.
    """
    max_points = check_int(max_points, "max_points", 2, 100_000)
    title = _title(title)
    results = _labelled_results(results)
    meta = {}
    lines = {}  # label -> (latencies drawn, their fractions)
    for label, r in results.items():
        lat = np.sort(np.asarray(r.latencies_ms, dtype=float))
        if len(lat) == 0:
            continue
        idx = np.unique(np.linspace(0, len(lat) - 1, min(max_points, len(lat))).astype(int))
        lines[label] = (np.maximum(lat[idx], 0.5).tolist(), ((idx + 1) / len(lat)).tolist())  # log axis: 0 ms at 0.5
        meta[label] = {q: r.latency_percentile(q) for q in (50, 90, 99, 100)}
    if title is None:
        title = text("Latency, store to consume: ") + text("; ").join(
            text("{label} p50 {p50:.0f} ms, p99 {p99:.0f} ms", label=phrase(label), p50=m[50], p99=m[99])
            for label, m in meta.items()
        )
    # log axis only when latencies span more than 20x; the range is padded so no line starts on an axis
    xs_all = [x for xs, _ in lines.values() for x in xs]
    low, high = (min(xs_all), max(xs_all)) if xs_all else (1.0, 10.0)
    if high / low > 20:
        right = high * 1.5
        xaxis = dict(
            title=text("latency (ms, log scale)"),
            type="log",
            range=[float(np.log10(low / 1.5)), float(np.log10(right))],
        )
    else:
        right = high * 1.15 + 0.5
        xaxis = dict(title=text("latency (ms)"), type="linear", range=[0, right])
    fig = go.Figure()
    palette = consumer_colors([f"run{i}" for i in range(len(results))])
    for label, color in zip(results, palette.values()):
        if label not in lines:
            continue
        xs, ys = lines[label]
        fig.add_trace(
            go.Scatter(
                x=xs + [right],  # an ECDF stays at 1 past the slowest message: drawn to the plot's edge
                y=ys + [1.0],
                mode="lines",
                name=phrase(label),
                line=dict(color=color, width=2.5, shape="hv"),
                hovertemplate="%{x} ms: %{y:.3f}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        height=400,
        xaxis=xaxis,
        yaxis=dict(title=text("fraction of messages"), range=[0, 1.02]),
        meta={"view": "latency", "percentiles": {k: {str(q): v for q, v in m.items()} for k, m in meta.items()}},
    )
    return house_style(fig)


_DASHES = ("solid", "dash", "dot", "dashdot")


def _waiting(run: SimResult, step_ms: int, consumer: str | None = None) -> np.ndarray:
    """Messages waiting at each instant ``0, step_ms, ...`` of ``run``: :meth:`SimResult.backlog` summed over the
    queues (zeros when the run has none)."""
    return sum(run.backlog(step_ms, consumer).values(), np.zeros(run.scenario.end_ms // step_ms + 1, dtype=int))


def backlog_figure(results, step_ms: int = 1_000, title: str | None = None, by_member: bool = False) -> go.Figure:
    """Messages waiting over time (:meth:`SimResult.backlog`, summed over the queues), one line per run.

    ``results`` is a SimResult or a mapping label -> SimResult; ``step_ms`` (1 ms to the run's end) is how far
    apart the counts are taken. ``by_member``: one BROADCASTING run, one line per member, each counting what
    that member has not consumed yet (``backlog(consumer=...)``). The default title names each line's most
    messages waiting and when."""
    step_ms = check_int(step_ms, "step_ms", 1)
    check_bool(by_member, "by_member")
    title = _title(title)
    if by_member:
        run = _result(results, "results")
        if run.scenario.message_model is not MessageModel.BROADCASTING:
            raise ValueError(
                "by_member: a BROADCASTING run (in CLUSTERING a message waits for the group, not for a member)"
            )
        check_int(step_ms, "step_ms", 1, run.scenario.end_ms)
        lines = {cid: (run, cid) for cid in run.member_waits}
    else:
        results = _labelled_results(results)
        for r in results.values():
            check_int(step_ms, "step_ms", 1, r.scenario.end_ms)
        lines = {label: (r, None) for label, r in results.items()}
    totals = {label: _waiting(r, step_ms, consumer) for label, (r, consumer) in lines.items()}
    if title is None:
        title = text("Messages waiting: ") + text("; ").join(
            text(
                "{label} at most {most:,} ({at:.0f} s)",
                label=phrase(label),
                most=int(t.max()),
                at=int(t.argmax()) * step_ms / 1000,
            )
            for label, t in totals.items()
        )
    fig = go.Figure()
    palette = consumer_colors(list(totals) if by_member else [f"run{i}" for i in range(len(totals))])
    for i, ((label, total), color) in enumerate(zip(totals.items(), palette.values())):
        fig.add_trace(
            go.Scatter(
                x=(np.arange(len(total)) * step_ms / 1000).tolist(),
                y=total.tolist(),
                mode="lines",
                name=phrase(label),
                # runs that coincide stay apart: a broken line over a wider solid one
                line=dict(color=color, width=4 if i % len(_DASHES) == 0 else 2.5, dash=_DASHES[i % len(_DASHES)]),
                hovertemplate="%{x} s: %{y}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        height=400,
        xaxis=dict(title=text("time (s)"), rangemode="tozero"),
        yaxis=dict(title=text("messages waiting"), rangemode="tozero"),
        meta={"view": "backlog", "most": {label: int(t.max()) for label, t in totals.items()}},
    )
    return house_style(fig)


def dashboard_figure(result, title: str | None = None) -> go.Figure:
    """What a dashboard showed of a run, beside what the run did, in two panels over time. Above, the dashboard's
    diff at each of its polls (:meth:`SimResult.diff_total`) and the messages really waiting
    (:meth:`SimResult.backlog`); below, its consume TPS (:meth:`SimResult.consume_tps`, a minute's average of the
    messages handed out) and the messages really consumed a second over the 10 s before
    (:meth:`SimResult.consume_rate`). A poll that failed (:attr:`SimResult.consume_stats_errors`) breaks the
    dashboard's lines and is marked on the time axis. ``result`` comes from a scenario with
    ``consume_stats_interval_ms`` set. The default title gives each line's highest value."""
    run = _result(result)
    if not run.consume_stats and not run.consume_stats_errors:
        raise ValueError(
            "result: a run a dashboard polled (a scenario with consume_stats_interval_ms > 0); nobody polled this one"
        )
    title = _title(title)
    seconds = run.scenario.end_ms // 1000
    waiting = _waiting(run, 1_000)
    consumed = run.consume_rate(1_000, 10_000)
    failed = [when for when, _ in run.consume_stats_errors]
    diff_at, tps_at = dict(run.diff_total()), dict(run.consume_tps())
    instants = sorted({*diff_at, *failed})  # None where the poll failed: the line breaks there
    polls = [when / 1000 for when in instants]
    diffs, tps = [diff_at.get(when) for when in instants], [tps_at.get(when) for when in instants]
    if title is None:
        title = text(
            "What a dashboard shows, and what the run did: the diff at most {diff:,} and the messages waiting at most "
            "{waiting:,}; the consume TPS at most {tps:.1f}, the messages consumed at most {consumed:.1f} a second",
            diff=max(diff_at.values(), default=0),
            waiting=int(waiting.max()),
            tps=max(tps_at.values(), default=0.0),
            consumed=float(consumed.max()),
        )
        if failed:
            title += text("; {failed} polls failed", failed=len(failed))
    shown, real = consumer_colors(["dashboard", "run"]).values()
    xs = list(range(seconds + 1))
    lines = (  # (name, x, y, colour, panel axis suffix, a dashboard's step line)
        ("the dashboard's diff", polls, diffs, shown, "", True),
        ("messages waiting", xs, waiting.tolist(), real, "", False),
        ("the dashboard's consume TPS", polls, tps, shown, "2", True),
        ("messages consumed a second (over the last 10 s)", xs, consumed.tolist(), real, "2", False),
    )
    fig = go.Figure()
    for name, x, y, color, axis, dashboard in lines:
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=text(name),
                xaxis="x" + axis,
                yaxis="y" + axis,
                # a dashboard's figure holds from one poll to the next
                line=dict(
                    color=color, width=2.5, shape="hv" if dashboard else "linear", dash="dot" if dashboard else None
                ),
                hovertemplate="%{x} s: %{y}<extra></extra>",
            )
        )
    if failed:
        fig.add_trace(
            go.Scatter(
                x=[when / 1000 for when in failed],
                y=[0] * len(failed),
                mode="markers",
                name=text("a poll that failed"),
                marker=dict(color=shown, symbol="x", size=9),
                hovertemplate="%{x} s: " + text("the poll failed") + "<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        height=560,
        xaxis=dict(domain=[0, 1], anchor="y", matches="x2", showticklabels=False, rangemode="tozero"),
        yaxis=dict(domain=[0.56, 1], title=text("messages behind"), rangemode="tozero"),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=text("time (s)"), rangemode="tozero"),
        yaxis2=dict(domain=[0, 0.44], title=text("messages a second"), rangemode="tozero"),
        meta={
            "view": "dashboard",
            "most": {name: max((v for v in y if v is not None), default=0) for name, _, y, _, _, _ in lines},
            "failed": len(failed),
        },
    )
    return house_style(fig)


# --------------------------------------------------------------------------- sweeps


def sweep_figure(
    rows: Sequence[Mapping],
    x: str,
    y: str,
    group: str | None = None,
    kind: str = "box",
    y_title: str | None = None,
    x_title: str | None = None,
    log_y: bool = False,
    title: str | None = None,
) -> go.Figure:
    """A metric ``y`` against the swept value ``x``, with its spread over seeds.

    ``kind="box"``: a box per value with every seed as a point; ``kind="range"``:
    the mean with a bar from min to max. ``group`` (e.g. ``"scenario"``) draws
    one series per group.
    """
    if kind not in ("box", "range"):
        raise ValueError(f"kind must be 'box' or 'range', got {kind!r}")
    rows = check_each(rows, "rows", lambda row, label: check_instance(row, label, Mapping))
    for arg, value in (("x", x), ("y", y)):
        check_str(value, arg)
    if group is not None:
        check_str(group, "group")
    for arg, value in (("y_title", y_title), ("x_title", x_title)):
        if value is not None:
            check_str(value, arg, empty=True)
    log_y = check_bool(log_y, "log_y")
    title = _title(title)
    if not rows:
        raise ValueError("rows is empty: run a sweep first")
    for arg, col in (("x", x), ("y", y)) + ((("group", group),) if group else ()):
        for i, row in enumerate(rows):
            if col not in row:
                raise ValueError(f"{arg}: no column {col!r} in rows[{i}] (it has {sorted(map(str, row))})")
    values = sweep_values(rows, x, y, group)
    stats = sweep_stats(rows, x, y, group)
    colors = consumer_colors([str(g) for g in values])
    seeds = len({row.get("seed") for row in rows})
    fig = go.Figure()
    x_shown, y_shown = phrase(x_title or x), phrase(y_title or y)
    for g, by_x in values.items():
        name = phrase(str(g)) if group else phrase(y)
        if kind == "box":
            xs = [phrase(str(v)) for v, ys in by_x.items() for _ in ys]
            fig.add_trace(
                go.Box(
                    x=xs,
                    y=[yy for ys in by_x.values() for yy in ys],
                    name=name,
                    boxpoints="all",
                    jitter=0.3,
                    pointpos=0,
                    marker_color=colors[str(g)],
                    line=dict(color=colors[str(g)]),
                )
            )
        else:
            st = stats[g]
            xs = [phrase(str(v)) for v in st]
            means = [m for _, m, _ in st.values()]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=means,
                    mode="lines+markers",
                    name=name,
                    line=dict(color=colors[str(g)]),
                    error_y=dict(
                        type="data",
                        symmetric=False,
                        array=[hi - m for _, m, hi in st.values()],
                        arrayminus=[m - lo for lo, m, _ in st.values()],
                    ),
                    hovertemplate=text("%{x}: mean %{y}<extra></extra>"),
                )
            )
    if title is None:
        title = text(
            f"{{y}} vs {{x}} ({{seeds}} seed{'s' if seeds != 1 else ''} per value, "
            + ("box = spread over seeds)" if kind == "box" else "bar = min..max over seeds)"),
            y=y_shown,
            x=x_shown,
            seeds=seeds,
        )
    fig.update_layout(
        title=title,
        height=420,
        boxmode="group",
        xaxis=dict(title=x_shown, type="category"),
        yaxis=dict(title=y_shown, type="log" if log_y else "linear"),
        meta={
            "view": "sweep",
            "x": x,
            "y": y,
            "group": group,
            "seeds": seeds,
            "values": {str(g): {str(v): ys for v, ys in by_x.items()} for g, by_x in values.items()},
        },
    )
    return house_style(fig)


__all__ = [
    "TIMELINE_EVENTS",
    "latency_figure",
    "load_figure",
    "lock_timeline_figure",
    "ownership_timeline_figure",
    "short_queue",
    "sweep_figure",
]


# --------------------------------------------------------------------------- retries


def retry_figure(timelines: Mapping[str, Sequence], title: str | None = None) -> go.Figure:
    """Deliveries of a message that keeps failing, one row of markers per timeline
    (:func:`rmqlib.client.retry.concurrent_retry_timeline`, ``orderly_retry_timeline``): time since the first
    delivery on a log axis, a red cross where the message reaches the dead-letter queue."""
    if not isinstance(timelines, Mapping):
        raise ArgumentTypeError(f"timelines must map a name to its deliveries, got {type(timelines).__name__}")
    for name, attempts in timelines.items():
        check_str(name, "timelines: a name", empty=True)
        check_each(attempts, f"timelines[{name!r}]", lambda a, label: check_instance(a, label, Attempt))
    title = _title(title)
    if not timelines:
        raise ValueError("timelines must hold at least one named timeline")
    fig = go.Figure()
    dead_x, dead_y, dead_text = [], [], []
    for name, attempts in timelines.items():
        live = [a for a in attempts if not a.topic.startswith("%DLQ%")]
        fig.add_trace(
            go.Scatter(
                x=[max(a.at_ms, 500) / 1000 for a in live],
                y=[phrase(name)] * len(live),
                mode="markers",
                name=phrase(name),
                marker=dict(size=9, color=consumer_colors(list(timelines))[name]),
                customdata=[[a.number, a.at_ms, a.topic] for a in live],
                hovertemplate=text(
                    "delivery %{customdata[0]} at %{customdata[1]} ms<br>from %{customdata[2]}<extra></extra>"
                ),
            )
        )
        for a in attempts:
            if a.topic.startswith("%DLQ%"):
                dead_x.append(max(a.at_ms, 500) / 1000)
                dead_y.append(phrase(name))
                dead_text.append(text("{topic} after {n} retries", topic=a.topic, n=a.number - 1))
    fig.add_trace(
        go.Scatter(
            x=dead_x,
            y=dead_y,
            mode="markers",
            name=text("dead-letter queue"),
            marker=dict(symbol="x", size=13, color="#FB0D0D"),
            text=dead_text,
            hovertemplate="%{text}<extra></extra>",
        )
    )
    if title is None:
        title = text("When a message that keeps failing is delivered again, and where it ends")
    fig.update_layout(
        title=title,
        height=max(300, 150 + 60 * len(timelines)),
        xaxis=dict(
            title=text("time since the first delivery (s, log scale; the first delivery drawn at 0.5 s)"), type="log"
        ),
        yaxis=dict(
            type="category", categoryorder="array", categoryarray=[phrase(n) for n in timelines][::-1], title=None
        ),
        legend=dict(title=text("retries")),
        meta={"view": "retries", "timelines": {n: [list(a) for a in t] for n, t in timelines.items()}},
    )
    return house_style(fig)

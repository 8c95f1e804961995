"""Who may consume an orderly queue while its broker's master is away, by replica setting (chapter 09).

:func:`replica_locks_figure` draws :func:`rmqlib.client.replica_failover.replay_master_outage` for several settings
of broker-a's replicas: a row per setting and consumer, a bar while that consumer may consume q, and on the top row
the time the master is away. Two bars at one time in a setting are two consumers on q; no bar, nobody.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import plotly.graph_objects as go

from rmqlib.checks import ArgumentTypeError, check_bool, check_int, check_str
from rmqlib.client.replica_failover import MASTER_STOPS_MS, NEWCOMER, OWNER, ReplicaLockStep, replay_master_outage
from rmqlib.sim.result import Interval
from rmqlib.viz.colors import UNASSIGNED_COLOR, consumer_colors
from rmqlib.viz.i18n import text
from rmqlib.viz.panels import Panel, labelled
from rmqlib.viz.style import house_style
from rmqlib.viz.timeline import _interval_traces, _s

#: The settings chapter 09 compares: label -> (replicas, lockInStrictMode).
REPLICA_SETUPS = {"2 replicas": (2, False), "2 + strict": (2, True), "3 + strict": (3, True)}


def consuming_intervals(steps: Sequence[ReplicaLockStep], end_ms: int) -> dict[str, list[tuple[int, int]]]:
    """client id -> [(start_ms, end_ms)] while it may consume q, from the steps of one replay (open ones end at
    ``end_ms``)."""
    intervals: dict[str, list[tuple[int, int]]] = {OWNER: [], NEWCOMER: []}
    since: dict[str, int] = {}
    for step in steps:
        for cid in intervals:
            if cid in step.consumers and cid not in since:
                since[cid] = step.time_ms
            elif cid not in step.consumers and cid in since:
                intervals[cid].append((since.pop(cid), step.time_ms))
    for cid, start in since.items():
        intervals[cid].append((start, end_ms))
    return intervals


def replica_locks_figure(
    master_back_ms: int | None = 28_000,
    setups: Mapping[str, tuple[int, bool]] | None = None,
    enable_slave_acting_master: bool = True,
    end_ms: int = 120_000,
    title: str | None = None,
) -> go.Figure:
    """A row per setting in ``setups`` (label -> (replicas, lockInStrictMode); default :data:`REPLICA_SETUPS`) and
    consumer: bars while it may consume q in :func:`replay_master_outage` with these arguments."""
    setups = dict(REPLICA_SETUPS) if setups is None else setups
    if not isinstance(setups, Mapping) or not 1 <= len(setups) <= 8:
        raise ArgumentTypeError(f"setups must map 1 to 8 labels to (replicas, strict), got {setups!r:.80}")
    for label, setup in setups.items():
        check_str(label, "setups label")
        if not isinstance(setup, tuple) or len(setup) != 2:
            raise ArgumentTypeError(f"setups[{label!r}] must be (replicas, strict), got {setup!r:.80}")
        check_int(setup[0], f"setups[{label!r}] replicas", 1, 16)
        check_bool(setup[1], f"setups[{label!r}] strict")
    check_bool(enable_slave_acting_master, "enable_slave_acting_master")
    if title is not None:
        check_str(title, "title")
    replays = {
        label: replay_master_outage(
            replicas=replicas,
            lock_in_strict_mode=strict,
            enable_slave_acting_master=enable_slave_acting_master,
            master_back_ms=master_back_ms,
            end_ms=end_ms,
        )
        for label, (replicas, strict) in setups.items()
    }
    master_row = text("broker-a's master")
    rows = [master_row]
    consumers = [OWNER, NEWCOMER]
    colors = consumer_colors(consumers)
    bars: dict[str, list[Interval]] = {}  # row -> the spans its consumer may consume q
    consuming = {label: consuming_intervals(steps, end_ms) for label, steps in replays.items()}
    for label, by_consumer in consuming.items():
        for cid, spans in by_consumer.items():
            row = f"{text(label)} · {cid}"
            rows.append(row)
            bars[row] = [Interval(row, cid, start, stop) for start, stop in spans]
    away_end = end_ms if master_back_ms is None else master_back_ms
    fig = go.Figure(
        go.Bar(
            orientation="h",
            name=text("master away"),
            y=[master_row],
            base=[_s(MASTER_STOPS_MS)],
            x=[_s(away_end - MASTER_STOPS_MS)],
            marker=dict(color=UNASSIGNED_COLOR, line=dict(width=0)),
            hovertemplate=text("master away {start} .. {end} ms", start=MASTER_STOPS_MS, end=away_end)
            + "<extra></extra>",
        )
    )
    for trace in _interval_traces(bars, {row: row for row in rows}, colors, consumers):
        trace.name = text("{cid} may consume q", cid=trace.name)
        fig.add_trace(trace)
    if title is None:
        title = (
            text("broker-a's master fails at 25 s: who may consume q, by replica setting")
            if master_back_ms is None
            else text(
                "broker-a's master restarts (away 25 to {back:.0f} s): who may consume q, by replica setting",
                back=master_back_ms / 1000,
            )
        )
    fig.update_layout(
        barmode="overlay",
        title=title,
        height=max(320, 110 + 30 * len(rows)),
        xaxis=dict(title=text("time (s)"), range=[0, _s(end_ms)]),
        yaxis=dict(  # every row, with or without a bar
            type="category", categoryorder="array", categoryarray=rows[::-1], range=[-0.5, len(rows) - 0.5]
        ),
        meta={
            "view": "replica_locks",
            "master_back_ms": master_back_ms,
            "consuming": {
                label: {cid: [list(span) for span in spans] for cid, spans in by_consumer.items()}
                for label, by_consumer in consuming.items()
            },
        },
    )
    return house_style(fig)


#: How long the master is away from 25 s, as the panel offers it: label -> master_back_ms (None: for good).
MASTER_AWAY = {"3 s": 28_000, "10 s": 35_000, "30 s": 55_000, "60 s": 85_000, "for good": None}


def replica_locks_view(master_away: str = "3 s", acting_master: bool = True) -> go.Figure:
    """The panel's pure function: :func:`replica_locks_figure` with the master away as long as ``master_away`` (a
    key of :data:`MASTER_AWAY`), acting master on or off."""
    if not isinstance(master_away, str) or master_away not in MASTER_AWAY:
        raise ValueError(f"master_away must be one of {list(MASTER_AWAY)}, got {master_away!r:.40}")
    acting_master = check_bool(acting_master, "acting_master")
    return replica_locks_figure(MASTER_AWAY[master_away], enable_slave_acting_master=acting_master)


def replica_locks_panel(master_away: str = "3 s", acting_master: bool = True) -> Panel:
    """A "master away" dropdown and an "acting master" checkbox over :func:`replica_locks_view`."""
    replica_locks_view(master_away, acting_master)  # refuses bad arguments by name
    controls = {
        "master_away": labelled(
            widgets.Dropdown(options=[(text(label), label) for label in MASTER_AWAY], value=master_away),
            "master away",
        ),
        "acting_master": labelled(widgets.Checkbox(value=acting_master), "acting master"),
    }
    return Panel(replica_locks_view, controls, largest=replica_locks_view("for good"))

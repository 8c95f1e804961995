"""Figures and a slider panel for chapter 11c: every design measured on the same group, drawn side by side.

* :func:`designs_view` -- the panel's pure function: for one seeded group of ``consumers`` and ``queues``,
  each design's imbalance and the queues it moves when one consumer joins and when one leaves
  (:func:`rmqlib.designs.compare.measure`), as grouped bars, one row per design.
* :func:`designs_panel` -- "consumers" and "queues" sliders that redraw all designs at once.
* :func:`designs_frames_figure` -- the same with a plotly "consumers" slider, for the static site.
* :func:`tradeoff_figure` -- the measured grid summed up: movement against peak load, one point per design.
* :func:`changes_figure` -- pause, queues paused and duplicates after a crash and a scale-out
  (:func:`rmqlib.designs.compare.simulated_changes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from rmqlib.checks import ArgumentTypeError, check_each, check_int
from rmqlib.designs.compare import DESIGNS, MEASURED, _designs, changes_summary, measure
from rmqlib.viz.colors import color_of
from rmqlib.viz.i18n import phrase, text
from rmqlib.viz.panels import Panel, _slider
from rmqlib.viz.style import PLOT_WIDTH_PX, styled_figure

MAX_VIEW_CONSUMERS = 64
"""The most consumers :func:`designs_view` measures (every design, three allocations each: well under a second)."""
MAX_VIEW_QUEUES = 256
"""The most queues :func:`designs_view` measures."""

METRICS = (
    ("imbalance", "imbalance (most - fewest)"),
    ("moved_out", "moved when one joins"),
    ("moved_in", "moved when one leaves"),
)


def _rows(value, name: str) -> list[Mapping]:
    def row(item, label):
        if not isinstance(item, Mapping):
            raise ArgumentTypeError(f"{label} must be a row (a dict), got {type(item).__name__}")
        return item

    return check_each(value, name, row, max_len=10_000)


def designs_view(consumers: int = 8, queues: int = 32, seed: int = 0, designs: Sequence[str] = MEASURED) -> go.Figure:
    """Grouped bars, one row per design: imbalance, queues moved when one joins, when one leaves.

    The group is :func:`rmqlib.designs.compare.measure`'s: ``consumers`` random client ids (``seed``) over
    ``queues`` queues on two brokers. ``layout.meta`` holds every number drawn. Limits: ``consumers``
    2..:data:`MAX_VIEW_CONSUMERS`, ``queues`` 1..:data:`MAX_VIEW_QUEUES`.
    """
    consumers = check_int(consumers, "consumers", 2, MAX_VIEW_CONSUMERS)
    queues = check_int(queues, "queues", 1, MAX_VIEW_QUEUES)
    seed = check_int(seed, "seed", 0)
    names = _designs(designs)
    if not names:
        raise ValueError("designs must name at least one design")
    rows = {name: measure(name, consumers, queues, seed) for name in names}
    labels = [phrase(DESIGNS[name].label) for name in names]
    first = rows[names[0]]
    data = [
        dict(
            type="bar",
            orientation="h",
            name=text(title),
            y=labels,
            x=[rows[n][key] for n in names],
            marker=dict(color=color_of(i)),
            hovertemplate=text("%{{y}}: %{{x}} queues<extra>{metric}</extra>", metric=text(title)),
        )
        for i, (key, title) in enumerate(METRICS)
    ]
    layout = dict(
        title=text(
            "{c} consumers, {q} queues: fewest possible moves are {least_out} on a join, {least_in} on a leave",
            c=consumers,
            q=queues,
            least_out=first["least_out"],
            least_in=first["least_in"],
        ),
        barmode="group",
        height=130 + 34 * len(names),
        bargap=0.25,
        xaxis=dict(title=text("queues"), rangemode="tozero"),
        yaxis=dict(autorange="reversed", type="category", automargin=True),
        meta={
            "view": "designs",
            "consumers": consumers,
            "queues": queues,
            "seed": seed,
            "rows": {
                n: {k: rows[n][k] for k in ("imbalance", "moved_out", "moved_in", "least_out", "least_in")}
                for n in names
            },
        },
    )
    # the title starts where the bars do, right of the design names (about 190 px of the figure's width)
    return styled_figure(data, layout, width_px=PLOT_WIDTH_PX - 200)


def designs_panel(
    consumers: int = 8,
    queues: int = 32,
    max_consumers: int = MAX_VIEW_CONSUMERS,
    max_queues: int = MAX_VIEW_QUEUES,
    designs: Sequence[str] = MEASURED,
) -> Panel:
    """ "consumers" and "queues" sliders over :func:`designs_view`: every design redrawn on each move."""
    max_consumers = check_int(max_consumers, "max_consumers", 2, MAX_VIEW_CONSUMERS)
    max_queues = check_int(max_queues, "max_queues", 1, MAX_VIEW_QUEUES)
    names = tuple(_designs(designs))
    controls = {
        "consumers": _slider("consumers", consumers, 2, max_consumers, "consumers and max_consumers"),
        "queues": _slider("queues", queues, 1, max_queues, "queues and max_queues"),
    }
    return Panel(lambda consumers, queues: designs_view(consumers, queues, 0, names), controls)


def designs_frames_figure(
    queues: int = 32,
    consumer_counts: Sequence[int] = (2, 4, 8, 16, 32, 64),
    initial: int = 8,
    designs: Sequence[str] = MEASURED,
) -> go.Figure:
    """:func:`designs_view` for each consumer count, on one plotly "consumers" slider (no kernel needed)."""
    from rmqlib.viz.static import frames_figure

    counts = check_each(
        consumer_counts, "consumer_counts", lambda v, label: check_int(v, label, 2, MAX_VIEW_CONSUMERS), max_len=12
    )
    names = tuple(_designs(designs))
    return frames_figure([(c, designs_view(c, queues, 0, names)) for c in counts], "consumers", active=initial)


def tradeoff_figure(summary: Sequence[Mapping]) -> go.Figure:
    """Two bar panels sharing one row per design (:func:`rmqlib.designs.compare.design_summary` rows): queues
    moved when one consumer joins, as a multiple of the fewest possible (left, log scale), and the worst peak load
    over the rounded-up fair share (right). Bars are coloured by who decides."""
    rows = _rows(summary, "summary")
    if not rows:
        raise ValueError("summary must hold at least one row")
    labels = [phrase(row["design"]) for row in rows]
    deciders = list(dict.fromkeys(row["decides"] for row in rows))
    data = []
    for i, who in enumerate(deciders):
        mine = [row for row in rows if row["decides"] == who]
        for axis, key, unit in (
            ("", "join: x fewest", "x the fewest moves"),
            ("2", "worst peak / fair share", "x the fair share"),
        ):
            data.append(
                dict(
                    type="bar",
                    orientation="h",
                    name=text("decided by {who}", who=phrase(who)),
                    legendgroup=who,
                    showlegend=axis == "",
                    y=[phrase(row["design"]) for row in mine],
                    x=[row[key] for row in mine],
                    xaxis="x" + axis,
                    yaxis="y",
                    marker=dict(color=color_of(i)),
                    text=[str(row[key]) for row in mine],
                    textposition="outside",
                    cliponaxis=False,
                    hovertemplate="%{y}: %{x} " + text(unit) + "<extra></extra>",
                )
            )
    layout = dict(
        title=text("Stickiness against balance: each design over the whole grid"),
        height=150 + 30 * len(rows),
        barmode="overlay",
        xaxis=dict(domain=[0, 0.46], type="log", title=text("moved on a join (x the fewest, log)")),
        xaxis2=dict(domain=[0.54, 1], title=text("worst peak load (x the fair share)"), rangemode="tozero"),
        yaxis=dict(type="category", categoryorder="array", categoryarray=labels, autorange="reversed", automargin=True),
        meta={"view": "tradeoff", "rows": [dict(row) for row in rows]},
    )
    return styled_figure(data, layout)


def _short_ms(value: float) -> str:
    """A duration for a bar's label: ``4 ms``, ``9.0 s``, ``245 s`` (SI units, the same in every language)."""
    if value < 1_000:
        return f"{value:g} ms"
    return f"{value / 1000:.1f} s" if value < 100_000 else f"{value / 1000:.0f} s"


#: The three panels of :func:`changes_figure`, top to bottom: (summary column, axis title, y domain, log axis).
CHANGES_PANELS = (
    ("pause (queue-ms)", "pause (queue-ms, log)", (0.68, 1.0), True),
    ("paused", "queues paused", (0.36, 0.6), False),
    ("duplicates", "duplicates", (0.0, 0.28), False),
)


def changes_figure(rows: Sequence[Mapping]) -> go.Figure:
    """Per design, one bar per change, in three panels: the pause (queue-milliseconds without an owner, summed over
    queues; log scale, a pause of 0 drawn at 1, labelled in ms or s), how many queues paused at all, and
    duplicates. From :func:`rmqlib.designs.compare.simulated_changes` rows (averaged over seeds)."""
    summary = changes_summary(_rows(rows, "rows"))
    if not summary:
        raise ValueError("rows must hold at least one row")
    designs = list(dict.fromkeys(row["design"] for row in summary))
    changes = list(dict.fromkeys(row["change"] for row in summary))
    value = {(row["design"], row["change"]): row for row in summary}
    data = []
    layout: dict = {}
    last = len(CHANGES_PANELS)
    for i, change in enumerate(changes):
        for k, (key, _, _, log) in enumerate(CHANGES_PANELS, start=1):
            axis = "" if k == 1 else str(k)
            shown = [value.get((d, change), {}).get(key) for d in designs]
            drawn = [max(v, 1) if log and v is not None else v for v in shown]  # log axis: 0 drawn at 1
            labels = [(_short_ms(v) if log else f"{v:g}") if v is not None else "" for v in shown]
            data.append(
                dict(
                    type="bar",
                    name=phrase(change.replace("_", "-")),
                    legendgroup=change,
                    showlegend=k == 1,
                    x=[phrase(d) for d in designs],
                    y=drawn,
                    text=labels,
                    textposition="outside",
                    cliponaxis=False,
                    textfont=dict(size=10),
                    xaxis="x" + axis,
                    yaxis="y" + axis,
                    marker=dict(color=color_of(i)),
                    hovertemplate="%{x}: %{text}<extra>" + text(key) + "</extra>",
                )
            )
    for k, (_, title, domain, log) in enumerate(CHANGES_PANELS, start=1):
        axis = "" if k == 1 else str(k)
        layout["xaxis" + axis] = dict(
            domain=[0, 1],
            anchor="y" + axis,
            type="category",
            showticklabels=k == last,
            **({"tickangle": -30} if k == last else {}),
        )
        layout["yaxis" + axis] = dict(
            domain=list(domain), title=text(title), **({"type": "log"} if log else {"rangemode": "tozero"})
        )
    layout.update(
        title=text("After a crash and a scale-out: pause, queues paused and duplicates per design"),
        barmode="group",
        height=780,
        meta={"view": "changes", "rows": summary},
    )
    return styled_figure(data, layout)

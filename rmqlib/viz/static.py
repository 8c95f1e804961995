"""Kernel-free versions of the slider panels, for the static site.

An ipywidgets panel needs a running kernel: every slider move calls Python.
A published HTML page has no kernel, so for the key panels this module builds
the same pictures ahead of time and puts them in ONE plotly figure with a
plotly-native slider (``layout.sliders``): one step per slider value, each step
carrying that value's traces, title and ``layout.meta`` (the same meta the
panel's figure carries, so a browser test can read
``gd.layout.meta.allocation`` on either).

* :func:`frames_figure` -- the generic builder: a list of ``(value, figure)`` in, one figure out.
  Every step is also stored as a named ``go.Frame`` (``fig.frames``); the slider
  steps use ``method="update"`` (restyle + relayout), not ``"animate"``, because
  ``Plotly.animate`` merges a frame's layout into the old one (a consumer that
  left would stay in ``meta.allocation``) and cannot hide traces a frame lacks.
* :func:`allocation_frames_figure` -- the allocation panel with a "consumers" slider.
* :func:`ring_frames_figure` -- the ring panel with a "virtual nodes" slider.
* :func:`handover_frames_figure` -- the hand-over stepper with a "step" slider.
* :func:`show_panel` -- what a notebook cell returns: the live panel in Jupyter,
  the frames figure when ``RMQLIB_STATIC=1`` (set by ``python -m rmqlib.site build``).
* :func:`use_static_renderer` -- plotly figures render as HTML that does NOT
  contain plotly.js (the site loads ``_static/plotly.min.js`` once) and needs no
  require.js, no CDN and no MathJax.

All builders are pure: inputs in, ``plotly.graph_objects.Figure`` out.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer

from rmqlib.checks import ArgumentTypeError, check_each, check_instance, check_int, check_str
from rmqlib.client.handover import replay_handover
from rmqlib.strategies import PrefixMachineRoomResolver
from rmqlib.viz.figures import (
    MACHINE_ROOM_STRATEGIES,
    MAX_VIEW_CONSUMERS,
    MAX_VIEW_RING_POINTS,
    MAX_VIEW_SCALE_OUT_POINTS,
    MAX_VIEW_VIRTUAL_NODES,
    _str_list,
    _strategy,
    allocation_view,
    machine_room_view,
    ring_view,
    shared_id_view,
)
from rmqlib.viz.handover import handover_steps
from rmqlib.viz.i18n import phrase, text
from rmqlib.viz.panels import blank_trace
from rmqlib.viz.process_queue import process_queue_view
from rmqlib.viz.replicas import MASTER_AWAY, replica_locks_view

STATIC_ENV = "RMQLIB_STATIC"
STATIC_RENDERER = "rmqlib_static"

MAX_STEPS = 32
"""Most steps :func:`frames_figure` puts on one slider (every step is a whole figure in the page; building
takes about 20 to 40 ms a step here)."""
MAX_RING_STEPS = 12
"""Most steps of :func:`ring_frames_figure` (12 steps of 8 consumers, 64 queues and 5,000 ring points in
all: about 0.8 s here)."""
MAX_RING_FRAMES_CONSUMERS = 8
"""Most consumers :func:`ring_frames_figure` draws (two traces each, in every step)."""
MAX_RING_FRAMES_QUEUES = 64
"""Most queues :func:`ring_frames_figure` draws."""
MAX_FRAMES_WORK = 1_500
"""What the steps of :func:`allocation_frames_figure` may draw in all: the sum over steps of queues +
consumers (16 steps of 10 queues: 296, 0.4 s here; range(1, 201) consumer counts took 18 s)."""
MAX_PROCESS_QUEUE_FRAMES = 24
"""Most messages :func:`process_queue_frames_figure` steps through (24 messages: 25 steps, 0.7 s here)."""

# layout keys that belong to the whole figure, not to one step
_FIGURE_LAYOUT_KEYS = ("template", "sliders", "updatemenus", "height", "width", "margin")


def is_static() -> bool:
    """True when ``RMQLIB_STATIC`` is set to something other than ``""``, ``0``, ``false`` or ``no``."""
    return os.environ.get(STATIC_ENV, "").strip().lower() not in ("", "0", "false", "no")


# --------------------------------------------------------------------------- generic builder


def _padded_traces(figures: Sequence[go.Figure]) -> list[list[dict]]:
    """Each figure's traces as plotly JSON, padded with blank traces to the longest figure's length.

    Trace ``i`` must keep its type across steps (restyle cannot change a trace's type).
    """
    per_step = [[t.to_plotly_json() for t in fig.data] for fig in figures]
    width = max((len(traces) for traces in per_step), default=0)
    types: list[str | None] = [None] * width
    for traces in per_step:
        for i, t in enumerate(traces):
            t.pop("uid", None)
            kind = t.get("type", "scatter")
            if types[i] is None:
                types[i] = kind
            elif types[i] != kind:
                raise ValueError(
                    f"trace {i} is a {types[i]} in one step and a {kind} in another: "
                    "steps must keep trace types in the same order"
                )
    for traces in per_step:
        traces.extend(blank_trace(types[i]) for i in range(len(traces), width))
    return per_step


def _restyle_args(traces: list[dict], keys: Sequence[str]) -> dict:
    """``Plotly.restyle`` arguments that set every key on every trace (``None`` unsets a key a trace lacks)."""
    return {key: [t.get(key) for t in traces] for key in keys}


def frames_figure(
    steps: Sequence[tuple[Any, go.Figure]], slider_label: str, active: Any = None, height: int | None = None
) -> go.Figure:
    """One figure with a plotly slider over ``steps``: ``[(value, figure), ...]`` in slider order.

    The figure starts at step ``active`` (a value; default: the first). Each
    slider step applies its figure's traces (padded to a common count) and its
    layout (title, axes, meta, ...; template and size stay those of the first
    step). ``fig.frames`` holds the same steps as named frames (name = ``str(value)``).
    At most :data:`MAX_STEPS` (32) steps.
    """

    def pair(item, label):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ArgumentTypeError(f"{label} must be a (value, figure) pair, got {type(item).__name__}")
        check_instance(item[1], f"{label}[1]", go.Figure)
        return item

    steps = check_each(steps, "steps", pair, max_len=MAX_STEPS)
    check_str(slider_label, "slider_label", empty=True)
    if height is not None:
        height = check_int(height, "height", 100, 20_000)
    if not steps:
        raise ValueError("steps must hold at least one (value, figure) pair")
    values = [value for value, _ in steps]
    if len(set(map(str, values))) != len(values):
        raise ValueError(f"steps: slider values must be distinct, got {values}")
    if active is None:
        active = values[0]
    if active not in values:
        raise ValueError(f"active must be one of the slider values {values}, got {active!r}")
    index = values.index(active)
    figures = [fig for _, fig in steps]
    traces = _padded_traces(figures)
    layouts = []
    for fig in figures:
        lay = fig.layout.to_plotly_json()
        layouts.append({k: v for k, v in lay.items() if k not in _FIGURE_LAYOUT_KEYS})
    trace_keys = sorted({k for step in traces for t in step for k in t if k != "type"})
    layout_keys = sorted({k for lay in layouts for k in lay})

    slider_steps = []
    for value, step_traces, lay in zip(values, traces, layouts):
        relayout = {k: lay.get(k) for k in layout_keys}
        slider_steps.append(
            dict(
                label=str(value),
                value=str(value),
                method="update",
                args=[_restyle_args(step_traces, trace_keys), relayout],
            )
        )
    heights = [fig.layout.height for fig in figures if fig.layout.height is not None]
    first = figures[0].layout.to_plotly_json()
    margin = dict(b=(first.get("margin", {}).get("b") or 40) + 90)
    tops = [fig.layout.margin.t for fig in figures if fig.layout.margin.t]
    if tops:  # the tallest title block of any step: a step with a subtitle needs more room than the first
        margin["t"] = max(tops)
    fig = go.Figure(
        data=traces[index],
        frames=[go.Frame(name=str(v), data=t, layout=lay) for v, t, lay in zip(values, traces, layouts)],
    )
    fig.update_layout({k: v for k, v in first.items() if k in ("template", "margin")})
    fig.update_layout(layouts[index])
    fig.update_layout(
        # the slider goes between the x axis and the legend strip the house style keeps at the bottom
        height=(height or max(heights, default=450)) + 90,
        margin=margin,
        sliders=[
            dict(
                active=index,
                steps=slider_steps,
                x=0.0,
                len=1.0,
                y=0,
                yanchor="top",
                pad=dict(t=60, l=40, r=40),  # room for the first and last labels
                currentvalue=dict(prefix=text("{label}: ", label=phrase(slider_label)), visible=True, xanchor="left"),
            )
        ],
    )
    return fig


# --------------------------------------------------------------------------- the two key panels


def _counts(values: Iterable[int], name: str, minimum: int, maximum: int, steps: int = MAX_STEPS) -> list[int]:
    counts = check_each(values, name, lambda v, label: check_int(v, label, minimum, maximum), max_len=steps)
    if not counts:
        raise ValueError(f"{name} must hold at least one count")
    if len(set(counts)) != len(counts):
        raise ValueError(f"{name} must not repeat a count (one slider step each), got {counts}")
    return counts


def allocation_frames_figure(
    strategy: str = "AVG",
    queues: int = 10,
    consumer_counts: Iterable[int] = range(1, 17),
    initial: int | None = None,
    virtual_nodes: int = 10,
    brokers: Sequence[str] = ("broker-a",),
    topic: str = "TopicTest",
) -> go.Figure:
    """The allocation panel (:func:`rmqlib.viz.allocation_view`) with a plotly "consumers" slider.

    One step per entry of ``consumer_counts``; step ``c`` shows ``allocation_view(strategy, queues, c)``
    and carries its ``layout.meta`` (``meta.allocation`` = ``{cid: [str(mq), ...]}``).

    Limits: each count and ``queues`` as in :func:`~rmqlib.viz.allocation_view`; at most :data:`MAX_STEPS`
    (32) counts, ``queues`` + count summed over the steps at most :data:`MAX_FRAMES_WORK` (1,500), and for
    CONSISTENT_HASH count x ``virtual_nodes`` summed over the steps at most 200,000 ring points: about a
    second of building. Larger raise ValueError.
    """
    counts = _counts(consumer_counts, "consumer_counts", 1, MAX_VIEW_CONSUMERS)
    queues = check_int(queues, "queues", 1)
    virtual_nodes = check_int(virtual_nodes, "virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    work = sum(queues + c for c in counts)
    if work > MAX_FRAMES_WORK:
        raise ValueError(
            f"consumer_counts: {len(counts)} steps of {queues} queues draw {work} rows and columns in "
            f"all, more than {MAX_FRAMES_WORK}"
        )
    if strategy == "CONSISTENT_HASH" and sum(counts) * virtual_nodes > MAX_VIEW_SCALE_OUT_POINTS:
        raise ValueError(
            f"virtual_nodes: {sum(counts)} consumers over all steps x {virtual_nodes} virtual nodes is "
            f"more than {MAX_VIEW_SCALE_OUT_POINTS} ring points"
        )
    steps = [(c, allocation_view(strategy, queues, c, virtual_nodes, brokers, topic)) for c in counts]
    return frames_figure(steps, "consumers", initial)


def shared_id_frames_figure(
    strategy: str = "AVG", queues: int = 8, consumers: int = 4, initial: int | None = None
) -> go.Figure:
    """The shared-id panel (:func:`rmqlib.viz.shared_id_view`) with a plotly "processes with one id" slider, one
    step per count from 1 to ``consumers``. Limits as :func:`~rmqlib.viz.shared_id_view`."""
    consumers = check_int(consumers, "consumers", 1, MAX_STEPS)
    steps = [(k, shared_id_view(strategy, queues, consumers, k)) for k in range(1, consumers + 1)]
    return frames_figure(steps, "processes with one id", initial)


def ring_frames_figure(
    consumers: int = 4,
    queues: int = 16,
    vnode_counts: Iterable[int] = (0, 1, 2, 3, 5, 10, 20, 50),
    initial: int | None = None,
    brokers: Sequence[str] = ("broker-a", "broker-b"),
    topic: str = "TopicTest",
) -> go.Figure:
    """The ring panel (:func:`rmqlib.viz.ring_view`) with a plotly "virtual nodes" slider.

    One step per entry of ``vnode_counts`` (0 allowed: the empty ring); step ``v`` shows
    ``ring_view(consumers, queues, v)`` and carries its ``layout.meta``.

    Limits: each count as in :func:`~rmqlib.viz.ring_view`; at most :data:`MAX_RING_STEPS` (12) counts,
    :data:`MAX_RING_FRAMES_CONSUMERS` (8) consumers, :data:`MAX_RING_FRAMES_QUEUES` (64) queues, and
    ``consumers`` x virtual nodes summed over the steps at most ``MAX_VIEW_RING_POINTS`` (5,000).
    Larger raise ValueError.
    """
    counts = _counts(vnode_counts, "vnode_counts", 0, MAX_VIEW_VIRTUAL_NODES, MAX_RING_STEPS)
    consumers = check_int(consumers, "consumers", 1, MAX_RING_FRAMES_CONSUMERS)
    queues = check_int(queues, "queues", 1, MAX_RING_FRAMES_QUEUES)
    if consumers * sum(counts) > MAX_VIEW_RING_POINTS:
        raise ValueError(
            f"vnode_counts: {consumers} consumers x {sum(counts)} virtual nodes over all steps is more "
            f"than {MAX_VIEW_RING_POINTS} ring points"
        )
    steps = [(v, ring_view(consumers, queues, v, brokers, topic)) for v in counts]
    return frames_figure(steps, "virtual nodes", initial)


def machine_room_frames_figure(
    strategies: Sequence[str] = MACHINE_ROOM_STRATEGIES,
    brokers: Sequence[int] = (1, 1, 1),
    consumers: Sequence[int] = (2, 1, 0),
    initial: str | None = None,
    **view_kwargs: Any,
) -> go.Figure:
    """The machine-room panel (:func:`rmqlib.viz.machine_room_view`) with a plotly "strategy" slider.

    One step per strategy, all on the same rooms, brokers and consumers; each carries its ``layout.meta``.
    Steps are labelled without the ``MACHINE_ROOM_NEARBY-`` prefix (``NEARBY-AVG``), so the labels fit.
    At most 8 strategies; rooms, brokers and consumers as in :func:`~rmqlib.viz.machine_room_view`.
    """
    strategies = _str_list(strategies, "strategies", max_len=8, distinct=True)
    for i, name in enumerate(strategies):
        _strategy(name, f"strategies[{i}]", consumer_idcs=set(), resolver=PrefixMachineRoomResolver("-"))
    if initial is not None:
        check_str(initial, "initial")
    if not strategies:
        raise ValueError("strategies must name at least one strategy")
    steps = [
        (name.replace("MACHINE_ROOM_NEARBY-", "NEARBY-"), machine_room_view(name, brokers, consumers, **view_kwargs))
        for name in strategies
    ]
    return frames_figure(
        steps, "strategy", None if initial is None else initial.replace("MACHINE_ROOM_NEARBY-", "NEARBY-")
    )


def process_queue_frames_figure(messages: int = 12, seed: int = 0, slow: int = -1) -> go.Figure:
    """The ProcessQueue stepper (:func:`rmqlib.viz.process_queue_view`) with a plotly "step" slider (0..messages).

    ``messages`` is at most :data:`MAX_PROCESS_QUEUE_FRAMES` (24): one step a message.
    """
    messages = check_int(messages, "messages", 1, MAX_PROCESS_QUEUE_FRAMES)
    steps = [(k, process_queue_view(messages, seed, k, slow)) for k in range(messages + 1)]
    return frames_figure(steps, "step", 0)


def handover_frames_figure(step: int = 0, **replay_kwargs: Any) -> go.Figure:
    """The hand-over stepper (:func:`rmqlib.viz.handover.handover_view`) with a plotly "step" slider, opened at
    ``step``."""
    replay = replay_handover(**replay_kwargs)
    check_int(step, "step", 0, len(replay.frames) - 1)
    if len(replay.frames) > MAX_STEPS:
        raise ValueError(
            f"replay_kwargs: this replay has {len(replay.frames)} steps; a slider figure holds at "
            f"most {MAX_STEPS} (fewer queues or consumers)"
        )
    return frames_figure(handover_steps(replay), "step", step)


def replica_locks_frames_figure() -> go.Figure:
    """Figure 9.5's settings (:func:`rmqlib.viz.replicas.replica_locks_view`, acting master on) with a plotly
    "master away" slider."""
    steps = [(text(label), replica_locks_view(label)) for label in MASTER_AWAY]
    return frames_figure(steps, text("master away"), text("3 s"))


# --------------------------------------------------------------------------- notebook helper


def show_panel(panel, static_figure: go.Figure | Callable[[], go.Figure]):
    """Return what a notebook cell should display: ``panel`` live, or ``static_figure`` in a static build.

    ``static_figure`` may be a figure or a zero-argument function returning one
    (then nothing is computed in an interactive session).
    """
    if not (isinstance(static_figure, go.Figure) or callable(static_figure)):
        raise ArgumentTypeError(
            f"static_figure must be a figure or a function returning one, got {type(static_figure).__name__}"
        )
    if not is_static():
        return panel
    return static_figure() if callable(static_figure) else static_figure


# --------------------------------------------------------------------------- renderer


class StaticHtmlRenderer(MimetypeRenderer):
    """``text/html`` only: a div plus ``Plotly.newPlot``; plotly.js, require.js and MathJax are NOT included.

    The page must load plotly.js itself (the site adds ``_static/plotly.min.js`` to every page's head).
    """

    def __init__(self, config: dict | None = None):
        self.config = dict(config or {"responsive": True, "displaylogo": False})

    def to_mimebundle(self, fig_dict):
        html = pio.to_html(
            fig_dict,
            config=self.config,
            auto_play=False,
            include_plotlyjs=False,
            include_mathjax=False,
            full_html=False,
            default_width="100%",
            default_height=525,
            validate=False,
        )
        return {"text/html": html}


def use_static_renderer() -> None:
    """Register :class:`StaticHtmlRenderer` as ``"rmqlib_static"`` and make it plotly's default renderer.

    Idempotent: a second call keeps the registered renderer. Nothing calls it on import; the static
    site's build runs it first thing in every kernel (``rmqlib.site``).
    """
    if STATIC_RENDERER not in pio.renderers:
        pio.renderers[STATIC_RENDERER] = StaticHtmlRenderer()
    pio.renderers.default = STATIC_RENDERER


__all__ = [
    "STATIC_ENV",
    "STATIC_RENDERER",
    "StaticHtmlRenderer",
    "allocation_frames_figure",
    "frames_figure",
    "is_static",
    "machine_room_frames_figure",
    "process_queue_frames_figure",
    "ring_frames_figure",
    "show_panel",
    "use_static_renderer",
]

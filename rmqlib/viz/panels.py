"""ipywidgets panels: controls + ONE ``FigureWidget`` redrawn in place.

A panel wraps a pure function ``view(**params) -> go.Figure`` (from
:mod:`rmqlib.viz.figures`). When a control moves, the panel calls the
function and copies what changed into its existing ``FigureWidget`` inside
``batch_update()``: the widget object on the page stays the same, only the
trace and layout properties that differ are sent.

For tests (with or without a browser) every panel exposes:

* ``panel.sliders``  -- description label -> ``IntSlider`` (``"consumers"``, ``"queues"``, ``"virtual nodes"``, ...;
  the English label in any language: the slider shows :func:`~rmqlib.viz.i18n.text` of it)
* ``panel.controls`` -- view keyword -> widget (sliders, dropdowns)
* ``panel.figure``   -- the ``plotly.graph_objects.FigureWidget``; ``panel.figure.layout.meta`` holds the plotted
  allocation as JSON
* ``panel.view``     -- the pure function; ``panel.params()`` its current keyword arguments
* ``panel.error``    -- ``None``, or the text of the last error (shown in ``panel.status`` instead of a traceback)
* ``panel.widget``   -- the ``ipywidgets.VBox`` to display (displaying the panel displays it)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

import ipywidgets as widgets
import plotly.graph_objects as go
from IPython.display import display  # ipywidgets has loaded it already
from plotly.basedatatypes import Undefined  # plotly's 'leave this trace's value alone' marker
from plotly.basewidget import BaseFigureWidget
from plotly.serializers import custom_serializers
from plotly.utils import PlotlyJSONEncoder
from traitlets import Dict, observe

from rmqlib.allocation import make_cids
from rmqlib.checks import ArgumentTypeError, check_instance, check_int, check_str
from rmqlib.strategies import PrefixMachineRoomResolver
from rmqlib.viz.figure_widget import FigureWidget
from rmqlib.viz.figures import (
    MACHINE_ROOM_STRATEGIES,
    MAX_VIEW_CONSUMERS,
    MAX_VIEW_QUEUES,
    MAX_VIEW_QUEUES_PER_BROKER,
    MAX_VIEW_ROOM_BROKERS,
    MAX_VIEW_ROOM_CONSUMERS,
    MAX_VIEW_VIRTUAL_NODES,
    ROOMS,
    _room_counts,
    _str_list,
    _strategy,
    allocation_view,
    check_ring_points,
    machine_room_view,
    ring_view,
    shared_id_view,
)
from rmqlib.viz.i18n import phrase, text
from rmqlib.viz.style import CHAR_PX, FONT_SIZE, _cols, resolved_template, without_validation

View = Callable[..., go.Figure]


def blank_trace(kind: str) -> dict:
    """An invisible, empty trace of type ``kind`` (plotly JSON): a placeholder that keeps a trace count."""
    check_str(kind, "kind")
    empty = {"r": [], "theta": []} if kind == "scatterpolar" else {"x": [], "y": []}
    return {"type": kind, "name": "", "visible": False, "showlegend": False, **empty}


def _canonical(value) -> str:
    return json.dumps(value, cls=PlotlyJSONEncoder, sort_keys=True)


def _changes(old: dict, new: dict) -> dict:
    """The properties of ``new`` that differ from ``old`` (plotly JSON), and ``None`` for those it drops."""
    fixed = ("type", "uid")
    changes = {k: v for k, v in new.items() if k not in fixed and (k not in old or _canonical(old[k]) != _canonical(v))}
    changes.update({k: None for k in old if k not in new and k not in fixed})
    return changes


def _layout_changes(old: dict, new: dict) -> dict:
    """:func:`_changes` for a layout whose template may be a name (an unchecked figure's) or the template.

    A name equal to what is shown costs nothing to compare; a changed one is sent resolved, since the
    browser knows no template names.
    """
    old_t, new_t = old.get("template"), new.get("template")
    if isinstance(new_t, str):
        same = old_t == new_t or (isinstance(old_t, dict) and old_t == resolved_template(new_t))
        changes = _changes(
            {k: v for k, v in old.items() if k != "template"}, {k: v for k, v in new.items() if k != "template"}
        )
        if not same:
            changes["template"] = resolved_template(new_t)
        return changes
    return _changes(old, new)


def update_in_place(target: go.FigureWidget, new: go.Figure, shown: dict | None = None) -> dict:
    """Make ``target`` show ``new`` without replacing the widget, sending only what changed, in one batch.

    A trace keeps its slot while its type stays the same; traces ``new`` no longer needs are blanked
    (made invisible and empty) rather than deleted, so moving a slider back and forth never adds or
    deletes traces once the widget has held the most it needs (adding or deleting redraws everything).
    ``shown`` is what ``target`` shows, as this function returned it last time (default: read from
    the widget, which costs a copy of every trace and of the layout with its template); the return
    value is what it shows now.
    """
    check_instance(target, "target", go.FigureWidget)
    check_instance(new, "new", go.Figure)
    if shown is not None and not (
        isinstance(shown, dict) and isinstance(shown.get("data"), list) and isinstance(shown.get("layout"), dict)
    ):
        raise ArgumentTypeError("shown must be None or what update_in_place returned last time")
    if shown is None:
        shown = {"data": [t.to_plotly_json() for t in target.data], "layout": target.layout.to_plotly_json()}
    new_data = [t.to_plotly_json() for t in new.data]
    new_layout = new.layout.to_plotly_json()
    old_data = shown["data"]
    keep = 0
    while (
        keep < len(target.data)
        and keep < len(new_data)
        and target.data[keep].type == new_data[keep].get("type", "scatter")
    ):
        keep += 1
    with target.batch_update():
        if keep < min(len(target.data), len(new_data)):  # a slot changes type: it cannot be restyled
            target.data = target.data[:keep]
            old_data = old_data[:keep]
        if len(target.data) < len(new_data):
            target.add_traces(new.data[len(target.data) :])
            old_data = old_data + new_data[len(old_data) :]
    wanted = new_data + [blank_trace(t.type) for t in target.data[len(new_data) :]]
    # One plotly_update, as batch_update would send, built from the differences alone: assigning
    # through the trace objects would check and copy every value again.
    edits = {i: _changes(old, fresh) for i, (old, fresh) in enumerate(zip(old_data, wanted))}
    edits = {i: changes for i, changes in edits.items() if changes}
    indexes = sorted(edits)
    restyle = {
        prop: [edits[i].get(prop, Undefined) for i in indexes]
        for prop in sorted({prop for changes in edits.values() for prop in changes})
    }
    relayout = _layout_changes(shown["layout"], new_layout)
    if restyle or relayout:
        target.plotly_update(restyle_data=restyle, relayout_data=relayout, trace_indexes=indexes)
    return {"data": wanted, "layout": new_layout}


def _report(**kwargs):
    """A trait the browser sets to report to Python, not echoed back to the browser."""
    return Dict(allow_none=True).tag(sync=True, echo_update=False, **kwargs, **custom_serializers)


class PanelFigureWidget(FigureWidget):
    """The ``FigureWidget`` a panel draws in: one that fills the output's width (:mod:`rmqlib.viz.figure_widget`),
    minus the messages a slider move does not need.

    After every update the browser reports back the defaults plotly.js filled in for each trace
    (``_js2py_traceDeltas``, about 0.6 kB a visible trace). The plain widget then (1) echoes each such
    report to the browser (ipywidgets echoes every property the browser sets: 10-20 kB a move for
    chapter 02's panel), and (2) for every trace the update touched, sends two more messages
    (``_py2js_removeTraceProps`` set, then reset) that drop from the browser's copy of the figure the
    properties the report repeats: the browser builds its report before it applies the update to that
    copy, so the report repeats what Python just set (chapter 02's panel: up to 28 messages a move).
    Here the reports are not echoed, and their defaults are filed as plotly files them
    (``trace._prop_defaults``, the same change callbacks) while Python and the browser keep the
    properties Python set. Every property reads the same in Python; a move sends one update and one
    reset of the report.
    """

    _js2py_traceDeltas = _report()
    _js2py_layoutDelta = _report()
    _js2py_restyle = _report()
    _js2py_relayout = _report()
    _js2py_update = _report()
    _js2py_pointsCallback = _report()

    @observe("_js2py_traceDeltas")
    def _handler_js2py_traceDeltas(self, change):  # overrides plotly's handler (same name: it replaces it)
        report = change["new"]
        if not report:
            self._js2py_traceDeltas = None
            return
        if report["trace_edit_id"] == self._last_trace_edit_id:  # a report on the latest update only
            index = {trace.uid: i for i, trace in enumerate(self.data)}
            for delta in report["trace_deltas"]:
                i = index[delta["uid"]]
                paths = BaseFigureWidget._transform_data(self.data[i]._prop_defaults, delta)
                self._dispatch_trace_change_callbacks(paths, [i])
            self._trace_edit_in_process = False
            if not self._layout_edit_in_process:
                while self._waiting_edit_callbacks:
                    self._waiting_edit_callbacks.pop()()
        self._js2py_traceDeltas = None


class Panel:
    """Controls that drive one FigureWidget through a pure view function.

    ``largest``, when given, is the largest figure the controls can make. Every figure the panel
    draws then keeps its height and at least its top and bottom margins, so neither the page nor
    the plot area jumps while a slider moves; and the widget starts with as many trace slots (blank
    at first), so a move never has to add traces (adding traces redraws the plot from scratch).
    ``margins`` (side -> pixels, of ``"l"``, ``"r"``, ``"t"``, ``"b"``) are the least margins of every figure:
    wide enough for the widest axis labels any control position draws, they keep plotly's automargin
    from widening the plot's margin on a move, which draws the whole plot a second time.
    """

    def __init__(
        self,
        view: View,
        controls: Mapping[str, widgets.ValueWidget],
        combine: Callable[[dict], dict] | None = None,
        title: str | None = None,
        largest: go.Figure | None = None,
        margins: Mapping[str, int] | None = None,
    ):
        if not callable(view):
            raise ArgumentTypeError(f"view must be a function returning a figure, got {type(view).__name__}")
        if not isinstance(controls, Mapping) or not all(isinstance(w, widgets.ValueWidget) for w in controls.values()):
            raise ArgumentTypeError("controls must map view keywords to ipywidgets value widgets")
        if combine is not None and not callable(combine):
            raise ArgumentTypeError(f"combine must be a function or None, got {type(combine).__name__}")
        if title is not None:
            check_str(title, "title", empty=True)
        if largest is not None:
            check_instance(largest, "largest", go.Figure)
        if margins is not None:
            if not isinstance(margins, Mapping):
                raise ArgumentTypeError(f"margins must map sides to pixels, got {type(margins).__name__}")
            margins = {
                check_str(side, "margins side"): check_int(px, f"margins[{side!r}]", 0, 2000)
                for side, px in margins.items()
            }
            if not set(margins) <= {"l", "r", "t", "b"}:
                raise ValueError(f"margins: sides are 'l', 'r', 't' and 'b', got {sorted(margins)}")
        self.view = view
        self.height = None if largest is None else largest.layout.height
        self._margins = (
            {} if largest is None else {side: getattr(largest.layout.margin, side) or 0 for side in ("t", "b")}
        )
        for side, px in (margins or {}).items():
            self._margins[side] = max(px, self._margins.get(side, 0))
        self.controls = dict(controls)
        self.sliders = {label_of(w): w for w in self.controls.values() if isinstance(w, widgets.IntSlider)}
        self._combine = combine or (lambda params: params)
        self.error: str | None = None
        self.updates = 0
        self.status = widgets.HTML(value="")
        self._shown: dict | None = None  # what the widget shows, as update_in_place last returned it
        first = self._figure()
        if largest is not None and len(largest.data) > len(first.data):
            first.add_traces([blank_trace(t.type) for t in largest.data[len(first.data) :]])
        self.figure = PanelFigureWidget(first)
        for w in self.controls.values():
            w.observe(self._on_change, names="value")
        header = [widgets.HTML(f"<b>{phrase(title)}</b>")] if title else []
        boxes = [widgets.HBox(list(self.controls.values())[i : i + 3]) for i in range(0, len(self.controls), 3)]
        self.widget = widgets.VBox(header + boxes + [self.status, self.figure])

    def params(self) -> dict:
        """The keyword arguments the view gets for the current control values."""
        return self._combine({name: w.value for name, w in self.controls.items()})

    def _figure(self) -> go.Figure:
        try:
            if self._shown is None:  # the first figure is checked; later ones come from the same builder
                fig = self.view(**self.params())
            else:
                with without_validation():
                    fig = self.view(**self.params())
            if self.height is not None or self._margins:  # same height and least margins: the plot stays put
                margins = {
                    side: max(getattr(fig.layout.margin, side) or 0, least) for side, least in self._margins.items()
                }
                fig.update_layout(margin=margins)
                if self.height is not None:
                    fig.update_layout(height=self.height)
            self.error = None
            self.status.value = ""
            return fig
        except Exception as exc:  # a widget never shows a traceback; tests assert error is None
            self.error = f"{type(exc).__name__}: {exc}"
            shown = text("cannot draw this: {error}", error=self.error)
            self.status.value = f"<span style='color:#b00'>{shown}</span>"
            return go.Figure(layout=dict(title=shown, meta={"error": self.error}))

    def refresh(self) -> None:
        """Recompute the figure for the current controls and update ``self.figure`` in place."""
        self._shown = update_in_place(self.figure, self._figure(), self._shown)
        self.updates += 1

    def _on_change(self, change) -> None:
        self.refresh()

    def _ipython_display_(self):
        display(self.widget)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def labelled(widget: widgets.ValueWidget, label: str, **fields) -> widgets.ValueWidget:
    """``widget`` showing ``text(label, **fields)``; :func:`label_of` gives the English ``label`` back."""
    widget.description = text(label, **fields)
    widget._rmqlib_label = label.format(**fields) if fields else label
    return widget


def label_of(widget: widgets.ValueWidget) -> str:
    """The English label of a control (its description, in English mode)."""
    return getattr(widget, "_rmqlib_label", widget.description)


def _slider(label: str, value: int, lo: int, hi: int, names: str | None = None, **fields) -> widgets.IntSlider:
    """An IntSlider described by ``text(label, **fields)``; ``names`` (default ``label``) says which arguments gave
    ``value`` and ``hi`` in an error."""
    check_str(label, "label")
    label_en = label.format(**fields) if fields else label
    names = names or label_en
    value, lo, hi = check_int(value, names), check_int(lo, f"{names} minimum"), check_int(hi, f"{names} maximum")
    if not lo <= value <= hi:
        raise ValueError(f"{names}: {label_en} value {value} outside {lo}..{hi}")
    return labelled(
        widgets.IntSlider(
            value=value, min=lo, max=hi, step=1, continuous_update=False, style={"description_width": "initial"}
        ),
        label,
        **fields,
    )


def _strategy_controls(
    panel: str, strategies: Sequence[str], queues: int, consumers: int, max_queues: int, max_consumers: int
) -> tuple[dict[str, widgets.ValueWidget], list[str], int, int]:
    """The strategy dropdown and the "queues" and "consumers" sliders of an allocation panel, with the strategies and
    the two maxima checked (``panel`` names the panel in an error)."""
    strategies = _str_list(strategies, "strategies", max_len=8)
    max_queues = check_int(max_queues, "max_queues", 1, MAX_VIEW_QUEUES)
    max_consumers = check_int(max_consumers, "max_consumers", 1, MAX_VIEW_CONSUMERS)
    if not strategies:
        raise ValueError("strategies must name at least one strategy")
    for name in strategies:
        if name not in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"):
            raise ValueError(f"strategies: {panel} draws AVG, AVG_BY_CIRCLE or CONSISTENT_HASH, got {name!r}")
    controls = {
        "strategy": labelled(widgets.Dropdown(options=strategies, value=strategies[0]), "strategy"),
        "queues": _slider("queues", queues, 1, max_queues, "queues and max_queues"),
        "consumers": _slider("consumers", consumers, 1, max_consumers, "consumers and max_consumers"),
    }
    return controls, strategies, max_queues, max_consumers


def allocation_panel(
    strategies: Sequence[str] = ("AVG", "AVG_BY_CIRCLE"),
    queues: int = 8,
    consumers: int = 3,
    max_queues: int = 32,
    max_consumers: int = 16,
    virtual_nodes: int = 10,
) -> Panel:
    """Strategy dropdown + "queues" and "consumers" sliders over :func:`allocation_view`.

    ``max_queues`` is at most :data:`~rmqlib.viz.figures.MAX_VIEW_QUEUES` (64) and ``max_consumers`` at most
    :data:`~rmqlib.viz.figures.MAX_VIEW_CONSUMERS` (64): the largest figure a slider can then ask for draws in
    well under a second. Larger raise ValueError.
    """
    controls, strategies, max_queues, max_consumers = _strategy_controls(
        "allocation_panel", strategies, queues, consumers, max_queues, max_consumers
    )
    if "CONSISTENT_HASH" in strategies:
        controls["virtual_nodes"] = _slider("virtual nodes", virtual_nodes, 0, 100, "virtual_nodes")
    # the most consumer rows, traces and legend entries these sliders allow, and room for the widest row label
    return Panel(
        allocation_view,
        controls,
        largest=allocation_view(strategies[0], max_queues, max_consumers),
        margins={"l": row_label_px(make_cids(max_consumers), max_queues)},
    )


def shared_id_panel(
    strategies: Sequence[str] = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"),
    queues: int = 8,
    consumers: int = 4,
    same_id: int = 2,
    max_queues: int = 32,
    max_consumers: int = 16,
) -> Panel:
    """Strategy dropdown + "queues", "consumers" and "processes with one id" sliders over :func:`shared_id_view`.

    The last slider never goes past the consumers slider (moving that one down pulls it along). Limits as
    :func:`allocation_panel`; ``same_id`` 1..``consumers``.
    """
    controls, strategies, max_queues, max_consumers = _strategy_controls(
        "shared_id_panel", strategies, queues, consumers, max_queues, max_consumers
    )
    controls["same_id"] = _slider("processes with one id", same_id, 1, consumers, "same_id and consumers")

    def follow(change):  # observed before the panel's own observer, so the view never sees same_id > consumers
        controls["same_id"].max = change["new"]

    controls["consumers"].observe(follow, names="value")
    # the most rows (every process, and the "nobody" row a shared id makes) and the widest row label
    largest = shared_id_view(strategies[0], max_queues, max_consumers, min(2, max_consumers))
    labels = make_cids(max_consumers) + [f"{make_cids(1)[0]} #{max_consumers}"]
    return Panel(shared_id_view, controls, largest=largest, margins={"l": row_label_px(labels, max_queues)})


def row_label_px(cids: Sequence[str], max_queues: int) -> int:
    """Pixels a left margin needs for every consumer row label :func:`allocation_view` can draw for ``cids``
    and at most ``max_queues`` queues ("<cid> (<count>)", "<cid> (idle)" and the "nobody" row), with the
    tick padding: an estimate from the house font's average glyph width, which the digits and dots
    these labels are mostly made of undercut."""
    cids = _str_list(cids, "cids")
    max_queues = check_int(max_queues, "max_queues", 0)
    labels = [text("nobody")] + [
        label for cid in cids for label in (f"{cid} ({max_queues})", text("{cid} (idle)", cid=cid))
    ]
    return round(max(_cols(label) for label in labels) * CHAR_PX[FONT_SIZE]) + 12


def ring_panel(
    consumers: int = 4,
    queues: int = 16,
    virtual_nodes: int = 3,
    max_consumers: int = 12,
    max_queues: int = 64,
    max_virtual_nodes: int = 50,
) -> Panel:
    """ "consumers", "queues" and "virtual nodes" sliders over :func:`ring_view`.

    ``max_consumers`` at most :data:`~rmqlib.viz.figures.MAX_VIEW_CONSUMERS` (64), ``max_queues`` at most
    :data:`~rmqlib.viz.figures.MAX_VIEW_QUEUES` (64), ``max_virtual_nodes`` at most
    :data:`~rmqlib.viz.figures.MAX_VIEW_VIRTUAL_NODES` (1,000), and ``max_consumers`` x ``max_virtual_nodes``
    at most :data:`~rmqlib.viz.figures.MAX_VIEW_RING_POINTS` (5,000), so that every slider position draws.
    Larger raise ValueError.
    """
    max_consumers = check_int(max_consumers, "max_consumers", 1, MAX_VIEW_CONSUMERS)
    max_queues = check_int(max_queues, "max_queues", 1, MAX_VIEW_QUEUES)
    max_virtual_nodes = check_int(max_virtual_nodes, "max_virtual_nodes", 0, MAX_VIEW_VIRTUAL_NODES)
    check_ring_points(max_consumers, max_virtual_nodes, "max_virtual_nodes")
    controls = {
        "consumers": _slider("consumers", consumers, 1, max_consumers, "consumers and max_consumers"),
        "queues": _slider("queues", queues, 1, max_queues, "queues and max_queues"),
        "virtual_nodes": _slider(
            "virtual nodes", virtual_nodes, 0, max_virtual_nodes, "virtual_nodes and max_virtual_nodes"
        ),
    }
    return Panel(ring_view, controls)


def machine_room_panel(
    strategies: Sequence[str] = MACHINE_ROOM_STRATEGIES,
    brokers: Sequence[int] = (1, 1, 1),
    consumers: Sequence[int] = (2, 1, 0),
    queues_per_broker: int = 4,
    rooms: Sequence[str] = ROOMS,
    max_brokers: int = 3,
    max_consumers: int = 6,
) -> Panel:
    """Per room a "<room> brokers" and a "<room> consumers" slider, a strategy dropdown, a
    "queues per broker" slider and the "consumer idcs" that MACHINE_ROOM consumes, over
    :func:`machine_room_view`.

    Limits: at most :data:`~rmqlib.viz.figures.MAX_VIEW_ROOMS` (6) rooms, ``max_brokers`` at most
    :data:`~rmqlib.viz.figures.MAX_VIEW_ROOM_BROKERS` (8), ``max_consumers`` at most
    :data:`~rmqlib.viz.figures.MAX_VIEW_ROOM_CONSUMERS` (16); larger raise ValueError.
    """
    rooms, brokers, consumers = _room_counts(rooms, brokers, consumers)
    max_brokers = check_int(max_brokers, "max_brokers", 0, MAX_VIEW_ROOM_BROKERS)
    max_consumers = check_int(max_consumers, "max_consumers", 0, MAX_VIEW_ROOM_CONSUMERS)
    queues_per_broker = check_int(queues_per_broker, "queues_per_broker", 1, min(8, MAX_VIEW_QUEUES_PER_BROKER))
    strategies = _str_list(strategies, "strategies", max_len=8)
    if not strategies:
        raise ValueError("strategies must name at least one strategy")
    for i, name in enumerate(strategies):  # an unknown name is refused now, not drawn as an error later
        _strategy(name, f"strategies[{i}]", consumer_idcs=set(), resolver=PrefixMachineRoomResolver("-"))
    controls: dict[str, widgets.ValueWidget] = {
        "strategy": labelled(
            widgets.Dropdown(options=strategies, value=strategies[0], layout=widgets.Layout(width="auto")), "strategy"
        ),
        "queues_per_broker": _slider("queues per broker", queues_per_broker, 1, 8, "queues_per_broker"),
        "consumer_idcs": labelled(
            widgets.SelectMultiple(options=rooms, value=rooms[:1], rows=3, style={"description_width": "initial"}),
            "consumer idcs",
        ),
    }
    for i, (room, b, c) in enumerate(zip(rooms, brokers, consumers)):
        controls[f"brokers_{room}"] = _slider(
            "{room} brokers", b, 0, max_brokers, f"brokers[{i}] and max_brokers", room=room
        )
        controls[f"consumers_{room}"] = _slider(
            "{room} consumers", c, 0, max_consumers, f"consumers[{i}] and max_consumers", room=room
        )

    def combine(params: dict) -> dict:
        return {
            "strategy": params["strategy"],
            "queues_per_broker": params["queues_per_broker"],
            "consumer_idcs": tuple(params["consumer_idcs"]),
            "rooms": tuple(rooms),
            "brokers": tuple(params[f"brokers_{r}"] for r in rooms),
            "consumers": tuple(params[f"consumers_{r}"] for r in rooms),
        }

    return Panel(machine_room_view, controls, combine)


__all__ = [
    "Panel",
    "PanelFigureWidget",
    "allocation_panel",
    "blank_trace",
    "label_of",
    "labelled",
    "machine_room_panel",
    "ring_panel",
    "row_label_px",
    "update_in_place",
]

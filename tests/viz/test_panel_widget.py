"""The panels' FigureWidget: what a browser report costs in messages, and a plot area that stays put on a move."""

import plotly.graph_objects as go
import pytest

from rmqlib.allocation import make_cids
from rmqlib.viz import allocation_panel, allocation_view
from rmqlib.viz.panels import PanelFigureWidget, row_label_px

pytestmark = pytest.mark.usefixtures("front_end")  # widgets send as in a notebook (conftest.py)


def _sent(widget) -> list[dict]:
    """Record what ``widget`` sends to the browser (ipywidgets calls ``_send`` for every message)."""
    sent: list[dict] = []
    widget._send = lambda msg, buffers=None: sent.append(msg)
    return sent


def _report_on_the_last_update(widget) -> dict:
    """What the browser reports after the widget's last update: per trace, the defaults plotly.js filled in,
    and (the browser builds it before applying the update to its copy) the properties Python just set."""
    deltas = [
        {
            "uid": t.uid,
            "name": t.name,
            "mode": "markers",
            "marker": {"color": t.marker.color, "line": {"color": "#444", "width": 0}},
            "opacity": 1,
        }
        for t in widget.data
    ]
    return {"trace_deltas": deltas, "trace_edit_id": widget._last_trace_edit_id}


def _moved(widget_class):
    fig = allocation_view("AVG", 6, 3)
    widget = widget_class(fig)
    widget.plotly_update(restyle_data={"name": ["a", "b", "c"]}, trace_indexes=[0, 1, 2])
    return widget


def test_plain_figurewidget_answers_a_report_with_an_echo_and_two_messages_per_trace():
    """What PanelFigureWidget saves: this is the plain widget's behaviour it avoids (if plotly stops doing
    it, this test fails and the subclass can go)."""
    widget = _moved(go.FigureWidget)
    sent = _sent(widget)
    widget.set_state({"_js2py_traceDeltas": _report_on_the_last_update(widget)})
    methods = [(m["method"], sorted(m["state"])) for m in sent]
    assert methods[0] == ("echo_update", ["_js2py_traceDeltas"])
    assert methods.count(("update", ["_py2js_removeTraceProps"])) == 2 * 3


def test_panel_figurewidget_answers_a_report_with_one_reset_and_keeps_every_value():
    widget = _moved(PanelFigureWidget)
    sent = _sent(widget)
    widget.set_state({"_js2py_traceDeltas": _report_on_the_last_update(widget)})
    assert [(m["method"], m["state"]) for m in sent] == [("update", {"_js2py_traceDeltas": None})]
    assert [t.name for t in widget.data] == ["a", "b", "c"]  # what Python set still reads the same
    assert [t.mode for t in widget.data] == ["markers"] * 3
    assert widget.data[0].marker.line.color == "#444"  # the default plotly.js reported is filed, as plotly does
    assert widget.data[0].opacity == 1
    assert not widget._trace_edit_in_process


def test_panel_figurewidget_ignores_a_report_on_an_older_update():
    widget = _moved(PanelFigureWidget)
    stale = _report_on_the_last_update(widget)
    widget.plotly_update(restyle_data={"name": ["x", "y", "z"]}, trace_indexes=[0, 1, 2])
    sent = _sent(widget)
    widget.set_state({"_js2py_traceDeltas": stale})
    assert widget.data[0].marker.line.color is None and widget._trace_edit_in_process
    assert [(m["method"], m["state"]) for m in sent] == [("update", {"_js2py_traceDeltas": None})]


def test_panel_figurewidget_echoes_no_report_but_still_syncs_the_figure():
    traits = PanelFigureWidget().traits()
    reports = [name for name in traits if name.startswith("_js2py_")]
    assert reports and all(traits[name].metadata.get("echo_update") is False for name in reports)
    assert all(traits[name].metadata.get("sync") for name in reports + ["_widget_data", "_py2js_update"])
    assert traits["_py2js_update"].metadata.get("echo_update", True)  # only the browser's reports change


def test_allocation_panel_keeps_its_margins_whatever_the_sliders_say():
    """A wider row label (10 consumers and more, "(idle)" past the queue count) would make plotly's automargin
    widen the left margin on that move and draw the plot twice; the panel's left margin is wide enough for all."""
    panel = allocation_panel(["AVG", "AVG_BY_CIRCLE"], queues=10, consumers=4, max_queues=32, max_consumers=16)
    margins = set()
    for queues, consumers in [(10, c) for c in range(1, 17)] + [(1, 16), (32, 16), (32, 1)]:
        panel.sliders["queues"].value = queues
        panel.sliders["consumers"].value = consumers
        assert panel.error is None
        margin = panel.figure.layout.margin
        margins.add((margin.l, margin.t, margin.b))
    assert len(margins) == 1
    assert margins.pop()[0] == row_label_px(make_cids(16), 32)


def test_row_label_px_covers_the_longest_label_of_the_range():
    short, long_ids = row_label_px(make_cids(9), 8), row_label_px(make_cids(10), 8)
    assert long_ids > short  # 10.0.0.10@1010 is longer than 10.0.0.9@1009
    assert row_label_px(make_cids(3), 10_000) > row_label_px(make_cids(3), 8)  # "(10000)" is longer than "(idle)"
    # "10.0.0.16@1016 (idle)": 21 glyphs, each at most the house font's average width in these labels
    assert row_label_px(make_cids(16), 10) >= 21 * 6.9


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: row_label_px("abc", 4), "cids"),
        (lambda: row_label_px(["a"], -1), "max_queues"),
        (lambda: row_label_px(["a"], "4"), "max_queues"),
    ],
)
def test_row_label_px_names_its_bad_argument(call, name):
    with pytest.raises((TypeError, ValueError), match=name):
        call()


@pytest.mark.parametrize("queues, consumers", [(10, 12), (3, 5), (1, 1), (8, 3)])
def test_allocation_view_keeps_every_row_in_range_idle_ones_too(queues, consumers):
    """An idle consumer's row has no marker: a range fitted to the markers left it (and its label) off the plot."""
    fig = allocation_view("AVG", queues, consumers)
    low, high = sorted(fig.layout.yaxis.range)
    rows = fig.layout.yaxis.tickvals
    assert len(rows) == consumers and all(low < row < high for row in rows)
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # the first row (Java order) on top
    held = {t.y[0] for t in fig.data if t.y}
    assert held < set(rows) if queues < consumers else held == set(rows)

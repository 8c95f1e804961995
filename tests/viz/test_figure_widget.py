"""The panels' FigureWidget: plotly's front end unchanged, plus a watcher that resizes the plot to its element.

What it draws in a browser (the width, also after a notebook is reopened) is checked by
tests/browser/test_panel_width.py.
"""

import json

import plotly.graph_objects as go
import pytest

from rmqlib.viz import allocation_panel, figure_widget
from rmqlib.viz.figure_widget import RESIZE_HOOK, FigureWidget, widget_esm


def test_panels_draw_into_the_book_figure_widget_and_open_it_responsive():
    panel = allocation_panel(["AVG"], queues=6, consumers=2)
    assert isinstance(panel.figure, FigureWidget) and isinstance(panel.figure, go.FigureWidget)
    state = panel.figure.get_state()
    assert state["_config"] == {"responsive": True}
    assert state["_esm"] == widget_esm()


def test_the_front_end_embeds_plotlys_widget_bundle_unchanged_and_calls_its_resize_hook():
    esm = widget_esm()
    plotly_esm = str(go.FigureWidget._esm)
    start = esm.index("new Blob([") + len("new Blob([")
    literal, end = json.JSONDecoder().raw_decode(esm, start)
    assert literal == plotly_esm and esm[end] == "]"
    assert 'const KEY = "rmqlib-plotly-widget-' in esm  # imported once per page, under a key for this text
    assert "export default" in esm and f"el.{RESIZE_HOOK}" in esm and "__" + "RESIZE_HOOK__" not in esm
    # plotly.js itself installs the hook for responsive plots; an upgrade that drops it must fail here
    assert f"{RESIZE_HOOK}=function" in plotly_esm


def test_a_plotly_without_the_resize_hook_is_refused_loudly(monkeypatch):
    class Bundle:
        def __str__(self):
            return "export default function () {}"

    monkeypatch.setattr(go.FigureWidget, "_esm", Bundle())
    figure_widget.widget_esm.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=RESIZE_HOOK):
            figure_widget.widget_esm()
    finally:
        monkeypatch.undo()
        figure_widget.widget_esm.cache_clear()
    assert RESIZE_HOOK in figure_widget.widget_esm()

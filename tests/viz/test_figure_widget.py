"""The panels' FigureWidget: plotly's front end unchanged, plus a watcher that resizes the plot to its element.

What it draws in a browser (the width, also after a notebook is reopened) is checked by
tests/browser/test_panel_width.py.
"""

import plotly.graph_objects as go
import pytest

from rmqlib.viz import allocation_panel, figure_widget
from rmqlib.viz.figure_widget import RESIZE_HOOK, FigureWidget, bundle_key, plotly_bundle, widget_esm


def test_panels_draw_into_the_book_figure_widget_and_open_it_responsive():
    panel = allocation_panel(["AVG"], queues=6, consumers=2)
    assert isinstance(panel.figure, FigureWidget) and isinstance(panel.figure, go.FigureWidget)
    state = panel.figure.get_state()
    assert state["_config"] == {"responsive": True}
    assert state["_esm"] == widget_esm()


def test_the_widget_opens_with_plotlys_bundle_unchanged_and_a_small_module(front_end):
    """The front end initializes from the opening state: the bundle must be in it, not sent after."""
    FigureWidget(go.Scatter(x=[0, 1], y=[1, 0]))
    (state,) = [s for s in front_end if "_plotly_bundle" in s]
    assert state["_plotly_bundle"] == str(go.FigureWidget._esm) == plotly_bundle()
    assert state["_esm"] == widget_esm() and len(widget_esm()) < 10_000  # the bundle is not embedded again


def test_the_front_end_loads_the_bundle_once_per_page_and_calls_its_resize_hook():
    esm = widget_esm()
    assert f'const KEY = "{bundle_key(plotly_bundle())}"' in esm and 'model.get("_plotly_bundle")' in esm
    assert bundle_key("export default 1") != bundle_key("export default 2")  # a new plotly is loaded anew
    assert "export default" in esm and f"el.{RESIZE_HOOK}" in esm
    assert "__PLOTLY_KEY__" not in esm and "__RESIZE_HOOK__" not in esm
    # plotly.js itself installs the hook for responsive plots; an upgrade that drops it must fail here
    assert f"{RESIZE_HOOK}=function" in plotly_bundle()


def test_a_plotly_without_the_resize_hook_is_refused_loudly(monkeypatch):
    class Bundle:
        def __str__(self):
            return "export default function () {}"

    monkeypatch.setattr(go.FigureWidget, "_esm", Bundle())
    figure_widget.plotly_bundle.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=RESIZE_HOOK):
            figure_widget.plotly_bundle()
    finally:
        monkeypatch.undo()
        figure_widget.plotly_bundle.cache_clear()
    assert RESIZE_HOOK in figure_widget.plotly_bundle()

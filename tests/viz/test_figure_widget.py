"""The panels' FigureWidget: plotly's front end unchanged, drawn once placed; the marker it waits for is sent last.

What it draws in a browser (the width) is checked by tests/browser/test_panel_width.py.
"""

import json

import ipywidgets
import plotly.graph_objects as go
import pytest

from rmqlib.viz import allocation_panel
from rmqlib.viz.figure_widget import FigureWidget, widget_esm

pytestmark = pytest.mark.usefixtures("front_end")  # widgets send as in a notebook (conftest.py)


def test_panels_draw_into_the_book_figure_widget_with_plotlys_responsive_config():
    panel = allocation_panel(["AVG"], queues=6, consumers=2)
    assert isinstance(panel.figure, FigureWidget) and isinstance(panel.figure, go.FigureWidget)
    assert panel.figure._config["responsive"] is True
    assert panel.figure.get_state()["_esm"] == widget_esm()


def test_the_front_end_embeds_plotlys_widget_bundle_unchanged():
    esm = widget_esm()
    plotly_esm = str(go.FigureWidget._esm)
    start = esm.index("const source = ") + len("const source = ")
    literal, end = json.JSONDecoder().raw_decode(esm, start)
    assert literal == plotly_esm and esm[end] == ";"
    assert "export default" in esm and "rmqlibWaits" in esm and 'model.get("_config")' in esm


def test_config_is_sent_after_the_figure(monkeypatch):
    """The front end draws once ``_config.responsive`` has arrived: it must come after the figure's traits."""
    sent = []
    send_state = ipywidgets.Widget.send_state

    def record(self, key=None):
        if isinstance(self, FigureWidget):
            sent.append(key)
        return send_state(self, key)

    monkeypatch.setattr(ipywidgets.Widget, "send_state", record)
    FigureWidget(go.Scatter(x=[0, 1], y=[1, 0]), layout=dict(height=300))
    assert "_widget_layout" in sent and "_widget_data" in sent
    figure_sent = max(sent.index("_widget_layout"), sent.index("_widget_data"))
    assert sent[-1] == "_config" and sent.index("_config") > figure_sent

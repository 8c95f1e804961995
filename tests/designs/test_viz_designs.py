"""Chapter 11c's figures and panel: house style, every design drawn, sliders that redraw without errors."""

import pytest

from rmqlib.designs.compare import DESIGNS, MEASURED, design_summary, measured_table, simulated_changes
from rmqlib.viz.designs import (
    changes_figure,
    designs_frames_figure,
    designs_panel,
    designs_view,
    tradeoff_figure,
)
from rmqlib.viz.style import TEMPLATE_NAME, plain_title


def _in_house_style(fig):
    assert fig.layout.template.layout.font.family  # the template was set
    assert fig.layout.meta["style"]
    assert plain_title(fig.layout)


def test_the_view_draws_every_design_with_three_numbers():
    fig = designs_view(6, 20)
    _in_house_style(fig)
    assert [t.name for t in fig.data] == ["imbalance (most - fewest)", "moved when one joins", "moved when one leaves"]
    assert list(fig.data[0].y) == [DESIGNS[d].label for d in MEASURED]
    rows = fig.layout.meta["rows"]
    assert list(fig.data[1].x) == [rows[d]["moved_out"] for d in MEASURED]
    assert fig.layout.legend.orientation == "h"  # the legend sits under the plot, every entry shown


def test_the_panel_redraws_all_designs_for_every_slider_end():
    panel = designs_panel(consumers=4, queues=8, max_consumers=12, max_queues=24)
    assert set(panel.sliders) == {"consumers", "queues"}
    for consumers, queues in ((2, 1), (12, 24), (12, 1), (2, 24)):
        panel.sliders["consumers"].value, panel.sliders["queues"].value = consumers, queues
        assert panel.error is None
        assert panel.figure.layout.meta["consumers"] == consumers and panel.figure.layout.meta["queues"] == queues
        assert len(panel.figure.layout.meta["rows"]) == len(MEASURED)


def test_the_static_figure_has_a_consumers_slider():
    fig = designs_frames_figure(queues=16, consumer_counts=(2, 4), initial=4, designs=("AVG", "STICKY"))
    assert [s.label for s in fig.layout.sliders[0].steps] == ["2", "4"]


def test_tradeoff_and_changes_figures_draw_what_they_are_given():
    summary = design_summary(measured_table(["AVG", "STICKY", "KAFKA_UNIFORM"], (4,), (16,)))
    fig = tradeoff_figure(summary)
    _in_house_style(fig)
    left = [y for trace in fig.data if trace.xaxis == "x" for y in trace.y]
    assert sorted(left) == sorted(r["design"] for r in summary)
    assert [t.name for t in fig.data if t.showlegend] == ["decided by every client", "decided by broker"]
    rows = simulated_changes(designs=["RocketMQ AVG"], changes=["scale_out"], kafka=False)
    fig = changes_figure(rows)
    _in_house_style(fig)
    assert [t.name for t in fig.data if t.showlegend] == ["scale-out"]
    assert fig.layout.meta["rows"][0]["design"] == "RocketMQ AVG"


def test_the_changes_figure_has_three_panels_labelled_in_ms_or_s():
    rows = [
        {
            "design": "A",
            "change": "crash",
            "seed": 0,
            "pause_ms": 4,
            "longest_ms": 1,
            "paused": 4,
            "duplicates": 7,
            "unconsumed": 0,
            "moved": 9,
        },
        {
            "design": "B",
            "change": "crash",
            "seed": 0,
            "pause_ms": 245_004,
            "longest_ms": 45_000,
            "paused": 16,
            "duplicates": 0,
            "unconsumed": 0,
            "moved": 9,
        },
    ]
    fig = changes_figure(rows)
    by_axis = {t.yaxis: t for t in fig.data}
    assert set(by_axis) == {"y", "y2", "y3"} and fig.layout.yaxis.type == "log"
    assert list(by_axis["y"].text) == ["4 ms", "245 s"] and list(by_axis["y"].y) == [4, 245_004]
    assert list(by_axis["y2"].y) == [4, 16] and list(by_axis["y3"].y) == [7, 0]
    assert [t.name for t in fig.data if t.showlegend] == ["crash"]
    # only the bottom panel names the designs
    assert not fig.layout.xaxis.showticklabels and fig.layout.xaxis3.showticklabels


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: designs_view(1, 8), ValueError, "consumers"),
        (lambda: designs_view(4, 300), ValueError, "queues"),
        (lambda: designs_view(4, 8, designs=()), ValueError, "designs"),
        (lambda: designs_panel(max_consumers=100), ValueError, "max_consumers"),
        (lambda: tradeoff_figure([]), ValueError, "summary"),
        (lambda: changes_figure(["x"]), TypeError, "rows"),
    ],
)
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_template_is_the_books():
    assert designs_view(3, 6).layout.template.layout.colorway[0] == "#2E91E5" and TEMPLATE_NAME == "rmqlib"

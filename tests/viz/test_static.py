"""The kernel-free slider figures of rmqlib.viz.static, checked without a browser."""

import plotly.graph_objects as go
import pytest

from rmqlib.allocation import allocate_group, make_cids, spread_queues
from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueConsistentHash
from rmqlib.viz import allocation_panel
from rmqlib.viz.static import (
    StaticHtmlRenderer,
    allocation_frames_figure,
    frames_figure,
    is_static,
    ring_frames_figure,
    show_panel,
)


def allocation_of(strategy, queues, cids):
    return {cid: [str(mq) for mq in mqs] for cid, mqs in allocate_group(strategy, queues, cids).items()}


def steps_of(fig):
    return fig.layout.sliders[0].steps


def test_allocation_frames_figure_has_one_step_and_frame_per_consumer_count_matching_allocate_group():
    fig = allocation_frames_figure("AVG", queues=10, consumer_counts=range(1, 17), initial=4)
    queues = spread_queues(10, ("broker-a",))
    assert [s.label for s in steps_of(fig)] == [str(c) for c in range(1, 17)]
    assert [f.name for f in fig.frames] == [str(c) for c in range(1, 17)]
    for c, step, frame in zip(range(1, 17), steps_of(fig), fig.frames):
        want = allocation_of(AllocateMessageQueueAveragely(), queues, make_cids(c))
        assert step.method == "update"
        assert step.args[1]["meta"]["allocation"] == want
        assert frame.layout.meta["allocation"] == want
        restyle = step.args[0]
        assert all(len(values) == len(fig.data) for values in restyle.values())
        shown = [name for name, visible in zip(restyle["name"], restyle["visible"]) if visible is not False]
        assert shown == list(want)
        by_name = dict(zip(restyle["name"], restyle["customdata"]))
        assert {cid: list(by_name[cid] or []) for cid in want} == want


def test_allocation_frames_figure_starts_at_the_initial_count():
    fig = allocation_frames_figure("AVG", queues=10, consumer_counts=range(1, 17), initial=4)
    assert fig.layout.sliders[0].active == 3
    assert fig.layout.meta["consumer_count"] == 4
    assert fig.layout.title.text.startswith("AVG: 10 queues over 4 consumers")
    assert [t.name for t in fig.data if t.visible is not False] == make_cids(4)


def test_every_step_of_a_figure_keeps_the_same_trace_count_padding_with_hidden_traces():
    fig = allocation_frames_figure("CONSISTENT_HASH", queues=6, consumer_counts=(1, 3, 8), virtual_nodes=2)
    assert len({len(f.data) for f in fig.frames}) == 1
    assert len(fig.data) == len(fig.frames[0].data) == 8  # 8 consumer rows at most (+ "nobody" if any gap)


def test_ring_frames_figure_matches_consistent_hash_for_every_vnode_count_including_zero():
    counts = (0, 1, 2, 3, 5, 10, 20, 50)
    fig = ring_frames_figure(consumers=4, queues=16, vnode_counts=counts, initial=1)
    queues, cids = spread_queues(16, ("broker-a", "broker-b")), make_cids(4)
    assert [s.label for s in steps_of(fig)] == [str(v) for v in counts]
    for v, step in zip(counts, steps_of(fig)):
        assert step.args[1]["meta"]["virtual_nodes"] == v
        assert step.args[1]["meta"]["allocation"] == allocation_of(AllocateMessageQueueConsistentHash(v), queues, cids)
    assert fig.layout.meta["virtual_nodes"] == 1
    assert steps_of(fig)[0].args[1]["meta"]["allocation"] == {cid: [] for cid in cids}


def test_steps_set_every_layout_key_any_step_uses_so_nothing_stale_survives_a_step():
    a = go.Figure(go.Scatter(x=[1], y=[1], name="a"), layout=dict(title="A", annotations=[dict(text="only in A")]))
    b = go.Figure(go.Scatter(x=[2], y=[2], name="b"), layout=dict(title="B"))
    fig = frames_figure([(1, a), (2, b)], "n")
    second = steps_of(fig)[1].args[1]
    assert "annotations" in second and second["annotations"] is None


def test_frames_figure_rejects_bad_input_with_clear_errors():
    a = go.Figure(go.Scatter(x=[1], y=[1]))
    with pytest.raises(ValueError, match="steps"):
        frames_figure([], "n")
    with pytest.raises(ValueError, match="active"):
        frames_figure([(1, a)], "n", active=5)
    with pytest.raises(ValueError, match="distinct"):
        frames_figure([(1, a), (1, a)], "n")
    with pytest.raises(ValueError, match="trace 0"):
        frames_figure([(1, a), (2, go.Figure(go.Bar(x=[1], y=[1])))], "n")
    with pytest.raises(ValueError, match="consumer_counts"):
        allocation_frames_figure(consumer_counts=[])
    with pytest.raises(ValueError, match="consumer_counts"):
        allocation_frames_figure(consumer_counts=[0, 1])
    with pytest.raises(ValueError, match="vnode_counts"):
        ring_frames_figure(vnode_counts=[-1])


def test_show_panel_returns_the_live_panel_unless_rmqlib_static_is_set(monkeypatch):
    panel = allocation_panel(["AVG"], queues=4, consumers=2)
    calls = []

    def static():
        calls.append(1)
        return go.Figure()

    monkeypatch.delenv("RMQLIB_STATIC", raising=False)
    assert not is_static()
    assert show_panel(panel, static) is panel and not calls
    for off in ("0", "false", "no", ""):
        monkeypatch.setenv("RMQLIB_STATIC", off)
        assert show_panel(panel, static) is panel
    monkeypatch.setenv("RMQLIB_STATIC", "1")
    assert isinstance(show_panel(panel, static), go.Figure) and calls == [1]
    fig = go.Figure()
    assert show_panel(panel, fig) is fig


def test_static_renderer_emits_html_without_plotlyjs_requirejs_mathjax_or_any_url():
    fig = allocation_frames_figure("AVG", queues=4, consumer_counts=(1, 2))
    bundle = StaticHtmlRenderer().to_mimebundle(fig.to_dict())
    assert list(bundle) == ["text/html"]
    html = bundle["text/html"]
    assert "Plotly.newPlot" in html
    assert len(html) < 200_000  # the figure, not the 4.8 MB library
    for banned in ("<script src", "plotly.js v", "require(", "requirejs", "mathjax", "cdn", "https://"):
        assert banned not in html.lower(), banned


def test_machine_room_frames_figure_has_one_step_per_strategy_matching_the_view():
    from rmqlib.viz import MACHINE_ROOM_STRATEGIES, machine_room_frames_figure, machine_room_view

    fig = machine_room_frames_figure(brokers=(1, 1, 1), consumers=(2, 1, 0))
    assert [f.name for f in fig.frames] == [
        s.replace("MACHINE_ROOM_NEARBY-", "NEARBY-") for s in MACHINE_ROOM_STRATEGIES
    ]
    for name, frame in zip(MACHINE_ROOM_STRATEGIES, fig.frames):
        view = machine_room_view(name, (1, 1, 1), (2, 1, 0))
        assert frame.layout.meta["allocation"] == view.layout.meta["allocation"]
    assert fig.layout.sliders[0].currentvalue.prefix == "strategy: "
    with pytest.raises(ValueError, match="strategies"):
        machine_room_frames_figure(strategies=[])


def test_process_queue_frames_figure_steps_through_every_acknowledgement():
    from rmqlib.viz import process_queue_frames_figure, process_queue_view

    fig = process_queue_frames_figure(messages=12, seed=3, slow=0)
    assert [f.name for f in fig.frames] == [str(k) for k in range(13)]
    for k, frame in enumerate(fig.frames):
        assert frame.layout.meta["commit_offset"] == process_queue_view(12, 3, k, 0).layout.meta["commit_offset"]
    assert fig.layout.sliders[0].active == 0

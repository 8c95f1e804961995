"""Figure builders plot what rmqlib computes; panels redraw one FigureWidget in place at every slider position."""

import itertools

import plotly.graph_objects as go
import pytest

from rmqlib.allocation import (
    allocate_group,
    imbalance,
    imbalance_spread,
    make_cids,
    make_queues,
    moved_queues,
    multi_topic_totals,
    queues_per_consumer,
    random_cids,
    spread_queues,
)
from rmqlib.hashring import HashRing
from rmqlib.model import java_sorted_cids
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueConsistentHash,
    strategy_from_name,
)
from rmqlib.viz import (  # noqa: E402
    PALETTE,
    allocation_figure,
    allocation_frames_figure,
    allocation_panel,
    allocation_view,
    color_of,
    consumer_colors,
    imbalance_vs_vnodes_figure,
    machine_room_layout,
    machine_room_panel,
    machine_room_view,
    moved_queues_figure,
    multi_topic_figure,
    process_queue_view,
    queues_per_consumer_figure,
    ring_figure,
    ring_panel,
    ring_view,
    update_in_place,
)
from rmqlib.viz.figures import TOPIC_KEY_COLOR  # noqa: E402


def _plotted(fig):
    """cid -> queue strings, read from the traces (not from meta)."""
    return {t.name: list(t.customdata or ()) for t in fig.data if t.name not in ("nobody",)}


@pytest.mark.parametrize("name", ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"])
@pytest.mark.parametrize("queues,consumers", [(8, 3), (3, 5), (1, 1), (16, 16)])
def test_allocation_view_plots_exactly_the_rmqlib_allocation(name, queues, consumers):
    fig = allocation_view(name, queues, consumers)
    expected = allocate_group(strategy_from_name(name), spread_queues(queues), make_cids(consumers))
    want = {cid: [str(mq) for mq in mqs] for cid, mqs in expected.items()}
    assert _plotted(fig) == want
    assert fig.layout.meta["allocation"] == want
    assert fig.layout.meta["idle"] == [c for c, m in expected.items() if not m]


def test_allocation_figure_marks_idle_consumers_in_title_and_ticks():
    fig = allocation_view("AVG", 3, 5)
    assert "2 idle" in fig.layout.title.text
    assert sum("(idle)" in t for t in fig.layout.yaxis.ticktext) == 2


def test_allocation_figure_shows_gaps_and_overlaps_for_any_strategy():
    mqs = make_queues(queues_per_broker=4)
    alloc = allocate_group(AllocateMessageQueueByConfig(mqs[:2]), mqs, make_cids(2))
    fig = allocation_figure(alloc, make_cids(2), mqs)
    assert "2 queues unowned" in fig.layout.title.text and "2 owned twice" in fig.layout.title.text
    nobody = [t for t in fig.data if t.name == "nobody"][0]
    assert list(nobody.customdata) == [str(mq) for mq in mqs[2:]]


def test_allocation_figure_does_not_call_three_owners_twice():
    mqs = make_queues(queues_per_broker=4)
    config = AllocateMessageQueueByConfig(mqs[:2])
    fig = allocation_figure(allocate_group(config, mqs, make_cids(3)), make_cids(3), mqs)
    assert "2 owned more than once" in fig.layout.title.text and "twice" not in fig.layout.title.text


def test_consumer_colours_follow_creation_order_not_sort_order():
    cids = make_cids(12)
    colors = consumer_colors(cids)
    assert colors["10.0.0.2@1002"] == PALETTE[1] == color_of(1)
    assert consumer_colors(make_cids(3))["10.0.0.2@1002"] == colors["10.0.0.2@1002"]
    fig = allocation_view("AVG", 12, 12)
    trace = [t for t in fig.data if t.name == "10.0.0.10@1010"][0]
    assert trace.marker.color == color_of(9)


def test_queues_per_consumer_bar_heights():
    alloc = allocate_group(AllocateMessageQueueAveragely(), make_queues(queues_per_broker=5), make_cids(3))
    fig = queues_per_consumer_figure(alloc)
    assert list(fig.data[0].y) == list(queues_per_consumer(alloc).values()) == [2, 2, 1]


@pytest.mark.parametrize("consumers,vnodes", [(1, 0), (1, 1), (4, 10), (12, 50)])
def test_ring_figure_vnodes_and_queue_owners_match_hashring(consumers, vnodes):
    cids = make_cids(consumers)
    mqs = spread_queues(16, ("broker-a", "broker-b"))
    fig = ring_figure(cids, vnodes, mqs)
    ring = HashRing.build(java_sorted_cids(cids), vnodes)
    for cid in cids:
        points = [t for t in fig.data if t.name == f"{cid} vnodes"][0]
        assert len(points.r) == ring.vnode_count().get(cid, 0)
    alloc = allocate_group(AllocateMessageQueueConsistentHash(vnodes), mqs, cids)
    assert fig.layout.meta["allocation"] == {c: [str(mq) for mq in m] for c, m in alloc.items()}
    queues = [t for t in fig.data if t.name == "queues"][0]
    assert len(queues.theta) == 16


def test_ring_with_zero_virtual_nodes_says_it_is_empty():
    fig = ring_view(3, 8, 0)
    assert "empty" in fig.layout.title.text
    assert all(not v for v in fig.layout.meta["allocation"].values())


def test_imbalance_spread_matches_allocation_imbalance():
    spread = imbalance_spread(5, 20, [0, 3, 10], seeds=[1, 2])
    for v, values in spread.items():
        for seed, value in zip([1, 2], values):
            alloc = allocate_group(
                AllocateMessageQueueConsistentHash(v), spread_queues(20, ("broker-a", "broker-b")), random_cids(5, seed)
            )
            assert value == imbalance(alloc)
    assert spread[0] == [0, 0]


def test_imbalance_vs_vnodes_figure_median_and_band():
    fig = imbalance_vs_vnodes_figure(6, 24, (1, 10, 100), seeds=range(5))
    band, median = fig.data[0], fig.data[1]
    spread = imbalance_spread(6, 24, (1, 10, 100), range(5))
    assert list(median.y) == [sorted(v)[2] for v in spread.values()]
    assert max(band.y) == max(max(v) for v in spread.values())
    assert fig.layout.xaxis.type == "log"
    assert imbalance_vs_vnodes_figure(3, 6, (0, 5), seeds=[0]).layout.xaxis.type == "linear"


def test_moved_queues_figure_counts_moves_like_moved_queues():
    fig = moved_queues_figure(queues=12, max_consumers=5, virtual_nodes=10)
    avg, ch, least = fig.data
    mqs = spread_queues(12, ("broker-a", "broker-b"))
    for i, c in enumerate(range(1, 6)):
        for trace, strat in ((avg, AllocateMessageQueueAveragely()), (ch, AllocateMessageQueueConsistentHash(10))):
            before = allocate_group(strat, mqs, make_cids(c))
            after = allocate_group(strat, mqs, make_cids(c + 1))
            assert trace.y[i] == len(moved_queues(before, after))
        assert least.y[i] == 12 // (c + 1)


def test_multi_topic_figure_stacks_to_the_totals():
    topics = {"A": make_queues("A", ["broker-a", "broker-b"], 5), "%RETRY%G": make_queues("%RETRY%G", ["broker-a"], 1)}
    cids = make_cids(4)
    fig = multi_topic_figure(AllocateMessageQueueAveragely(), topics, cids)
    totals = multi_topic_totals(AllocateMessageQueueAveragely(), topics, cids)
    bars = [t for t in fig.data if t.showlegend is False]
    stacked = [sum(t.y[i] for t in bars) for i in range(4)]
    assert stacked == list(totals.values())
    assert list(bars[0].x) == list(totals)
    # each topic's legend key is its hatching in grey (bar colour means the consumer), grouped with its bars
    keys = [t for t in fig.data if t.showlegend is not False]
    assert [k.name for k in keys] == [b.name for b in bars] == list(topics)
    for key, bar in zip(keys, bars):
        assert key.legendgroup == bar.legendgroup == bar.name
        assert key.marker.pattern.shape == bar.marker.pattern.shape and key.marker.color == TOPIC_KEY_COLOR
        assert key.marker.pattern.fillmode == "overlay"  # "replace" draws a patterned key blank
    assert len({b.marker.pattern.shape for b in bars}) == len(bars)


@pytest.mark.parametrize("strategy", ["MACHINE_ROOM_NEARBY-AVG", "MACHINE_ROOM_NEARBY-CONSISTENT_HASH", "MACHINE_ROOM"])
def test_machine_room_view_plots_the_strategy_allocation(strategy):
    fig = machine_room_view(strategy, (1, 2, 1), (2, 0, 1), 3, ("IDC1", "IDC2"))
    mqs, cids, broker_rooms, consumer_rooms = machine_room_layout((1, 2, 1), (2, 0, 1), 3)
    from rmqlib.strategies import MappingMachineRoomResolver

    strat = (
        strategy_from_name("MACHINE_ROOM", consumer_idcs={"IDC1", "IDC2"})
        if strategy == "MACHINE_ROOM"
        else strategy_from_name(strategy, resolver=MappingMachineRoomResolver(broker_rooms, consumer_rooms))
    )
    alloc = allocate_group(strat, mqs, cids)
    assert fig.layout.meta["allocation"] == {c: [str(mq) for mq in m] for c, m in alloc.items()}


def test_machine_room_view_without_consumers_or_brokers_draws_a_message():
    for brokers, consumers in (((0, 0, 0), (1, 1, 1)), ((1, 1, 1), (0, 0, 0))):
        fig = machine_room_view("MACHINE_ROOM_NEARBY-AVG", brokers, consumers)
        assert "nothing to allocate" in fig.layout.title.text


# --------------------------------------------------------------------------- panels


def test_update_in_place_keeps_the_widget_and_matches_the_new_figure():
    fw = go.FigureWidget(allocation_view("AVG", 8, 3))
    same = fw
    for queues, consumers in ((8, 5), (2, 1), (16, 16)):
        new = allocation_view("AVG", queues, consumers)
        update_in_place(fw, new)
        assert fw is same

        def strip(fig):
            return [{k: v for k, v in t.to_plotly_json().items() if k != "uid"} for t in fig.data]

        assert strip(fw)[: len(new.data)] == strip(new)
        assert all(t.visible is False and not t.showlegend for t in fw.data[len(new.data) :])  # blanked slots
        assert fw.layout.meta == new.layout.meta


def test_update_in_place_sends_only_what_changed_and_never_adds_or_deletes_traces_going_back():
    fw = go.FigureWidget(allocation_view("AVG", 10, 4))
    update_in_place(fw, allocation_view("AVG", 10, 12))  # the most traces this slider range needs
    sent = []
    for kind in ("restyle", "relayout", "update", "addTraces", "deleteTraces"):
        setattr(fw, f"_send_{kind}_msg", lambda *args, _kind=kind, **kwargs: sent.append((_kind, args, kwargs)))
    for consumers in (5, 4, 11, 12):
        update_in_place(fw, allocation_view("AVG", 10, consumers))
    kinds = {kind for kind, _, _ in sent}
    assert kinds and kinds <= {"restyle", "relayout", "update"}, kinds
    assert len(sent) == 4, "each move goes to the browser as one message"
    layouts = [kwargs.get("relayout_data") or {} for kind, _, kwargs in sent if kind == "update"]
    assert layouts and all(not any(key.startswith("template") for key in layout) for layout in layouts), (
        "the unchanged template was sent again"
    )


def test_figures_built_without_validation_are_the_figures_built_with_it():
    """A panel builds its later figures unchecked; they must be exactly what the checked builders give."""
    from rmqlib.viz.style import resolved_template, without_validation

    views = [
        lambda: ring_view(consumers=5, queues=16, virtual_nodes=7),  # chapter 03's slider
        lambda: allocation_view("AVG_BY_CIRCLE", 11, 4),
    ]  # chapter 02's
    for view in views:
        checked = view()
        with without_validation():
            unchecked = view()
        assert checked._validate and not unchecked._validate
        fast, slow = unchecked.to_plotly_json(), checked.to_plotly_json()
        assert resolved_template(fast["layout"].pop("template")) == slow["layout"].pop("template")
        assert fast == slow
        assert view()._validate, "the block does not outlive itself"


def test_update_in_place_from_what_it_returned_matches_reading_the_widget():
    """The panel passes back what the last update returned instead of copying the widget's state:
    the widget must end up the same either way, move after move, including a move to fewer traces."""
    read, kept = go.FigureWidget(allocation_view("AVG", 10, 4)), go.FigureWidget(allocation_view("AVG", 10, 4))
    shown = None
    for queues, consumers in ((10, 12), (10, 5), (3, 1), (32, 16), (10, 4)):
        new = allocation_view("AVG", queues, consumers)
        update_in_place(read, new)
        shown = update_in_place(kept, new, shown)
        assert [t.to_plotly_json() | {"uid": None} for t in kept.data] == [
            t.to_plotly_json() | {"uid": None} for t in read.data
        ]
        assert kept.layout.to_plotly_json() == read.layout.to_plotly_json()
        assert len(shown["data"]) == len(kept.data)


def test_allocation_panel_updates_its_figure_in_place_on_slider_change():
    panel = allocation_panel(["AVG", "AVG_BY_CIRCLE"])
    fw = panel.figure
    assert set(panel.sliders) == {"queues", "consumers"}
    panel.sliders["consumers"].value = 5
    assert panel.figure is fw and panel.updates == 1 and panel.error is None
    want = allocate_group(AllocateMessageQueueAveragely(), spread_queues(8), make_cids(5))
    assert fw.layout.meta["allocation"] == {c: [str(mq) for mq in m] for c, m in want.items()}
    panel.controls["strategy"].value = "AVG_BY_CIRCLE"
    assert fw.layout.meta["strategy"] == "AVG_BY_CIRCLE"


def _extremes(slider):
    return [slider.min, slider.max]


def test_allocation_panel_every_slider_extreme_works():
    panel = allocation_panel(["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"])
    sliders = panel.sliders
    assert set(sliders) == {"queues", "consumers", "virtual nodes"}
    for strategy in panel.controls["strategy"].options:
        panel.controls["strategy"].value = strategy
        for q, c, v in itertools.product(*(_extremes(sliders[k]) for k in ("queues", "consumers", "virtual nodes"))):
            sliders["queues"].value, sliders["consumers"].value, sliders["virtual nodes"].value = q, c, v
            assert panel.error is None, (strategy, q, c, v, panel.error)
            assert panel.figure.layout.meta["consumer_count"] == c


def test_ring_panel_every_slider_extreme_works():
    panel = ring_panel()
    assert set(panel.sliders) == {"consumers", "queues", "virtual nodes"}
    fw = panel.figure
    for c, q, v in itertools.product(*(_extremes(panel.sliders[k]) for k in ("consumers", "queues", "virtual nodes"))):
        panel.sliders["consumers"].value, panel.sliders["queues"].value, panel.sliders["virtual nodes"].value = c, q, v
        assert panel.error is None, (c, q, v, panel.error)
        assert panel.figure is fw
        assert fw.layout.meta["virtual_nodes"] == v


def test_ring_panel_moves_send_one_message_without_the_template_and_show_the_checked_figure():
    panel = ring_panel(consumers=4, queues=16, virtual_nodes=1)
    sent = []
    panel.figure._send_update_msg = lambda *args, **kwargs: sent.append(kwargs)
    for vnodes in (2, 3, 9, 1):
        panel.sliders["virtual nodes"].value = vnodes
    assert len(sent) == 4
    assert not any(key.startswith("template") for message in sent for key in message["relayout_data"])
    expected = panel.view(**panel.params())  # built with plotly's checks
    assert panel.figure.layout.meta == expected.layout.meta
    assert [t.to_plotly_json() | {"uid": None} for t in panel.figure.data[: len(expected.data)]] == [
        t.to_plotly_json() | {"uid": None} for t in expected.data
    ]


def test_machine_room_panel_every_slider_extreme_works():
    panel = machine_room_panel()
    fw = panel.figure
    assert "IDC1 consumers" in panel.sliders and "IDC3 brokers" in panel.sliders
    room_sliders = [s for name, s in panel.sliders.items() if name.startswith("IDC")]
    for strategy in panel.controls["strategy"].options:
        panel.controls["strategy"].value = strategy
        for values in itertools.product([0, 3], repeat=2):
            for i, s in enumerate(room_sliders):
                s.value = s.min if values[i % 2] == 0 else s.max
            assert panel.error is None, (strategy, panel.error)
        panel.sliders["queues per broker"].value = panel.sliders["queues per broker"].max
        panel.controls["consumer_idcs"].value = ()
        assert panel.error is None
        panel.controls["consumer_idcs"].value = ("IDC1",)
    assert panel.figure is fw


def test_panel_reports_errors_instead_of_raising():
    import ipywidgets as widgets

    from rmqlib.viz import Panel

    def broken(n):
        if n > 1:
            raise ValueError("too many")
        return go.Figure()

    panel = Panel(broken, {"n": widgets.IntSlider(value=1, min=1, max=2, description="n")})
    panel.sliders["n"].value = 2
    assert panel.error == "ValueError: too many" and "too many" in panel.status.value
    panel.sliders["n"].value = 1
    assert panel.error is None


def test_allocation_panel_keeps_one_height_whatever_the_sliders_say():
    panel = allocation_panel(["AVG"], queues=10, consumers=4, max_queues=32, max_consumers=16)
    heights = set()
    for consumers in (1, 4, 16):
        panel.sliders["consumers"].value = consumers
        heights.add(panel.figure.layout.height)
    assert heights == {allocation_view("AVG", 32, 16).layout.height}
    assert allocation_view("AVG", 10, 1).layout.height < heights.pop()  # the view alone would change height


def test_allocation_panel_starts_with_every_trace_slot_it_can_need():
    panel = allocation_panel(["AVG"], queues=10, consumers=4, max_queues=32, max_consumers=16)
    slots = len(panel.figure.data)
    assert slots == len(allocation_view("AVG", 32, 16).data)
    added = []
    panel.figure._send_addTraces_msg = lambda *args, **kwargs: added.append(args)
    for consumers in (16, 1, 9):
        panel.sliders["consumers"].value = consumers
    assert not added and len(panel.figure.data) == slots


# --------------------------------------------------------------------------- hardening: limits and bad input


def _stopwatch(fn, *args, **kwargs):
    import time

    start = time.perf_counter()
    fig = fn(*args, **kwargs)
    return fig, time.perf_counter() - start


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: spread_queues(3, []), "brokers"),
        (lambda: spread_queues(3, ["a", "a"]), "brokers"),
        (lambda: allocation_view(brokers=()), "brokers"),
        (lambda: imbalance_spread(3, 6, [1], brokers=[]), "brokers"),
        (lambda: random_cids(float("nan"), 1), "count"),
        (lambda: imbalance_vs_vnodes_figure(vnode_counts=[]), "vnode_counts"),
        (lambda: imbalance_vs_vnodes_figure(seeds=[]), "seeds"),
        (lambda: machine_room_view(brokers=(1, 1)), "brokers"),
        (lambda: machine_room_view(consumers=(-2, 1, 0)), "consumers"),
        (lambda: machine_room_panel(strategies=[]), "strategies"),
        (lambda: ring_view(4, 16, 100000), "virtual_nodes"),
        (lambda: ring_view(64, 16, 100), "5000"),
        (lambda: moved_queues_figure(max_consumers=1000), "max_consumers"),
        (lambda: allocation_frames_figure(consumer_counts=range(1, 201)), "consumer_counts"),
        (lambda: allocation_frames_figure(consumer_counts=[1, 1]), "consumer_counts"),
        (lambda: process_queue_view(messages=10000, step=5000), "messages"),
        (lambda: ring_panel(max_consumers=65), "max_consumers"),
        (lambda: allocation_panel(["AVG"], max_queues=65), "max_queues"),
        (lambda: allocation_panel(["AVG"], consumers=5, max_consumers=4), "max_consumers"),
    ],
)
def test_bad_or_oversized_view_arguments_are_refused_by_name(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()


@pytest.mark.parametrize(
    "fn, args",
    [
        (allocation_view, ("CONSISTENT_HASH", 64, 64, 1000)),
        (ring_view, (5, 64, 1000)),
        (moved_queues_figure, (64, 128, 10)),
        (
            machine_room_view,
            (
                "MACHINE_ROOM_NEARBY-CONSISTENT_HASH",
                (8,) * 6,
                (16,) * 6,
                16,
                ("IDC1",),
                tuple(f"R{i}" for i in range(6)),
            ),
        ),
        (process_queue_view, (64, 0, 50)),
    ],
)
def test_views_at_their_limits_build_in_about_a_second(fn, args):
    fig, seconds = _stopwatch(fn, *args)
    assert isinstance(fig, go.Figure) and seconds < 3  # about 0.1-0.5 s here; 3 s leaves room for a slow runner


def test_panels_at_their_largest_sliders_still_build():
    panel = ring_panel(max_consumers=64, max_virtual_nodes=78)
    panel.controls["consumers"].value, panel.controls["virtual_nodes"].value = 64, 78
    assert panel.error is None and sum(panel.figure.layout.meta["vnodes"].values()) <= 64 * 78

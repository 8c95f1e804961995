"""The shared-client-id view, panel and slider figure draw what the strategies answer for a list with repeats."""

import pytest

from rmqlib.allocation import allocate_group, make_cids, spread_queues
from rmqlib.strategies import strategy_from_name
from rmqlib.viz import allocation_view, shared_id_frames_figure, shared_id_panel, shared_id_view


@pytest.mark.parametrize("strategy", ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH"])
@pytest.mark.parametrize("same_id", [2, 3])
def test_every_process_with_the_shared_id_draws_the_first_copys_share(strategy, same_id):
    meta = shared_id_view(strategy, 10, 5, same_id).layout.meta
    cids = make_cids(5)
    ids = [cids[0]] * same_id + cids[same_id:]
    queues = spread_queues(10)
    answer = allocate_group(strategy_from_name(strategy), queues, ids)
    twins = [cids[0]] + [f"{cids[0]} #{k}" for k in range(2, same_id + 1)]
    assert all(meta["allocation"][t] == [str(q) for q in answer[cids[0]]] for t in twins)
    assert all(meta["allocation"][c] == [str(q) for q in answer[c]] for c in cids[same_id:])
    held = {q for share in answer.values() for q in map(str, share)}
    assert set(meta["unassigned"]) == {str(q) for q in queues} - held
    assert meta["same_id"] == same_id


def test_one_process_per_id_is_the_healthy_group():
    healthy = shared_id_view("AVG", 8, 4, 1).layout.meta["allocation"]
    assert healthy == allocation_view("AVG", 8, 4).layout.meta["allocation"]
    avg = shared_id_view("AVG", 8, 4, 2).layout.meta
    assert len(avg["unassigned"]) == 2 and len(avg["overlapping"]) == 2  # the second share nobody's, the first twice


@pytest.mark.parametrize("same_id", [0, 5, True, "2"])
def test_a_count_outside_one_to_consumers_is_refused_by_name(same_id):
    with pytest.raises((ValueError, TypeError), match="same_id"):
        shared_id_view("AVG", 8, 4, same_id)


def test_the_panel_keeps_its_last_slider_at_or_below_the_consumers():
    panel = shared_id_panel(queues=8, consumers=4, same_id=3, max_queues=16, max_consumers=8)
    panel.controls["consumers"].value = 2
    assert panel.controls["same_id"].value == 2 and panel.controls["same_id"].max == 2
    assert panel.error is None and panel.figure.layout.meta["same_id"] == 2
    panel.controls["consumers"].value = 6
    panel.controls["same_id"].value = 5
    assert panel.figure.layout.meta["same_id"] == 5 and panel.figure.layout.meta["consumer_count"] == 6
    with pytest.raises(ValueError, match="strategies"):
        shared_id_panel(strategies=("MACHINE_ROOM",))


def test_the_slider_figure_has_a_step_per_count_from_one_to_the_consumers():
    fig = shared_id_frames_figure("AVG_BY_CIRCLE", queues=8, consumers=4, initial=2)
    assert [f.name for f in fig.frames] == ["1", "2", "3", "4"]
    assert [f.layout.meta["same_id"] for f in fig.frames] == [1, 2, 3, 4]
    assert fig.layout.meta["same_id"] == 2

"""Hand-over figures: the step-through of one round and one queue's hand-over in a simulated run."""

import pytest

from rmqlib.client.handover import NEWCOMERS_FIRST, replay_handover
from rmqlib.sim import scenarios, simulate
from rmqlib.viz import (
    handover_figure,
    handover_frames_figure,
    handover_panel,
    moved_queues,
    queue_handover_figure,
)
from rmqlib.viz.style import plain_title


@pytest.fixture(scope="module")
def slow_scale_out():
    """Two consumers join at 60 s while each message takes 200 ms: in-flight messages are consumed twice."""
    return simulate(scenarios.scale_out(consume_time_ms=200, duration_ms=90_000, drain_ms=60_000), seed=1)


def test_each_frame_draws_the_tables_and_offsets_of_its_moment():
    replay = replay_handover(order=NEWCOMERS_FIRST)
    for k in (0, 5, len(replay.frames) - 1):
        frame, fig = replay.frames[k], handover_figure(replay, k)
        tables = {cid: {str(mq): state for mq, state in t.items()} for cid, t in frame.tables.items()}
        assert fig.layout.meta["tables"] == tables
        assert fig.layout.meta["broker_offsets"] == {str(mq): o for mq, o in frame.broker_offsets.items()}
        assert plain_title(fig.layout).startswith(f"Step {k}/{len(replay.frames) - 1}")
    # the step's own cell is circled: one ring on the consumer that acted
    fig = handover_figure(replay, 3)
    ring = next(t for t in fig.data if t.name == "this step")
    assert list(ring.x) == [sorted(replay.after).index(replay.frames[3].step.client_id)]
    assert fig.layout.meta["redelivered"] == {str(mq): n for mq, n in replay.redelivered.items()} != {}


@pytest.mark.parametrize("index, error", [(-1, ValueError), (10_000, ValueError), (1.0, TypeError)])
def test_frame_index_is_checked(index, error):
    with pytest.raises(error, match="index"):
        handover_figure(replay_handover(), index)


def test_panel_steps_through_every_frame_and_the_site_gets_the_same_frames():
    panel = handover_panel(order=NEWCOMERS_FIRST)
    replay = replay_handover(order=NEWCOMERS_FIRST)
    assert panel.sliders["step"].max == len(replay.frames) - 1
    for k in (4, 11, 0):
        panel.sliders["step"].value = k
        assert panel.error is None and panel.figure.layout.meta["step"] == k
        assert plain_title(panel.figure.layout) == plain_title(handover_figure(replay, k).layout)
    static = handover_frames_figure(order=NEWCOMERS_FIRST)
    assert [s.label for s in static.layout.sliders[0].steps] == [str(k) for k in range(len(replay.frames))]
    opened = handover_frames_figure(4, order=NEWCOMERS_FIRST)  # Figure 7b.2 opens where the newcomer reads
    assert opened.layout.sliders[0].active == 4 and static.layout.sliders[0].active == 0
    assert plain_title(opened.layout) == plain_title(handover_figure(replay, 4).layout)
    with pytest.raises(ValueError, match="step"):
        handover_frames_figure(len(replay.frames), order=NEWCOMERS_FIRST)


def test_queue_figure_marks_exactly_the_offsets_consumed_twice(slow_scale_out):
    run = slow_scale_out
    again = run.redelivered_offsets()
    assert sum(len(v) for v in again.values()) == run.duplicates > 0
    queue = moved_queues(run, run.scenario.produce_start_ms)[0]
    fig = queue_handover_figure(run, queue)
    meta = fig.layout.meta
    assert meta["consumed_twice"] == again[queue]
    spans = sorted(run.ownership[queue], key=lambda i: i.start_ms)
    assert (meta["old_owner"], meta["new_owner"]) == next(
        (a.holder, b.holder) for a, b in zip(spans, spans[1:]) if a.holder != b.holder and b.start_ms >= 12_000
    )
    ringed = next(t for t in fig.data if t.name == "consumed more than once")
    assert set(ringed.y) == set(again[queue])
    # the old owner consumed them after it dropped the queue (its in-flight messages), the new one again
    by = {b.consumer for b in run.consumption[queue] for o in b.offsets if o in again[queue]}
    assert by == {meta["old_owner"], meta["new_owner"]}


def test_queue_figure_refuses_a_run_where_nothing_moved():
    run = simulate(scenarios.steady_state(duration_ms=20_000, drain_ms=10_000), seed=1)
    with pytest.raises(ValueError, match="queue"):
        queue_handover_figure(run)
    with pytest.raises(ValueError, match="queue"):
        queue_handover_figure(run, "no such queue")

"""The ProcessQueue step-through: the commit offset is always the lowest unacknowledged offset."""

import pytest

from rmqlib.viz import ack_order, process_queue_panel, process_queue_steps, process_queue_view


@pytest.mark.parametrize("seed", range(6))
def test_commit_offset_is_lowest_unacknowledged_at_every_step(seed):
    pq, steps = process_queue_steps(15, seed, first_offset=40)
    acked = set()
    for s in steps:
        acked.add(s.acked)
        left = [o for o in range(40, 55) if o not in acked]
        assert list(s.tree) == left
        assert s.commit_offset == (left[0] if left else 55)
    assert pq.msg_count == 0


def test_ack_order_is_a_seeded_permutation_with_the_slow_message_last():
    order = ack_order(10, seed=4, first_offset=0, slow_offset=0)
    assert sorted(order) == list(range(10)) and order[-1] == 0
    assert order == ack_order(10, seed=4, first_offset=0, slow_offset=0)
    with pytest.raises(ValueError, match="slow_offset"):
        ack_order(10, slow_offset=99)


def test_a_slow_first_message_pins_the_commit_offset_until_the_end():
    _, steps = process_queue_steps(12, seed=1, first_offset=100, slow_offset=100)
    assert [s.commit_offset for s in steps[:-1]] == [100] * 11
    assert steps[-1].commit_offset == 112


def test_view_meta_matches_the_steps():
    _, steps = process_queue_steps(12, 2, 100)
    for k in range(13):
        meta = process_queue_view(12, 2, k).layout.meta
        assert meta["commit_offset"] == (steps[k - 1].commit_offset if k else 100)
        assert meta["tree"] == (list(steps[k - 1].tree) if k else list(range(100, 112)))
    with pytest.raises(ValueError, match="step"):
        process_queue_view(12, 0, 13)


def test_panel_buttons_step_and_every_slider_position_draws_without_error():
    panel = process_queue_panel(messages=8, seed=0)
    for k in range(1, 10):
        panel.step_forward()
        assert panel.error is None and panel.figure.layout.meta["step"] == min(k, 8)
    panel.step_back()
    assert panel.figure.layout.meta["step"] == 7
    panel.reset()
    assert panel.figure.layout.meta["step"] == 0
    for n in (1, 5, 24):
        panel.controls["messages"].value = n
        for slow in range(-1, n):
            panel.controls["slow"].value = slow
            assert panel.error is None, panel.error
    assert len(panel.buttons) == 3

"""Figure 9.5 and 9.6's builder: who may consume q while broker-a's master is away, by replica setting."""

import pytest

from rmqlib.client.replica_failover import NEWCOMER, OWNER, ReplicaLockStep
from rmqlib.viz import (
    MASTER_AWAY,
    REPLICA_SETUPS,
    replica_locks_figure,
    replica_locks_frames_figure,
    replica_locks_panel,
    replica_locks_view,
)
from rmqlib.viz.replicas import consuming_intervals


def test_a_bar_per_consuming_interval_on_its_setting_and_consumer_row():
    fig = replica_locks_figure()
    rows = list(fig.layout.yaxis.categoryarray)[::-1]
    assert rows[0] == "broker-a's master" and len(rows) == 1 + 2 * len(REPLICA_SETUPS)
    owner_bars = next(t for t in fig.data if t.name == f"{OWNER} may consume q")
    assert list(owner_bars.y).count(f"2 + strict · {OWNER}") == 2  # 0-40 s and from 100 s
    assert fig.layout.meta["consuming"]["2 replicas"][NEWCOMER] == [[29_000, 49_000]]
    away = fig.data[0]
    assert (away.base[0], away.x[0]) == (25.0, 3.0)


def test_the_failover_title_and_the_masters_bar_to_the_end():
    fig = replica_locks_figure(None, end_ms=100_000)
    assert fig.layout.title.text.startswith("broker-a's master fails at 25 s")
    assert fig.data[0].base[0] + fig.data[0].x[0] == 100.0


def test_intervals_close_where_a_consumer_stops_and_stay_open_to_the_end():
    steps = [ReplicaLockStep(0, "a", (OWNER,), ()), ReplicaLockStep(10, "b", (NEWCOMER,), ())]
    assert consuming_intervals(steps, 30) == {OWNER: [(0, 10)], NEWCOMER: [(10, 30)]}


@pytest.mark.parametrize("setups", [{}, {"x": (2,)}, {"x": (0, True)}, {"x": (2, "yes")}])
def test_bad_setups_are_refused_by_name(setups):
    with pytest.raises(ValueError, match="setups"):
        replica_locks_figure(setups=setups)


def test_the_panel_redraws_when_the_master_stays_away_longer():
    panel = replica_locks_panel()
    assert panel.error is None
    assert panel.figure.layout.meta["master_back_ms"] == 28_000
    panel.controls["master_away"].value = "10 s"
    meta = panel.figure.layout.meta
    # away 10 s: 10.0.0.2 locks q on the slave acting as master at 29 s, 10.0.0.1 renews on the returned master
    assert meta["master_back_ms"] == 35_000
    assert meta["consuming"]["2 replicas"] == {OWNER: [[0, 120_000]], NEWCOMER: [[29_000, 49_000]]}
    panel.controls["acting_master"].value = False
    assert panel.figure.layout.meta["consuming"]["3 + strict"] == {OWNER: [], NEWCOMER: []}


def test_the_static_slider_figure_has_a_step_per_choice():
    fig = replica_locks_frames_figure()
    assert [f.name for f in fig.frames] == list(MASTER_AWAY)
    assert fig.layout.meta["master_back_ms"] == 28_000


@pytest.mark.parametrize("kwargs, name", [(dict(master_away="4 s"), "master_away"), (dict(acting_master=1), "acting")])
def test_the_view_refuses_bad_arguments_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        replica_locks_view(**kwargs)

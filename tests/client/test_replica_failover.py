"""An orderly queue across a master restart or failover, replayed on RebalanceImpl and BrokerMemberGroup."""

import pytest

from rmqlib.client.replica_failover import NEWCOMER, OWNER, replay_master_outage


def consumers_at(steps):
    return {step.time_ms: step.consumers for step in steps}


def test_a_restart_without_strict_mode_puts_both_consumers_on_the_queue():
    steps = replay_master_outage()
    at = consumers_at(steps)
    assert at[28_000] == (OWNER,) and at[29_000] == (OWNER, NEWCOMER) and at[40_000] == (NEWCOMER,)
    assert [s.owners for s in steps if s.time_ms in (25_000, 29_000)] == [(None, None), (NEWCOMER, None)]


def test_strict_mode_turns_the_overlap_into_a_pause_left_by_the_masters_own_entry():
    steps = replay_master_outage(replicas=3, lock_in_strict_mode=True)
    at = consumers_at(steps)
    assert all(len(who) < 2 for who in at.values())
    assert [t for t, who in at.items() if not who] == [40_000, 49_000, 60_000, 80_000]
    assert next(s for s in steps if s.time_ms == 29_000).owners == (NEWCOMER, OWNER, OWNER)


def test_a_failover_with_two_strict_replicas_stops_the_queue_and_three_keep_it():
    two = consumers_at(replay_master_outage(lock_in_strict_mode=True, master_back_ms=None))
    three = consumers_at(replay_master_outage(replicas=3, lock_in_strict_mode=True, master_back_ms=None))
    assert [t for t, who in two.items() if who] == [0, 20_000, 25_000, 29_000]
    assert set(three.values()) == {(OWNER,)}


def test_a_lock_that_lapses_between_steps_gets_a_step_of_its_own():
    # no acting master: the route shows no master, every lock request fails, and the last grant (20 s) runs out
    steps = replay_master_outage(master_back_ms=None, enable_slave_acting_master=False)
    lapse = [s for s in steps if s.step == f"{OWNER} lock expires"]
    assert [(s.time_ms, s.consumers) for s in lapse] == [(50_001, ())]
    assert consumers_at(steps)[49_000] == (OWNER,)
    assert [s.time_ms for s in steps] == sorted(s.time_ms for s in steps)


def test_the_master_can_come_back_at_any_instant_and_the_replay_ends_at_end_ms():
    steps = replay_master_outage(master_back_ms=60_000, end_ms=60_000)
    assert steps[-1].time_ms == 60_000 and [s.step for s in steps[-2:]] == [f"{OWNER} lockAll", "master starts"]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(replicas=0), "replicas"),
        (dict(master_back_ms=25_000), "master_back_ms"),
        (dict(master_back_ms=130_000), "master_back_ms"),
        (dict(end_ms=10_000), "end_ms"),
        (dict(lock_in_strict_mode=1), "lock_in_strict_mode"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        replay_master_outage(**kwargs)

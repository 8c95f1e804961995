"""The Kafka group in the simulator (rmqlib.sim.kafka_group): pauses, duplicates, agreement with the event model."""

from __future__ import annotations

import pytest

from rmqlib.kafka import ProtocolTimings, UniformAssignor, membership_change
from rmqlib.kafka.types import Subscription
from rmqlib.sim import ConsumerSpec, scenarios, simulate
from rmqlib.sim.kafka_group import (
    _Partitions,
    change_ms,
    owners_at,
    pauses_after,
    simulate_kafka_group,
)

# every member starts at 0, so the group forms in one round, as the event model's stable group does
BASE = dict(
    topics={"TopicTest": 4},
    produce_rate_per_queue=2.0,
    duration_ms=120_000,
    drain_ms=30_000,
    start_jitter_ms=0,
    produce_start_ms=5_000,
)
PROTOCOLS = (("eager", "range"), ("cooperative", "cooperative-sticky"), ("consumer", "uniform"))


def _paused(run, scenario) -> set[str]:
    return {queue for queue, ms in pauses_after(run, change_ms(scenario)).items() if ms > 0}


def _moved(run, scenario) -> set[str]:
    at = change_ms(scenario)
    before, after = owners_at(run, at - 1), owners_at(run, scenario.end_ms - 1)
    return {queue for queue in run.queues if before.get(queue) != after.get(queue)}


def _members(scenario):
    at = change_ms(scenario)
    before = [s.client_id for s in scenario.consumers if s.join_ms < at]
    after = [s.client_id for s in scenario.consumers if s.join_ms <= at and (s.leave_ms is None or s.leave_ms > at)]
    return before, after


def _model(scenario, protocol, assignor, departure="graceful"):
    before, after = _members(scenario)
    return membership_change(protocol, assignor, {"TopicTest": 8}, before, after, departure=departure)


def _queue_names(scenario, tps) -> set[str]:
    parts = _Partitions(scenario)
    return {str(parts.mq_of[tp]) for tp in tps}


def test_eager_scale_out_pauses_every_partition():
    scenario = scenarios.scale_out(**BASE)
    run = simulate_kafka_group(scenario, "eager", "range", seed=1)
    assert _paused(run, scenario) == set(run.queues) and len(run.queues) == 8


def test_cooperative_scale_out_pauses_only_moved_partitions():
    scenario = scenarios.scale_out(**BASE)
    run = simulate_kafka_group(scenario, "cooperative", seed=1)
    moved = _moved(run, scenario)
    assert moved and _paused(run, scenario) == moved and len(moved) < len(run.queues)


def test_kip848_scale_out_pauses_only_moved_partitions():
    scenario = scenarios.scale_out(**BASE)
    run = simulate_kafka_group(scenario, "consumer", seed=1)
    moved = _moved(run, scenario)
    assert moved and _paused(run, scenario) == moved and len(moved) < len(run.queues)


@pytest.mark.parametrize("protocol", ["eager", "cooperative", "consumer"])
def test_graceful_changes_redeliver_nothing_and_lose_nothing(protocol):
    for build in (scenarios.scale_out, scenarios.scale_in):
        run = simulate_kafka_group(build(**{**BASE, "produce_rate_per_queue": 20.0}), protocol, seed=2)
        assert run.duplicates == 0 and not run.lost and not run.offset_violations


@pytest.mark.parametrize("protocol", ["eager", "cooperative", "consumer"])
def test_crash_with_auto_commit_redelivers_what_was_not_committed(protocol):
    scenario = scenarios.crash(**{**BASE, "produce_rate_per_queue": 20.0})
    runs = [simulate_kafka_group(scenario, protocol, seed=seed) for seed in range(3)]
    assert sum(run.duplicates for run in runs) > 0
    # at most one auto-commit interval (plus the batch in hand) of the dead member's two partitions
    assert all(run.duplicates <= 2 * 20 * 6 for run in runs)
    assert all(not run.lost and not run.offset_violations for run in runs)


def test_crash_waits_for_the_session_timeout_not_for_a_closed_connection():
    scenario = scenarios.crash(**BASE)
    at = change_ms(scenario)
    for protocol, _ in PROTOCOLS:
        run = simulate_kafka_group(scenario, protocol, seed=0)
        longest = max(pauses_after(run, at).values())
        # the session counts from the member's last heartbeat, at most one interval before the crash
        timeout, beat = (45_000, 5_000) if protocol == "consumer" else (45_000, 3_000)
        assert timeout - beat <= longest <= timeout + 2 * beat
    rocketmq = simulate(scenario, seed=0)
    assert max(pauses_after(rocketmq, at).values()) < 1_000


def test_cooperative_without_a_committing_listener_can_read_moved_records_twice():
    """ConsumerCoordinator.onJoinComplete revokes without committing: records read during the first round are
    read again by the next owner unless the listener commits."""
    scenario = scenarios.scale_out(
        **{**BASE, "produce_rate_per_queue": 20.0, "start_jitter_ms": 10_000, "produce_start_ms": 12_000}
    )
    bare = [simulate_kafka_group(scenario, "cooperative", seed=s, commit_on_revoke=False).duplicates for s in range(4)]
    listener = [simulate_kafka_group(scenario, "cooperative", seed=s).duplicates for s in range(4)]
    assert sum(bare) > 0 and sum(listener) == 0


@pytest.mark.parametrize("protocol,assignor", PROTOCOLS[:2])
@pytest.mark.parametrize(
    "build,departure", [(scenarios.scale_out, "graceful"), (scenarios.scale_in, "graceful"), (scenarios.crash, "crash")]
)
def test_classic_protocols_agree_with_the_event_model(protocol, assignor, build, departure):
    scenario = build(**BASE)
    run = simulate_kafka_group(scenario, protocol, assignor, seed=1)
    model = _model(scenario, protocol, assignor, departure)
    assert _moved(run, scenario) == _queue_names(scenario, model.moved)
    assert _paused(run, scenario) == _queue_names(scenario, [tp for tp, ms in model.unavailable_ms.items() if ms])
    final = owners_at(run, scenario.end_ms - 1)
    parts = _Partitions(scenario)
    assert {str(parts.mq_of[tp]): m for m, tps in model.after.items() for tp in tps} == final
    rounds = sum(1 for e in run.events if e.kind == "rebalance" and e.time_ms >= change_ms(scenario))
    assert rounds == model.rounds


def test_kip848_target_agrees_with_the_server_assignor_given_the_same_previous_target():
    """One join: the coordinator recomputes once, from the target it had (what membership_change assumes)."""
    consumers = tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}") for i in (1, 2, 3)) + (
        ConsumerSpec("10.0.0.4@1004", join_ms=60_000),
    )
    scenario = scenarios.scale_out(**BASE, consumers=consumers)
    run = simulate_kafka_group(scenario, "consumer", seed=3)
    parts = _Partitions(scenario)
    at = change_ms(scenario)
    before: dict[str, list] = {}
    for queue, owner in owners_at(run, at - 1).items():
        before.setdefault(owner, []).append(next(tp for tp, mq in parts.mq_of.items() if str(mq) == queue))
    subs = {s.client_id: Subscription(("TopicTest",)) for s in consumers}
    target = UniformAssignor().assign({"TopicTest": 8}, subs, before)
    expected = {str(parts.mq_of[tp]): m for m, tps in target.items() for tp in tps}
    assert owners_at(run, scenario.end_ms - 1) == expected
    model = membership_change("consumer", "uniform", {"TopicTest": 8}, list(before), [s.client_id for s in consumers])
    assert len(_moved(run, scenario)) == len(model.moved) == 2


def test_eager_pauses_are_short_and_cooperative_waits_for_a_second_round():
    scenario = scenarios.scale_out(**BASE)
    at = change_ms(scenario)
    eager = pauses_after(simulate_kafka_group(scenario, "eager", seed=1), at)
    coop = pauses_after(simulate_kafka_group(scenario, "cooperative", seed=1), at)
    # eager: every partition, for one JoinGroup/SyncGroup round; cooperative: the moved ones, for two
    assert all(0 < ms < 3_100 for ms in eager.values())
    assert max(coop.values()) >= 3_000 and sum(1 for ms in coop.values() if ms == 0) == 4


def test_same_seed_same_run_and_seeds_matter():
    scenario = scenarios.crash(
        **{**BASE, "start_jitter_ms": 10_000, "produce_start_ms": 12_000, "consume_time_dist": "exponential"}
    )
    for protocol, _ in PROTOCOLS:
        a, b = (simulate_kafka_group(scenario, protocol, seed=5) for _ in range(2))
        assert a.summary() == b.summary() and a.ownership == b.ownership and a.event_log == b.event_log
    runs = {tuple(sorted(simulate_kafka_group(scenario, "eager", seed=s).summary().items())) for s in range(4)}
    assert len(runs) > 1


def test_the_result_is_a_sim_result_with_the_scenarios_queues():
    scenario = scenarios.steady_state(**BASE)
    run = simulate_kafka_group(scenario, "cooperative", seed=0)
    assert sorted(run.queues) == sorted(str(mq) for mq in _Partitions(scenario).all)
    assert run.produced == sum(run.stored.values()) and not run.lost and run.duplicates == 0
    assert pauses_after(run, 10_000) == dict.fromkeys(run.queues, 0)


def test_timings_change_the_crash_pause():
    scenario = scenarios.crash(**BASE)
    at = change_ms(scenario)
    short = ProtocolTimings(session_timeout_ms=10_000, heartbeat_interval_ms=1_000)
    longest = max(pauses_after(simulate_kafka_group(scenario, "eager", seed=0, timings=short), at).values())
    assert 9_000 <= longest <= 12_000


@pytest.mark.parametrize(
    "kwargs,error,name",
    [
        (dict(protocol="lazy"), ValueError, "protocol"),
        (dict(protocol=3), TypeError, "protocol"),
        (dict(protocol="eager", assignor="uniform"), ValueError, "uniform"),
        (dict(protocol="consumer", assignor="range"), ValueError, "range"),
        (dict(assignor="nope"), ValueError, "assignor"),
        (dict(seed="1"), TypeError, "seed"),
        (dict(timings={}), TypeError, "timings"),
        (dict(commit_on_revoke=1), TypeError, "commit_on_revoke"),
        (dict(auto_commit="yes"), TypeError, "auto_commit"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, error, name):
    with pytest.raises(error, match=name):
        simulate_kafka_group(scenarios.steady_state(**BASE), **kwargs)


def test_scenarios_it_cannot_play_are_refused():
    with pytest.raises(TypeError, match="scenario"):
        simulate_kafka_group("crash")
    with pytest.raises(ValueError, match="consume_mode"):
        simulate_kafka_group(scenarios.pop_mode())
    with pytest.raises(ValueError, match="message_model"):
        simulate_kafka_group(scenarios.steady_state(message_model="BROADCASTING"))
    with pytest.raises(ValueError, match="topic_changes"):
        simulate_kafka_group(scenarios.topic_grows())
    with pytest.raises(ValueError, match="consumers"):
        change_ms(scenarios.steady_state())
    with pytest.raises(TypeError, match="result"):
        pauses_after("run", 0)
    with pytest.raises(TypeError, match="result"):
        owners_at(None, 0)


@pytest.mark.parametrize("seed", range(6))
def test_seeded_groups_never_give_a_partition_two_owners_and_lose_nothing(seed):
    """Random groups (joins, shutdowns, crashes, two topics, slow or fast listeners) under every protocol: no two
    members own a partition at once (each protocol revokes before it hands on), no commit passes an unread
    message, and, with a member that stays and a minute of drain after the last change, every message is consumed
    and every partition owned. (Not a law: in a classic group a member that rejoined and then crashed gets a fresh
    session when the round completes, so crashes can chain waits past any drain; these seeds do not.)"""
    import random

    rng = random.Random(seed)
    specs = []
    for i in range(rng.randint(1, 7)):
        join = rng.choice([0, 0, rng.randint(1, 60_000)])
        leave = rng.choice([None, rng.randint(join + 11_000, 100_000)])
        specs.append(
            ConsumerSpec(
                f"10.0.1.{i}@{2000 + i}", join_ms=join, leave_ms=leave, leave=rng.choice(["shutdown", "crash"])
            )
        )
    specs.append(ConsumerSpec("10.0.9.9@9999"))  # one member stays to the end
    scenario = scenarios.steady_state(
        consumers=tuple(specs),
        topics={"A": rng.randint(1, 4), "B": rng.randint(1, 3)},
        duration_ms=100_000,
        drain_ms=60_000,
        produce_rate_per_queue=5.0,
        consume_time_dist=rng.choice(["fixed", "exponential"]),
        consume_time_ms=rng.choice([1.0, 20.0]),
    )
    for protocol, _ in PROTOCOLS:
        run = simulate_kafka_group(scenario, protocol, seed=seed)
        assert run.overlaps() == {} and not run.offset_violations and not run.lost
        assert set(owners_at(run, scenario.end_ms - 1)) == set(run.queues)


def test_each_simulated_part_names_the_kafka_file_it_mirrors():
    import rmqlib.kafka as kafka
    from rmqlib.sim import kafka_group

    for cls, names in (
        (kafka_group.KafkaMember, ("ConsumerCoordinator", "AbstractCoordinator", "ConsumerMembershipManager")),
        (kafka_group.ClassicCoordinator, ("GroupMetadataManager",)),
        (kafka_group.ConsumerGroupCoordinator, ("GroupMetadataManager", "CurrentAssignmentBuilder")),
    ):
        for name in names:
            java_file = kafka.JAVA_SOURCES[name].rsplit("/", 1)[1]
            assert java_file in cls.__doc__, f"{cls.__name__}'s docstring does not name {java_file}"

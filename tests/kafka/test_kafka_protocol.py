"""One membership change through the eager, cooperative (KIP-429) and consumer (KIP-848) protocols."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.kafka import ProtocolTimings, RebalanceProtocol, TopicPartition, membership_change

T = ProtocolTimings()
GROUP = ["a", "b", "c"]
BIGGER = ["a", "b", "c", "d"]
SMALLER = ["a", "b"]
PPT = {"t": 12}


def test_timings_defaults_are_kafkas():
    assert (T.session_timeout_ms, T.heartbeat_interval_ms, T.max_poll_interval_ms) == (45_000, 3_000, 300_000)
    assert (T.consumer_session_timeout_ms, T.consumer_heartbeat_interval_ms, T.auto_commit_interval_ms) == (
        45_000,
        5_000,
        5_000,
    )


def test_eager_pauses_every_partition_even_those_that_come_back():
    out = membership_change(RebalanceProtocol.EAGER, "sticky", PPT, GROUP, BIGGER)
    assert out.kind == "join" and out.rounds == 1
    assert out.paused == 12
    assert len(out.moved) == 3 and len(out.revoked_and_returned) == 9
    assert set(out.moved) | set(out.revoked_and_returned) == {TopicPartition("t", p) for p in range(12)}


def test_eager_range_moves_more_than_sticky_on_a_join():
    assert len(membership_change("eager", "range", PPT, GROUP, BIGGER).moved) == 6
    assert len(membership_change("eager", "sticky", PPT, GROUP, BIGGER).moved) == 3


def test_cooperative_join_takes_two_rounds_and_pauses_only_what_moves():
    out = membership_change("cooperative", "cooperative-sticky", PPT, GROUP, BIGGER)
    assert out.rounds == 2 and out.revoked_and_returned == ()
    assert out.paused == len(out.moved) == 3
    assert all(out.unavailable_ms[tp] == 0 for tp in out.unavailable_ms if tp not in out.moved)
    assert set(out.after["d"]) == set(out.moved)


def test_cooperative_leave_needs_one_round_because_nothing_must_be_revoked():
    out = membership_change("cooperative", "cooperative-sticky", PPT, GROUP, SMALLER)
    assert out.rounds == 1 and out.moved == tuple(sorted(out.before["c"]))


def test_consumer_protocol_reconciles_one_target_and_pauses_only_what_moves():
    out = membership_change("consumer", "uniform", PPT, GROUP, BIGGER)
    assert out.rounds == 1 and out.revoked_and_returned == ()
    assert out.paused == len(out.moved) == 3
    # a moved partition waits for its old owner's heartbeat, the revocation, then the new owner's next heartbeat
    assert all(out.unavailable_ms[tp] <= T.consumer_heartbeat_interval_ms + 3 * T.rpc_ms for tp in out.moved)


def test_crash_pauses_a_session_timeout_and_redelivers_half_a_commit_interval():
    crash = membership_change("cooperative", "cooperative-sticky", PPT, GROUP, SMALLER, departure="crash")
    leave = membership_change("cooperative", "cooperative-sticky", PPT, GROUP, SMALLER, departure="graceful")
    lost = crash.before["c"]
    assert crash.kind == "crash" and crash.detection_ms == T.session_timeout_ms
    assert all(crash.unavailable_ms[tp] >= T.session_timeout_ms for tp in lost)
    per_partition = T.messages_per_s * T.auto_commit_interval_ms / 2 / 1000
    assert crash.duplicates == {tp: (per_partition if tp in lost else 0.0) for tp in crash.duplicates}
    assert crash.total_duplicates == per_partition * len(lost)
    assert leave.total_duplicates == 0 and leave.max_pause_ms < 10_000


def test_consumer_protocol_crash_waits_for_the_consumer_session_timeout():
    t = ProtocolTimings(consumer_session_timeout_ms=60_000)
    out = membership_change("consumer", "uniform", PPT, GROUP, SMALLER, departure="crash", timings=t)
    assert out.detection_ms == 60_000 and out.max_pause_ms >= 60_000


def test_no_change_costs_nothing():
    out = membership_change("eager", "range", PPT, GROUP, list(GROUP))
    assert out.kind == "none" and out.rounds == 0 and out.max_pause_ms == 0 and out.moved == ()


def test_outcome_backlog_is_rate_times_pause():
    out = membership_change("eager", "range", PPT, GROUP, BIGGER)
    for tp, pause in out.unavailable_ms.items():
        assert out.backlog[tp] == pytest.approx(T.messages_per_s * pause / 1000)


@pytest.mark.parametrize(
    "protocol, assignor",
    [("cooperative", "range"), ("cooperative", "sticky"), ("eager", "uniform"), ("consumer", "cooperative-sticky")],
)
def test_an_assignor_must_support_the_protocol(protocol, assignor):
    with pytest.raises(ValueError, match="does not support"):
        membership_change(protocol, assignor, PPT, GROUP, BIGGER)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"protocol": "lazy"}, "protocol"),
        ({"protocol": 3}, "protocol"),
        ({"assignor": "nope"}, "assignor"),
        ({"assignor": object()}, "assignor"),
        ({"before_members": "abc"}, "before_members"),
        ({"before_members": []}, "before_members"),
        ({"after_members": []}, "after_members"),
        ({"after_members": ["a", "b", "x"]}, "after_members"),
        ({"departure": "vanish"}, "departure"),
        ({"timings": {"rpc_ms": 1}}, "timings"),
        ({"partitions_per_topic": {"bad topic": 1}}, "partitions_per_topic"),
        ({"after_members": {"a": ["t"], "b": []}}, "after_members"),
        ({"before_members": ["a", "a"]}, "before_members"),
    ],
)
def test_bad_arguments_are_named(kwargs, word):
    args = {
        "protocol": "eager",
        "assignor": "range",
        "partitions_per_topic": PPT,
        "before_members": GROUP,
        "after_members": BIGGER,
    }
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=word):
        membership_change(
            args.pop("protocol"),
            args.pop("assignor"),
            args.pop("partitions_per_topic"),
            args.pop("before_members"),
            args.pop("after_members"),
            **args,
        )


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"session_timeout_ms": 0}, "session_timeout_ms"),
        ({"heartbeat_interval_ms": 50_000}, "heartbeat_interval_ms"),
        ({"rpc_ms": -1}, "rpc_ms"),
        ({"messages_per_s": float("nan")}, "messages_per_s"),
        ({"poll_delay_ms": 400_000}, "poll_delay_ms"),
        ({"auto_commit_interval_ms": 1.5}, "auto_commit_interval_ms"),
    ],
)
def test_bad_timings_are_named(kwargs, word):
    with pytest.raises((ValueError, TypeError), match=word):
        ProtocolTimings(**kwargs)


def test_a_topic_left_without_subscribers_is_refused():
    with pytest.raises(ValueError, match="without a subscriber"):
        membership_change("eager", "range", {"t": 2, "u": 2}, {"a": ["t"], "b": ["t", "u"]}, {"a": ["t"]})


PROTOCOLS = [
    ("eager", "range"),
    ("eager", "roundrobin"),
    ("eager", "sticky"),
    ("eager", "cooperative-sticky"),
    ("cooperative", "cooperative-sticky"),
    ("consumer", "uniform"),
    ("consumer", "server-range"),
]


@given(
    st.sampled_from(PROTOCOLS),
    st.integers(1, 40),
    st.integers(1, 8),
    st.integers(-3, 3),
    st.sampled_from(["graceful", "crash"]),
)
@settings(max_examples=150, deadline=None)
def test_protocol_invariants(protocol_assignor, partitions, size, change, departure):
    protocol, assignor = protocol_assignor
    before = [f"m{i:02d}" for i in range(size)]
    after = before[: max(1, size + change)] if change < 0 else before + [f"n{i}" for i in range(change)]
    out = membership_change(protocol, assignor, {"t": partitions}, before, after, departure=departure)
    again = membership_change(protocol, assignor, {"t": partitions}, before, after, departure=departure)
    assert out == again  # deterministic
    everything = {TopicPartition("t", p) for p in range(partitions)}
    assert {tp for tps in out.after.values() for tp in tps} == everything
    assert sorted(out.after) == sorted(after)
    old = {tp: m for m, tps in out.before.items() for tp in tps}
    new = {tp: m for m, tps in out.after.items() for tp in tps}
    assert set(out.moved) == {tp for tp in everything if old[tp] != new[tp]}
    assert all(v >= 0 for v in out.unavailable_ms.values())
    if out.kind == "none":
        assert out.max_pause_ms == 0
    elif protocol == "eager":
        assert out.paused == partitions and set(out.revoked_and_returned) == everything - set(out.moved)
    else:  # incremental protocols pause exactly what moves
        assert out.revoked_and_returned == ()
        assert {tp for tp, v in out.unavailable_ms.items() if v > 0} == set(out.moved)
    if out.kind == "crash":
        assert all(out.unavailable_ms[tp] >= out.detection_ms for tp in out.moved if old[tp] not in after)
    else:
        assert out.total_duplicates == 0


def test_consumer_protocol_member_that_revokes_receives_only_after_acknowledging():
    # A on x, B on x and y; C joins on y: the uniform target hands C some of B's y partitions and B one of A's x
    # partitions, so B both gives and takes, and CurrentAssignmentBuilder makes it acknowledge first
    t = ProtocolTimings()
    out = membership_change(
        "consumer",
        "uniform",
        {"x": 6, "y": 6},
        {"A": ["x"], "B": ["x", "y"]},
        {"A": ["x"], "B": ["x", "y"], "C": ["y"]},
        timings=t,
    )
    old = {tp: m for m, tps in out.before.items() for tp in tps}
    new = {tp: m for m, tps in out.after.items() for tp in tps}
    givers = {old[tp] for tp in out.moved}
    both = [m for m in givers if any(new[tp] == m for tp in out.moved)]
    assert both, "this layout should make one member give and take"
    for member in both:
        revoked_at = max(out.ready_at_ms[tp] - out.unavailable_ms[tp] for tp in out.moved if old[tp] == member)
        received = [out.ready_at_ms[tp] for tp in out.moved if new[tp] == member]
        assert min(received) >= revoked_at + t.commit_on_revoke_ms + t.rpc_ms


@given(st.sampled_from(PROTOCOLS), st.integers(1, 40), st.integers(1, 8), st.integers(-3, 3))
@settings(max_examples=80, deadline=None)
def test_settled_assignment_is_where_membership_change_ends(protocol_assignor, partitions, size, change):
    from rmqlib.kafka import settled_assignment

    protocol, assignor = protocol_assignor
    before = [f"m{i:02d}" for i in range(size)]
    after = before[: max(1, size + change)] if change < 0 else before + [f"n{i}" for i in range(change)]
    out = membership_change(protocol, assignor, {"t": partitions}, before, after)
    start = settled_assignment(assignor, {"t": partitions}, before, protocol=protocol)
    assert {m: set(v) for m, v in start.items()} == {m: set(v) for m, v in out.before.items()}
    end = settled_assignment(assignor, {"t": partitions}, after, start, protocol=protocol)
    assert {m: set(v) for m, v in end.items()} == {m: set(v) for m, v in out.after.items()}


def test_settled_assignment_defaults_to_the_assignors_protocol_and_checks_arguments():
    from rmqlib.kafka import settled_assignment

    before = settled_assignment("cooperative-sticky", {"t": 6}, ["a", "b"])
    after = settled_assignment("cooperative-sticky", {"t": 6}, ["a", "b", "c"], before)  # two rounds, settled
    assert sorted(len(v) for v in after.values()) == [2, 2, 2]
    with pytest.raises(ValueError, match="does not support"):
        settled_assignment("range", {"t": 6}, ["a"], protocol="cooperative")
    with pytest.raises(ValueError, match="protocol"):
        settled_assignment("range", {"t": 6}, ["a"], protocol="lazy")
    with pytest.raises(ValueError, match="previous"):
        twice = {"a": [TopicPartition("t", 0)], "b": [TopicPartition("t", 0)]}
        settled_assignment("uniform", {"t": 6}, ["a", "b"], twice)
    with pytest.raises((ValueError, TypeError), match="members"):
        settled_assignment("uniform", {"t": 6}, "ab")


def test_summary_is_one_flat_row():
    out = membership_change("eager", "range", PPT, GROUP, BIGGER)
    row = out.summary()
    assert row["protocol"] == "eager" and row["change"] == "join" and row["paused"] == 12
    assert row["moved"] == len(out.moved) and row["max_pause_ms"] == out.max_pause_ms and row["rounds"] == 1


def test_a_large_change_finishes():
    from support import time_limit

    with time_limit(20):
        out = membership_change(
            "cooperative",
            "cooperative-sticky",
            {"t": 20_000},
            [f"c{i}" for i in range(500)],
            [f"c{i}" for i in range(501)],
        )
    assert out.rounds == 2 and len(out.moved) == 20_000 // 501

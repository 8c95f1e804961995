"""Kafka's assignors on the examples their Javadoc and KIPs give, and the rules of their code (ties, quotas,
generations)."""

import pytest

from rmqlib.kafka import (
    ASSIGNORS,
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    ServerRangeAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    UniformAssignor,
)


def tps(text):
    """'t0p0 t1p2' -> [TopicPartition('t0', 0), TopicPartition('t1', 2)]."""
    out = []
    for word in text.split():
        topic, partition = word.rsplit("p", 1)
        out.append(TopicPartition(topic, int(partition)))
    return out


def subs(topics_by_member, owned=None, generation=None):
    owned = owned or {}
    return {
        m: Subscription(ts, owned_partitions=owned.get(m, ()), generation=generation)
        for m, ts in topics_by_member.items()
    }


def same(assignment, expected):
    return {m: set(v) for m, v in assignment.items()} == {m: set(tps(v)) for m, v in expected.items()}


TWO_BY_THREE = {"t0": 3, "t1": 3}


# RangeAssignor's class Javadoc
def test_range_javadoc_example_gives_the_first_consumer_the_extra_partition_of_each_topic():
    got = RangeAssignor().assign(TWO_BY_THREE, subs({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}))
    assert got == {"C0": tps("t0p0 t0p1 t1p0 t1p1"), "C1": tps("t0p2 t1p2")}


def test_range_javadoc_rolling_bounce_shuffles_member_ids_but_not_instance_ids():
    # new member ids C3 (was C0) and C2 (was C1): the order flips, so does the assignment
    got = RangeAssignor().assign(TWO_BY_THREE, subs({"C3": ["t0", "t1"], "C2": ["t0", "t1"]}))
    assert got == {"C2": tps("t0p0 t0p1 t1p0 t1p1"), "C3": tps("t0p2 t1p2")}
    # with group.instance.id I0 and I1 the order, and so the assignment, survives the bounce
    group = {
        "C3": Subscription(["t0", "t1"], group_instance_id="I0"),
        "C2": Subscription(["t0", "t1"], group_instance_id="I1"),
    }
    assert RangeAssignor().assign(TWO_BY_THREE, group) == {"C2": tps("t0p2 t1p2"), "C3": tps("t0p0 t0p1 t1p0 t1p1")}


# RoundRobinAssignor's class Javadoc
def test_roundrobin_javadoc_example_deals_partitions_alternately():
    got = RoundRobinAssignor().assign(TWO_BY_THREE, subs({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}))
    assert got == {"C0": tps("t0p0 t0p2 t1p1"), "C1": tps("t0p1 t1p0 t1p2")}


MIXED = {"t0": 1, "t1": 2, "t2": 3}
MIXED_SUBS = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}


def test_roundrobin_javadoc_mixed_subscriptions_skip_members_and_end_unbalanced():
    got = RoundRobinAssignor().assign(MIXED, subs(MIXED_SUBS))
    assert got == {"C0": tps("t0p0"), "C1": tps("t1p0"), "C2": tps("t1p1 t2p0 t2p1 t2p2")}


def test_roundrobin_javadoc_static_membership_example():
    three = {m: ["t0", "t1"] for m in ("C0", "C1", "C2")}
    assert RoundRobinAssignor().assign(TWO_BY_THREE, subs(three)) == {
        "C0": tps("t0p0 t1p0"),
        "C1": tps("t0p1 t1p1"),
        "C2": tps("t0p2 t1p2"),
    }
    bounced = {m: ["t0", "t1"] for m in ("C5", "C3", "C4")}  # C0 -> C5, C1 -> C3, C2 -> C4
    assert RoundRobinAssignor().assign(TWO_BY_THREE, subs(bounced)) == {
        "C3": tps("t0p0 t1p0"),
        "C4": tps("t0p1 t1p1"),
        "C5": tps("t0p2 t1p2"),
    }
    static = {m: Subscription(["t0", "t1"], group_instance_id=i) for m, i in (("C5", "I0"), ("C3", "I1"), ("C4", "I2"))}
    assert RoundRobinAssignor().assign(TWO_BY_THREE, static) == {
        "C5": tps("t0p0 t1p0"),
        "C3": tps("t0p1 t1p1"),
        "C4": tps("t0p2 t1p2"),
    }


# StickyAssignor's class Javadoc (KIP-54)
FOUR_BY_TWO = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}


def test_sticky_javadoc_example_1_starts_like_roundrobin():
    group = subs({m: list(FOUR_BY_TWO) for m in ("C0", "C1", "C2")})
    expected = {"C0": "t0p0 t1p1 t3p0", "C1": "t0p1 t2p0 t3p1", "C2": "t1p0 t2p1"}
    assert same(StickyAssignor().assign(FOUR_BY_TWO, group), expected)
    assert same(RoundRobinAssignor().assign(FOUR_BY_TWO, group), expected)


def test_sticky_javadoc_example_1_keeps_every_previous_assignment_when_c1_leaves():
    first = StickyAssignor().assign(FOUR_BY_TWO, subs({m: list(FOUR_BY_TWO) for m in ("C0", "C1", "C2")}))
    after = StickyAssignor().assign(
        FOUR_BY_TWO, subs({m: list(FOUR_BY_TWO) for m in ("C0", "C2")}, owned=first, generation=1)
    )
    assert set(first["C0"]) <= set(after["C0"]) and set(first["C2"]) <= set(after["C2"])
    assert len(after["C0"]) == len(after["C2"]) == 4
    # The Javadoc's lists (C0 [t0p0, t1p1, t3p0, t2p0], C2 [t1p0, t2p1, t0p1, t3p1]) come from the original
    # KIP-54 algorithm; the constrained builder Kafka runs now deals C1's partitions round-robin in topic order
    # to the members under quota, sorted: t0p1 -> C0, t2p0 -> C2, t3p1 -> C2. Kafka's own classes at the commit,
    # run on this input (tests/kafka/oracle), return exactly the lists below, not the Javadoc's.
    assert after == {"C0": tps("t0p0 t3p0 t1p1 t0p1"), "C2": tps("t1p0 t2p1 t2p0 t3p1")}
    # RoundRobin, by contrast, reshuffles (the Javadoc's "C0: [t0p0, t1p0, t2p0, t3p0]")
    rr = RoundRobinAssignor().assign(FOUR_BY_TWO, subs({m: list(FOUR_BY_TWO) for m in ("C0", "C2")}))
    assert rr == {"C0": tps("t0p0 t1p0 t2p0 t3p0"), "C2": tps("t0p1 t1p1 t2p1 t3p1")}


def test_sticky_javadoc_example_2_balances_better_than_roundrobin_and_keeps_five_when_c0_leaves():
    first = StickyAssignor().assign(MIXED, subs(MIXED_SUBS))
    assert same(first, {"C0": "t0p0", "C1": "t1p0 t1p1", "C2": "t2p0 t2p1 t2p2"})
    later = {m: MIXED_SUBS[m] for m in ("C1", "C2")}
    after = StickyAssignor().assign(MIXED, subs(later, owned=first, generation=1))
    assert same(after, {"C1": "t1p0 t1p1 t0p0", "C2": "t2p0 t2p1 t2p2"})
    rr = RoundRobinAssignor().assign(MIXED, subs(later))
    assert same(rr, {"C1": "t0p0 t1p1", "C2": "t1p0 t2p0 t2p1 t2p2"})


def test_sticky_same_generation_double_claim_is_taken_from_both():
    ppt = {"t": 4}
    group = {
        "A": Subscription(["t"], tps("tp0 tp1"), generation=3),
        "B": Subscription(["t"], tps("tp1 tp2"), generation=3),
    }
    assignor = CooperativeStickyAssignor()
    got = assignor.assign(ppt, group)
    # tp1 is claimed twice in generation 3: neither keeps it on the strength of the claim; it is handed out as a
    # partition changing owner, so the cooperative assignor holds it back for the next round
    assert TopicPartition("t", 1) in assignor.partitions_transferring_ownership
    assert TopicPartition("t", 1) not in got["A"] + got["B"]
    assert TopicPartition("t", 0) in got["A"] and TopicPartition("t", 2) in got["B"]


def test_sticky_higher_generation_wins_a_conflicting_claim():
    ppt = {"t": 4}
    group = {
        "A": Subscription(["t"], tps("tp0 tp1"), generation=2),
        "B": Subscription(["t"], tps("tp1 tp2"), generation=5),
    }
    got = StickyAssignor().assign(ppt, group)
    assert TopicPartition("t", 1) in got["B"] and TopicPartition("t", 0) in got["A"]
    assert sorted(got["A"] + got["B"]) == tps("tp0 tp1 tp2 tp3")


def test_sticky_keeps_at_most_max_quota_for_the_expected_number_of_members():
    # 7 partitions over 3 members: quotas 2/3, one member may hold 3. A and B each own 3 (HashMap order: A first).
    group = {
        "A": Subscription(["t"], tps("tp0 tp1 tp2"), 1),
        "B": Subscription(["t"], tps("tp3 tp4 tp5"), 1),
        "C": Subscription(["t"], (), 1),
    }
    got = StickyAssignor().assign({"t": 7}, group)
    assert got == {"A": tps("tp0 tp1 tp2"), "B": tps("tp3 tp4"), "C": tps("tp5 tp6")}


# CooperativeStickyAssignor (KIP-429)
def test_cooperative_sticky_holds_back_partitions_another_member_still_owns():
    first = CooperativeStickyAssignor().assign({"t": 6}, subs({"A": ["t"], "B": ["t"]}))
    group = subs({"A": ["t"], "B": ["t"], "C": ["t"]}, owned=first, generation=1)
    assignor = CooperativeStickyAssignor()
    round1 = assignor.assign({"t": 6}, group)
    assert round1["C"] == []  # everything C should get is still owned by A or B
    assert sorted(assignor.partitions_transferring_ownership.values()) == ["C", "C"]
    assert len(round1["A"]) == len(round1["B"]) == 2
    round2 = CooperativeStickyAssignor().assign(
        {"t": 6}, subs({"A": ["t"], "B": ["t"], "C": ["t"]}, owned=round1, generation=2)
    )
    assert [len(round2[m]) for m in "ABC"] == [2, 2, 2]
    assert set(round1["A"]) <= set(round2["A"]) and set(round1["B"]) <= set(round2["B"])


def test_cooperative_sticky_general_path_computes_transfers_from_owned_partitions():
    ppt = {"x": 4, "y": 2}
    first = {"A": tps("xp0 xp1 xp2 xp3 yp0 yp1"), "B": []}
    group = {"A": Subscription(["x", "y"], first["A"], 1), "B": Subscription(["x"], (), 1)}
    assignor = CooperativeStickyAssignor()
    got = assignor.assign(ppt, group)
    assert assignor.partitions_transferring_ownership  # computed, not None, after the general path
    assert got["B"] == []
    assert all(owner == "B" for owner in assignor.partitions_transferring_ownership.values())


# KIP-848 server-side assignors
def test_server_range_javadoc_example_and_instance_ids():
    group = subs({"M0": ["T1", "T2"], "M1": ["T1", "T2"]})
    assert ServerRangeAssignor().assign({"T1": 3, "T2": 3}, group) == {
        "M0": tps("T1p0 T1p1 T2p0 T2p1"),
        "M1": tps("T1p2 T2p2"),
    }
    bounced = subs({"M3": ["T1", "T2"], "M2": ["T1", "T2"]})
    assert ServerRangeAssignor().assign({"T1": 3, "T2": 3}, bounced)["M2"] == tps("T1p0 T1p1 T2p0 T2p1")
    static = {
        "M3": Subscription(["T1", "T2"], group_instance_id="I0"),
        "M2": Subscription(["T1", "T2"], group_instance_id="I1"),
    }
    assert ServerRangeAssignor().assign({"T1": 3, "T2": 3}, static)["M3"] == tps("T1p0 T1p1 T2p0 T2p1")


def test_server_range_ignores_the_previous_assignment():
    group = subs({"M0": ["t"], "M1": ["t"]})
    previous = {"M0": tps("tp2 tp3"), "M1": tps("tp0 tp1")}
    assert ServerRangeAssignor().assign({"t": 4}, group, previous) == ServerRangeAssignor().assign({"t": 4}, group)


def test_uniform_homogeneous_keeps_previous_partitions_up_to_quota():
    group = subs({"A": ["t"], "B": ["t"], "C": ["t"]})
    previous = {"A": tps("tp0 tp1 tp2 tp3"), "B": tps("tp4 tp5 tp6 tp7")}  # C is new
    got = UniformAssignor().assign({"t": 8}, group, previous)
    # member order is the HashMap order A, B, C: A and B get the extra quota (3), C the minimum (2)
    assert got == {"A": tps("tp0 tp1 tp2"), "B": tps("tp4 tp5 tp6"), "C": tps("tp3 tp7")}


def test_uniform_drops_a_departed_members_partitions_and_hands_them_out():
    group = subs({"A": ["t"], "C": ["t"]})
    previous = {"A": tps("tp0 tp1 tp2"), "B": tps("tp3 tp4 tp5"), "C": tps("tp6 tp7")}
    got = UniformAssignor().assign({"t": 8}, group, previous)
    assert set(previous["A"]) <= set(got["A"]) and set(previous["C"]) <= set(got["C"])
    assert sorted(got["A"] + got["C"]) == tps("tp0 tp1 tp2 tp3 tp4 tp5 tp6 tp7")
    assert [len(got["A"]), len(got["C"])] == [4, 4]


def test_uniform_heterogeneous_balances_each_topic_not_the_whole_group():
    ppt = {"x": 6, "y": 6}
    group = subs({"A": ["x"], "B": ["x", "y"], "C": ["y"]})
    first = UniformAssignor().assign(ppt, group)
    # x is dealt first (tie on partitions per subscriber and subscribers, then topic id: here the name): A 3, B 3;
    # then y fills the least loaded, C, until it reaches B's 3, after which they alternate: B 4, C 5. Each topic's
    # subscribers now differ by one, so the final pass moves nothing: the Javadoc's "almost balanced" 9/10/11 case.
    assert {m: len(v) for m, v in first.items()} == {"A": 3, "B": 4, "C": 5}
    assert all(tp.topic == "x" for tp in first["A"]) and all(tp.topic == "y" for tp in first["C"])
    again = UniformAssignor().assign(ppt, group, first)
    assert {m: set(v) for m, v in again.items()} == {m: set(v) for m, v in first.items()}


def test_uniform_heterogeneous_javadoc_three_member_chain_is_almost_balanced():
    # UniformHeterogeneousAssignmentBuilder.balanceTopics: members 1,2 on topic a, members 2,3 on topic b
    ppt = {"a": 10, "b": 20}
    group = subs({"m1": ["a"], "m2": ["a", "b"], "m3": ["b"]})
    got = UniformAssignor().assign(ppt, group)
    counts = sorted(len(v) for v in got.values())
    assert sum(counts) == 30 and counts[-1] - counts[0] <= 2


def test_registry_names_match_kafka_protocol_names():
    assert sorted(ASSIGNORS) == ["cooperative-sticky", "range", "roundrobin", "server-range", "sticky", "uniform"]
    for key, cls in ASSIGNORS.items():
        assert cls().name == ("range" if key == "server-range" else key)


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_empty_group_gets_an_empty_assignment(name):
    assert ASSIGNORS[name]().assign({"t": 3}, {}) == {}


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_topics_without_partitions_or_subscribers_are_left_alone(name):
    got = ASSIGNORS[name]().assign({"t": 3, "empty": 0, "other": 5}, subs({"A": ["t", "empty", "missing"]}))
    assert got == {"A": tps("tp0 tp1 tp2")}


def test_each_model_names_the_java_file_it_mirrors_and_links_to_the_commit():
    import rmqlib.kafka as kafka

    for name in (
        "RangeAssignor",
        "RoundRobinAssignor",
        "StickyAssignor",
        "CooperativeStickyAssignor",
        "UniformAssignor",
        "ServerRangeAssignor",
        "TopicPartition",
        "Subscription",
    ):
        java_file = kafka.JAVA_SOURCES[name].rsplit("/", 1)[1]
        assert java_file in getattr(kafka, name).__doc__, f"{name}'s docstring does not name {java_file}"
    url = kafka.java_url(kafka.JAVA_SOURCES["UniformAssignor"])
    assert url.startswith(f"https://github.com/apache/kafka/blob/{kafka.KAFKA_COMMIT}/group-coordinator/")
    with pytest.raises(ValueError, match="path"):
        kafka.java_url("/etc/passwd")

"""Properties of Kafka's assignors over random groups: every partition once, to a subscriber; balance; stickiness."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.kafka import (
    ASSIGNORS,
    CooperativeStickyAssignor,
    RangeAssignor,
    StickyAssignor,
    Subscription,
    TopicPartition,
    UniformAssignor,
)

TOPICS = ["a", "b", "c", "d"]
partition_counts = st.dictionaries(st.sampled_from(TOPICS), st.integers(0, 24), min_size=1, max_size=4)
member_ids = st.lists(
    st.text(alphabet="AbZ-\u00e9\U0001f600", min_size=1, max_size=3), min_size=1, max_size=9, unique=True
)
CLIENT = ["range", "roundrobin", "sticky", "cooperative-sticky"]


def call(name, ppt, subscriptions, previous=None):
    assignor = ASSIGNORS[name]()
    if name in ("uniform", "server-range"):
        return assignor.assign(ppt, subscriptions, previous)
    return assignor.assign(ppt, subscriptions)


def expected_partitions(ppt, subscriptions):
    wanted = {t for s in subscriptions.values() for t in s.topics}
    return sorted(TopicPartition(t, p) for t, n in ppt.items() if t in wanted for p in range(n))


@st.composite
def groups(draw, identical=False):
    ppt = draw(partition_counts)
    members = draw(member_ids)
    if identical:
        topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))
        return ppt, {m: Subscription(topics) for m in members}
    return ppt, {
        m: Subscription(draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=4, unique=True))) for m in members
    }


@given(st.sampled_from(sorted(ASSIGNORS)), groups())
@settings(max_examples=150, deadline=None)
def test_every_subscribed_partition_goes_to_exactly_one_subscriber(name, group):
    ppt, subscriptions = group
    got = call(name, ppt, subscriptions)
    if name == "cooperative-sticky":  # a fresh group owns nothing, so nothing is held back
        pass
    assert set(got) == set(subscriptions)
    taken = sorted(tp for tps in got.values() for tp in tps)
    assert taken == expected_partitions(ppt, subscriptions)
    for member, tps in got.items():
        assert all(tp.topic in subscriptions[member].topics for tp in tps)


@given(st.sampled_from(["roundrobin", "sticky", "cooperative-sticky", "uniform"]), groups(identical=True))
@settings(max_examples=120, deadline=None)
def test_identical_subscriptions_balance_to_within_one(name, group):
    ppt, subscriptions = group
    counts = [len(v) for v in call(name, ppt, subscriptions).values()]
    assert max(counts) - min(counts) <= 1


@given(st.sampled_from(["range", "server-range"]), groups())
@settings(max_examples=120, deadline=None)
def test_range_balances_each_topic_over_its_subscribers(name, group):
    ppt, subscriptions = group
    got = call(name, ppt, subscriptions)
    for topic in ppt:
        counts = [sum(1 for tp in got[m] if tp.topic == topic) for m, s in subscriptions.items() if topic in s.topics]
        if counts:
            assert max(counts) - min(counts) <= 1


def settle(assignor_name, ppt, members, owned, generation):
    """Run rebalances (cooperative: more than one) until the assignment stops changing."""
    current = owned
    for g in range(generation, generation + 5):
        nxt = ASSIGNORS[assignor_name]().assign(
            ppt, {m: Subscription(list(ppt), owned_partitions=current.get(m, ()), generation=g) for m in members}
        )
        if {m: set(v) for m, v in nxt.items()} == {m: set(v) for m, v in current.items()}:
            return nxt
        current = nxt
    return current


@given(st.sampled_from(["sticky", "cooperative-sticky", "uniform"]), partition_counts, member_ids, st.integers(0, 100))
@settings(max_examples=120, deadline=None)
def test_a_leave_moves_only_the_departed_members_partitions(name, ppt, members, pick):
    if len(members) < 2:
        members = members + ["zz"]
    leaver = members[pick % len(members)]
    stayers = [m for m in members if m != leaver]
    full = {m: Subscription(list(ppt)) for m in members}
    if name == "uniform":
        before = UniformAssignor().assign(ppt, full)
        after = UniformAssignor().assign(ppt, {m: full[m] for m in stayers}, before)
    else:
        before = settle(name, ppt, members, {}, 1)
        after = settle(name, ppt, stayers, before, 2)
    for m in stayers:
        assert set(before[m]) <= set(after[m]), f"{m} lost partitions it could keep"
    counts = [len(v) for v in after.values()]
    assert max(counts) - min(counts) <= 1


@given(st.sampled_from(["sticky", "cooperative-sticky", "uniform"]), partition_counts, member_ids)
@settings(max_examples=120, deadline=None)
def test_a_join_moves_partitions_only_to_the_new_member(name, ppt, members):
    newcomer = "new-member"
    full = {m: Subscription(list(ppt)) for m in members + [newcomer]}
    if name == "uniform":
        before = UniformAssignor().assign(ppt, {m: full[m] for m in members})
        after = UniformAssignor().assign(ppt, full, before)
    else:
        before = settle(name, ppt, members, {}, 1)
        after = settle(name, ppt, members + [newcomer], before, 2)
    old_owner = {tp: m for m, tps in before.items() for tp in tps}
    for member, tps in after.items():
        if member != newcomer:
            assert all(old_owner[tp] == member for tp in tps), f"{member} received a partition from another member"
    counts = [len(v) for v in after.values()]
    assert max(counts) - min(counts) <= 1


@given(partition_counts, member_ids)
@settings(max_examples=100, deadline=None)
def test_cooperative_round_never_gives_a_partition_its_previous_owner_still_holds(ppt, members):
    before = RangeAssignor().assign(ppt, {m: Subscription(list(ppt)) for m in members})  # a deliberately bad start
    group = {
        m: Subscription(list(ppt), owned_partitions=before.get(m, ()), generation=1)
        for m in members + ["x-new"]
        if m in before or m == "x-new"
    }
    got = CooperativeStickyAssignor().assign(ppt, group)
    old_owner = {tp: m for m, tps in before.items() for tp in tps}
    for member, tps in got.items():
        assert all(old_owner.get(tp, member) == member for tp in tps)


@given(st.sampled_from(sorted(ASSIGNORS)), groups())
@settings(max_examples=100, deadline=None)
def test_same_input_same_output_whatever_the_mapping_order(name, group):
    ppt, subscriptions = group
    reversed_subs = dict(reversed(list(subscriptions.items())))
    reversed_ppt = dict(reversed(list(ppt.items())))
    assert call(name, ppt, subscriptions) == call(name, reversed_ppt, reversed_subs)


@given(groups(), st.integers(1, 5))
@settings(max_examples=100, deadline=None)
def test_sticky_general_path_is_balanced_or_has_no_useful_move(group, generation):
    # StickyAssignor's Javadoc: counts within one, or no member with 2+ fewer can take a partition from one with more
    ppt, subscriptions = group
    got = StickyAssignor().assign(ppt, subscriptions)
    owner = {tp: m for m, tps in got.items() for tp in tps}
    for member, sub in subscriptions.items():
        for topic in sub.topics:
            for p in range(ppt.get(topic, 0)):
                other = owner[TopicPartition(topic, p)]
                assert len(got[member]) + 1 >= len(got[other]), f"{TopicPartition(topic, p)} could move to {member}"

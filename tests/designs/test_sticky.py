"""Our sticky strategy: a partition, balanced, moving only what balance needs; and what memory costs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.allocation import allocate_group, imbalance, make_cids, moved_queues, owners, spread_queues
from rmqlib.designs import AllocateMessageQueueSticky, sticky_assign
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy

ids = st.text(alphabet="abc.@1", min_size=1, max_size=6)
groups = st.lists(ids, min_size=1, max_size=12, unique=True).map(java_sorted_cids)
queue_sets = st.integers(1, 40).map(lambda n: spread_queues(n, ("broker-a", "broker-b")))


def _is_partition(allocation, mqs):
    taken = [mq for mine in allocation.values() for mq in mine]
    return sorted(taken) == sorted(mqs)


@given(queue_sets, groups, st.data())
@settings(max_examples=200, deadline=None)
def test_every_queue_once_balanced_from_any_previous_answer(mqs, cids, data):
    # any previous: random queues (some gone, some claimed twice) for random members (some gone)
    extra = [MessageQueue("TopicTest", "broker-z", 0)]
    prev_cids = data.draw(st.lists(st.sampled_from(cids + ["gone@1"]), max_size=8, unique=True))
    previous = {cid: data.draw(st.lists(st.sampled_from(mqs + extra), max_size=10)) for cid in prev_cids}
    result = sticky_assign(mqs, cids, previous)
    assert list(result) == cids
    assert _is_partition(result, mqs)
    assert imbalance(result) <= 1


@given(queue_sets, groups)
@settings(max_examples=150, deadline=None)
def test_a_newcomer_takes_only_its_share_and_nobody_else_moves(mqs, cids):
    before = sticky_assign(mqs, cids)
    newcomer = "zz-new"
    after = sticky_assign(mqs, java_sorted_cids(cids + [newcomer]), before)
    moved = moved_queues(before, after)
    assert set(moved) == set(after[newcomer])
    assert len(moved) == len(mqs) // (len(cids) + 1)  # the fewest a balanced answer can move


@given(queue_sets, groups.filter(lambda c: len(c) >= 2), st.data())
@settings(max_examples=150, deadline=None)
def test_when_one_leaves_only_its_queues_move(mqs, cids, data):
    before = sticky_assign(mqs, cids)
    leaver = data.draw(st.sampled_from(cids))
    after = sticky_assign(mqs, [c for c in cids if c != leaver], before)
    assert set(moved_queues(before, after)) == set(before[leaver])


@given(queue_sets, groups)
@settings(max_examples=100, deadline=None)
def test_with_no_previous_answer_it_is_avg(mqs, cids):
    assert sticky_assign(mqs, cids) == AllocateMessageQueueAveragely().allocate_all("g", mqs, cids)


def test_a_stable_answer_stays_put():
    mqs, cids = spread_queues(10), make_cids(3)
    first = sticky_assign(mqs, cids, {cids[0]: mqs[5:], cids[2]: mqs[:2]})
    assert sticky_assign(mqs, cids, first) == first
    assert first[cids[0]] == mqs[5:9]  # kept four of its five (the most it may hold), in its own order


def test_it_is_an_allocate_message_queue_strategy_that_says_it_keeps_state():
    strategy = AllocateMessageQueueSticky()
    assert isinstance(strategy, AllocateMessageQueueStrategy)
    assert strategy.name == "STICKY" and AllocateMessageQueueSticky.stateless is False
    assert repr(strategy) == "AllocateMessageQueueSticky(memory='own')"


def test_own_memory_is_keyed_by_client_id_even_in_one_shared_object():
    strategy = AllocateMessageQueueSticky("own")
    mqs, cids = spread_queues(8), make_cids(2)
    strategy.allocate("g", cids[0], mqs, cids)
    assert strategy.remembered("g", cids[0], mqs) is not None
    assert strategy.remembered("g", cids[1], mqs) is None  # the other consumer has computed nothing yet
    other_topic = [MessageQueue("%RETRY%g", "broker-a", 0)]
    assert strategy.remembered("g", cids[0], other_topic) is None  # one memory per topic
    strategy.forget()
    assert strategy.remembered("g", cids[0], mqs) is None


def test_a_newcomer_without_memory_disagrees_with_the_old_members_for_good():
    strategy = AllocateMessageQueueSticky("own")
    mqs = spread_queues(16, ("broker-a", "broker-b"))
    old = java_sorted_cids(["10.0.0.7@1", "10.0.0.3@1", "10.0.0.5@1"])
    allocate_group(strategy, mqs, old, "g")  # settled: everyone computed AVG from nothing and agrees
    grown = java_sorted_cids(old + ["10.0.0.1@1"])  # sorts first: its fresh AVG share is queues 0-3
    rounds = [{cid: strategy.allocate("g", cid, mqs, grown) for cid in grown} for _ in range(3)]
    for answer in rounds:
        held = owners(answer)
        unowned = [mq for mq in mqs if mq not in held]
        doubled = [mq for mq, who in held.items() if len(who) > 1]
        assert unowned and doubled  # a gap and an overlap, every round
    assert rounds[0] == rounds[1] == rounds[2]  # each answer is stable from its own memory: it never heals


def test_shared_memory_agrees():
    strategy = AllocateMessageQueueSticky("shared")
    mqs = spread_queues(16, ("broker-a", "broker-b"))
    old = java_sorted_cids(["10.0.0.7@1", "10.0.0.3@1", "10.0.0.5@1"])
    before = allocate_group(strategy, mqs, old, "g")
    grown = java_sorted_cids(old + ["10.0.0.1@1"])
    after = {cid: strategy.allocate("g", cid, mqs, grown) for cid in grown}
    assert _is_partition(after, mqs) and imbalance(after) <= 1
    assert len(moved_queues(before, after)) == 4


def test_allocate_answers_like_java_for_empty_input_and_non_members():
    strategy = AllocateMessageQueueSticky()
    mqs = spread_queues(4)
    assert strategy.allocate("g", "stranger", mqs, ["a"]) == []
    with pytest.raises(ValueError, match="current_cid"):
        strategy.allocate("g", "", mqs, ["a"])
    with pytest.raises(ValueError, match="mq_all"):
        strategy.allocate("g", "a", [], ["a"])
    with pytest.raises(ValueError, match="cid_all"):
        strategy.allocate("g", "a", mqs, [])


@pytest.mark.parametrize(
    "bad, error, match",
    [
        (dict(memory="everyone"), ValueError, "memory"),
        (dict(memory=3), TypeError, "memory"),
    ],
)
def test_bad_memory_mode_is_refused_by_name(bad, error, match):
    with pytest.raises(error, match=match):
        AllocateMessageQueueSticky(**bad)


@pytest.mark.parametrize(
    "previous, match",
    [
        ([1, 2], "previous"),
        ({1: []}, "client ids"),
        ({"a": "q"}, r"previous\['a'\]"),
        ({"a": [1]}, "MessageQueue"),
    ],
)
def test_a_malformed_previous_answer_is_refused_by_name(previous, match):
    with pytest.raises(TypeError, match=match):
        sticky_assign(spread_queues(4), ["a"], previous)


def test_sorted_input_gives_the_same_answer_as_the_simulator_would_compute():
    mqs = java_sorted_mqs(spread_queues(12, ("b1", "b2", "b3")))
    cids = make_cids(5)
    assert allocate_group(AllocateMessageQueueSticky("shared"), mqs, cids) == sticky_assign(mqs, java_sorted_cids(cids))


def test_members_that_agree_share_one_remembered_answer():
    strategy = AllocateMessageQueueSticky("own")
    mqs, cids = spread_queues(64, ("broker-a", "broker-b")), java_sorted_cids(make_cids(200))
    for _ in range(3):
        allocate_group(strategy, mqs, cids, "g")
    remembered = {id(answer) for answer in strategy._memory.values()}
    assert len(strategy._memory) == 200 and len(remembered) == 1 and len(strategy._answers) == 1

"""Whole-group view and the metrics the book plots."""

import pytest

from rmqlib.allocation import (
    allocate_group,
    allocate_topics,
    idle_consumers,
    imbalance,
    make_cids,
    make_queues,
    moved_queues,
    multi_topic_totals,
    overlapping_queues,
    queues_per_consumer,
    unassigned_queues,
)
from rmqlib.model import MessageQueue
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueConsistentHash,
)

AVG = AllocateMessageQueueAveragely()


def test_group_view_sorts_inputs_like_rebalance_impl():
    mqs = make_queues("T", ["broker-b", "broker-a"], 2)
    group = allocate_group(AVG, reversed(mqs), ["c@2", "c@10", "c@1"])
    assert list(group) == ["c@1", "c@10", "c@2"]  # string order, not numeric
    assert group["c@1"] == [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)]


def test_group_view_deduplicates_queues_but_not_client_ids():
    mqs = make_queues("T", ["b"], 3)
    group = allocate_group(AVG, mqs + mqs, ["a", "a", "b"])
    # cidAll [a, a, b]: "a" answers for index 0 (first match), index 1's share is never taken
    assert group == {"a": mqs[:1], "b": mqs[2:]}
    assert unassigned_queues(group, mqs) == [mqs[1]]


def test_metrics_count_idle_consumers_and_imbalance():
    group = allocate_group(AVG, make_queues("T", ["b"], 3), make_cids(5))
    assert queues_per_consumer(group) == {c: n for c, n in zip(make_cids(5), [1, 1, 1, 0, 0])}
    assert idle_consumers(group) == make_cids(5)[3:]
    assert imbalance(group) == 1


def test_moved_queues_lists_queues_whose_owner_changed():
    mqs = make_queues("T", ["b"], 8)
    before = allocate_group(AVG, mqs, make_cids(2))
    after = allocate_group(AVG, mqs, make_cids(3))
    # 2 consumers: [0-3][4-7]; 3 consumers: [0-2][3-5][6-7]
    assert [mq.queue_id for mq in moved_queues(before, after)] == [3, 6, 7]
    assert moved_queues(after, after) == []


def test_overlaps_show_when_strategies_disagree():
    mqs = make_queues("T", ["b"], 2)
    group = allocate_group(AllocateMessageQueueByConfig(mqs[:1]), mqs, ["a", "b"])
    assert overlapping_queues(group) == mqs[:1]
    assert allocate_group(AllocateMessageQueueByConfig(), mqs, ["a"]) == {"a": []}


def test_multi_topic_totals_pile_remainders_on_first_consumers():
    topics = {f"T{i}": make_queues(f"T{i}", ["b"], 4) for i in range(5)}
    totals = multi_topic_totals(AVG, topics, make_cids(3))
    assert list(totals.values()) == [10, 5, 5]
    assert set(allocate_topics(AVG, topics, make_cids(3))) == set(topics)


def test_consistent_hash_group_view_builds_one_ring():
    strategy = AllocateMessageQueueConsistentHash(5)
    built = []
    original = strategy.ring
    strategy.ring = lambda cids: built.append(1) or original(cids)
    allocate_group(strategy, make_queues("T", ["b"], 16), make_cids(8))
    assert len(built) == 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: allocate_group("AVG", [], []), "strategy"),
        (lambda: allocate_group(AVG, "queues", ["a"]), "mq_all"),
        (lambda: allocate_group(AVG, [], ["a"]), "mq_all"),
        (lambda: allocate_group(AVG, make_queues(), []), "cid_all"),
        (lambda: make_queues("T", [], 2), "brokers"),
        (lambda: make_queues("T", ["b"], 0), "queues_per_broker"),
        (lambda: make_cids(0), "count"),
    ],
)
def test_bad_group_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()

"""Properties over random groups: partitions, group view == per-consumer loop, minimal movement."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.allocation import allocate_group, moved_queues, owners
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
    PrefixMachineRoomResolver,
)

names = st.text(alphabet="ab-@\u00e9\uff5e\U0001f600", min_size=1, max_size=5)
queues = st.lists(st.builds(MessageQueue, names, names, st.integers(-3, 40)), min_size=1, max_size=40, unique=True)
cids = st.lists(names, min_size=1, max_size=12)
partitioning = st.one_of(
    st.just(AllocateMessageQueueAveragely()),
    st.just(AllocateMessageQueueAveragelyByCircle()),
    st.integers(1, 30).map(AllocateMessageQueueConsistentHash),
)
any_strategy = st.one_of(
    partitioning,
    st.just(AllocateMessageQueueConsistentHash(0)),
    st.sets(names, max_size=3).map(AllocateMessageQueueByMachineRoom),
    queues.map(AllocateMessageQueueByConfig),
    st.sampled_from([AllocateMessageQueueAveragely(), AllocateMessageQueueConsistentHash(3)]).map(
        lambda inner: AllocateMachineRoomNearby(inner, PrefixMachineRoomResolver("@"))
    ),
)


@given(partitioning, queues, cids)
def test_partitioning_strategies_give_every_queue_to_exactly_one_consumer(strategy, mq_all, cid_all):
    cid_all = list(dict.fromkeys(cid_all))
    mq_all, cid_all = java_sorted_mqs(mq_all), java_sorted_cids(cid_all)
    taken = [mq for cid in cid_all for mq in strategy.allocate("g", cid, mq_all, cid_all)]
    assert sorted(taken, key=str) == sorted(mq_all, key=str)


@given(any_strategy, queues, cids)
@settings(max_examples=150)
def test_allocate_group_equals_calling_allocate_per_consumer(strategy, mq_all, cid_all):
    try:
        group = allocate_group(strategy, mq_all, cid_all, "g")
    except ValueError as error:  # e.g. a NEARBY room name Java could not resolve
        sorted_cids, sorted_mqs = java_sorted_cids(cid_all), java_sorted_mqs(mq_all)
        try:
            for cid in sorted_cids:
                strategy.allocate("g", cid, sorted_mqs, sorted_cids)
        except ValueError as per_consumer_error:
            assert str(per_consumer_error) == str(error)
            return
        raise AssertionError(f"only allocate_group raised {error!r}") from error
    sorted_mqs, sorted_cids = java_sorted_mqs(mq_all), java_sorted_cids(cid_all)
    assert list(group) == list(dict.fromkeys(sorted_cids))
    for cid in sorted_cids:
        assert group[cid] == list(strategy.allocate("g", cid, sorted_mqs, sorted_cids) or [])


@given(st.integers(1, 20), queues, st.lists(names, min_size=1, max_size=10, unique=True), names)
def test_consistent_hash_scale_out_moves_only_queues_the_new_consumer_takes(vnodes, mq_all, cid_all, newcomer):
    if newcomer in cid_all:
        return
    strategy = AllocateMessageQueueConsistentHash(vnodes)
    before = allocate_group(strategy, mq_all, cid_all)
    after = allocate_group(strategy, mq_all, cid_all + [newcomer])
    assert set(moved_queues(before, after)) == set(after[newcomer])
    # ... unless a ring collision handed an old consumer's point to the newcomer, which also only
    # moves queues to the newcomer: every other consumer keeps what it had, minus what the newcomer took.
    for cid in cid_all:
        assert set(after[cid]) <= set(before[cid])


@given(queues, cids)
def test_every_member_ends_in_the_group_view_with_its_owners_consistent(mq_all, cid_all):
    group = allocate_group(AllocateMessageQueueAveragely(), mq_all, cid_all)
    assert set(group) == set(cid_all)
    assert all(len(o) == 1 for o in owners(group).values())

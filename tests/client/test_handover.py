"""The hand-over replay and the steps RebalanceImpl reports (RebalanceImpl#updateProcessQueueTableInRebalance)."""

import pytest

from rmqlib.client import InMemoryClientBrokerAPI, RebalanceImpl
from rmqlib.client.handover import (
    DROPPED,
    NEWCOMERS_FIRST,
    OLD_OWNERS_FIRST,
    WORKING,
    replay_handover,
)
from rmqlib.client.rebalance import (
    DROP,
    KEEP_DROPPED,
    LOCK_REFUSED,
    NEW_PULL_REQUEST,
    PERSIST_OFFSET,
    REBALANCE_LATER,
    REMOVE_DIRTY_OFFSET,
    REMOVE_FROM_TABLE,
    REMOVE_OFFSET,
    START_OFFSET,
    STEP_ACTIONS,
    UNLOCK,
    UNLOCK_DELAY_TIME_MILLS,
)
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely


def actions(replay, cid=None, mq=None):
    return [
        f.step.action
        for f in replay.frames[1:]
        if (cid is None or f.step.client_id == cid) and (mq is None or f.step.mq == mq)
    ]


def test_old_owner_persists_before_new_owner_reads_so_nothing_is_consumed_twice():
    r = replay_handover(queues=6, before=2, after=3, order=OLD_OWNERS_FIRST, consumed=100, unpersisted=7)
    c1, c2, c3 = sorted(r.after)
    q = r.queues
    assert r.before == {c1: q[0:3], c2: q[3:6]}
    assert r.after == {c1: q[0:2], c2: q[2:4], c3: q[4:6]}
    # c1 gives q2 away: drop, persist (its in-memory 106), forget, remove; c2 then starts q2 at 106
    assert actions(r, c1) == [DROP, PERSIST_OFFSET, REMOVE_OFFSET, REMOVE_FROM_TABLE]
    assert actions(r, c2, q[2]) == [REMOVE_DIRTY_OFFSET, START_OFFSET, NEW_PULL_REQUEST]
    assert r.frames[-1].first_pulls[c2] == {q[2]: r.consumed[q[2]]} == {q[2]: 106}
    assert r.redelivered == {}
    # the moved queues' offsets went to the broker on the drop; the others wait for the 5 s persist
    moved = {q[2], q[4], q[5]}
    assert r.frames[-1].broker_offsets == {mq: r.consumed[mq] - (0 if mq in moved else 7) for mq in q}


def test_newcomer_that_reads_before_the_old_owner_persists_consumes_the_unpersisted_messages_again():
    r = replay_handover(order=NEWCOMERS_FIRST, consumed=100, unpersisted=7)
    c3 = sorted(r.after)[2]
    assert r.order[0] == c3
    assert r.frames[-1].first_pulls[c3] == {r.queues[4]: 105, r.queues[5]: 108}
    assert r.redelivered == {r.queues[4]: 7, r.queues[5]: 7}
    # the moment it reads, the broker still has the 5 s persist's offset
    start = next(f for f in r.frames[1:] if f.step.action == START_OFFSET and f.step.mq == r.queues[4])
    assert start.broker_offsets[r.queues[4]] == 105


@pytest.mark.parametrize("unpersisted", [0, 3, 12])
def test_redelivered_equals_the_unpersisted_messages_whatever_their_number(unpersisted):
    r = replay_handover(order=NEWCOMERS_FIRST, unpersisted=unpersisted)
    moved_to_newcomer = r.after[sorted(r.after)[2]]
    assert {mq: n for mq, n in r.redelivered.items() if mq in moved_to_newcomer} == (
        {mq: unpersisted for mq in moved_to_newcomer} if unpersisted else {}
    )


def test_frames_snapshot_the_tables_after_every_step():
    r = replay_handover()
    first, last = r.frames[0], r.frames[-1]
    assert first.step is None and [f.number for f in r.frames] == list(range(len(r.frames)))
    assert {cid: set(t) for cid, t in first.tables.items() if t} == {cid: set(q) for cid, q in r.before.items()}
    assert {cid: set(t) for cid, t in last.tables.items()} == {cid: set(q) for cid, q in r.after.items()}
    drop = next(f for f in r.frames[1:] if f.step.action == DROP)
    assert drop.tables[drop.step.client_id][drop.step.mq] == DROPPED
    assert all(state == WORKING for t in last.tables.values() for state in t.values())
    assert all(f.step.action in STEP_ACTIONS for f in r.frames[1:])


def test_orderly_queue_still_consuming_is_kept_dropped_and_its_lock_refused_to_the_newcomer():
    r = replay_handover(orderly=True, consuming=[4], since_last_lock_ms=5_000)
    c2, c3 = sorted(r.after)[1:]
    q4, q5 = r.queues[4], r.queues[5]
    assert actions(r, c2, q4) == [DROP, PERSIST_OFFSET, KEEP_DROPPED]
    assert actions(r, c2, q5) == [DROP, PERSIST_OFFSET, REMOVE_OFFSET, UNLOCK, REMOVE_FROM_TABLE]
    assert actions(r, c3, q4) == [LOCK_REFUSED]
    assert actions(r, c3)[-1] == REBALANCE_LATER
    last = r.frames[-1]
    assert last.tables[c2][q4] == DROPPED and q4 not in last.tables[c3]
    assert last.locks[q4] == c2 and last.locks[q5] == c3


def test_orderly_queue_is_force_unlocked_once_unlock_delay_has_passed_since_the_last_lock():
    r = replay_handover(orderly=True, consuming=[4], since_last_lock_ms=UNLOCK_DELAY_TIME_MILLS + 1)
    c2, c3 = sorted(r.after)[1:]
    q4 = r.queues[4]
    assert actions(r, c2, q4) == [DROP, PERSIST_OFFSET, REMOVE_OFFSET, UNLOCK, REMOVE_FROM_TABLE]
    assert "forced" in next(f.step.detail for f in r.frames[1:] if f.step.action == UNLOCK and f.step.mq == q4)
    assert r.frames[-1].locks[q4] == c3
    # exactly at the delay it is not forced yet (Java: now > last lock + delay)
    r = replay_handover(orderly=True, consuming=[4], since_last_lock_ms=UNLOCK_DELAY_TIME_MILLS)
    assert KEEP_DROPPED in actions(r, c2, q4)


@pytest.mark.parametrize("cfw, start", [("CONSUME_FROM_LAST_OFFSET", 20), ("CONSUME_FROM_FIRST_OFFSET", 0)])
def test_a_queue_with_no_committed_offset_starts_where_consume_from_where_says(cfw, start):
    r = replay_handover(consumed=0, unpersisted=0, backlog=20, consume_from_where=cfw, order=NEWCOMERS_FIRST)
    c3 = sorted(r.after)[2]
    # nothing consumed, nothing committed: LAST starts at the max offset (the 20 waiting), FIRST at 0
    assert r.consumed[r.queues[4]] == 0
    assert r.frames[-1].first_pulls[c3][r.queues[4]] == start
    detail = next(f.step.detail for f in r.frames[1:] if f.step.action == START_OFFSET and f.step.mq == r.queues[4])
    assert cfw in detail and "none committed" in detail


def test_a_pull_expired_queue_is_dropped_even_though_it_stays_assigned():
    api = InMemoryClientBrokerAPI()
    api.consumer_ids["g"] = ["c1"]
    steps = []
    member = RebalanceImpl("g", "c1", api, AllocateMessageQueueAveragely(), step_listener=steps.append)
    member.subscribe("T")
    mq = MessageQueue("T", "b", 0)
    member.update_topic_subscribe_info("T", {mq})
    member.do_rebalance(False, 0)
    steps.clear()
    member.do_rebalance(False, 120_001)  # no pull for more than 120 s
    assert [(s.action, s.mq) for s in steps][:2] == [(DROP, mq), (PERSIST_OFFSET, mq)]
    assert "pull expired" in steps[0].detail
    assert [s.action for s in steps][-1] == NEW_PULL_REQUEST  # and taken again with a fresh ProcessQueue


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(queues=0), ValueError),
        (dict(after=1, before=2), ValueError),
        (dict(queues=2.0), TypeError),
        (dict(unpersisted=8, consumed=7), ValueError),
        (dict(order="random"), ValueError),
        (dict(order=["x"]), ValueError),
        (dict(consuming=[9]), ValueError),
        (dict(orderly="yes"), TypeError),
        (dict(since_last_lock_ms=70_000), ValueError),
        (dict(consume_from_where="FROM_NOWHERE"), ValueError),
    ],
)
def test_bad_arguments_are_named(kwargs, error):
    with pytest.raises(error) as info:
        replay_handover(**kwargs)
    assert next(iter(kwargs)) in str(info.value)

"""The hand-over of queues between consumers, replayed step by step on the real :class:`RebalanceImpl`.

A small group settles on a topic, consumes for a while, then a consumer joins. Each member then runs
one rebalance round (``RebalanceImpl.doRebalance``), in an order the caller chooses, against a shared
in-memory broker side (:class:`InMemoryClientBrokerAPI`). Every :class:`RebalanceStep` the rounds
report becomes a :class:`HandoverFrame`: the step, and a snapshot of every consumer's
``processQueueTable``, its in-memory offsets, the broker's committed offsets and (orderly) locks.

Nothing here decides anything: the drops, persists, start offsets, refused locks and the messages
a new owner will consume again all come from the client model. What the replay adds is a stage:
offsets the old owners have reached (``consumed``), how many of them the 5 s persist has not yet
sent to the broker (``unpersisted``), and, for orderly groups, listener calls still running.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from rmqlib.allocation import make_cids, spread_queues
from rmqlib.checks import check_enum
from rmqlib.client.config import ConsumeFromWhere, PushConsumerConfig
from rmqlib.client.fake_api import InMemoryClientBrokerAPI
from rmqlib.client.rebalance import NEW_PULL_REQUEST, RebalanceImpl, RebalanceStep
from rmqlib.model import MessageQueue, java_sorted_mqs
from rmqlib.strategies import strategy_from_name

GROUP, TOPIC = "GID_handover", "TopicTest"
#: The order in which the members run their round: old owners first, or the newcomers first.
OLD_OWNERS_FIRST, NEWCOMERS_FIRST = "old owners first", "newcomers first"
#: Working: in the table, pulling and consuming. Dropped: still in the table, flagged dropped.
WORKING, DROPPED = "working", "dropped"


class HandoverFrame(NamedTuple):
    """One moment of the replay: after ``step`` (None: before the round), the state of everything."""

    number: int  # 0: before the round, k: after the k-th step
    step: RebalanceStep | None
    tables: dict[str, dict[MessageQueue, str]]  # client id -> queue -> WORKING | DROPPED
    memory_offsets: dict[str, dict[MessageQueue, int]]  # client id -> its OffsetStore's memory table
    broker_offsets: dict[MessageQueue, int]  # committed at the broker
    first_pulls: dict[str, dict[MessageQueue, int]]  # client id -> new PullRequests' next offsets so far
    locks: dict[MessageQueue, str]  # broker lock holder (orderly groups)


class HandoverReplay(NamedTuple):
    """What :func:`replay_handover` returns: the frames and the facts they lead to."""

    frames: list[HandoverFrame]
    queues: list[MessageQueue]  # Java order
    before: dict[str, list[MessageQueue]]  # who held what before the round
    after: dict[str, list[MessageQueue]]  # what each member works on after it
    consumed: dict[MessageQueue, int]  # the offset each queue's old owner had reached
    redelivered: dict[MessageQueue, int]  # messages a new owner will consume again
    order: list[str]  # the members in the order they ran their round


def _check_int(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be >= {least}, got {value}")


def replay_handover(
    queues: int = 6,
    before: int = 2,
    after: int = 3,
    *,
    strategy: str = "AVG",
    order: str | Sequence[str] = OLD_OWNERS_FIRST,
    consumed: int = 100,
    unpersisted: int = 7,
    backlog: int = 20,
    orderly: bool = False,
    consuming: Iterable[int] = (),
    since_last_lock_ms: int = 5_000,
    consume_from_where: ConsumeFromWhere | str = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    round_ms: int = 60_000,
) -> HandoverReplay:
    """Replay one rebalance round after the group grows from ``before`` to ``after`` consumers.

    Queue ``k`` (Java order) has been consumed to offset ``consumed + 3k`` by its old owner, which
    has sent all but the last ``unpersisted`` of them to the broker; ``backlog`` more messages wait
    on the broker. ``order``: :data:`OLD_OWNERS_FIRST`, :data:`NEWCOMERS_FIRST`, or the client ids
    in the order they run their round. ``orderly`` groups lock their queues; the queues numbered in
    ``consuming`` have a listener call in progress on their old owner, whose last lock renewal was
    ``since_last_lock_ms`` before the round. A newcomer's start offset follows ``consume_from_where``
    when the broker has no offset (``unpersisted`` may not exceed ``consumed``; ``consumed=0``: nothing
    was consumed or committed yet).
    """
    _check_int("queues", queues, 1)
    _check_int("before", before, 1)
    _check_int("after", after, before)
    for name, value in (
        ("consumed", consumed),
        ("unpersisted", unpersisted),
        ("backlog", backlog),
        ("since_last_lock_ms", since_last_lock_ms),
        ("round_ms", round_ms),
    ):
        _check_int(name, value, 0)
    if unpersisted > consumed:
        raise ValueError(f"unpersisted ({unpersisted}) cannot exceed consumed ({consumed})")
    if since_last_lock_ms > round_ms:
        raise ValueError(f"since_last_lock_ms ({since_last_lock_ms}) cannot exceed round_ms ({round_ms})")
    if not isinstance(orderly, bool):
        raise TypeError(f"orderly must be a bool, got {type(orderly).__name__}")
    consuming = set(consuming)
    for k in consuming:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < queues:
            raise ValueError(f"consuming must hold queue numbers in 0..{queues - 1}, got {k!r}")
    config = PushConsumerConfig(
        consume_from_where=check_enum(consume_from_where, "consume_from_where", ConsumeFromWhere)
    )

    mq_all = java_sorted_mqs(spread_queues(queues, ("broker-a",), TOPIC))
    cids = make_cids(after)
    old_cids, newcomers = cids[:before], cids[before:]
    if isinstance(order, str):
        if order not in (OLD_OWNERS_FIRST, NEWCOMERS_FIRST):
            raise ValueError(
                f"order must be {OLD_OWNERS_FIRST!r}, {NEWCOMERS_FIRST!r} or a list of client ids, got {order!r}"
            )
        order = old_cids + newcomers if order == OLD_OWNERS_FIRST else newcomers + old_cids
    order = list(order)
    if sorted(order) != sorted(cids):
        raise ValueError(f"order must name each of {cids} once, got {order}")

    api = InMemoryClientBrokerAPI()
    frames: list[HandoverFrame] = []
    first_pulls: dict[str, dict[MessageQueue, int]] = {cid: {} for cid in cids}
    members: dict[str, RebalanceImpl] = {}

    def snapshot(step: RebalanceStep | None) -> None:
        if step is not None and step.action == NEW_PULL_REQUEST:
            assert step.mq is not None and step.offset is not None
            first_pulls[step.client_id][step.mq] = step.offset
        frames.append(
            HandoverFrame(
                len(frames),
                step,
                {
                    cid: {mq: DROPPED if pq.dropped else WORKING for mq, pq in m.process_queue_table.items()}
                    for cid, m in members.items()
                },
                {cid: m.offset_store.clone_offset_table() for cid, m in members.items()},
                {mq: off for (_, mq), off in api.offsets.items()},
                {cid: dict(p) for cid, p in first_pulls.items()},
                {mq: holder for (_, mq), (holder, _) in api.locks.items()},
            )
        )

    def join(cid: str, now_ms: int) -> RebalanceImpl:
        member = RebalanceImpl(
            GROUP, cid, api, strategy_from_name(strategy), config=config, consume_orderly=orderly, now_ms=now_ms
        )
        member.subscribe(TOPIC, now_ms=now_ms)
        member.update_topic_subscribe_info(TOPIC, mq_all)
        members[cid] = member
        return member

    # the settled group: its first round, then consumption up to ``consumed + 3k`` on queue k
    api.consumer_ids[GROUP] = list(old_cids)
    for cid in old_cids:
        join(cid, 0).do_rebalance(orderly, 0)
    reached = {mq: consumed + 3 * k if consumed else 0 for k, mq in enumerate(mq_all)}
    before_alloc = {cid: java_sorted_mqs(m.process_queue_table) for cid, m in members.items()}
    last_lock_ms = round_ms - since_last_lock_ms
    for cid, m in members.items():
        for k, mq in enumerate(mq_all):
            api.max_offsets[mq] = reached[mq] + backlog
            pq = m.process_queue_table.get(mq)
            if pq is None:
                continue
            if reached[mq] > 0:
                m.offset_store.update_offset(mq, reached[mq], True)
            if reached[mq] - unpersisted > 0:
                api.offsets[(GROUP, mq)] = reached[mq] - unpersisted
            pq.last_pull_timestamp = round_ms  # pulling normally, so no queue is pull-expired
            if orderly:
                pq.last_lock_timestamp = last_lock_ms
                api.locks[(GROUP, mq)] = (cid, last_lock_ms)
                if k in consuming:
                    pq.acquire_consume_lock()

    # the newcomers start; everyone runs one round, in ``order``
    api.consumer_ids[GROUP] = list(cids)
    for cid in newcomers:
        join(cid, round_ms)
    snapshot(None)
    for cid in order:
        members[cid].step_listener = snapshot
        members[cid].do_rebalance(orderly, round_ms)
        members[cid].step_listener = None

    after_alloc = {
        cid: java_sorted_mqs(mq for mq, pq in m.process_queue_table.items() if not pq.dropped)
        for cid, m in members.items()
    }
    # a new owner starting below the offset the old owner reached consumes those messages again
    redelivered = {
        mq: reached[mq] - start
        for starts in first_pulls.values()
        for mq, start in starts.items()
        if reached[mq] > start
    }
    for m in members.values():
        m._check()
    return HandoverReplay(frames, mq_all, before_alloc, after_alloc, reached, redelivered, order)


__all__ = [
    "DROPPED",
    "NEWCOMERS_FIRST",
    "OLD_OWNERS_FIRST",
    "WORKING",
    "HandoverFrame",
    "HandoverReplay",
    "replay_handover",
]

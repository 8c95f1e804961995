"""Whole-group views of an allocation, and the metrics the book plots.

Mirrors: client/.../impl/consumer/RebalanceImpl.java#rebalanceByTopic (the sort
before ``allocate``). Every consumer of a group runs that code on its own; here
the whole group's answers are computed at once, from one shared view.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from rmqlib.checks import ArgumentTypeError, check_each, check_int, check_str
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMachineRoomNearby,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueConsistentHash,
    AllocateMessageQueueStrategy,
    Allocation,
)

DEFAULT_GROUP = "GID_rmqlib"

# Limits, so that every call ends within seconds and a few hundred MB. Measured with a stopwatch on the
# development machine: AVG over 100,000 consumers and 100,000 queues takes 0.6 s; a CONSISTENT_HASH ring of
# 1,000,000 points takes 1 to 3 s to build and route 100,000 queues through (4.6 s inside MACHINE_ROOM_NEARBY,
# which builds one ring per room); a sweep of MAX_WORK ring points and queue lookups about 1 s.
# Larger inputs are refused with a ValueError naming the argument.
MAX_CONSUMERS = 100_000
"""The largest consumer group (client ids, repeats included) these functions take."""
MAX_QUEUES = 100_000
"""The most queues one topic may have here."""
MAX_VIRTUAL_NODES = 10_000
"""The most CONSISTENT_HASH virtual nodes per consumer."""
MAX_RING_POINTS = 1_000_000
"""The most points on one CONSISTENT_HASH ring: consumers x virtual nodes."""
MAX_ASSIGNED = 1_000_000
"""The most (consumer, queue) pairs one allocation may hold: CONFIG hands every consumer the whole list."""
MAX_NEARBY_DEPTH = 8
"""How deep MACHINE_ROOM_NEARBY strategies may wrap one another (each level is a Python call level)."""
MAX_WORK = 500_000
"""What one metric sweep (:func:`imbalance_spread`, :func:`random_assignment_imbalance`) may do in all:
ring points (or queues) summed over every ring it builds."""


def _sequence(value: object, name: str) -> list[Any]:
    """The items of ``value``: any iterable but a string, bytes or a mapping (a TypeError naming ``name``)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _queues(value: object, name: str, max_len: int | None = None) -> list[MessageQueue]:
    """``value`` as a list of MessageQueue (a TypeError naming ``name`` and the item at fault)."""
    items = _sequence(value, name)
    if max_len is not None and len(items) > max_len:
        raise ValueError(f"{name} must hold at most {max_len} queues, got {len(items)}")
    for i, mq in enumerate(items):
        if not isinstance(mq, MessageQueue):
            raise ArgumentTypeError(f"{name}[{i}] must be a MessageQueue, got {type(mq).__name__}")
    return items


def _cids(value: object, name: str) -> list[str]:
    """``value`` as a list of client ids (str), at most :data:`MAX_CONSUMERS` of them."""
    items = _sequence(value, name)
    if len(items) > MAX_CONSUMERS:
        raise ValueError(f"{name} must hold at most {MAX_CONSUMERS} client ids, got {len(items)}")
    for i, cid in enumerate(items):
        if not isinstance(cid, str):
            raise ArgumentTypeError(f"{name}[{i}] must be a str (a client id), got {type(cid).__name__}")
        if not cid:
            raise ValueError(f"{name}[{i}] must be a non-empty client id (Java: currentCID is empty)")
    return items


def _brokers(value: object, name: str = "brokers") -> list[str]:
    """At least one broker name, each a str, none repeated (a repeat would make the same queue twice)."""
    brokers = check_each(value, name, lambda item, label: check_str(item, label, empty=True), max_len=MAX_QUEUES)
    if not brokers:
        raise ValueError(f"{name} must name at least one broker")
    seen: set[str] = set()
    for broker in brokers:
        if broker in seen:
            raise ValueError(f"{name} must not repeat a broker name, got {broker!r} twice")
        seen.add(broker)
    return brokers


def _allocation(value: object, name: str = "allocation") -> Mapping[str, Collection[MessageQueue]]:
    """Check that ``value`` maps client ids (str) to collections of MessageQueue, as allocate_group returns."""
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(f"{name} must map client ids to their queues (a dict), got {type(value).__name__}")
    for cid, mqs in value.items():
        if not isinstance(cid, str):
            raise ArgumentTypeError(f"{name}: client ids must be str, got {type(cid).__name__}")
        if isinstance(mqs, (str, bytes, Mapping)) or not isinstance(mqs, Collection):
            raise ArgumentTypeError(f"{name}[{cid!r}] must be a list of MessageQueue, got {type(mqs).__name__}")
        for mq in mqs:
            if not isinstance(mq, MessageQueue):
                raise ArgumentTypeError(f"{name}[{cid!r}] must hold MessageQueue items, got {type(mq).__name__}")
    return value


def _check_size(
    strategy: AllocateMessageQueueStrategy, cids: list[str], mqs: list[MessageQueue], name: str = "strategy"
) -> None:
    """Refuse a CONSISTENT_HASH ring (also inside MACHINE_ROOM_NEARBY) larger than :data:`MAX_RING_POINTS`,
    and a CONFIG list that would give more than :data:`MAX_ASSIGNED` (consumer, queue) pairs."""
    consumers = len(cids)
    depth = 0
    while isinstance(strategy, AllocateMachineRoomNearby):
        strategy, depth = strategy.strategy, depth + 1
        if depth > MAX_NEARBY_DEPTH:
            raise ValueError(f"{name}: MACHINE_ROOM_NEARBY nested more than {MAX_NEARBY_DEPTH} deep")
    if isinstance(strategy, AllocateMessageQueueByConfig) and strategy.message_queue_list is not None:
        # NEARBY hands the inner strategy's answer out once per room a consumer takes part in
        rooms = len({mq.broker_name for mq in mqs}) + 1 if depth else 1
        pairs = len(set(cids)) * len(strategy.message_queue_list) * rooms
        if pairs > MAX_ASSIGNED:
            raise ValueError(
                f"{name}: CONFIG gives every consumer all {len(strategy.message_queue_list)} queues: "
                f"more than {MAX_ASSIGNED} (consumer, queue) pairs for {len(set(cids))} consumers"
            )
    if isinstance(strategy, AllocateMessageQueueConsistentHash):
        vnodes = strategy.virtual_node_cnt
        if vnodes > MAX_VIRTUAL_NODES:
            raise ValueError(f"{name}: virtual_node_cnt must be <= {MAX_VIRTUAL_NODES}, got {vnodes}")
        if vnodes * consumers > MAX_RING_POINTS:
            raise ValueError(
                f"{name}: a ring of {consumers} consumers x {vnodes} virtual nodes has more than "
                f"{MAX_RING_POINTS} points"
            )


def allocate_group(
    strategy: AllocateMessageQueueStrategy,
    mq_all: Iterable[MessageQueue],
    cid_all: Iterable[str],
    consumer_group: str = DEFAULT_GROUP,
) -> Allocation:
    """Each consumer's queues, as every member's RebalanceImpl would compute them.

    Inputs are sorted the Java way first (queues de-duplicated, as RebalanceImpl
    reads them from a set; client ids kept with repeats, as the broker lists
    them). Keys come in sorted client id order. A strategy answering ``None``
    (CONFIG with no list) counts as no queues, as in RebalanceImpl.

    Limits: at most :data:`MAX_CONSUMERS` client ids and :data:`MAX_QUEUES` queues; a CONSISTENT_HASH
    ring (also inside MACHINE_ROOM_NEARBY) of at most :data:`MAX_VIRTUAL_NODES` per consumer and
    :data:`MAX_RING_POINTS` in all; a CONFIG list giving at most :data:`MAX_ASSIGNED` (consumer, queue)
    pairs. Larger inputs raise ValueError.
    """
    if not isinstance(strategy, AllocateMessageQueueStrategy):
        raise ArgumentTypeError(f"strategy must be an AllocateMessageQueueStrategy, got {type(strategy).__name__}")
    mq_list = _queues(mq_all, "mq_all")
    cid_list = _cids(cid_all, "cid_all")
    check_str(consumer_group, "consumer_group", empty=True)
    mqs = java_sorted_mqs(list(dict.fromkeys(mq_list)))
    if len(mqs) > MAX_QUEUES:
        raise ValueError(f"mq_all must hold at most {MAX_QUEUES} distinct queues, got {len(mqs)}")
    _check_size(strategy, cid_list, mqs)
    cids = java_sorted_cids(cid_list)
    result = strategy.allocate_all(consumer_group, mqs, cids)
    return {cid: list(result[cid] or []) for cid in dict.fromkeys(cids)}


def make_queues(
    topic: str = "TopicTest", brokers: Sequence[str] = ("broker-a",), queues_per_broker: int = 4
) -> list[MessageQueue]:
    """The queues a topic route gives: ids ``0..queues_per_broker-1`` on every broker.

    Broker names must be distinct; at most :data:`MAX_QUEUES` queues in all.
    """
    check_str(topic, "topic", empty=True)
    brokers = _brokers(brokers)
    queues_per_broker = check_int(queues_per_broker, "queues_per_broker", 1, MAX_QUEUES)
    if len(brokers) * queues_per_broker > MAX_QUEUES:
        raise ValueError(
            f"queues_per_broker: {len(brokers)} brokers x {queues_per_broker} queues is more than {MAX_QUEUES} queues"
        )
    return [MessageQueue(topic, b, q) for b in brokers for q in range(queues_per_broker)]


def make_cids(count: int, prefix: str = "10.0.0.") -> list[str]:
    """``count`` client ids shaped like RocketMQ's ``ip@instance`` (``10.0.0.1@1001`` ...).

    Numbered naturally, so their Java (string) order differs from their number
    order past 9: ``10.0.0.10`` sorts before ``10.0.0.2``, as real IPs do. ``count`` is at most
    :data:`MAX_CONSUMERS`.
    """
    count = check_int(count, "count", 1, MAX_CONSUMERS)
    check_str(prefix, "prefix", empty=True)
    return [f"{prefix}{i}@{1000 + i}" for i in range(1, count + 1)]


def spread_queues(count: int, brokers: Sequence[str] = ("broker-a",), topic: str = "TopicTest") -> list[MessageQueue]:
    """``count`` queues of ``topic``, dealt over ``brokers`` (ids 0, 1, ... on each broker).

    ``count`` is at most :data:`MAX_QUEUES`; broker names must be distinct.
    """
    count = check_int(count, "count", 1, MAX_QUEUES)
    brokers = _brokers(brokers)
    check_str(topic, "topic", empty=True)
    per = [0] * len(brokers)
    mqs = []
    for k in range(count):
        b = k % len(brokers)
        mqs.append(MessageQueue(topic, brokers[b], per[b]))
        per[b] += 1
    return java_sorted_mqs(mqs)


def random_cids(count: int, seed: int) -> list[str]:
    """``count`` distinct client ids with random IPs (``10.a.b.c@pid``), reproducible from ``seed`` (an int).

    ``count`` is at most :data:`MAX_CONSUMERS`.
    """
    count = check_int(count, "count", 1, MAX_CONSUMERS)
    seed = check_int(seed, "seed")
    rng = random.Random(seed)
    cids: list[str] = []
    seen: set[str] = set()  # the same draws and order as a list search, in linear time
    while len(cids) < count:
        cid = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}@{rng.randrange(1000, 65536)}"
        if cid not in seen:
            seen.add(cid)
            cids.append(cid)
    return cids


def queues_per_consumer(allocation: Mapping[str, Sequence[MessageQueue]]) -> dict[str, int]:
    """How many queues each consumer holds."""
    _allocation(allocation)
    return {cid: len(mqs) for cid, mqs in allocation.items()}


def idle_consumers(allocation: Mapping[str, Sequence[MessageQueue]]) -> list[str]:
    """Consumers that hold no queue."""
    _allocation(allocation)
    return [cid for cid, mqs in allocation.items() if not mqs]


def imbalance(allocation: Mapping[str, Sequence[MessageQueue]]) -> int:
    """Most queues on one consumer minus fewest (0 for a perfectly even split)."""
    counts = queues_per_consumer(allocation).values()
    return max(counts) - min(counts) if counts else 0


def owners(allocation: Mapping[str, Sequence[MessageQueue]]) -> dict[MessageQueue, frozenset[str]]:
    """Queue -> the consumers that believe they own it (more than one means overlap)."""
    _allocation(allocation)
    result: dict[MessageQueue, set[str]] = {}
    for cid, mqs in allocation.items():
        for mq in mqs:
            result.setdefault(mq, set()).add(cid)
    return {mq: frozenset(cids) for mq, cids in result.items()}


def moved_queues(
    before: Mapping[str, Sequence[MessageQueue]], after: Mapping[str, Sequence[MessageQueue]]
) -> list[MessageQueue]:
    """Queues whose owners differ between two allocations (gained, lost or handed over), Java-sorted."""
    _allocation(before, "before")
    _allocation(after, "after")
    a, b = owners(before), owners(after)
    return java_sorted_mqs(mq for mq in set(a) | set(b) if a.get(mq, frozenset()) != b.get(mq, frozenset()))


def unassigned_queues(
    allocation: Mapping[str, Sequence[MessageQueue]], mq_all: Iterable[MessageQueue]
) -> list[MessageQueue]:
    """Queues of ``mq_all`` nobody holds (consumed by no one until the next rebalance)."""
    mq_all = _queues(mq_all, "mq_all")
    held = owners(allocation)
    return java_sorted_mqs(mq for mq in dict.fromkeys(mq_all) if mq not in held)


def overlapping_queues(allocation: Mapping[str, Sequence[MessageQueue]]) -> list[MessageQueue]:
    """Queues held by more than one consumer (duplicates in concurrent mode)."""
    return java_sorted_mqs(mq for mq, cids in owners(allocation).items() if len(cids) > 1)


def allocate_topics(
    strategy: AllocateMessageQueueStrategy,
    topics: Mapping[str, Iterable[MessageQueue]],
    cid_all: Iterable[str],
    consumer_group: str = DEFAULT_GROUP,
) -> dict[str, Allocation]:
    """Each topic allocated on its own, as RebalanceImpl does for every subscription."""
    if not isinstance(topics, Mapping):
        raise ArgumentTypeError("topics must map a topic name to its queues")
    queues = {
        check_str(topic, "topics: a topic name", empty=True): _queues(mqs, f"topics[{topic!r}]")
        for topic, mqs in topics.items()
    }
    cid_all = _cids(cid_all, "cid_all")
    result = {}
    for topic, mqs in queues.items():
        try:
            result[topic] = allocate_group(strategy, mqs, cid_all, consumer_group)
        except (TypeError, ValueError) as error:  # say which topic it was
            raise type(error)(f"topics[{topic!r}]: {error}") from None
    return result


def multi_topic_totals(
    strategy: AllocateMessageQueueStrategy,
    topics: Mapping[str, Iterable[MessageQueue]],
    cid_all: Iterable[str],
    consumer_group: str = DEFAULT_GROUP,
) -> dict[str, int]:
    """Queues per consumer summed over topics: remainders pile up on the first consumers."""
    cid_all = _cids(cid_all, "cid_all")
    totals = dict.fromkeys(java_sorted_cids(cid_all), 0)
    for allocation in allocate_topics(strategy, topics, cid_all, consumer_group).values():
        for cid, mqs in allocation.items():
            totals[cid] += len(mqs)
    return totals


def moved_on_scale_out(strategy: AllocateMessageQueueStrategy, mq_all: Sequence[MessageQueue], consumers: int) -> int:
    """Queues that change owner when a group of ``consumers`` (``make_cids``) gains one more consumer."""
    consumers = check_int(consumers, "consumers", 1, MAX_CONSUMERS - 1)
    before = allocate_group(strategy, mq_all, make_cids(consumers))
    after = allocate_group(strategy, mq_all, make_cids(consumers + 1))
    return len(moved_queues(before, after))


def imbalance_spread(
    consumers: int,
    queues: int,
    vnode_counts: Iterable[int],
    seeds: Iterable[int] = range(8),
    brokers: Sequence[str] = ("broker-a", "broker-b"),
) -> dict[int, list[int]]:
    """vnodes -> the imbalance (max - min queues) for each seeded random consumer set.

    Each seed draws ``consumers`` random client ids (:func:`random_cids`); the
    queues are fixed. With 0 virtual nodes everybody gets nothing (imbalance 0).

    Every ring has at most :data:`MAX_RING_POINTS` points, and all the rings together (``consumers`` x
    virtual nodes, summed over ``vnode_counts`` and ``seeds``) at most :data:`MAX_WORK`.
    """
    consumers = check_int(consumers, "consumers", 1, MAX_CONSUMERS)
    queues = check_int(queues, "queues", 1, MAX_QUEUES)
    vnode_counts = check_each(
        vnode_counts, "vnode_counts", lambda v, label: check_int(v, label, 0, MAX_VIRTUAL_NODES), max_len=MAX_WORK
    )
    seeds = check_each(seeds, "seeds", check_int, max_len=MAX_WORK)
    mq_all = spread_queues(queues, brokers)
    for v in vnode_counts:
        if consumers * v > MAX_RING_POINTS:
            raise ValueError(
                f"vnode_counts: a ring of {consumers} consumers x {v} virtual nodes has more than "
                f"{MAX_RING_POINTS} points"
            )
    work = (consumers * sum(vnode_counts) + len(mq_all) * len(vnode_counts)) * len(seeds)
    if work > MAX_WORK:
        raise ValueError(
            f"vnode_counts and seeds: {len(seeds)} seeds x {consumers} consumers x "
            f"{sum(vnode_counts)} virtual nodes in all is more work than the limit ({MAX_WORK} ring "
            "points)"
        )
    groups = [random_cids(consumers, s) for s in seeds]
    result = {}
    for v in vnode_counts:
        strat = AllocateMessageQueueConsistentHash(v)
        result[v] = [imbalance(allocate_group(strat, mq_all, cids)) for cids in groups]
    return result


def random_assignment_imbalance(consumers: int, queues: int, seeds: Iterable[int] = range(8)) -> list[int]:
    """Imbalance when every queue picks a consumer uniformly at random (seeded): a perfect ring's floor.

    At most :data:`MAX_CONSUMERS` consumers and :data:`MAX_QUEUES` queues, and ``queues`` x seeds at most
    :data:`MAX_WORK`.
    """
    consumers = check_int(consumers, "consumers", 1, MAX_CONSUMERS)
    queues = check_int(queues, "queues", 0, MAX_QUEUES)
    seeds = check_each(seeds, "seeds", check_int, max_len=MAX_WORK)
    if (queues + consumers) * len(seeds) > MAX_WORK:
        raise ValueError(f"seeds: {len(seeds)} seeds x {queues} queues is more than {MAX_WORK} draws")
    result = []
    for seed in seeds:
        rng = random.Random(seed)
        counts = [0] * consumers
        for _ in range(queues):
            counts[rng.randrange(consumers)] += 1
        result.append(max(counts) - min(counts))
    return result

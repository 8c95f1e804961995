"""Whole-group views of an allocation, and the metrics the book plots.

Mirrors: client/.../impl/consumer/RebalanceImpl.java#rebalanceByTopic (the sort
before ``allocate``). Every consumer of a group runs that code on its own; here
the whole group's answers are computed at once, from one shared view.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import Allocation, AllocateMessageQueueConsistentHash, AllocateMessageQueueStrategy

DEFAULT_GROUP = "GID_rmqlib"


def allocate_group(strategy: AllocateMessageQueueStrategy, mq_all: Iterable[MessageQueue],
                   cid_all: Iterable[str], consumer_group: str = DEFAULT_GROUP) -> Allocation:
    """Each consumer's queues, as every member's RebalanceImpl would compute them.

    Inputs are sorted the Java way first (queues de-duplicated, as RebalanceImpl
    reads them from a set; client ids kept with repeats, as the broker lists
    them). Keys come in sorted client id order. A strategy answering ``None``
    (CONFIG with no list) counts as no queues, as in RebalanceImpl.
    """
    if not isinstance(strategy, AllocateMessageQueueStrategy):
        raise TypeError(f"strategy must be an AllocateMessageQueueStrategy, got {type(strategy).__name__}")
    for arg, value in (("mq_all", mq_all), ("cid_all", cid_all)):
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise TypeError(f"{arg} must be a list, got {type(value).__name__}")
    mqs = java_sorted_mqs(dict.fromkeys(mq_all))
    cids = java_sorted_cids(cid_all)
    result = strategy.allocate_all(consumer_group, mqs, cids)
    return {cid: list(result[cid] or []) for cid in dict.fromkeys(cids)}


def make_queues(topic: str = "TopicTest", brokers: Sequence[str] = ("broker-a",),
                queues_per_broker: int = 4) -> list[MessageQueue]:
    """The queues a topic route gives: ids ``0..queues_per_broker-1`` on every broker."""
    if isinstance(brokers, str):
        raise TypeError("brokers must be a list of broker names, not a str")
    if not brokers:
        raise ValueError("brokers must name at least one broker")
    if isinstance(queues_per_broker, bool) or not isinstance(queues_per_broker, int) or queues_per_broker < 1:
        raise ValueError(f"queues_per_broker must be an int >= 1, got {queues_per_broker!r}")
    return [MessageQueue(topic, b, q) for b in brokers for q in range(queues_per_broker)]


def make_cids(count: int, prefix: str = "10.0.0.") -> list[str]:
    """``count`` client ids shaped like RocketMQ's ``ip@instance`` (``10.0.0.1@1001`` ...).

    Numbered naturally, so their Java (string) order differs from their number
    order past 9: ``10.0.0.10`` sorts before ``10.0.0.2``, as real IPs do.
    """
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    return [f"{prefix}{i}@{1000 + i}" for i in range(1, count + 1)]


def spread_queues(count: int, brokers: Sequence[str] = ("broker-a",), topic: str = "TopicTest") -> list[MessageQueue]:
    """``count`` queues of ``topic``, dealt over ``brokers`` (ids 0, 1, ... on each broker)."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    per = [0] * len(brokers)
    mqs = []
    for k in range(count):
        b = k % len(brokers)
        mqs.append(MessageQueue(topic, brokers[b], per[b]))
        per[b] += 1
    return java_sorted_mqs(mqs)


def random_cids(count: int, seed: int) -> list[str]:
    """``count`` distinct client ids with random IPs (``10.a.b.c@pid``), reproducible from ``seed``."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    rng = random.Random(seed)
    cids: list[str] = []
    while len(cids) < count:
        cid = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}@{rng.randrange(1000, 65536)}"
        if cid not in cids:
            cids.append(cid)
    return cids


def queues_per_consumer(allocation: Mapping[str, Sequence[MessageQueue]]) -> dict[str, int]:
    """How many queues each consumer holds."""
    return {cid: len(mqs) for cid, mqs in allocation.items()}


def idle_consumers(allocation: Mapping[str, Sequence[MessageQueue]]) -> list[str]:
    """Consumers that hold no queue."""
    return [cid for cid, mqs in allocation.items() if not mqs]


def imbalance(allocation: Mapping[str, Sequence[MessageQueue]]) -> int:
    """Most queues on one consumer minus fewest (0 for a perfectly even split)."""
    counts = queues_per_consumer(allocation).values()
    return max(counts) - min(counts) if counts else 0


def owners(allocation: Mapping[str, Sequence[MessageQueue]]) -> dict[MessageQueue, frozenset[str]]:
    """Queue -> the consumers that believe they own it (more than one means overlap)."""
    result: dict[MessageQueue, set[str]] = {}
    for cid, mqs in allocation.items():
        for mq in mqs:
            result.setdefault(mq, set()).add(cid)
    return {mq: frozenset(cids) for mq, cids in result.items()}


def moved_queues(before: Mapping[str, Sequence[MessageQueue]],
                 after: Mapping[str, Sequence[MessageQueue]]) -> list[MessageQueue]:
    """Queues whose owners differ between two allocations (gained, lost or handed over), Java-sorted."""
    a, b = owners(before), owners(after)
    return java_sorted_mqs(mq for mq in set(a) | set(b) if a.get(mq, frozenset()) != b.get(mq, frozenset()))


def unassigned_queues(allocation: Mapping[str, Sequence[MessageQueue]],
                      mq_all: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Queues of ``mq_all`` nobody holds (consumed by no one until the next rebalance)."""
    held = owners(allocation)
    return java_sorted_mqs(mq for mq in dict.fromkeys(mq_all) if mq not in held)


def overlapping_queues(allocation: Mapping[str, Sequence[MessageQueue]]) -> list[MessageQueue]:
    """Queues held by more than one consumer (duplicates in concurrent mode)."""
    return java_sorted_mqs(mq for mq, cids in owners(allocation).items() if len(cids) > 1)


def allocate_topics(strategy: AllocateMessageQueueStrategy, topics: Mapping[str, Iterable[MessageQueue]],
                    cid_all: Iterable[str], consumer_group: str = DEFAULT_GROUP) -> dict[str, Allocation]:
    """Each topic allocated on its own, as RebalanceImpl does for every subscription."""
    if not isinstance(topics, Mapping):
        raise TypeError("topics must map a topic name to its queues")
    cid_all = list(cid_all)
    return {topic: allocate_group(strategy, mqs, cid_all, consumer_group) for topic, mqs in topics.items()}


def multi_topic_totals(strategy: AllocateMessageQueueStrategy, topics: Mapping[str, Iterable[MessageQueue]],
                       cid_all: Iterable[str], consumer_group: str = DEFAULT_GROUP) -> dict[str, int]:
    """Queues per consumer summed over topics: remainders pile up on the first consumers."""
    cid_all = list(cid_all)
    totals = dict.fromkeys(java_sorted_cids(cid_all), 0)
    for allocation in allocate_topics(strategy, topics, cid_all, consumer_group).values():
        for cid, mqs in allocation.items():
            totals[cid] += len(mqs)
    return totals


def moved_on_scale_out(strategy: AllocateMessageQueueStrategy, mq_all: Sequence[MessageQueue],
                       consumers: int) -> int:
    """Queues that change owner when a group of ``consumers`` (``make_cids``) gains one more consumer."""
    before = allocate_group(strategy, mq_all, make_cids(consumers))
    after = allocate_group(strategy, mq_all, make_cids(consumers + 1))
    return len(moved_queues(before, after))


def imbalance_spread(consumers: int, queues: int, vnode_counts: Iterable[int], seeds: Iterable[int] = range(8),
                     brokers: Sequence[str] = ("broker-a", "broker-b")) -> dict[int, list[int]]:
    """vnodes -> the imbalance (max - min queues) for each seeded random consumer set.

    Each seed draws ``consumers`` random client ids (:func:`random_cids`); the
    queues are fixed. With 0 virtual nodes everybody gets nothing (imbalance 0).
    """
    mq_all = spread_queues(queues, brokers)
    seeds = list(seeds)
    groups = [random_cids(consumers, s) for s in seeds]
    result = {}
    for v in vnode_counts:
        strat = AllocateMessageQueueConsistentHash(v)
        result[v] = [imbalance(allocate_group(strat, mq_all, cids)) for cids in groups]
    return result


def random_assignment_imbalance(consumers: int, queues: int, seeds: Iterable[int] = range(8)) -> list[int]:
    """Imbalance when every queue picks a consumer uniformly at random (seeded): a perfect ring's floor."""
    result = []
    for seed in seeds:
        rng = random.Random(seed)
        counts = [0] * consumers
        for _ in range(queues):
            counts[rng.randrange(consumers)] += 1
        result.append(max(counts) - min(counts))
    return result

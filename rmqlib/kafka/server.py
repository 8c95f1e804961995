"""KIP-848's server-side assignors: the group coordinator, not a client, computes the target assignment.

Each has Kafka's ``name`` and ``assign(partitions_per_topic, subscriptions, previous=None)``; ``previous`` is the
group's current target assignment (member -> partitions), which the coordinator hands the assignor in
``GroupSpec.memberAssignment``. As in the coordinator, a departed member's previous partitions are simply free
(the coordinator builds the spec from the current members only), and a topic missing from
``partitions_per_topic`` is not subscribed (a topic name that does not exist has no topic id).

Simplified: Kafka orders topics by their random ``Uuid``; the model orders them by name (as if topic ids were
numbered in name order). Where the order of a member's partitions matters (which ones the homogeneous builder keeps
when a member is over quota), they go in the order of a ``HashSet<Integer>`` made from the sorted list. Members go
in the order Kafka's ``HashMap`` of member ids iterates (``rmqlib.kafka._java``).

Mirrors, at the Kafka commit named in ``rmqlib.kafka``: group-coordinator/src/main/java/org/apache/kafka/coordinator/
group/assignor/UniformAssignor.java (with UniformHomogeneousAssignmentBuilder.java and
UniformHeterogeneousAssignmentBuilder.java) and .../assignor/RangeAssignor.java.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rmqlib.kafka._java import hash_order, string_hash_order
from rmqlib.kafka.types import (
    Subscription,
    TopicPartition,
    check_assignment,
    check_in_range,
    check_partitions_per_topic,
    check_subscriptions,
)
from rmqlib.model import utf16_key

CONSUMER = "consumer"

#: UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT: the final balancing passes give up after this many.
MAX_ITERATION_COUNT = 16

#: member -> topic -> partition numbers: what the assignment builders produce
Target = dict[str, dict[str, list[int]]]


def _prepare(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    previous: Mapping[str, Sequence[TopicPartition]] | None,
) -> tuple[dict[str, int], list[str], dict[str, list[str]], dict[str, list[TopicPartition]], bool]:
    ppt = check_partitions_per_topic(partitions_per_topic)
    subs = check_subscriptions(subscriptions)
    prev = check_assignment({} if previous is None else previous, "previous")
    check_in_range(prev, ppt, "previous")
    # GroupSpec.memberIds(): the key set of a HashMap that TargetAssignmentBuilder fills with the current members (a
    # leaving member's records are removed before the target is recomputed: consumerGroupFenceMember)
    members = string_hash_order(subs)
    topics = {m: [t for t in subs[m].topics if t in ppt] for m in members}
    # the group's old target for the members still here, topics that still exist only
    old = {m: [tp for tp in prev.get(m, ()) if tp.topic in ppt] for m in members}
    homogeneous = len({frozenset(ts) for ts in topics.values()}) <= 1
    return ppt, members, topics, old, homogeneous


def _by_topic(tps: Sequence[TopicPartition]) -> dict[str, list[int]]:
    """A member's partitions by topic (topics in name order), each topic's partitions in the order Kafka walks its
    ``Set<Integer>``: a ``new HashSet<>(sortedList)``, whose table has max(n / 0.75 + 1, 16) buckets."""
    grouped: dict[str, list[int]] = {}
    for tp in sorted(tps):
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return {t: hash_order(ps, _int_hash, max(int(len(ps) / 0.75) + 1, 16)) for t, ps in grouped.items()}


def _int_hash(i: int) -> int:
    return i  # Integer.hashCode


def _result(
    members: Iterable[str], assignment: Mapping[str, Mapping[str, Sequence[int]]]
) -> dict[str, list[TopicPartition]]:
    return {
        m: [TopicPartition(t, p) for t in sorted(assignment.get(m, {})) for p in sorted(assignment[m][t])]
        for m in sorted(members, key=utf16_key)
    }


class UniformAssignor:
    """KIP-848's default server assignor: balanced to within one partition, then as sticky as it can be.

    Mirrors: group-coordinator/.../assignor/UniformAssignor.java; identical subscriptions take
    UniformHomogeneousAssignmentBuilder (each member keeps owned partitions up to its quota; extra quota goes to the
    first members in member order), mixed ones UniformHeterogeneousAssignmentBuilder (keep all, fill the least
    loaded, then move partitions from the most to the least loaded subscribers of each topic).
    """

    name = "uniform"
    supported_protocols = (CONSUMER,)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        previous: Mapping[str, Sequence[TopicPartition]] | None = None,
    ) -> dict[str, list[TopicPartition]]:
        ppt, members, topics, old, homogeneous = _prepare(partitions_per_topic, subscriptions, previous)
        if not members:
            return {}
        if homogeneous:
            return _result(members, self._homogeneous(ppt, members, topics, old))
        return _result(members, _Heterogeneous(ppt, members, topics, old).build())

    @staticmethod
    def _homogeneous(
        ppt: dict[str, int], members: list[str], topics: dict[str, list[str]], old: dict[str, list[TopicPartition]]
    ) -> Target:
        subscribed = sorted(topics[members[0]])
        if not subscribed:
            return {}
        owned = {tp for m in members for tp in old[m] if tp.topic in topics[m]}
        unassigned = [(t, p) for t in subscribed for p in range(ppt[t]) if TopicPartition(t, p) not in owned]
        total = sum(ppt[t] for t in subscribed)
        min_quota, extra = divmod(total, len(members))
        target: dict[str, dict[str, list[int]]] = {}
        unfilled: list[tuple[str, int]] = []
        for member in members:  # maybeRevokePartitions
            quota = min_quota
            if extra > 0:
                quota += 1
                extra -= 1
            kept: dict[str, list[int]] = {}
            for topic, partitions in _by_topic(old[member]).items():
                if topic not in topics[member]:
                    continue
                if len(partitions) <= quota:
                    quota -= len(partitions)
                    kept[topic] = partitions
                else:
                    kept[topic] = partitions[:quota]
                    unassigned.extend((topic, p) for p in partitions[quota:])
                    quota = 0
                    if not kept[topic]:
                        del kept[topic]
            if quota > 0:
                unfilled.append((member, quota))
            target[member] = kept
        index = 0
        for member, quota in unfilled:  # assignRemainingPartitions
            for _ in range(quota):
                if index >= len(unassigned):
                    break
                topic, p = unassigned[index]
                index += 1
                target[member].setdefault(topic, []).append(p)
        if index < len(unassigned):
            raise RuntimeError("uniform assignor: partitions were left unassigned")  # a bug, as in Kafka
        return target


class _Heterogeneous:
    """UniformHeterogeneousAssignmentBuilder: members are indices in member order; ``owners[topic][p]`` is the
    member index that owns partition p in the target (-1: unassigned)."""

    def __init__(
        self,
        ppt: dict[str, int],
        members: list[str],
        topics: dict[str, list[str]],
        old: dict[str, list[TopicPartition]],
    ) -> None:
        self.ppt = ppt
        self.members = members
        self.index = {m: i for i, m in enumerate(members)}
        self.member_topics = topics
        self.subscribers: dict[str, list[int]] = {}
        for i, m in enumerate(members):
            for t in topics[m]:
                self.subscribers.setdefault(t, []).append(i)
        self.sizes = [0] * len(members)
        self.owners = {t: [-1] * ppt[t] for t in self.subscribers}
        self.old = old

    def topic_key(self, topic: str) -> tuple[float, int, str]:
        """Partitions per subscriber descending, then subscriber count ascending, then topic (Kafka: topic id)."""
        count, subs = self.ppt[topic], len(self.subscribers[topic])
        return (-count / subs, subs, topic)

    def build(self) -> Target:
        if not self.subscribers:
            return {}
        for i, member in enumerate(self.members):  # maybeRevokePartitions: drop unsubscribed topics, keep the rest
            for tp in self.old[member]:
                if tp.topic in self.subscribers and tp.topic in self.member_topics[member]:
                    self.owners[tp.topic][tp.partition] = i
                    self.sizes[i] += 1
        unassigned = {t: [p for p in range(self.ppt[t]) if owners[p] == -1] for t, owners in self.owners.items()}
        balancer = _Balancer(self.sizes)
        for topic in sorted((t for t, ps in unassigned.items() if ps), key=self.topic_key):
            balancer.initialize(self.subscribers[topic])
            for p in unassigned[topic]:
                self.assign(topic, p, balancer.next_least_loaded())
        movable = [t for t in self.subscribers if len(self.subscribers[t]) >= 2]
        if movable:
            self.balance_topics(sorted(movable, key=self.topic_key))
        target: dict[str, dict[str, list[int]]] = {m: {} for m in self.members}
        for topic, owners in self.owners.items():
            for p, i in enumerate(owners):
                if i >= 0:
                    target[self.members[i]].setdefault(topic, []).append(p)
        return target

    def assign(self, topic: str, p: int, member: int) -> None:
        old = self.owners[topic][p]
        if old != -1:
            self.sizes[old] -= 1
        self.owners[topic][p] = member
        self.sizes[member] += 1

    def balance_topics(self, topics: list[str]) -> None:
        balancer = _Balancer(self.sizes)
        last = -1
        for _ in range(MAX_ITERATION_COUNT):
            for k, topic in enumerate(topics):
                if k == last:
                    return
                moved = self.balance_topic(topic, balancer)
                if moved > 0 or last == -1:
                    last = k

    def balance_topic(self, topic: str, balancer: _Balancer) -> int:
        moved = 0
        owners = self.owners[topic]
        if balancer.initialize(self.subscribers[topic]) <= 1:
            return moved
        partitions = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, p in enumerate(partitions):
            start.setdefault(owners[p], i)
            end[owners[p]] = i + 1
        while not balancer.is_balanced():
            most = -1
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            p = partitions[end[most] - 1]
            end[most] -= 1
            least = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self.assign(topic, p, least)
            moved += 1
        return moved


class _Balancer:
    """UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer: a least-loaded range growing rightwards and
    a most-loaded range growing leftwards over the subscribers sorted by (partitions, member index)."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []

    def initialize(self, members: list[int]) -> int:
        if not members:
            raise ValueError("members: cannot balance an empty subscriber list")
        sizes = self.sizes
        self.sorted = sorted(members, key=lambda i: (sizes[i], i))
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        n = len(self.sorted)
        self.most_start = n
        self.most_end = n
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = n - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.sorted[i], self.sorted[self.most_end - 1] = self.sorted[self.most_end - 1], self.sorted[i]
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1


class ServerRangeAssignor:
    """KIP-848's server-side range assignor: per topic, contiguous ranges over the subscribers in member-id order,
    the first ``partitions % subscribers`` getting one more. At the commit modelled it ignores the previous
    assignment entirely (rewritten without stickiness in KAFKA-16944), so ``previous`` changes nothing.

    Mirrors: group-coordinator/.../assignor/RangeAssignor.java (``assignHomogeneousGroup``,
    ``assignHeterogeneousGroup``, ``sortMemberIds``: static members by instance id first).
    """

    name = "range"
    registry_name = "server-range"
    supported_protocols = (CONSUMER,)

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
        previous: Mapping[str, Sequence[TopicPartition]] | None = None,
    ) -> dict[str, list[TopicPartition]]:
        ppt, members, topics, _old, _homogeneous = _prepare(partitions_per_topic, subscriptions, previous)
        subs = subscriptions

        def key(m: str) -> tuple[int, bytes, bytes]:
            instance = subs[m].group_instance_id
            return (0, utf16_key(instance), b"") if instance is not None else (1, b"", utf16_key(m))

        ordered = sorted(members, key=key)
        counts = {t: sum(1 for m in ordered if t in topics[m]) for t in ppt}
        next_range = dict.fromkeys(ppt, 0)
        quotas = {t: divmod(ppt[t], counts[t]) if counts[t] else (0, 0) for t in ppt}
        extra = {t: quotas[t][1] for t in ppt}
        target: dict[str, dict[str, list[int]]] = {m: {} for m in ordered}
        for member in ordered:
            for topic in topics[member]:
                quota = quotas[topic][0]
                if extra[topic] > 0:
                    quota += 1
                    extra[topic] -= 1
                start = next_range[topic]
                end = min(start + quota, ppt[topic])
                next_range[topic] = end
                if start < end:
                    target[member][topic] = list(range(start, end))
        return _result(ordered, target)

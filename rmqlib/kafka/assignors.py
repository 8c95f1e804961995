"""Kafka's four client-side assignors, the ones a classic consumer group's leader runs.

Each class has Kafka's protocol ``name`` and ``assign(partitions_per_topic, subscriptions)``, the shape of
``AbstractPartitionAssignor.assign(Map<String, Integer>, Map<String, Subscription>)``: partition counts by topic
and each member's subscription in, a list of partitions per member out. That entry point knows no replica racks,
so, as in Kafka, the rack-aware branches never run here.

Where Kafka's result depends on the order a ``java.util.HashMap`` iterates (the sticky assignors keep owned
partitions member by member in that order), the model reproduces it (``rmqlib.kafka._java``).

Mirrors, at the Kafka commit named in ``rmqlib.kafka``:
clients/src/main/java/org/apache/kafka/clients/consumer/RangeAssignor.java,
.../consumer/RoundRobinAssignor.java, .../consumer/StickyAssignor.java (KIP-54),
.../consumer/CooperativeStickyAssignor.java (KIP-429) and
.../consumer/internals/AbstractStickyAssignor.java (both sticky assignors' algorithm).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping

from rmqlib.kafka._java import JavaHashSet, string_hash_order
from rmqlib.kafka.types import (
    Subscription,
    TopicPartition,
    check_in_range,
    check_partitions_per_topic,
    check_subscriptions,
    tp_hash,
)
from rmqlib.model import utf16_key

EAGER = "eager"
COOPERATIVE = "cooperative"

#: ``AbstractStickyAssignor.DEFAULT_GENERATION``: the generation of a member that reports none.
DEFAULT_GENERATION = -1

#: The general (mixed-subscription) sticky algorithm is quadratic and worse; Kafka runs it as it is, this model
#: refuses a call whose members x partitions exceeds this, rather than run for minutes.
MAX_GENERAL_STICKY_WORK = 250_000


def _member_key(member: str, sub: Subscription) -> tuple:
    """``AbstractPartitionAssignor.MemberInfo.compareTo``: static members (by group.instance.id) first, then by id."""
    if sub.group_instance_id is not None:
        return (0, utf16_key(sub.group_instance_id), b"")
    return (1, b"", utf16_key(member))


def _prepare(partitions_per_topic, subscriptions):
    ppt = check_partitions_per_topic(partitions_per_topic)
    subs = check_subscriptions(subscriptions)
    check_in_range({m: s.owned_partitions for m, s in subs.items()}, ppt, "subscriptions owned_partitions")
    return ppt, subs


class RangeAssignor:
    """Per topic, partitions in numeric order split into contiguous ranges over the subscribed members in order;
    the first ``partitions % members`` members get one more.

    Mirrors: clients/.../consumer/RangeAssignor.java (``assignRanges``; the rack-aware pass needs replica racks).

    >>> group = {"C0": Subscription(["t0", "t1"]), "C1": Subscription(["t0", "t1"])}
    >>> {m: [str(tp) for tp in tps] for m, tps in RangeAssignor().assign({"t0": 3, "t1": 3}, group).items()}
    {'C0': ['t0-0', 't0-1', 't1-0', 't1-1'], 'C1': ['t0-2', 't1-2']}
    """

    name = "range"
    supported_protocols = (EAGER,)

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        ppt, subs = _prepare(partitions_per_topic, subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subs, key=utf16_key)}
        order = string_hash_order(subs)
        # partitionsPerTopic is a HashMap in Kafka; its order decides the order of each member's list
        for topic in string_hash_order(t for t, n in ppt.items() if n > 0):
            # a stable sort of the members in HashMap order: equal keys (a shared group.instance.id) keep that order
            members = sorted((m for m in order if topic in subs[m].topics), key=lambda m: _member_key(m, subs[m]))
            if not members:
                continue
            count = ppt[topic]
            quota, extra = divmod(count, len(members))
            start = 0
            for i, member in enumerate(members):
                size = quota + (1 if i < extra else 0)
                assignment[member].extend(TopicPartition(topic, p) for p in range(start, start + size))
                start += size
        return assignment


class RoundRobinAssignor:
    """All partitions (topics in name order) dealt one by one to the members in order, skipping a member not
    subscribed to the partition's topic.

    Mirrors: clients/.../consumer/RoundRobinAssignor.java (``assign``, its ``CircularIterator``).
    """

    name = "roundrobin"
    supported_protocols = (EAGER,)

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        ppt, subs = _prepare(partitions_per_topic, subscriptions)
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subs, key=utf16_key)}
        members = sorted(string_hash_order(subs), key=lambda m: _member_key(m, subs[m]))  # stable, as Utils.sorted
        topic_sets = {m: set(subs[m].topics) for m in members}
        all_topics = sorted({t for s in subs.values() for t in s.topics})  # a TreeSet<String>
        position = 0
        for topic in all_topics:
            count = ppt.get(topic)
            if count is None:
                continue
            for p in range(count):
                while topic not in topic_sets[members[position]]:  # the topic has a subscriber: this ends
                    position = (position + 1) % len(members)
                assignment[members[position]].append(TopicPartition(topic, p))
                position = (position + 1) % len(members)
        return assignment


class _SortedMembers:
    """Kafka's ``TreeSet<String>`` ordered by (partitions assigned, member id): the sort key is taken when a member
    is added, so callers remove a member before its count changes and add it back after, as Kafka does."""

    def __init__(self, sizes: Mapping[str, list]):
        self._sizes = sizes
        self._items: list[tuple[int, bytes, str]] = []
        self._keys: dict[str, tuple[int, bytes, str]] = {}

    def add(self, member: str) -> None:
        if member in self._keys:
            return
        key = (len(self._sizes[member]), utf16_key(member), member)
        self._keys[member] = key
        insort(self._items, key)

    def discard(self, member: str) -> None:
        key = self._keys.pop(member, None)
        if key is not None:
            del self._items[bisect_left(self._items, key)]

    def __iter__(self):
        return iter([k[2] for k in self._items])

    def first(self) -> str:
        return self._items[0][2]

    def last(self) -> str:
        return self._items[-1][2]


class _PartitionMovements:
    """Which partitions moved between which members during one sticky assignment; it prefers moving back a
    partition that already moved the other way. Mirrors ``AbstractStickyAssignor.PartitionMovements``."""

    def __init__(self):
        self.by_topic: dict[str, dict[tuple[str, str], JavaHashSet]] = {}
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        topic_moves = self.by_topic[tp.topic]
        topic_moves[pair].remove(tp)
        if not len(topic_moves[pair]):
            del topic_moves[pair]
        if not topic_moves:
            del self.by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        topic_moves = self.by_topic.setdefault(tp.topic, {})
        if pair not in topic_moves:
            topic_moves[pair] = JavaHashSet(tp_hash)
        topic_moves[pair].add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def actual_partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        topic_moves = self.by_topic.get(tp.topic)
        if topic_moves is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = topic_moves.get((new, old))
        if reverse is None:
            return tp
        return reverse.first()


class _StickyBase:
    """The algorithm both sticky assignors share: keep what each member owns, balance to within one partition.

    Mirrors: clients/.../consumer/internals/AbstractStickyAssignor.java. Identical subscriptions take the
    ``ConstrainedAssignmentBuilder`` path, mixed ones the ``GeneralAssignmentBuilder``. After ``assign``,
    ``partitions_transferring_ownership`` holds what the constrained path recorded (``None`` after the general
    path, as in Kafka) and ``max_generation`` the highest generation seen.
    """

    supported_protocols = (EAGER,)

    def __init__(self):
        self.max_generation = DEFAULT_GENERATION
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        ppt, subs = _prepare(partitions_per_topic, subscriptions)
        # as AbstractPartitionAssignor.assign(Cluster, ...) does: only subscribed topics that have partitions
        subscribed = {t for s in subs.values() for t in s.topics}
        ppt = {t: n for t, n in ppt.items() if n > 0 and t in subscribed}
        if not subs:
            return {}
        self.max_generation = DEFAULT_GENERATION
        order = string_hash_order(subs)  # the order Kafka's HashMap<String, Subscription> iterates
        owned, multi, all_equal = self._owned_partitions(ppt, subs, order)
        if all_equal:
            self.partitions_transferring_ownership = {}
            result = self._constrained(ppt, owned, multi, order)
        else:
            self.partitions_transferring_ownership = None
            total = sum(ppt.values())
            if len(subs) * max(total, 1) > MAX_GENERAL_STICKY_WORK:
                raise ValueError(
                    f"subscriptions: the general sticky algorithm (members with different topics) is "
                    f"limited to members x partitions <= {MAX_GENERAL_STICKY_WORK} in this model, "
                    f"got {len(subs)} x {total}"
                )
            result = _GeneralBuilder(ppt, subs, owned, order, self.max_generation).build()
        return {m: result[m] for m in sorted(result, key=utf16_key)}

    def _owned_partitions(self, ppt, subs, order):
        """``allSubscriptionsEqual``: each member's still-valid owned partitions, with conflicting claims settled
        by generation (a higher generation wins; two claims in the same generation both lose the partition). The
        generation is KIP-341's addition to the sticky user data: it lets the leader tell a zombie's stale claim
        from the current owner's."""
        all_equal = True
        subscribed: set[str] | None = None
        owned: dict[str, list[TopicPartition]] = {}
        claimed_by: dict[TopicPartition, str] = {}
        multi: set[TopicPartition] = set()
        for member in order:
            sub = subs[member]
            if subscribed is None:
                subscribed = set(sub.topics)
            elif all_equal and set(sub.topics) != subscribed:
                all_equal = False
            generation = DEFAULT_GENERATION if sub.generation is None else sub.generation
            self.max_generation = max(self.max_generation, generation)
            mine: list[TopicPartition] = []
            owned[member] = mine
            for tp in sub.owned_partitions:
                if tp.topic not in ppt:
                    continue
                other = claimed_by.get(tp)
                if other is None:
                    mine.append(tp)
                    claimed_by[tp] = member
                    continue
                other_gen = subs[other].generation
                other_gen = DEFAULT_GENERATION if other_gen is None else other_gen
                if generation == other_gen:
                    multi.add(tp)
                    if tp in owned[other]:
                        owned[other].remove(tp)
                    claimed_by[tp] = member
                elif generation > other_gen:
                    mine.append(tp)
                    if tp in owned[other]:
                        owned[other].remove(tp)
                    claimed_by[tp] = member
        return owned, multi, all_equal

    def _constrained(self, ppt, owned, multi, order):
        """``ConstrainedAssignmentBuilder.build`` without racks: keep up to quota of the owned partitions (member by
        member, in HashMap order), then deal the rest round-robin to members under quota."""
        transferring = self.partitions_transferring_ownership
        total = sum(ppt.values())
        n = len(order)
        min_quota, max_quota = total // n, -(-total // n)
        expected_over = total % n
        current_over = 0
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in order}
        assigned: set[TopicPartition] = set()
        maybe_revoked: dict[TopicPartition, str] = {}
        under: list[str] = []  # unfilledMembersWithUnderMinQuotaPartitions
        exactly: list[str] = []  # unfilledMembersWithExactlyMinQuotaPartitions
        for member in order:
            mine = sorted(owned[member], key=lambda tp: (tp.partition, tp.topic))
            mine = [tp for tp in mine if tp not in multi]
            if len(mine) < min_quota:
                assignment[member].extend(mine)
                assigned.update(mine)
                under.append(member)
            elif len(mine) >= max_quota and current_over < expected_over:
                current_over += 1
                if current_over == expected_over:
                    exactly.clear()
                assignment[member].extend(mine[:max_quota])
                assigned.update(mine[:max_quota])
                for tp in mine[max_quota:]:
                    maybe_revoked[tp] = member
            else:
                assignment[member].extend(mine[:min_quota])
                assigned.update(mine[:min_quota])
                for tp in mine[min_quota:]:
                    maybe_revoked[tp] = member
                if current_over < expected_over:
                    exactly.append(member)
        unassigned = (
            [TopicPartition(t, p) for t in sorted(ppt) for p in range(ppt[t]) if TopicPartition(t, p) not in assigned]
            if assigned
            else [TopicPartition(t, p) for t in sorted(ppt) for p in range(ppt[t])]
        )
        under.sort(key=utf16_key)
        exactly.sort(key=utf16_key)

        def assign_new(tp: TopicPartition, member: str) -> int:
            assignment[member].append(tp)
            if (tp in maybe_revoked and maybe_revoked[tp] != member) or tp in multi:
                transferring[tp] = member
            return len(assignment[member])

        # assignRoundRobin: an iterator over `under` that restarts at its head when it runs out
        position = 0
        for tp in unassigned:
            if position < len(under):
                member = under[position]
                position += 1
                from_under = True
            elif not under and not exactly:
                raise RuntimeError("sticky assignor: no more unfilled consumers to be assigned")  # a bug, as in Kafka
            elif not under:
                member = exactly.pop(0)
                from_under = False
            else:
                position = 0
                member = under[0]
                position = 1
                from_under = True
            count = assign_new(tp, member)
            if count == min_quota:
                assert from_under
                position -= 1
                del under[position]
                exactly.append(member)
            elif count == max_quota:
                current_over += 1
        # verifyUnfilledMembers
        if under:
            if current_over != expected_over:
                raise RuntimeError("sticky assignor: fewer members over minQuota than expected")
            for member in under:
                if len(assignment[member]) != min_quota:
                    raise RuntimeError(f"sticky assignor: {member} did not reach minQuota")
        return assignment


class _GeneralBuilder:
    """``AbstractStickyAssignor.GeneralAssignmentBuilder`` without racks: keep valid owned partitions, give each
    unassigned partition to the least loaded member that may take it, then move partitions from members with 2+
    more than another eligible member until balanced, undoing the moves if they did not improve the balance."""

    def __init__(self, ppt, subs, owned, order, max_generation):
        self.ppt = ppt
        self.subs = subs
        self.order = order
        self.max_generation = max_generation
        self.total = sum(ppt.values())
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        self.consumer_topics: dict[str, list[str]] = {}
        self.current: dict[str, list[TopicPartition]] = {m: list(owned[m]) for m in order}
        for member in order:
            topics = [t for t in subs[member].topics if t in ppt]
            self.consumer_topics[member] = topics
            for t in topics:
                self.topic_consumers[t].append(member)
        self.partition_owner: dict[TopicPartition, str] = {tp: m for m, tps in self.current.items() for tp in tps}
        sorted_topics = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), t))
        self.sorted_all = [TopicPartition(t, p) for t in sorted_topics for p in range(ppt[t])]
        self.sorted_members = _SortedMembers(self.current)
        self.movements = _PartitionMovements()
        self.revocation_required = False

    def max_size(self, member: str) -> int:
        topics = self.consumer_topics[member]
        if len(topics) == len(self.ppt):
            return self.total
        return sum(self.ppt[t] for t in topics)

    def build(self):
        prev = self._previous_assignment()
        assigned = self._keep_owned()
        assigned_set = set(assigned)
        unassigned = [tp for tp in self.sorted_all if tp not in assigned_set]
        for member in self.order:
            self.sorted_members.add(member)
        self._balance(prev, unassigned)
        return self.current

    def _previous_assignment(self) -> dict[TopicPartition, tuple[str, int]]:
        """``prepopulateCurrentAssignments``: for members of an older generation, what they claim, newest first."""
        prev: dict[TopicPartition, tuple[str, int]] = {}
        for member in self.order:
            sub = self.subs[member]
            if sub.generation is not None and sub.generation < self.max_generation:
                generation = sub.generation
            elif sub.generation is None and self.max_generation > DEFAULT_GENERATION:
                generation = DEFAULT_GENERATION
            else:
                continue
            for tp in sub.owned_partitions:
                if tp not in prev or generation > prev[tp][1]:
                    prev[tp] = (member, generation)
        return prev

    def _keep_owned(self) -> list[TopicPartition]:
        assigned = []
        for member, tps in self.current.items():
            topics = set(self.subs[member].topics)
            kept = []
            for tp in tps:
                if tp.topic not in self.topic_consumers:
                    self.partition_owner.pop(tp, None)
                elif tp.topic not in topics:
                    self.revocation_required = True  # still in partition_owner, as in Kafka
                else:
                    kept.append(tp)
                    assigned.append(tp)
            tps[:] = kept
        return assigned

    def _assign_to_least_loaded(self, tp: TopicPartition) -> None:
        for member in self.sorted_members:
            if tp.topic in self.consumer_topics[member]:
                self.sorted_members.discard(member)
                self.current[member].append(tp)
                self.partition_owner[tp] = member
                self.sorted_members.add(member)
                return

    def _topic_can_move(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _member_can_move(self, member: str) -> bool:
        tps = self.current[member]
        if len(tps) < self.max_size(member):
            return True
        return any(self._topic_can_move(tp.topic) for tp in tps)

    def _balance_score(self) -> int:
        sizes = [len(v) for v in self.current.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _is_balanced(self) -> bool:
        current = self.current
        if len(current[self.sorted_members.first()]) >= len(current[self.sorted_members.last()]) - 1:
            return True
        owner = {tp: m for m, tps in current.items() for tp in tps}
        for member in self.sorted_members:
            count = len(current[member])
            if count == self.max_size(member):
                continue
            mine = set(current[member])
            for topic in self.consumer_topics[member]:
                for p in range(self.ppt[topic]):
                    tp = TopicPartition(topic, p)
                    if tp not in mine:
                        other = owner.get(tp)
                        if other is not None and count + 1 < len(current[other]):
                            return False
        return True

    def _balance(self, prev, unassigned: list[TopicPartition]) -> None:
        initializing = not self.current[self.sorted_members.last()]
        for tp in unassigned:
            if self.topic_consumers[tp.topic]:
                self._assign_to_least_loaded(tp)
        fixed_partitions = {
            TopicPartition(t, p)
            for t in self.topic_consumers
            if not self._topic_can_move(t)
            for p in range(self.ppt[t])
        }
        self.sorted_all = [tp for tp in self.sorted_all if tp not in fixed_partitions]
        unassigned = [tp for tp in unassigned if tp not in fixed_partitions]
        fixed_assignments: dict[str, list[TopicPartition]] = {}
        for member in list(self.consumer_topics):
            if not self._member_can_move(member):
                self.sorted_members.discard(member)
                fixed_assignments[member] = self.current.pop(member)
        pre_balance = {m: list(tps) for m, tps in self.current.items()}
        pre_owner = dict(self.partition_owner)
        if not self.revocation_required:
            self._reassign(unassigned, prev)
        performed = self._reassign(self.sorted_all, prev)
        if not initializing and performed and self._balance_score() >= self._score_of(pre_balance):
            self.current.clear()
            self.current.update({m: list(tps) for m, tps in pre_balance.items()})
            self.partition_owner = pre_owner
        for member, tps in fixed_assignments.items():
            self.current[member] = tps

    @staticmethod
    def _score_of(assignment) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _reassign(self, partitions: list[TopicPartition], prev) -> bool:
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.partition_owner.get(tp)
                if member is None or member not in self.current:
                    continue  # Kafka logs an error here
                if (
                    tp in prev
                    and prev[tp][0] in self.current
                    and len(self.current[member]) > len(self.current[prev[tp][0]]) + 1
                ):
                    self._move(tp, prev[tp][0])
                    performed = modified = True
                    continue
                for other in self.topic_consumers[tp.topic]:
                    if other in self.current and len(self.current[member]) > len(self.current[other]) + 1:
                        self._move_to_least_loaded(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def _move_to_least_loaded(self, tp: TopicPartition) -> None:
        for member in self.sorted_members:
            if tp.topic in self.consumer_topics[member]:
                self._move(tp, member)
                return

    def _move(self, tp: TopicPartition, new: str) -> None:
        old = self.partition_owner[tp]
        actual = self.movements.actual_partition_to_move(tp, old, new)
        old = self.partition_owner[actual]
        self.sorted_members.discard(old)
        self.sorted_members.discard(new)
        self.movements.move(actual, old, new)
        self.current[old].remove(actual)
        self.current[new].append(actual)
        self.partition_owner[actual] = new
        self.sorted_members.add(new)
        self.sorted_members.add(old)


class StickyAssignor(_StickyBase):
    """KIP-54's sticky assignor: as balanced as possible (counts within one, or no movable partition left), and
    within that keeps as many previous assignments as it can. Eager: members revoke everything before joining, so
    the previous assignment travels in the subscription's user data (here ``owned_partitions`` and ``generation``;
    the generation since KIP-341).

    Mirrors: clients/.../consumer/StickyAssignor.java over internals/AbstractStickyAssignor.java.
    """

    name = "sticky"
    supported_protocols = (EAGER,)


class CooperativeStickyAssignor(_StickyBase):
    """KIP-429's cooperative sticky assignor: the sticky assignment, minus every partition that moves to a new
    owner while its previous owner still holds it. Those are handed out in the follow-up rebalance, after the
    previous owner has revoked them (the protocol is modelled in ``rmqlib.kafka.protocol``).

    Mirrors: clients/.../consumer/CooperativeStickyAssignor.java (``assignPartitions``, ``adjustAssignment``,
    ``computePartitionsTransferringOwnership``).
    """

    name = "cooperative-sticky"
    supported_protocols = (COOPERATIVE, EAGER)

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        result = super().assign(partitions_per_topic, subscriptions)
        transferring = self.partitions_transferring_ownership
        if transferring is None:
            transferring = self._compute_transferring(subscriptions, result)
        for tp, member in transferring.items():
            if tp in result[member]:
                result[member].remove(tp)
        self.partitions_transferring_ownership = transferring
        return result

    @staticmethod
    def _compute_transferring(subscriptions, result) -> dict[TopicPartition, str]:
        added: dict[TopicPartition, str] = {}
        revoked: set[TopicPartition] = set()
        for member, tps in result.items():
            owned = set(subscriptions[member].owned_partitions)
            mine = set(tps)
            added.update((tp, member) for tp in tps if tp not in owned)
            revoked.update(tp for tp in subscriptions[member].owned_partitions if tp not in mine)
        return {tp: m for tp, m in added.items() if tp in revoked}

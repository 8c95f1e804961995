"""One membership change played through Kafka's three rebalance protocols, as a deterministic event model.

Our model of Kafka's behaviour, for comparison with RocketMQ's; not Kafka, and not its code.

``membership_change`` takes a stable group, changes it once (a member joins, leaves gracefully, or crashes and is
expired after the session timeout), and returns for every partition how long nobody fetched it (its pause), which
partitions moved, how many rebalance rounds it took, which partitions were revoked only to be handed back to the
same member, and how many messages the new owners see twice.

The protocols, as modelled:

* ``EAGER`` (classic group protocol, ``ConsumerCoordinator`` with range/roundrobin/sticky): when a member learns of
  the rebalance (its next heartbeat, then its next ``poll()``), it revokes *all* its partitions, committing their
  offsets, and sends JoinGroup; once every member has joined, the leader assigns and SyncGroup hands the
  assignment out. Every partition pauses, even those that come back to the same member.
* ``COOPERATIVE`` (KIP-429, ``CooperativeStickyAssignor``): members rejoin *without* revoking; the assignment leaves
  out partitions that change owner; each owner revokes only those and rejoins at once, which triggers a second
  rebalance that hands them out. Partitions that stay never pause.
* ``CONSUMER`` (KIP-848, the broker-side protocol): the coordinator computes a target assignment when it learns
  of the change; each member reconciles on its own heartbeats. A member told to give up a partition revokes it,
  commits, and acknowledges at once; the new owner receives it in the reply to its first heartbeat after that
  (a member that itself has partitions to give up receives nothing new before it has acknowledged).

Time 0 is the change. The coordinator learns of it at once for a join, after the leaving member has committed for
a graceful leave, and a session timeout after the crash for a crash (we take the crash just after a heartbeat).
Members learn of a classic rebalance at their next heartbeat; their heartbeats are spread evenly over one
interval (member k of n, in member-id order, hears at ``k/n`` of the interval). A new owner may fetch a partition
one offset fetch (``rpc_ms``) after it receives it. Duplicates: an auto-committing consumer that crashes loses the
offsets processed since its last commit, on average half an ``auto.commit.interval.ms`` of messages per partition;
a member that gives partitions up on purpose commits first, so a graceful change redelivers nothing.

Simplified: no network loss, no slow members beyond ``poll_delay_ms``, one rebalance at a time, assignment itself
takes no time, and the joining member's first heartbeat phase is the change itself. ``settled_assignment`` gives
the end state alone, without timings. ``rmqlib.sim.kafka_group`` plays the same semantics with simulated members,
heartbeats, auto-commits and traffic (its tests hold the two to the same moved and paused partitions).

Mirrors (at the commit in ``rmqlib.kafka.KAFKA_COMMIT``): clients/.../consumer/internals/ConsumerCoordinator.java
(``onJoinPrepare``, ``onJoinComplete``: eager and cooperative revocation), ConsumerPartitionAssignor.RebalanceProtocol
(KIP-429), clients/.../consumer/internals/ConsumerMembershipManager.java and group-coordinator/.../modern/consumer/
CurrentAssignmentBuilder.java (KIP-848 reconciliation).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rmqlib.checks import ArgumentTypeError, check_int, check_number
from rmqlib.kafka.assignors import CooperativeStickyAssignor, RangeAssignor, RoundRobinAssignor, StickyAssignor
from rmqlib.kafka.server import ServerRangeAssignor, UniformAssignor
from rmqlib.kafka.types import (
    MAX_MEMBERS,
    Subscription,
    TopicPartition,
    check_assignment,
    check_member_id,
    check_partitions_per_topic,
    check_topic,
)
from rmqlib.model import utf16_key

#: Cooperative rebalances that still move partitions after this many rounds are reported as an error.
MAX_COOPERATIVE_ROUNDS = 10

_REGISTRY = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "uniform": UniformAssignor,
    "server-range": ServerRangeAssignor,
}


class RebalanceProtocol(enum.Enum):
    """The three ways a Kafka group moves partitions.

    Mirrors: ``ConsumerPartitionAssignor.RebalanceProtocol`` (EAGER, COOPERATIVE; KIP-429) and
    ``GroupProtocol.CONSUMER`` (KIP-848's ``group.protocol=consumer``).
    """

    EAGER = "eager"
    COOPERATIVE = "cooperative"
    CONSUMER = "consumer"


@dataclass(frozen=True)
class ProtocolTimings:
    """The durations that decide a pause, with Kafka's defaults where Kafka has one.

    Kafka defaults (ConsumerConfig.java, GroupCoordinatorConfig.java at the modelled commit):
    ``session_timeout_ms`` = session.timeout.ms (45 s), ``heartbeat_interval_ms`` = heartbeat.interval.ms (3 s),
    ``max_poll_interval_ms`` = max.poll.interval.ms (5 min, the classic rebalance timeout),
    ``consumer_session_timeout_ms`` = group.consumer.session.timeout.ms (45 s),
    ``consumer_heartbeat_interval_ms`` = group.consumer.heartbeat.interval.ms (5 s),
    ``auto_commit_interval_ms`` = auto.commit.interval.ms (5 s).
    Model parameters (no Kafka setting): ``rpc_ms``, one request and its response to the coordinator (JoinGroup,
    SyncGroup, Heartbeat, OffsetFetch); ``commit_on_revoke_ms``, the synchronous commit a member makes before giving
    partitions up; ``poll_delay_ms``, how long a member takes to get back to ``poll()`` (finishing the records in
    hand) after it learns of a classic rebalance; ``messages_per_s``, the rate each partition receives.
    """

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000
    consumer_session_timeout_ms: int = 45_000
    consumer_heartbeat_interval_ms: int = 5_000
    auto_commit_interval_ms: int = 5_000
    rpc_ms: float = 5.0
    commit_on_revoke_ms: float = 10.0
    poll_delay_ms: float = 0.0
    messages_per_s: float = 100.0

    def __post_init__(self):
        day = 86_400_000
        for name in (
            "session_timeout_ms",
            "heartbeat_interval_ms",
            "max_poll_interval_ms",
            "consumer_session_timeout_ms",
            "consumer_heartbeat_interval_ms",
            "auto_commit_interval_ms",
        ):
            check_int(getattr(self, name), name, 1, day)
        for name in ("rpc_ms", "commit_on_revoke_ms", "poll_delay_ms"):
            check_number(getattr(self, name), name, 0, day)
        check_number(self.messages_per_s, "messages_per_s", 0, 1e9)
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(
                f"heartbeat_interval_ms must be below session_timeout_ms "
                f"({self.heartbeat_interval_ms} >= {self.session_timeout_ms}), as Kafka requires"
            )
        if self.poll_delay_ms >= self.max_poll_interval_ms:
            raise ValueError(
                f"poll_delay_ms must be below max_poll_interval_ms ({self.poll_delay_ms} >= "
                f"{self.max_poll_interval_ms}): a member that slow is removed from the group"
            )


@dataclass(frozen=True)
class ChangeOutcome:
    """What one membership change cost, partition by partition.

    ``unavailable_ms[tp]``: how long nobody fetched ``tp`` (0 if it never paused); ``ready_at_ms[tp]``: for a
    paused partition, the time after the change at which its new owner may fetch it. ``moved``: partitions whose
    owner differs between ``before`` and ``after``. ``revoked_and_returned``: partitions revoked and handed back to
    the same member (eager's needless pauses). ``duplicates[tp]``: expected messages the new owner processes a
    second time. ``rounds``: rebalance rounds (JoinGroup/SyncGroup pairs; 1 for KIP-848's single target epoch).
    ``detection_ms``: when the coordinator learned of the change.
    """

    protocol: RebalanceProtocol
    assignor: str
    kind: str
    before: dict[str, list[TopicPartition]]
    after: dict[str, list[TopicPartition]]
    moved: tuple[TopicPartition, ...]
    revoked_and_returned: tuple[TopicPartition, ...]
    unavailable_ms: dict[TopicPartition, float]
    ready_at_ms: dict[TopicPartition, float]
    duplicates: dict[TopicPartition, float]
    rounds: int
    detection_ms: float
    backlog: dict[TopicPartition, float] = field(default_factory=dict)

    @property
    def max_pause_ms(self) -> float:
        return max(self.unavailable_ms.values(), default=0.0)

    @property
    def paused(self) -> int:
        """How many partitions paused at all."""
        return sum(1 for v in self.unavailable_ms.values() if v > 0)

    @property
    def total_pause_ms(self) -> float:
        """Partition-milliseconds without a consumer."""
        return sum(self.unavailable_ms.values())

    @property
    def total_duplicates(self) -> float:
        return sum(self.duplicates.values())

    @property
    def settled_ms(self) -> float:
        """When the last paused partition could be fetched again (0 if none paused)."""
        return max(self.ready_at_ms.values(), default=0.0)

    def summary(self) -> dict[str, object]:
        """The headline numbers, one flat dict (a table row)."""
        return {
            "protocol": self.protocol.value,
            "assignor": self.assignor,
            "change": self.kind,
            "moved": len(self.moved),
            "revoked_and_returned": len(self.revoked_and_returned),
            "paused": self.paused,
            "max_pause_ms": self.max_pause_ms,
            "total_pause_ms": self.total_pause_ms,
            "settled_ms": self.settled_ms,
            "duplicates": self.total_duplicates,
            "rounds": self.rounds,
        }


def _members(value, name: str, topics: list[str]) -> dict[str, tuple[str, ...]]:
    """member -> its topics, from a sequence of ids (each subscribes to every topic) or a mapping id -> topics."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(
            f"{name} must be a sequence of member ids or a mapping member id -> topics, got {value!r}"
        )
    out: dict[str, tuple[str, ...]] = {}
    if callable(getattr(value, "items", None)):
        for member, member_topics in value.items():
            check_member_id(member, f"{name} key")
            if isinstance(member_topics, (str, bytes)) or not hasattr(member_topics, "__iter__"):
                raise ArgumentTypeError(f"{name}[{member!r}] must be a sequence of topics, got {member_topics!r}")
            out[member] = tuple(check_topic(t, f"{name}[{member!r}] topic") for t in member_topics)
            if len(out) > MAX_MEMBERS:
                break
    else:
        for i, member in enumerate(value):
            check_member_id(member, f"{name}[{i}]")
            if member in out:
                raise ValueError(f"{name} must not repeat a member, got {member!r} twice")
            out[member] = tuple(topics)
            if len(out) > MAX_MEMBERS:
                break
    if len(out) > MAX_MEMBERS:
        raise ValueError(f"{name} must hold at most {MAX_MEMBERS} members")
    return out


def _resolve_assignor(assignor: Any) -> Any:
    if isinstance(assignor, str):
        if assignor not in _REGISTRY:
            raise ValueError(f"assignor must be one of {sorted(_REGISTRY)} or an assignor object, got {assignor!r}")
        return _REGISTRY[assignor]()
    if not callable(getattr(assignor, "assign", None)) or not isinstance(getattr(assignor, "name", None), str):
        raise ArgumentTypeError(
            f"assignor must be an assignor name or an object with name and assign(), got {assignor!r}"
        )
    return assignor


def _stagger(start: float, interval: float, members: Sequence[str]) -> dict[str, float]:
    """Heartbeats spread over one interval: member k of n (in member-id order) first hears at start + k/n."""
    ordered = sorted(members, key=utf16_key)
    n = len(ordered)
    return {m: start + interval * (k + 1) / n for k, m in enumerate(ordered)}


def _owner_map(assignment: Mapping[str, Sequence[TopicPartition]]) -> dict[TopicPartition, str]:
    return {tp: m for m, tps in assignment.items() for tp in tps}


def _protocol_of(protocol: RebalanceProtocol | str) -> RebalanceProtocol:
    """``protocol`` as a RebalanceProtocol, from a member or its name; a clear error otherwise."""
    if isinstance(protocol, str) and not isinstance(protocol, RebalanceProtocol):
        try:
            return RebalanceProtocol(protocol)
        except ValueError:
            raise ValueError(
                f"protocol must be one of {[p.value for p in RebalanceProtocol]}, got {protocol!r}"
            ) from None
    if not isinstance(protocol, RebalanceProtocol):
        raise ArgumentTypeError(f"protocol must be a RebalanceProtocol, got {protocol!r}")
    return protocol


def membership_change(
    protocol,
    assignor,
    partitions_per_topic: Mapping[str, int],
    before_members,
    after_members,
    *,
    timings: ProtocolTimings | None = None,
    departure: str = "graceful",
) -> ChangeOutcome:
    """Play one membership change through ``protocol`` with ``assignor`` and report what each partition paid.

    ``before_members``/``after_members``: member ids (each subscribes to every topic of ``partitions_per_topic``)
    or a mapping member id -> topics. ``after_members`` adds members to ``before_members`` (a join) or removes some
    (a leave: ``departure`` is ``"graceful"`` or ``"crash"``). ``assignor`` is a name in ``rmqlib.kafka.ASSIGNORS``
    or an assignor object; it must support ``protocol`` (range, roundrobin and sticky are eager only,
    cooperative-sticky both classic protocols, uniform and server-range KIP-848's only).

    A fourth consumer joins three that share twelve partitions:

    >>> eager = membership_change("eager", "sticky", {"orders": 12}, ["a", "b", "c"], ["a", "b", "c", "d"])
    >>> len(eager.moved), eager.paused, len(eager.revoked_and_returned), eager.rounds
    (3, 12, 9, 1)
    >>> coop = membership_change("cooperative", "cooperative-sticky", {"orders": 12}, ["a", "b", "c"],
    ...                          ["a", "b", "c", "d"])
    >>> len(coop.moved), coop.paused, coop.rounds
    (3, 3, 2)
    """
    protocol = _protocol_of(protocol)
    assignor = _resolve_assignor(assignor)
    supported = tuple(getattr(assignor, "supported_protocols", ()))
    if protocol.value not in supported:
        raise ValueError(
            f"assignor {assignor.name!r} does not support the {protocol.value} protocol (it supports {list(supported)})"
        )
    timings = ProtocolTimings() if timings is None else timings
    if not isinstance(timings, ProtocolTimings):
        raise ArgumentTypeError(f"timings must be a ProtocolTimings, got {timings!r}")
    if departure not in ("graceful", "crash"):
        raise ValueError(f"departure must be 'graceful' or 'crash', got {departure!r}")
    ppt = check_partitions_per_topic(partitions_per_topic)
    before = _members(before_members, "before_members", list(ppt))
    after = _members(after_members, "after_members", list(ppt))
    joined = [m for m in after if m not in before]
    left = [m for m in before if m not in after]
    if joined and left:
        raise ValueError("after_members must add members to before_members or remove some, not both")
    for m in after:
        if m in before and set(before[m]) != set(after[m]):
            raise ValueError(f"after_members[{m!r}] changes the member's topics; only membership changes are modelled")
    if not before:
        raise ValueError("before_members must hold at least one member (a stable group to change)")
    if not after:
        raise ValueError("after_members must hold at least one member (someone to take the partitions)")
    kind = "join" if joined else ("crash" if departure == "crash" else "leave") if left else "none"
    for topic, count in ppt.items():
        if count and any(topic in ts for ts in before.values()) and not any(topic in ts for ts in after.values()):
            raise ValueError(
                f"after_members leaves topic {topic!r} without a subscriber: its partitions would "
                f"never be fetched again"
            )

    if kind == "none":
        return _no_change(protocol, assignor, ppt, before, timings)
    play = {
        RebalanceProtocol.EAGER: _eager,
        RebalanceProtocol.COOPERATIVE: _cooperative,
        RebalanceProtocol.CONSUMER: _consumer,
    }[protocol]
    result = play(assignor, ppt, before, after, joined, left, kind, timings)
    old, new, stop, ready, rounds, detection = result
    old_owner, new_owner = _owner_map(old), _owner_map(new)
    all_tps = sorted(set(old_owner) | set(new_owner))
    unavailable = {tp: (ready[tp] - stop[tp]) if tp in ready else 0.0 for tp in all_tps}
    rate = timings.messages_per_s / 1000.0
    duplicates = {
        tp: (rate * timings.auto_commit_interval_ms / 2 if kind == "crash" and old_owner.get(tp) in left else 0.0)
        for tp in all_tps
    }
    return ChangeOutcome(
        protocol=protocol,
        assignor=assignor.name,
        kind=kind,
        before=old,
        after=new,
        moved=tuple(tp for tp in all_tps if old_owner.get(tp) != new_owner.get(tp)),
        revoked_and_returned=tuple(tp for tp in all_tps if tp in ready and old_owner.get(tp) == new_owner.get(tp)),
        unavailable_ms=unavailable,
        ready_at_ms={tp: ready[tp] for tp in all_tps if tp in ready},
        duplicates=duplicates,
        rounds=rounds,
        detection_ms=detection,
        backlog={tp: rate * unavailable[tp] for tp in all_tps},
    )


def _no_change(protocol, assignor, ppt, before, t):
    if protocol is RebalanceProtocol.CONSUMER:
        old = assignor.assign(ppt, {m: Subscription(topics) for m, topics in before.items()})
    else:
        old = _stable(assignor, ppt, before)
    tps = sorted(_owner_map(old))
    zero = dict.fromkeys(tps, 0.0)
    return ChangeOutcome(
        protocol=protocol,
        assignor=assignor.name,
        kind="none",
        before=old,
        after={m: list(v) for m, v in old.items()},
        moved=(),
        revoked_and_returned=(),
        unavailable_ms=zero,
        ready_at_ms={},
        duplicates=dict(zero),
        rounds=0,
        detection_ms=0.0,
        backlog=dict(zero),
    )


def settled_assignment(
    assignor,
    partitions_per_topic: Mapping[str, int],
    members,
    previous: Mapping[str, Sequence[TopicPartition]] | None = None,
    *,
    protocol: RebalanceProtocol | str | None = None,
) -> dict[str, list[TopicPartition]]:
    """The assignment a group ends with once a rebalance from ``previous`` has finished.

    ``members``: member ids (each on every topic) or a mapping member id -> topics; ``previous``: member -> the
    partitions it owned (``None``: a new group). ``protocol`` defaults to the assignor's first supported protocol
    (cooperative for cooperative-sticky). What the assignor sees follows the protocol: eager members own nothing when
    they join (only ``StickyAssignor`` carries its previous assignment, in its user data); cooperative rounds repeat
    until nothing is held back; KIP-848's assignors get ``previous`` as the group's current target.

    >>> before = settled_assignment("cooperative-sticky", {"t": 6}, ["a", "b"])
    >>> after = settled_assignment("cooperative-sticky", {"t": 6}, ["a", "b", "c"], before)
    >>> sorted(len(v) for v in after.values()), all(set(after[m]) <= set(before[m]) for m in "ab")
    ([2, 2, 2], True)
    """
    assignor = _resolve_assignor(assignor)
    supported = tuple(getattr(assignor, "supported_protocols", ()))
    if protocol is None:
        protocol = RebalanceProtocol(supported[0]) if supported else RebalanceProtocol.EAGER
    else:
        protocol = _protocol_of(protocol)
    if protocol.value not in supported:
        raise ValueError(
            f"assignor {assignor.name!r} does not support the {protocol.value} protocol (it supports {list(supported)})"
        )
    ppt = check_partitions_per_topic(partitions_per_topic)
    group = _members(members, "members", list(ppt))
    owned = check_assignment({} if previous is None else previous, "previous")
    if protocol is RebalanceProtocol.CONSUMER:
        return assignor.assign(ppt, {m: Subscription(topics) for m, topics in group.items()}, owned)
    if protocol is RebalanceProtocol.EAGER:
        carried = owned if isinstance(assignor, StickyAssignor) else {}
        return assignor.assign(ppt, _classic_subs(group, carried, 1 if previous is not None else -1))
    return _settle_cooperative(assignor, ppt, group, owned)


def _detection(kind: str, t: ProtocolTimings, consumer: bool) -> float:
    if kind == "crash":
        return float(t.consumer_session_timeout_ms if consumer else t.session_timeout_ms)
    if kind == "leave":
        return float(t.commit_on_revoke_ms)  # the leaving member commits, then sends LeaveGroup
    return 0.0


def _classic_subs(members, assignment, generation):
    return {
        m: Subscription(topics, owned_partitions=tuple(assignment.get(m, ())), generation=generation)
        for m, topics in members.items()
    }


def _stable(assignor, ppt, before):
    """The group before the change: the assignment a first rebalance gives, as every member then owns it."""
    return assignor.assign(ppt, {m: Subscription(topics, generation=-1) for m, topics in before.items()})


def _eager(assignor, ppt, before, after, joined, left, kind, t):
    old = _stable(assignor, ppt, before)
    detection = _detection(kind, t, consumer=False)
    stayers = [m for m in after if m in before]
    notice = _stagger(detection, t.heartbeat_interval_ms, stayers) if stayers else {}
    stop: dict[TopicPartition, float] = {}
    joins = [0.0 for _ in joined]
    for m, tps in old.items():
        if m in left:
            for tp in tps:
                stop[tp] = 0.0
        else:
            revoke_at = notice[m] + t.poll_delay_ms  # onJoinPrepare: revoke everything, commit, then JoinGroup
            for tp in tps:
                stop[tp] = revoke_at
            joins.append(revoke_at + t.commit_on_revoke_ms)
    for m in stayers:
        if not old.get(m):
            joins.append(notice[m] + t.poll_delay_ms)
    join_done = max(joins, default=detection) + t.rpc_ms
    sync_done = join_done + t.rpc_ms
    # An eager member has revoked everything before it joins, so its subscription owns nothing; only the
    # StickyAssignor carries the previous assignment along, in its user data (StickyAssignor.memberData).
    carried = old if isinstance(assignor, StickyAssignor) else {}
    new = assignor.assign(ppt, _classic_subs(after, carried, 1))
    ready = {tp: sync_done + t.rpc_ms for tps in new.values() for tp in tps}
    stop.update({tp: detection for tp in ready if tp not in stop})  # a partition nobody owned before
    return old, new, stop, ready, 1, detection


def _settle_cooperative(assignor, ppt, members, assignment):
    """Run cooperative rounds from ``assignment`` until nothing is held back (a fresh group needs none)."""
    for generation in range(1, MAX_COOPERATIVE_ROUNDS + 1):
        subs = _classic_subs(members, assignment, generation)
        nxt = assignor.assign(ppt, subs)
        if {m: set(v) for m, v in nxt.items()} == {m: set(v) for m, v in assignment.items()}:
            return nxt
        assignment = nxt
    raise RuntimeError(f"cooperative rebalance did not settle within {MAX_COOPERATIVE_ROUNDS} rounds")


def _cooperative(assignor, ppt, before, after, joined, left, kind, t):
    old = _settle_cooperative(assignor, ppt, before, _stable(assignor, ppt, before))
    detection = _detection(kind, t, consumer=False)
    stayers = [m for m in after if m in before]
    stop: dict[TopicPartition, float] = {}
    ready: dict[TopicPartition, float] = {}
    for m in left:
        for tp in old.get(m, ()):
            stop[tp] = 0.0
    owned = {m: list(old.get(m, ())) for m in after}
    notice = _stagger(detection, t.heartbeat_interval_ms, stayers) if stayers else {}
    joins = [0.0 for _ in joined] + [notice[m] + t.poll_delay_ms for m in stayers]
    round_start_joins = joins
    rounds = 0
    generation = 1
    current = owned
    while True:
        rounds += 1
        if rounds > MAX_COOPERATIVE_ROUNDS:
            raise RuntimeError(f"cooperative rebalance did not settle within {MAX_COOPERATIVE_ROUNDS} rounds")
        sync_done = max(round_start_joins, default=detection) + 2 * t.rpc_ms
        assignment = assignor.assign(ppt, _classic_subs(after, current, generation))
        generation += 1
        revokers = []
        for m in after:
            mine = set(assignment.get(m, ()))
            had = set(current.get(m, ()))
            gave_up = [tp for tp in current.get(m, ()) if tp not in mine]
            for tp in gave_up:
                stop[tp] = sync_done  # onPartitionsRevoked after SyncGroup, then commit and rejoin
            if gave_up:
                revokers.append(m)
            for tp in assignment.get(m, ()):
                if tp not in had and tp not in ready:
                    ready[tp] = sync_done + t.rpc_ms
                    stop.setdefault(tp, detection)
        current = {m: list(assignment.get(m, ())) for m in after}
        if not revokers:
            break
        rejoin = sync_done + t.commit_on_revoke_ms
        others = [m for m in after if m not in revokers]
        later = _stagger(rejoin, t.heartbeat_interval_ms, others) if others else {}
        round_start_joins = [rejoin] + [later[m] + t.poll_delay_ms for m in others]
    return old, current, stop, ready, rounds, detection


def _consumer(assignor, ppt, before, after, joined, left, kind, t):
    old = assignor.assign(ppt, {m: Subscription(topics) for m, topics in before.items()})
    detection = _detection(kind, t, consumer=True)
    new = assignor.assign(ppt, {m: Subscription(topics) for m, topics in after.items()}, previous=old)
    interval = t.consumer_heartbeat_interval_ms
    stayers = [m for m in after if m in before]
    first_hb = _stagger(detection, interval, stayers) if stayers else {}
    for m in joined:
        first_hb[m] = 0.0  # the joining heartbeat is the change itself

    def next_heartbeat(m: str, at: float) -> float:
        """The first heartbeat of member m at or after time ``at``."""
        first = first_hb[m]
        if at <= first:
            return first
        return first + math.ceil((at - first) / interval) * interval

    old_owner, new_owner = _owner_map(old), _owner_map(new)
    stop: dict[TopicPartition, float] = {}
    released: dict[TopicPartition, float] = {}
    acked: dict[str, float] = {}  # when a revoking member's acknowledgement reaches the coordinator
    for tp, owner in old_owner.items():
        if owner in left:
            stop[tp] = 0.0
            released[tp] = detection
        elif new_owner.get(tp) != owner:
            learn = first_hb[owner] + t.rpc_ms  # the heartbeat reply carries the new target
            stop[tp] = learn
            released[tp] = acked[owner] = learn + t.commit_on_revoke_ms + t.rpc_ms  # revoke, commit, ack at once
    ready: dict[TopicPartition, float] = {}
    for tp, owner in new_owner.items():
        if old_owner.get(tp) == owner:
            continue
        # CurrentAssignmentBuilder: a member with partitions pending revocation gets nothing new until it has
        # acknowledged; a partition still owned elsewhere (unreleased) waits for the owner's acknowledgement
        free_at = max(released.get(tp, detection), acked.get(owner, detection))
        heartbeat = next_heartbeat(owner, free_at)
        if owner in acked and acked[owner] >= free_at:
            heartbeat = min(heartbeat, acked[owner])  # the acknowledging heartbeat's reply carries it
        ready[tp] = heartbeat + 2 * t.rpc_ms  # heartbeat reply, then the offset fetch
        stop.setdefault(tp, detection)
    for tp in stop:
        ready.setdefault(tp, stop[tp])
    return old, new, stop, ready, 1, detection

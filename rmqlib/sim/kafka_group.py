"""A Kafka consumer group in the simulator: members that poll, commit and rejoin, and a group coordinator.

Our model of Kafka's behaviour, for measuring it the way the simulator measures RocketMQ; not Kafka, and not its
code. The protocol semantics are those :mod:`rmqlib.kafka.protocol` documents, here played by simpy processes
on the simulator's clock (:mod:`rmqlib.sim.clock`) and recorded by its :class:`~rmqlib.sim.recorder.Recorder`,
so the :class:`~rmqlib.sim.result.SimResult` it returns counts pauses (stretches with no live member believing
it owns a partition) and duplicates (deliveries beyond a message's first) exactly as a RocketMQ run does.

The group is a :class:`~rmqlib.sim.scenario.Scenario` (its consumers, when they join, leave or crash; its topics,
traffic, listener time and network delay). Each topic's queues, over every broker, in RocketMQ's sort order,
become that topic's partitions ``0..n-1``; the result names them by their queue (``TopicTest@broker-a:0``), so
a Kafka row and a RocketMQ row of a table speak of the same queues.

The members (mirrors ``ClassicKafkaConsumer``/``ConsumerCoordinator`` and, for KIP-848, ``AsyncKafkaConsumer``/
``ConsumerMembershipManager``, clients/.../consumer/internals/):

* run a poll loop: a poll first does the group's business (rejoin, revoke, take new partitions, auto-commit
  when ``auto.commit.interval.ms`` is due), then returns up to ``max.poll.records`` records of the partitions it
  fetches, which the listener consumes one after another. Membership work waits for the records in hand,
  as ``poll()`` runs it; an idle member is woken by new data (a fetch long poll) or group news;
* on a crash stop at once (nothing committed since the last auto-commit); on a shutdown (``close()``)
  commit, give everything up and leave the group.

The protocols:

* ``EAGER`` (``ConsumerCoordinator.onJoinPrepare``): told by a heartbeat reply that a rebalance is under way
  (``REBALANCE_IN_PROGRESS``), a member stops fetching all it owns, commits, and sends JoinGroup; once every
  member has joined, the assignment comes back (JoinGroup reply, the leader's SyncGroup, SyncGroup replies) and
  each member fetches its committed offsets (OffsetFetch) before it reads.
* ``COOPERATIVE`` (KIP-429, ``ConsumerCoordinator.onJoinComplete``): members rejoin with what they own and keep
  reading it; the assignor leaves out what changes owner; an owner revokes that (commits, stops) and rejoins
  at once, and the second rebalance hands it out.
* ``CONSUMER`` (KIP-848; group-coordinator's ``GroupMetadataManager.consumerGroupHeartbeat`` and
  ``CurrentAssignmentBuilder``): the coordinator recomputes the target assignment on every membership change; a
  member learns its part in the reply to its own heartbeat (every ``group.consumer.heartbeat.interval.ms``); a
  partition to give up is revoked, committed and acknowledged with an immediate heartbeat; a partition another
  member still owns waits until that owner has acknowledged, then goes out in the new owner's next heartbeat
  reply; a member with partitions to revoke gets nothing new first.

A classic member's heartbeats restart when its SyncGroup reply arrives (``AbstractCoordinator.HeartbeatThread
.enable`` resets the heartbeat timer), so after a rebalance the members heartbeat nearly in step.

The coordinator learns of a crash when the member's session times out (``session.timeout.ms`` /
``group.consumer.session.timeout.ms``, counted from its last heartbeat); a classic group's first rebalance
waits ``group.initial.rebalance.delay.ms`` (3 s) for more members (``InitialDelayedJoin``).

``commit_on_revoke=True`` (the default, :mod:`rmqlib.kafka.protocol`'s model): the rebalance listener commits
what it gives up (``onPartitionsRevoked`` with ``commitSync``, the usual listener; KIP-848's consumer commits
before revoking when auto-commit is on). With ``False`` only auto-commit runs: then a cooperative member
gives up partitions whose records since ``onJoinPrepare``'s commit the next owner reads again, because
``onJoinComplete`` revokes without committing.

Simplified: the coordinator answers at once (one network hop, ``rpc_latency_ms``, each way); no rebalance
timeout, no static membership, no fetch sessions; brokers never fail; topics do not change.
"""

from __future__ import annotations

import enum
import math
import random
import time
from collections.abc import Generator, Iterable
from typing import Any, NamedTuple

import numpy as np
import simpy

from rmqlib.checks import ArgumentTypeError, check_bool, check_int
from rmqlib.kafka.assignors import StickyAssignor
from rmqlib.kafka.protocol import ProtocolTimings, RebalanceProtocol, _protocol_of, _resolve_assignor
from rmqlib.kafka.types import Subscription, TopicPartition
from rmqlib.model import MessageQueue, java_sorted_mqs
from rmqlib.protocol import MessageModel
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.result import SimResult
from rmqlib.sim.scenario import ConsumeMode, ConsumerSpec, LeaveKind, Scenario

MAX_POLL_RECORDS = 500  # ConsumerConfig max.poll.records
GROUP_INITIAL_REBALANCE_DELAY_MS = 3_000  # GroupCoordinatorConfig group.initial.rebalance.delay.ms

#: The assignor each protocol uses unless told otherwise: Kafka's default classic pair
#: (``partition.assignment.strategy`` = [RangeAssignor, CooperativeStickyAssignor]) and KIP-848's ``uniform``.
DEFAULT_ASSIGNORS = {
    RebalanceProtocol.EAGER: "range",
    RebalanceProtocol.COOPERATIVE: "cooperative-sticky",
    RebalanceProtocol.CONSUMER: "uniform",
}


class _Record(NamedTuple):
    """One message in a partition's log (the fields the recorder reads)."""

    msg_id: int
    store_timestamp: int
    queue_offset: int


class _State(enum.Enum):
    """A classic group's state (mirrors group-coordinator's ``ClassicGroupState``; Dead is not needed)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    STABLE = "Stable"


class _Partitions:
    """The group's partitions: each topic's queues in RocketMQ's order as partitions 0..n-1, and their logs."""

    def __init__(self, scenario: Scenario):
        self.per_topic: dict[str, int] = {}
        self.mq_of: dict[TopicPartition, MessageQueue] = {}
        self.tp_of: dict[MessageQueue, TopicPartition] = {}
        self.by_topic: dict[str, list[MessageQueue]] = {}
        for topic, per_broker in scenario.topics.items():
            mqs = java_sorted_mqs([MessageQueue(topic, b, q) for b in scenario.brokers for q in range(per_broker)])
            self.per_topic[topic] = len(mqs)
            self.by_topic[topic] = mqs
            for i, mq in enumerate(mqs):
                tp = TopicPartition(topic, i)
                self.mq_of[tp], self.tp_of[mq] = mq, tp
        self.all = [mq for mqs in self.by_topic.values() for mq in mqs]
        self.log: dict[MessageQueue, list[_Record]] = {mq: [] for mq in self.all}


class KafkaGroupSimulation:
    """One run: the clock, the recorder, the producers, the coordinator and a member per consumer."""

    def __init__(
        self,
        scenario: Scenario,
        protocol: RebalanceProtocol,
        assignor: Any,
        timings: ProtocolTimings,
        seed: int,
        commit_on_revoke: bool,
        auto_commit: bool,
    ):
        self.scenario, self.protocol, self.assignor, self.timings = scenario, protocol, assignor, timings
        self.seed, self.commit_on_revoke, self.auto_commit = seed, commit_on_revoke, auto_commit
        self.rng = random.Random(seed)
        self.clock = Clock()
        self.recorder = Recorder(scenario)
        self.latency = scenario.rpc_latency_ms
        self.partitions = _Partitions(scenario)
        for topic, mqs in self.partitions.by_topic.items():
            self.recorder.routes_now(topic, mqs, 0)
        coordinator_cls = ConsumerGroupCoordinator if protocol is RebalanceProtocol.CONSUMER else ClassicCoordinator
        self.coordinator = coordinator_cls(self)
        self.members = {spec.client_id: KafkaMember(self, spec) for spec in scenario.consumers}
        self.owner_of: dict[MessageQueue, KafkaMember] = {}  # who fetches a partition now (for the long poll)

    def producer(self) -> Generator[simpy.Event, Any, None]:
        """Every ``produce_batch_ms`` from ``produce_start_ms`` to ``duration_ms``, each partition receives its due
        messages at ``produce_rate_per_queue`` (a message's store time is its burst's time)."""
        sc, clock, recorder, log = self.scenario, self.clock, self.recorder, self.partitions.log
        made = dict.fromkeys(self.partitions.all, 0)
        yield clock.timeout(sc.produce_start_ms)
        while clock.now <= sc.duration_ms:
            now = int(clock.now)
            due = int(sc.produce_rate_per_queue * (now - sc.produce_start_ms) / 1000)
            for mq in self.partitions.all:
                records = log[mq]
                for _ in range(due - made[mq]):
                    records.append(_Record(recorder.new_message_id(), now, len(records)))
                if due > made[mq]:
                    made[mq] = due
                    owner = self.owner_of.get(mq)
                    if owner is not None:
                        owner.nudge()
            yield clock.timeout(sc.produce_batch_ms)

    def run(self) -> SimResult:
        wall = time.perf_counter()
        clock, sc = self.clock, self.scenario
        clock.process(self.producer())
        for member in self.members.values():
            jitter = self.rng.randint(0, sc.start_jitter_ms) if sc.start_jitter_ms else 0
            clock.process(member.start(member.spec.join_ms + jitter))
        clock.run(until=sc.end_ms)
        stored = {str(mq): len(records) for mq, records in self.partitions.log.items()}
        self.recorder.counters["rebalances"] = self.coordinator.rounds
        return self.recorder.result(
            self.seed,
            [m.cid for m in self.members.values() if m.alive],
            stored,
            {
                str(mq): (
                    np.array([r.store_timestamp for r in records], dtype=float),
                    np.array([r.msg_id for r in records], dtype=np.int64),
                )
                for mq, records in self.partitions.log.items()
            },
            wall_seconds=time.perf_counter() - wall,
            simpy_events=next(clock._eid),
        )


class KafkaMember:
    """One consumer process: its poll loop, its heartbeats, its commits and what it owns.

    Mirrors: clients/.../consumer/internals/ConsumerCoordinator.java (classic: ``poll``, ``onJoinPrepare``,
    ``onJoinComplete``, ``maybeAutoCommitOffsetsAsync``), AbstractCoordinator.java (``HeartbeatThread``) and,
    for KIP-848, ConsumerMembershipManager.java (reconciliation) with HeartbeatRequestManager.java.
    """

    def __init__(self, sim: KafkaGroupSimulation, spec: ConsumerSpec):
        self.sim, self.spec, self.cid = sim, spec, spec.client_id
        self.clock, self.recorder = sim.clock, sim.recorder
        self.alive = False
        self.died_at: int | None = None
        self.closing = False
        self.positions: dict[MessageQueue, int] = {}  # what it fetches now, and the next offset to read
        self.order: list[MessageQueue] = []  # the same partitions in fetch order
        self.committed_sent: dict[MessageQueue, int] = {}
        self.generation = -1
        self.previous: tuple[TopicPartition, ...] = ()  # the assignment before an eager revoke (StickyAssignor)
        self.rejoin_needed = False
        self.joining = False
        self.beating = False
        self.sync: tuple[int, list[TopicPartition]] | None = None  # a classic assignment not yet applied
        self.target: list[TopicPartition] | None = None  # a KIP-848 heartbeat reply not yet reconciled
        self.next_commit_ms = 0.0
        self.wake = self.clock.event()

    # --- lifecycle ------------------------------------------------------------------
    def start(self, at_ms: int) -> Generator[simpy.Event, Any, None]:
        sim = self.sim
        yield self.clock.timeout(at_ms)
        self.alive = True
        self.recorder.log(at_ms, "join", self.cid, sim.protocol.value)
        self.next_commit_ms = at_ms + sim.timings.auto_commit_interval_ms
        if self.spec.leave_ms is not None:
            self.clock.later(self.spec.leave_ms - at_ms, self._leave)
        if sim.protocol is RebalanceProtocol.CONSUMER:
            self.clock.process(self.heartbeat_loop(sim.timings.consumer_heartbeat_interval_ms))
        else:
            self.joining = True
            self.clock.later(sim.latency, self.classic.join, self, ())
        yield from self.poll_loop()

    def _leave(self) -> None:
        if not self.alive:
            return
        now = int(self.clock.now)
        if self.spec.leave is LeaveKind.SHUTDOWN:
            self.closing = True  # KafkaConsumer.close() once the records in hand are done
            self.nudge()
            return
        self.alive, self.died_at = False, now  # a crash or a lost host: no commit, no LeaveGroup
        self.recorder.log(now, "leave", self.cid, self.spec.leave.value)
        self._own_nothing(now)
        self.nudge()

    @property
    def classic(self) -> ClassicCoordinator:
        """The classic protocol's coordinator (only the eager and cooperative protocols call it)."""
        coordinator = self.sim.coordinator
        assert isinstance(coordinator, ClassicCoordinator)
        return coordinator

    def nudge(self) -> None:
        """Wake an idle poll (new data on a fetched partition, or news from the group)."""
        if not self.wake.triggered:
            self.wake.succeed()

    def _set_owned(self, positions: dict[MessageQueue, int], now: int) -> None:
        """Fetch ``positions`` from now on (a member that died meanwhile, during a commit or an offset fetch,
        takes nothing: its ownership closed when it died)."""
        owner_of = self.sim.owner_of
        if not self.alive:
            positions = {}
        for mq in self.positions:
            if owner_of.get(mq) is self:
                del owner_of[mq]
        self.positions = positions
        self.order = sorted(positions)
        for mq in positions:
            owner_of[mq] = self
        if self.alive:
            self.recorder.own(self.cid, set(positions), now)

    def _own_nothing(self, now: int) -> None:
        self._set_owned({}, now)
        self.recorder.close_ownership(self.cid, now)

    # --- the poll loop ------------------------------------------------------------
    def poll_loop(self) -> Generator[simpy.Event, Any, None]:
        clock, sim = self.clock, self.sim
        while self.alive:
            yield from self._group_business()
            if not self.alive:
                return
            batches = self._fetch()
            if batches:  # the listener takes the poll's records partition after partition
                start = int(clock.now)
                durations = [self._consume_ms(len(records)) for _, records in batches]
                yield clock.timeout(sum(durations))
                for (mq, records), took in zip(batches, durations):
                    self.recorder.record_batch(self.cid, self.died_at, mq, records, start, start + took)
                    start += took
                if not self.alive:
                    return
                continue
            if self.wake.triggered:
                self.wake = clock.event()
            uncommitted = sim.auto_commit and any(
                self.committed_sent.get(mq) != pos for mq, pos in self.positions.items()
            )
            if uncommitted:
                yield self.wake | clock.timeout(max(1.0, self.next_commit_ms - clock.now))
            else:
                yield self.wake

    def _consume_ms(self, count: int) -> int:
        sc = self.sim.scenario
        mean = sc.consume_time_of(self.spec)
        if sc.consume_time_dist == "exponential" and mean > 0:
            return math.ceil(self.sim.rng.gammavariate(count, mean))
        return math.ceil(count * mean)

    def _fetch(self) -> list[tuple[MessageQueue, list[_Record]]]:
        """Up to ``max.poll.records`` records, partition after partition, positions moved past them."""
        log, left, out = self.sim.partitions.log, MAX_POLL_RECORDS, []
        for mq in self.order:
            if left == 0:
                break
            pos = self.positions[mq]
            records = log[mq][pos : pos + left]
            if records:
                self.positions[mq] = pos + len(records)
                left -= len(records)
                out.append((mq, records))
        return out

    def _commit(self, mqs: Iterable[MessageQueue]) -> None:
        """Send the positions of ``mqs`` to the coordinator (OffsetCommit; stored one hop later)."""
        for mq in mqs:
            pos = self.positions.get(mq)
            if pos is not None and self.committed_sent.get(mq) != pos:
                self.committed_sent[mq] = pos
                self.clock.later(self.sim.latency, self.sim.coordinator.commit, mq, pos)

    def _commit_sync(self, mqs: Iterable[MessageQueue]) -> Generator[simpy.Event, Any, None]:
        """A synchronous commit before giving partitions up (``commit_on_revoke_ms``)."""
        self._commit(mqs)
        yield self.clock.timeout(self.sim.timings.commit_on_revoke_ms)

    def _group_business(self) -> Generator[simpy.Event, Any, None]:
        """What ``poll()`` does for the group before it fetches."""
        sim, clock = self.sim, self.clock
        if self.closing:
            yield from self._close()
            return
        if sim.protocol is RebalanceProtocol.CONSUMER:
            yield from self._reconcile()
        else:
            if self.sync is not None:
                yield from self._join_complete()
            if self.rejoin_needed and not self.joining and self.alive:
                yield from self._join_prepare()
        if self.alive and sim.auto_commit and clock.now >= self.next_commit_ms:
            self._commit(list(self.positions))
            self.next_commit_ms = clock.now + sim.timings.auto_commit_interval_ms

    def _close(self) -> Generator[simpy.Event, Any, None]:
        """KafkaConsumer.close(): commit, give every partition up (onLeavePrepare), leave the group."""
        sim, now = self.sim, int(self.clock.now)
        self.recorder.log(now, "leave", self.cid, LeaveKind.SHUTDOWN.value)
        owned = list(self.positions)
        self.recorder.own(self.cid, set(), now)  # fetching stops now; the positions stay for the commit
        yield from self._commit_sync(owned)
        self._set_owned({}, int(self.clock.now))
        self.alive = False
        self.recorder.close_ownership(self.cid, int(self.clock.now))
        self.clock.later(sim.latency, sim.coordinator.leave, self)

    # --- classic protocol -----------------------------------------------------------
    def heard_rebalance(self) -> None:
        """A heartbeat reply said REBALANCE_IN_PROGRESS: rejoin at the next poll."""
        if self.alive and not self.joining:
            self.rejoin_needed = True
            self.nudge()

    def _join_prepare(self) -> Generator[simpy.Event, Any, None]:
        """ConsumerCoordinator.onJoinPrepare, then JoinGroup."""
        sim, now = self.sim, int(self.clock.now)
        owned = list(self.positions)
        if sim.protocol is RebalanceProtocol.EAGER:
            self.previous = tuple(sim.partitions.tp_of[mq] for mq in owned)
            self.recorder.own(self.cid, set(), now)  # marked pending revocation: nothing more is fetched
            if sim.auto_commit or sim.commit_on_revoke:
                yield from self._commit_sync(owned)
            self._set_owned({}, int(self.clock.now))
            sent = self.previous if isinstance(sim.assignor, StickyAssignor) else ()
        else:
            if sim.auto_commit:
                yield from self._commit_sync(owned)
            sent = tuple(sim.partitions.tp_of[mq] for mq in self.positions)
        if not self.alive:
            return
        self.rejoin_needed, self.joining = False, True
        self.clock.later(sim.latency, self.classic.join, self, sent)

    def on_sync(self, generation: int, assigned: list[TopicPartition]) -> None:
        """The SyncGroup reply arrived: apply it at the next poll."""
        if self.alive:
            self.sync = (generation, assigned)
            if not self.beating:  # the heartbeat thread starts with the first assignment
                self.beating = True
                self.clock.process(self.heartbeat_loop(self.sim.timings.heartbeat_interval_ms))
            self.nudge()

    def _join_complete(self) -> Generator[simpy.Event, Any, None]:
        """ConsumerCoordinator.onJoinComplete: revoke what is no longer ours (cooperative), take the rest."""
        sim = self.sim
        assert self.sync is not None
        generation, assigned = self.sync
        self.sync, self.joining, self.generation = None, False, generation
        mine = {sim.partitions.mq_of[tp] for tp in assigned}
        revoked = [mq for mq in self.positions if mq not in mine]
        if revoked:
            now = int(self.clock.now)
            kept = {mq: pos for mq, pos in self.positions.items() if mq in mine}
            self.recorder.own(self.cid, set(kept), now)  # the revoked ones are no longer read
            if sim.commit_on_revoke:
                yield from self._commit_sync(revoked)
            self._set_owned({mq: self.positions[mq] for mq in kept}, int(self.clock.now))
            self.rejoin_needed = True  # requestRejoin: the second round hands the revoked partitions out
        added = [mq for mq in sorted(mine) if mq not in self.positions]
        if added:
            yield from self._take(added)

    def _take(self, added: list[MessageQueue]) -> Generator[simpy.Event, Any, None]:
        """OffsetFetch for newly assigned partitions, then read them from their committed offsets."""
        sim = self.sim
        yield self.clock.timeout(sim.latency)
        offsets = {mq: sim.coordinator.committed.get(mq, 0) for mq in added}
        yield self.clock.timeout(sim.latency)
        if not self.alive:
            return
        positions = dict(self.positions)
        positions.update(offsets)
        self.committed_sent.update(offsets)
        self._set_owned(positions, int(self.clock.now))

    def heartbeat_loop(self, interval_ms: int) -> Generator[simpy.Event, Any, None]:
        """AbstractCoordinator.HeartbeatThread (classic) or HeartbeatRequestManager (KIP-848)."""
        sim, clock = self.sim, self.clock
        first = True
        while self.alive:
            if sim.protocol is RebalanceProtocol.CONSUMER:
                self.send_consumer_heartbeat(joining=first)
                first = False
            else:
                clock.later(sim.latency, sim.coordinator.heartbeat, self)
            yield clock.timeout(interval_ms)

    # --- KIP-848 -----------------------------------------------------------------
    def send_consumer_heartbeat(self, joining: bool = False) -> None:
        owned = tuple(self.sim.partitions.tp_of[mq] for mq in self.positions)
        self.clock.later(self.sim.latency, self.sim.coordinator.heartbeat, self, owned, joining)

    def on_target(self, assigned: list[TopicPartition]) -> None:
        """A ConsumerGroupHeartbeat reply carried an assignment: reconcile at the next poll."""
        if self.alive:
            self.target = assigned
            self.nudge()

    def _reconcile(self) -> Generator[simpy.Event, Any, None]:
        """ConsumerMembershipManager's reconciliation: revoke (commit first), acknowledge, then take what is new."""
        if self.target is None:
            return
        sim = self.sim
        mine = {sim.partitions.mq_of[tp] for tp in self.target}
        self.target = None
        revoked = [mq for mq in self.positions if mq not in mine]
        if revoked:
            now = int(self.clock.now)
            kept = {mq: pos for mq, pos in self.positions.items() if mq in mine}
            self.recorder.own(self.cid, set(kept), now)  # the revoked ones are no longer read
            if sim.commit_on_revoke or sim.auto_commit:
                yield from self._commit_sync(revoked)
            self._set_owned(kept, int(self.clock.now))
        added = [mq for mq in sorted(mine) if mq not in self.positions]
        if added:
            yield from self._take(added)
        if (revoked or added) and self.alive:
            self.send_consumer_heartbeat()  # acknowledge at once


class _OffsetStore:
    """The committed offsets a group coordinator keeps (OffsetCommit, OffsetFetch)."""

    def __init__(self, sim: KafkaGroupSimulation):
        self.sim, self.clock = sim, sim.clock
        self.committed: dict[MessageQueue, int] = {}
        self.rounds = 0

    def commit(self, mq: MessageQueue, offset: int) -> None:
        """OffsetCommit reached the coordinator: store it (the recorder checks nothing unread is passed)."""
        if offset > self.committed.get(mq, 0):
            self.committed[mq] = offset
        self.sim.recorder.on_commit(mq.broker_name, mq.topic, mq.queue_id, offset, self.clock.now)


class ClassicCoordinator(_OffsetStore):
    """The group coordinator of the classic protocol: members, generations, JoinGroup/SyncGroup, sessions, offsets.

    Mirrors: group-coordinator/.../GroupMetadataManager.java (``classicGroupJoin``, ``classicGroupSync``,
    ``classicGroupHeartbeat``, ``classicGroupLeave``) and classic/ClassicGroup.java. The leader's assignment is
    computed when the last member has joined (the leader runs the assignor; it takes no time here). A member that
    has joined the round is not expired while it waits; when the round completes every member's session starts
    afresh (``completeClassicGroupJoin`` reschedules each member's heartbeat), a member that died meanwhile too.
    """

    def __init__(self, sim: KafkaGroupSimulation):
        super().__init__(sim)
        self.state = _State.EMPTY
        self.members: dict[str, KafkaMember] = {}
        self.joined: dict[str, tuple[TopicPartition, ...]] = {}
        self.deadline: dict[str, float] = {}
        self.generation = 0
        self.initial_delay_until = 0.0

    def _touch(self, member: KafkaMember) -> None:
        timeout = self.sim.timings.session_timeout_ms
        self.deadline[member.cid] = self.clock.now + timeout
        self.clock.later(timeout, self._check_session, member)

    def _check_session(self, member: KafkaMember) -> None:
        cid = member.cid
        if cid in self.members and cid not in self.joined and self.deadline.get(cid, 0) <= self.clock.now:
            self.sim.recorder.log(int(self.clock.now), "channel expired", "coordinator", f"{cid}: session timeout")
            self._remove(member)

    def _remove(self, member: KafkaMember) -> None:
        del self.members[member.cid]
        self.joined.pop(member.cid, None)
        if self.state is _State.STABLE:
            self._prepare()
        if not self.members:
            self.state = _State.EMPTY
        self._maybe_complete()

    def _prepare(self) -> None:
        self.state = _State.PREPARING_REBALANCE
        self.joined = {}
        self.sim.recorder.log(int(self.clock.now), "notify", "coordinator", "rebalance in progress")

    def join(self, member: KafkaMember, owned: tuple[TopicPartition, ...]) -> None:
        if not member.alive:
            return
        now = self.clock.now
        if self.state is _State.EMPTY:
            self.state = _State.PREPARING_REBALANCE
            self.joined = {}
        elif self.state is _State.STABLE:
            self._prepare()
        if self.generation == 0 or (member.cid not in self.members and self.initial_delay_until > now):
            # InitialDelayedJoin: a new group waits group.initial.rebalance.delay.ms for more members
            self.initial_delay_until = now + GROUP_INITIAL_REBALANCE_DELAY_MS
            self.clock.later(GROUP_INITIAL_REBALANCE_DELAY_MS, self._maybe_complete)
        self.members[member.cid] = member
        self.joined[member.cid] = owned
        self._touch(member)
        self._maybe_complete()

    def heartbeat(self, member: KafkaMember) -> None:
        if member.cid not in self.members or not member.alive:
            return
        self._touch(member)
        if self.state is _State.PREPARING_REBALANCE and member.cid not in self.joined:
            self.clock.later(self.sim.latency, member.heard_rebalance)

    def leave(self, member: KafkaMember) -> None:
        if member.cid in self.members:
            self._remove(member)

    def _maybe_complete(self) -> None:
        if self.state is not _State.PREPARING_REBALANCE or self.clock.now < self.initial_delay_until:
            return
        if not self.members or set(self.joined) != set(self.members):
            return
        sim = self.sim
        self.generation += 1
        self.rounds += 1
        topics = tuple(sim.partitions.per_topic)
        subs = {
            cid: Subscription(topics, owned_partitions=self.joined[cid], generation=self.members[cid].generation)
            for cid in self.members
        }
        assignment = sim.assignor.assign(sim.partitions.per_topic, subs)
        self.state = _State.STABLE
        self.joined = {}
        now = int(self.clock.now)
        sim.recorder.log(now, "rebalance", "coordinator", f"generation {self.generation}")
        for cid, member in self.members.items():
            self._touch(member)
            # JoinGroup reply, the leader's SyncGroup, the SyncGroup reply: three hops
            self.clock.later(3 * sim.latency, member.on_sync, self.generation, list(assignment.get(cid, ())))


class ConsumerGroupCoordinator(_OffsetStore):
    """KIP-848's group coordinator: heartbeats, the target assignment, and each member's reconciliation.

    Mirrors: group-coordinator/.../GroupMetadataManager.java (``consumerGroupHeartbeat``: a membership change
    bumps the group epoch and recomputes the target with the server assignor, given the current target as the
    previous assignment) and modern/consumer/CurrentAssignmentBuilder.java (a member gives up what its target no
    longer holds before it gets anything new; a partition another member still owns is withheld until released).
    """

    def __init__(self, sim: KafkaGroupSimulation):
        super().__init__(sim)
        self.members: dict[str, KafkaMember] = {}
        self.owned: dict[str, set[TopicPartition]] = {}  # what each member reported owning
        self.target: dict[str, list[TopicPartition]] = {}
        self.deadline: dict[str, float] = {}

    def _recompute(self) -> None:
        sim = self.sim
        topics = tuple(sim.partitions.per_topic)
        subs = {cid: Subscription(topics) for cid in self.members}
        self.target = sim.assignor.assign(sim.partitions.per_topic, subs, self.target) if subs else {}
        self.rounds += 1
        sim.recorder.log(int(self.clock.now), "rebalance", "coordinator", f"epoch {self.rounds}")

    def _touch(self, member: KafkaMember) -> None:
        timeout = self.sim.timings.consumer_session_timeout_ms
        self.deadline[member.cid] = self.clock.now + timeout
        self.clock.later(timeout, self._check_session, member)

    def _check_session(self, member: KafkaMember) -> None:
        if member.cid in self.members and self.deadline.get(member.cid, 0) <= self.clock.now:
            self.sim.recorder.log(
                int(self.clock.now), "channel expired", "coordinator", f"{member.cid}: session timeout"
            )
            self._remove(member)

    def _remove(self, member: KafkaMember) -> None:
        del self.members[member.cid]
        self.owned.pop(member.cid, None)
        self._recompute()

    def leave(self, member: KafkaMember) -> None:
        if member.cid in self.members:
            self._remove(member)

    def heartbeat(self, member: KafkaMember, owned: tuple[TopicPartition, ...], joining: bool) -> None:
        if not member.alive:
            return
        if member.cid not in self.members:
            if not joining:
                return
            self.members[member.cid] = member
            self.owned[member.cid] = set()
            self._recompute()
        self._touch(member)
        self.owned[member.cid] = set(owned)
        mine = self.owned[member.cid]
        target = set(self.target.get(member.cid, ()))
        if mine - target:  # UNREVOKED_PARTITIONS: give up first, nothing new
            reply = sorted(mine & target)
        else:
            taken = set().union(*(tps for cid, tps in self.owned.items() if cid != member.cid))
            reply = sorted(mine | {tp for tp in target if tp not in taken})
        if set(reply) != mine:
            self.clock.later(self.sim.latency, member.on_target, reply)


def simulate_kafka_group(
    scenario: Scenario,
    protocol: RebalanceProtocol | str = "eager",
    assignor: Any = None,
    *,
    seed: int = 0,
    timings: ProtocolTimings | None = None,
    commit_on_revoke: bool = True,
    auto_commit: bool = True,
) -> SimResult:
    """Run ``scenario``'s consumers as a Kafka group under ``protocol``; the same seed gives the same result.

    ``protocol``: ``"eager"``, ``"cooperative"`` or ``"consumer"`` (KIP-848), or a
    :class:`~rmqlib.kafka.RebalanceProtocol`. ``assignor``: a name in :data:`rmqlib.kafka.ASSIGNORS` or an
    assignor object that supports the protocol (default :data:`DEFAULT_ASSIGNORS`). ``timings``: Kafka's
    session, heartbeat and auto-commit settings and the synchronous commit's duration
    (:class:`~rmqlib.kafka.ProtocolTimings`; its ``rpc_ms``, ``poll_delay_ms`` and ``messages_per_s`` are not
    used: the scenario's network delay, listener time and traffic take their place). The scenario must be a
    CLUSTERING, CONCURRENT one without topic changes or broker outages. A ``ConsumerSpec.same_client_id_as`` is
    ignored: Kafka's coordinator gives every member its own member id, whatever ``client.id`` says.

    >>> from rmqlib.sim import scenarios
    >>> run = simulate_kafka_group(scenarios.scale_out(duration_ms=80_000, drain_ms=20_000), "cooperative")
    >>> run.counters["rebalances"], run.duplicates, len(run.lost)
    (5, 0, 0)
    """
    if not isinstance(scenario, Scenario):
        raise ArgumentTypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    scenario.validate()
    protocol = _protocol_of(protocol)
    if assignor is None:
        assignor = DEFAULT_ASSIGNORS[protocol]
    assignor = _resolve_assignor(assignor)
    supported = tuple(getattr(assignor, "supported_protocols", ()))
    if protocol.value not in supported:
        raise ValueError(
            f"assignor {assignor.name!r} does not support the {protocol.value} protocol (it supports {list(supported)})"
        )
    seed = check_int(seed, "seed")
    timings = ProtocolTimings() if timings is None else timings
    if not isinstance(timings, ProtocolTimings):
        raise ArgumentTypeError(f"timings must be a ProtocolTimings, got {type(timings).__name__}")
    commit_on_revoke = check_bool(commit_on_revoke, "commit_on_revoke")
    auto_commit = check_bool(auto_commit, "auto_commit")
    if scenario.message_model is not MessageModel.CLUSTERING:
        raise ValueError("scenario.message_model: a Kafka group shares partitions (CLUSTERING only)")
    if scenario.consume_mode is not ConsumeMode.CONCURRENT:
        raise ValueError(
            f"scenario.consume_mode: CONCURRENT only (a Kafka group has no {scenario.consume_mode.value} mode here)"
        )
    if scenario.changes_routes:
        raise ValueError("scenario.topic_changes/outages: the Kafka group model keeps its topics and brokers fixed")
    if scenario.narrows_subscriptions:
        raise ValueError(
            "scenario.message_tags/consumers: Kafka has no tags, and here every member subscribes to every topic; "
            "leave message_tags empty, every subscription '*' and every consumer's topics None"
        )
    return KafkaGroupSimulation(scenario, protocol, assignor, timings, seed, commit_on_revoke, auto_commit).run()


def change_ms(scenario: Scenario) -> int:
    """When the scenario's group first changes after the start: the first later join or any leave."""
    if not isinstance(scenario, Scenario):
        raise ArgumentTypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    times = [s.join_ms for s in scenario.consumers if s.join_ms > 0]
    times += [s.leave_ms for s in scenario.consumers if s.leave_ms is not None]
    if not times:
        raise ValueError("scenario.consumers: nobody joins late or leaves, so the group never changes")
    return min(times)


def pauses_after(result: SimResult, since_ms: int) -> dict[str, int]:
    """Per queue (partition), the time after ``since_ms`` it spent with no owner (:meth:`SimResult.pauses`)."""
    if not isinstance(result, SimResult):
        raise ArgumentTypeError(f"result must be a SimResult, got {type(result).__name__}")
    since_ms = check_int(since_ms, "since_ms", 0)
    end = result.scenario.end_ms
    return {
        queue: sum(min(b, end) - max(a, since_ms) for a, b in gaps if b > since_ms)
        for queue, gaps in result.pauses().items()
    }


def owners_at(result: SimResult, at_ms: int) -> dict[str, str]:
    """Per queue, the member that owned it at ``at_ms`` (queues nobody owned are left out)."""
    if not isinstance(result, SimResult):
        raise ArgumentTypeError(f"result must be a SimResult, got {type(result).__name__}")
    at_ms = check_int(at_ms, "at_ms", 0)
    found: dict[str, str] = {}
    for queue, spans in result.ownership.items():
        for span in spans:
            if span.start_ms <= at_ms < span.end_ms:
                found[queue] = span.holder
    return found

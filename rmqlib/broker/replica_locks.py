"""Orderly locks across a broker's replicas: ``LOCK_BATCH_MQ`` and ``UNLOCK_BATCH_MQ`` with ``lockInStrictMode``.

A broker name can have several replicas (a master, id 0, and slaves), each with its own in-memory lock table
(:class:`~rmqlib.broker.RebalanceLockManager`). A client sends its lock requests to the replica its route shows as
master. By default that replica answers from its own table alone. With ``lockInStrictMode`` it first locks in its
own table, then asks every other replica it knows to lock the queues it granted, and grants a queue only if a
majority of ``totalReplicas`` (``totalReplicas // 2 + 1``, itself included) granted it. Its own entry stays even
when the majority says no. An unlock in strict mode goes to every replica it knows, itself included.

The replicas a broker knows (its ``BrokerMemberGroup``) are synced from the name server only when
``enableSlaveActingMaster`` is on; otherwise a broker knows only itself, and strict mode with two or more replicas
grants nothing. With acting master on, the route shows the live replica with the smallest id as master when the
master is gone (the acting master).

Simplified, and said so: the member group follows the live replicas at once (Java syncs it every second,
``syncBrokerMemberGroupPeriod``), a stopped replica's answer is a failure, not a 1 s timeout, and a client reaches
the master the route shows now (a real client reads its route every 30 s, ``pollNameServerInterval``).

Mirrors: broker/.../processor/AdminBrokerProcessor.java#lockBatchMQ and #unlockBatchMQ,
remoting/.../protocol/body/BrokerMemberGroup.java, BrokerController.java#syncBrokerMemberGroup,
namesrv/.../routeinfo/RouteInfoManager.java#pickupTopicRouteData (the acting master in a route)
"""

from __future__ import annotations

from collections.abc import Iterable

from rmqlib.broker.lock_manager import REBALANCE_LOCK_MAX_LIVE_TIME, RebalanceLockManager, _check_id, _check_mqs
from rmqlib.broker.protocol import check_time
from rmqlib.checks import ArgumentTypeError, check_bool, check_int
from rmqlib.model import MessageQueue
from rmqlib.protocol import MASTER_ID


class AdminBrokerProcessor:
    """One replica's answer to ``LOCK_BATCH_MQ`` and ``UNLOCK_BATCH_MQ`` (the rest of the Java class is not modelled).

    ``member_group`` is the :class:`BrokerMemberGroup` the replica belongs to; it tells which other replicas this
    one can reach. Mirrors: broker/.../processor/AdminBrokerProcessor.java#lockBatchMQ, #unlockBatchMQ
    """

    def __init__(
        self,
        member_group: BrokerMemberGroup,
        broker_id: int,
        *,
        lock_in_strict_mode: bool = False,
        total_replicas: int = 1,
        lock_max_live_time: int = REBALANCE_LOCK_MAX_LIVE_TIME,
    ):
        if not isinstance(member_group, BrokerMemberGroup):
            raise ArgumentTypeError(f"member_group must be a BrokerMemberGroup, got {member_group!r:.80}")
        self.member_group = member_group
        self.broker_id = check_int(broker_id, "broker_id", 0)
        self.lock_in_strict_mode = check_bool(lock_in_strict_mode, "lock_in_strict_mode")
        self.total_replicas = check_int(total_replicas, "total_replicas", 1)  # MessageStoreConfig#totalReplicas
        self.lock_manager = RebalanceLockManager(lock_max_live_time)

    def lock_batch_mq(
        self, group: str, client_id: str, mqs: Iterable[MessageQueue], now_ms: int, only_this_broker: bool = False
    ) -> set[MessageQueue]:
        """The queues locked for ``client_id``: by this replica alone, or (strict mode) by a majority of replicas."""
        check_time(now_ms)
        _check_id(group, "group")
        _check_id(client_id, "client_id")
        checked = _check_mqs(mqs)
        check_bool(only_this_broker, "only_this_broker")
        self_ok = self.lock_manager.try_lock_batch(group, checked, client_id, now_ms)
        quorum = self.total_replicas // 2 + 1
        if only_this_broker or not self.lock_in_strict_mode or quorum <= 1:
            return self_ok
        votes = dict.fromkeys(self_ok, 1)
        for peer in self.member_group.known_by(self.broker_id):
            if peer is self:
                continue
            for mq in peer.lock_batch_mq(group, client_id, self_ok, now_ms, only_this_broker=True):
                votes[mq] = votes.get(mq, 0) + 1
        return {mq for mq, n in votes.items() if n >= quorum}

    def unlock_batch_mq(
        self, group: str, client_id: str, mqs: Iterable[MessageQueue], only_this_broker: bool = False
    ) -> None:
        """Release ``client_id``'s locks here, or (strict mode) on every replica this one knows, itself included."""
        _check_id(group, "group")
        _check_id(client_id, "client_id")
        checked = _check_mqs(mqs)
        check_bool(only_this_broker, "only_this_broker")
        if only_this_broker or not self.lock_in_strict_mode:
            self.lock_manager.unlock_batch(group, checked, client_id)
            return
        for peer in self.member_group.known_by(self.broker_id):
            peer.unlock_batch_mq(group, client_id, checked, only_this_broker=True)


class BrokerMemberGroup:
    """The replicas of one broker name, which of them are up, and the master a client's route shows.

    ``replicas`` replicas with ids 0 (the master) to ``replicas - 1``, all with the same ``lock_in_strict_mode``
    and ``total_replicas`` (by default the number of replicas, as a deployment of them would set it).
    :meth:`stop` and :meth:`start` stop a replica and start it again with an empty lock table (it keeps none on
    disk). :meth:`lock_batch_mq` and :meth:`unlock_batch_mq` are what a client reaches: the route's master, or a
    ``ConnectionError`` when the route shows none (a client's lock then counts as refused).

    Mirrors: remoting/.../protocol/body/BrokerMemberGroup.java (with each replica in place of its address),
    BrokerController.java#syncBrokerMemberGroup, RouteInfoManager.java#pickupTopicRouteData
    """

    def __init__(
        self,
        broker_name: str,
        replicas: int = 2,
        *,
        lock_in_strict_mode: bool = False,
        total_replicas: int | None = None,
        enable_slave_acting_master: bool = False,
        lock_max_live_time: int = REBALANCE_LOCK_MAX_LIVE_TIME,
    ):
        self.broker_name = _check_id(broker_name, "broker_name")
        check_int(replicas, "replicas", 1, 16)
        self.enable_slave_acting_master = check_bool(enable_slave_acting_master, "enable_slave_acting_master")
        total = replicas if total_replicas is None else total_replicas
        self._settings = dict(
            lock_in_strict_mode=lock_in_strict_mode, total_replicas=total, lock_max_live_time=lock_max_live_time
        )
        self.replicas: dict[int, AdminBrokerProcessor] = {
            broker_id: AdminBrokerProcessor(self, broker_id, **self._settings) for broker_id in range(replicas)
        }
        self.live: set[int] = set(self.replicas)

    def _replica_id(self, broker_id: object) -> int:
        check_int(broker_id, "broker_id", 0)
        if broker_id not in self.replicas:
            raise ValueError(f"broker_id must be one of {sorted(self.replicas)}, got {broker_id!r}")
        return broker_id  # type: ignore[return-value]

    def stop(self, broker_id: int) -> None:
        """The replica goes down; its lock table is lost with it."""
        self.live.discard(self._replica_id(broker_id))

    def start(self, broker_id: int) -> None:
        """The replica (re)starts with an empty lock table."""
        broker_id = self._replica_id(broker_id)
        if broker_id not in self.live:
            self.replicas[broker_id] = AdminBrokerProcessor(self, broker_id, **self._settings)
            self.live.add(broker_id)

    def known_by(self, broker_id: int) -> list[AdminBrokerProcessor]:
        """The live replicas that ``broker_id`` knows, in id order: all of them when acting master is on (synced
        from the name server), else only itself. Mirrors: BrokerController.java#getBrokerMemberGroup"""
        if not self.enable_slave_acting_master:
            return [self.replicas[broker_id]] if broker_id in self.live else []
        return [self.replicas[i] for i in sorted(self.live)]

    def minimum_broker_id(self) -> int:
        """The smallest live broker id (0 when none is up). Mirrors: BrokerMemberGroup.java#minimumBrokerId"""
        return min(self.live, default=MASTER_ID)

    def route_master_id(self) -> int | None:
        """The replica a client's route shows as master: the master while it is up; when it is not, the live replica
        with the smallest id if acting master is on; else none."""
        if MASTER_ID in self.live:
            return MASTER_ID
        if self.enable_slave_acting_master and self.live:
            return self.minimum_broker_id()
        return None

    def _route_master(self) -> AdminBrokerProcessor:
        broker_id = self.route_master_id()
        if broker_id is None:
            raise ConnectionError(f"no master of {self.broker_name} in the route")
        return self.replicas[broker_id]

    def lock_batch_mq(self, group: str, client_id: str, mqs: Iterable[MessageQueue], now_ms: int) -> set[MessageQueue]:
        """A client's ``LOCK_BATCH_MQ``, answered by the route's master."""
        return self._route_master().lock_batch_mq(group, client_id, mqs, now_ms)

    def unlock_batch_mq(self, group: str, client_id: str, mqs: Iterable[MessageQueue], now_ms: int) -> None:
        """A client's ``UNLOCK_BATCH_MQ``, answered by the route's master (``now_ms`` as the client API passes it)."""
        check_time(now_ms)
        self._route_master().unlock_batch_mq(group, client_id, mqs)

    def lock_owner(self, broker_id: int, group: str, mq: MessageQueue, now_ms: int) -> str | None:
        """Who holds ``mq`` in replica ``broker_id``'s table (None for a stopped replica or an expired lock)."""
        if self._replica_id(broker_id) not in self.live:
            return None
        return self.replicas[broker_id].lock_manager.lock_owner(group, mq, now_ms)

"""The name server's route table: which brokers hold which queues of a topic, and when a broker drops out.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3):

* namesrv/.../routeinfo/RouteInfoManager.java -- :class:`RouteInfoManager` (``registerBroker``,
  ``unregisterBroker``, ``scanNotActiveBroker``, ``onChannelDestroy``, ``pickupTopicRouteData``);
* remoting/.../protocol/route/QueueData.java, BrokerData.java, TopicRouteData.java -- the route records;
* common/.../constant/PermName.java -- the read/write permission bits.

A broker name has a master (broker id 0) and may have slaves (ids 1, 2, ...), each registering on its own. A
broker name leaves every topic's route only when its last replica is gone; while a slave is left, its queues
stay in the routes and its address map holds the slaves alone (no master). Acting master
(``enableSlaveActingMaster``, which takes PERM_WRITE away from such a broker's queues) and controller mode are not
modelled. Times are milliseconds on the caller's clock.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqlib.checks import check_int, check_str
from rmqlib.protocol import MASTER_ID

PERM_INHERIT, PERM_WRITE, PERM_READ = 1, 2, 4  # PermName.PERM_*
PERM_READ_WRITE = PERM_READ | PERM_WRITE  # what a topic gets by default (TopicConfig.perm = 6)
BROKER_CHANNEL_EXPIRED_MS = 120_000  # RouteInfoManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME
SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS = 5_000  # NamesrvConfig.scanNotActiveBrokerInterval
REGISTER_NAME_SERVER_PERIOD_MS = 30_000  # BrokerConfig.registerNameServerPeriod
POLL_NAME_SERVER_INTERVAL_MS = 30_000  # ClientConfig.pollNameServerInterval


def broker_address(broker_name: str, broker_id: int) -> str:
    """The address a replica registers under (a made-up ``host:port``: one host per replica)."""
    return f"{broker_name}:10911" if broker_id == MASTER_ID else f"{broker_name}-slave{broker_id}:10911"


def is_readable(perm: int) -> bool:
    """PermName#isReadable."""
    return perm & PERM_READ == PERM_READ


def is_writeable(perm: int) -> bool:
    """PermName#isWriteable."""
    return perm & PERM_WRITE == PERM_WRITE


@dataclass(frozen=True, order=True)
class QueueData:
    """One broker's queues of one topic. Mirrors: QueueData.java (sorted by broker name, as Java compares them)."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int = PERM_READ_WRITE
    topic_sys_flag: int = 0


@dataclass(frozen=True, order=True)
class BrokerData:
    """A broker name and its addresses by broker id (0 = the master). Mirrors: BrokerData.java"""

    broker_name: str
    broker_addrs: tuple[tuple[int, str], ...]
    cluster: str = "DefaultCluster"

    def has_master(self) -> bool:
        return any(broker_id == MASTER_ID for broker_id, _ in self.broker_addrs)

    def select_broker_addr(self, rng: random.Random) -> str:
        """The master's address, or with no master one of the others drawn by ``rng`` (a single one is taken
        without a draw). Mirrors: BrokerData#selectBrokerAddr"""
        addrs = dict(self.broker_addrs)
        if MASTER_ID in addrs:
            return addrs[MASTER_ID]
        if not addrs:
            raise ValueError(f"broker_addrs: {self.broker_name} has no address to select")
        others = list(addrs.values())
        return others[0] if len(others) == 1 else rng.choice(others)


@dataclass(frozen=True)
class TopicRouteData:
    """What the name server answers for one topic. Mirrors: TopicRouteData.java"""

    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...]

    def topic_route_data_changed(self, old: TopicRouteData | None) -> bool:
        """True when ``old`` is None or differs once both are sorted (TopicRouteData#topicRouteDataChanged)."""
        if old is None:
            return True
        return (sorted(self.queue_datas), sorted(self.broker_datas)) != (
            sorted(old.queue_datas),
            sorted(old.broker_datas),
        )


@dataclass
class _BrokerLive:
    last_update_ms: int
    timeout_ms: int


@dataclass
class RouteInfoManager:
    """The name server's tables. Mirrors: RouteInfoManager.java

    ``topic_queue_table``: topic -> broker name -> :class:`QueueData` (insertion order kept: the order the
    brokers registered); ``broker_addr_table``: broker name -> :class:`BrokerData`; ``broker_live_table``:
    (broker name, broker id) -> when that replica last registered.
    A broker registers its whole topic config every 30 s (and at once when a topic
    changes); a broker whose connection closes is unregistered at once (:meth:`on_channel_destroy`); one
    that goes silent is dropped by :meth:`scan_not_active_broker`, run every 5 s, once 120 s have passed
    since its last registration. A topic a broker stops listing keeps its queues in the route unless
    ``delete_topic_with_broker_registration`` is on (NamesrvConfig.deleteTopicWithBrokerRegistration, off by
    default); an operator removes it with :meth:`delete_topic` (``mqadmin deleteTopic``).
    """

    topic_queue_table: dict[str, dict[str, QueueData]] = field(default_factory=dict)
    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    broker_live_table: dict[tuple[str, int], _BrokerLive] = field(default_factory=dict)
    delete_topic_with_broker_registration: bool = False

    def register_broker(
        self,
        broker_name: str,
        topic_config: dict[str, QueueData | tuple[int, int]],
        now_ms: int,
        timeout_ms: int = BROKER_CHANNEL_EXPIRED_MS,
        broker_id: int = MASTER_ID,
    ) -> None:
        """A replica registers (or re-registers) with its full topic config: ``topic -> QueueData`` or
        ``topic -> (read_queue_nums, write_queue_nums)``. Only the master, or a slave with the smallest id while
        no master is registered (Java's "prime slave"), writes the broker name's queue data. Topics it no longer
        lists lose its queues only with ``delete_topic_with_broker_registration``."""
        check_str(broker_name, "broker_name")
        check_int(now_ms, "now_ms", 0)
        check_int(broker_id, "broker_id", 0)
        old = self.broker_addr_table.get(broker_name)
        addrs = dict(old.broker_addrs) if old is not None else {}
        addrs[broker_id] = broker_address(broker_name, broker_id)
        self._put_addrs(broker_name, addrs)
        self.broker_live_table[(broker_name, broker_id)] = _BrokerLive(now_ms, check_int(timeout_ms, "timeout_ms", 1))
        if broker_id != MASTER_ID and broker_id != min(addrs):
            return
        listed = set()
        for topic, spec in topic_config.items():
            check_str(topic, "topic_config key")
            if isinstance(spec, QueueData):
                data = QueueData(
                    broker_name, spec.read_queue_nums, spec.write_queue_nums, spec.perm, spec.topic_sys_flag
                )
            else:
                read, write = spec
                data = QueueData(
                    broker_name,
                    check_int(read, f"topic_config[{topic!r}] read queues", 0),
                    check_int(write, f"topic_config[{topic!r}] write queues", 0),
                )
            self.topic_queue_table.setdefault(topic, {})[broker_name] = data
            listed.add(topic)
        if self.delete_topic_with_broker_registration:
            for topic in [t for t, by_broker in self.topic_queue_table.items() if broker_name in by_broker]:
                if topic not in listed:
                    self._remove_queue_data(topic, broker_name)

    def delete_topic(self, topic: str, broker_names: Iterable[str] | None = None) -> None:
        """DELETE_TOPIC_IN_NAMESRV: the topic leaves the route, on the brokers named (all of them: None); a topic
        left with no broker leaves the table. Mirrors: #deleteTopic(topic), #deleteTopic(topic, clusterName)"""
        check_str(topic, "topic")
        by_broker = self.topic_queue_table.get(topic)
        if by_broker is None:
            return
        names = list(by_broker) if broker_names is None else [check_str(n, "broker_names") for n in broker_names]
        for name in names:
            if name in by_broker:
                self._remove_queue_data(topic, name)
                if topic not in self.topic_queue_table:
                    return

    def unregister_broker(self, broker_name: str, broker_id: int = MASTER_ID) -> bool:
        """One replica leaves: its address and liveness go; when it was the broker name's last replica, the name and
        its queues leave every route too. False if that replica was not registered. Mirrors: #unRegisterBroker and
        #cleanTopicByUnRegisterRequests (a reduced broker keeps its queue data; its write permission goes only
        with acting master, not modelled)."""
        data = self.broker_addr_table.get(broker_name)
        addrs = dict(data.broker_addrs) if data is not None else {}
        if addrs.pop(broker_id, None) is None:
            return False
        self.broker_live_table.pop((broker_name, broker_id), None)
        if addrs:
            self._put_addrs(broker_name, addrs)
            return True
        del self.broker_addr_table[broker_name]
        for topic in [t for t, by_broker in self.topic_queue_table.items() if broker_name in by_broker]:
            self._remove_queue_data(topic, broker_name)
        return True

    def on_channel_destroy(self, broker_name: str, broker_id: int = MASTER_ID) -> bool:
        """The replica's connection closed (a process that stopped): unregister it at once.
        Mirrors: #onChannelDestroy"""
        return self.unregister_broker(broker_name, broker_id)

    def scan_not_active_broker(self, now_ms: int) -> list[str]:
        """Unregister every replica silent for longer than its timeout; return their broker names (one per replica).
        Mirrors: #scanNotActiveBroker (strictly longer: ``last + timeout < now``)."""
        check_int(now_ms, "now_ms", 0)
        table = self.broker_live_table
        expired = [key for key, live in table.items() if live.last_update_ms + live.timeout_ms < now_ms]
        for name, broker_id in expired:
            self.unregister_broker(name, broker_id)
        return [name for name, _ in expired]

    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        """The topic's route, or None when no broker holds it. Mirrors: #pickupTopicRouteData"""
        by_broker = self.topic_queue_table.get(topic)
        if not by_broker:
            return None
        brokers = tuple(self.broker_addr_table[name] for name in by_broker if name in self.broker_addr_table)
        if not brokers:
            return None
        return TopicRouteData(tuple(by_broker.values()), brokers)

    def pickup_broker_topic_route_data(self, broker_name: str) -> TopicRouteData | None:
        """The route of the topic named after ``broker_name``: its one queue on that broker, while the table has the
        broker (every broker registers such a topic, with ``brokerTopicEnable`` on by default; the registrations
        here leave it out). Mirrors: #pickupTopicRouteData for that topic (TopicConfigManager's constructor)"""
        data = self.broker_addr_table.get(check_str(broker_name, "broker_name"))
        if data is None:
            return None
        return TopicRouteData((QueueData(broker_name, 1, 1, PERM_INHERIT | PERM_READ_WRITE),), (data,))

    def _put_addrs(self, broker_name: str, addrs: dict[int, str]) -> None:
        self.broker_addr_table[broker_name] = BrokerData(broker_name, tuple(sorted(addrs.items())))

    def _remove_queue_data(self, topic: str, broker_name: str) -> None:
        by_broker = self.topic_queue_table[topic]
        del by_broker[broker_name]
        if not by_broker:
            del self.topic_queue_table[topic]


__all__ = [
    "BROKER_CHANNEL_EXPIRED_MS",
    "MASTER_ID",
    "PERM_INHERIT",
    "PERM_READ",
    "PERM_READ_WRITE",
    "PERM_WRITE",
    "POLL_NAME_SERVER_INTERVAL_MS",
    "REGISTER_NAME_SERVER_PERIOD_MS",
    "SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS",
    "BrokerData",
    "QueueData",
    "RouteInfoManager",
    "TopicRouteData",
    "is_readable",
    "is_writeable",
]

"""The name server's route table: which brokers hold which queues of a topic, and when a broker drops out.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3):

* namesrv/.../routeinfo/RouteInfoManager.java -- :class:`RouteInfoManager` (``registerBroker``,
  ``unregisterBroker``, ``scanNotActiveBroker``, ``onChannelDestroy``, ``pickupTopicRouteData``);
* remoting/.../protocol/route/QueueData.java, BrokerData.java, TopicRouteData.java -- the route records;
* common/.../constant/PermName.java -- the read/write permission bits.

Only the single-master case is modelled: a broker name has one address (its master), and a broker that is
gone has none, so it leaves every topic's route. Times are milliseconds on the caller's clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqlib.checks import check_int, check_str

PERM_INHERIT, PERM_WRITE, PERM_READ = 1, 2, 4  # PermName.PERM_*
PERM_READ_WRITE = PERM_READ | PERM_WRITE  # what a topic gets by default (TopicConfig.perm = 6)
BROKER_CHANNEL_EXPIRED_MS = 120_000  # RouteInfoManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME
SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS = 5_000  # NamesrvConfig.scanNotActiveBrokerInterval
REGISTER_NAME_SERVER_PERIOD_MS = 30_000  # BrokerConfig.registerNameServerPeriod
POLL_NAME_SERVER_INTERVAL_MS = 30_000  # ClientConfig.pollNameServerInterval
MASTER_ID = 0  # MixAll.MASTER_ID


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
    brokers registered). A broker registers its whole topic config every 30 s (and at once when a topic
    changes); a broker whose connection closes is unregistered at once (:meth:`on_channel_destroy`); one
    that goes silent is dropped by :meth:`scan_not_active_broker`, run every 5 s, once 120 s have passed
    since its last registration. A topic a broker stops listing keeps its queues in the route unless
    ``delete_topic_with_broker_registration`` is on (NamesrvConfig.deleteTopicWithBrokerRegistration, off by
    default); an operator removes it with :meth:`delete_topic` (``mqadmin deleteTopic``).
    """

    topic_queue_table: dict[str, dict[str, QueueData]] = field(default_factory=dict)
    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    broker_live_table: dict[str, _BrokerLive] = field(default_factory=dict)
    delete_topic_with_broker_registration: bool = False

    def register_broker(
        self,
        broker_name: str,
        topic_config: dict[str, QueueData | tuple[int, int]],
        now_ms: int,
        timeout_ms: int = BROKER_CHANNEL_EXPIRED_MS,
    ) -> None:
        """A master registers (or re-registers) with its full topic config: ``topic -> QueueData`` or
        ``topic -> (read_queue_nums, write_queue_nums)``. Topics it no longer lists lose its queues only with
        ``delete_topic_with_broker_registration``."""
        check_str(broker_name, "broker_name")
        check_int(now_ms, "now_ms", 0)
        self.broker_addr_table[broker_name] = BrokerData(broker_name, ((MASTER_ID, f"{broker_name}:10911"),))
        self.broker_live_table[broker_name] = _BrokerLive(now_ms, check_int(timeout_ms, "timeout_ms", 1))
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

    def unregister_broker(self, broker_name: str) -> bool:
        """The broker's addresses, liveness and queues leave every table; False if it was not registered.
        Mirrors: #unRegisterBroker (one master, so the broker name is left with no address)."""
        if self.broker_addr_table.pop(broker_name, None) is None:
            return False
        self.broker_live_table.pop(broker_name, None)
        for topic in [t for t, by_broker in self.topic_queue_table.items() if broker_name in by_broker]:
            self._remove_queue_data(topic, broker_name)
        return True

    def on_channel_destroy(self, broker_name: str) -> bool:
        """The broker's connection closed (a process that stopped): unregister it at once. Mirrors: #onChannelDestroy"""
        return self.unregister_broker(broker_name)

    def scan_not_active_broker(self, now_ms: int) -> list[str]:
        """Unregister every broker silent for longer than its timeout; return their names.
        Mirrors: #scanNotActiveBroker (strictly longer: ``last + timeout < now``)."""
        check_int(now_ms, "now_ms", 0)
        expired = [
            name for name, live in self.broker_live_table.items() if live.last_update_ms + live.timeout_ms < now_ms
        ]
        for name in expired:
            self.unregister_broker(name)
        return expired

    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        """The topic's route, or None when no broker holds it. Mirrors: #pickupTopicRouteData"""
        by_broker = self.topic_queue_table.get(topic)
        if not by_broker:
            return None
        brokers = tuple(self.broker_addr_table[name] for name in by_broker if name in self.broker_addr_table)
        if not brokers:
            return None
        return TopicRouteData(tuple(by_broker.values()), brokers)

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

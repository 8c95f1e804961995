"""What a broker answers ``GET_CONSUME_STATS``: per queue, how far the group is behind. Dashboards and ``mqadmin
consumerProgress`` show its ``diff`` (brokerOffset - consumerOffset) as the group's backlog.

Mirrors: broker/.../processor/AdminBrokerProcessor.java (#getConsumeStats) and
remoting/.../protocol/admin/ConsumeStats.java, OffsetWrapper.java; its consumeTps comes from :mod:`rmqlib.broker.stats`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqlib.broker.message_store import MessageStore
from rmqlib.broker.stats import BrokerStatsManager
from rmqlib.checks import check_each, check_instance, check_str
from rmqlib.model import MessageQueue


@dataclass(frozen=True)
class OffsetWrapper:
    """One queue's line: the queue's max offset, the group's committed offset, the pull offset and the store time
    of the last message the committed offset covers (0: none). Mirrors: OffsetWrapper"""

    broker_offset: int
    consumer_offset: int
    pull_offset: int
    last_timestamp: int = 0

    @property
    def diff(self) -> int:
        """What ``mqadmin consumerProgress`` prints as Diff: messages at or past the committed offset."""
        return self.broker_offset - self.consumer_offset


@dataclass
class ConsumeStats:
    """One broker's answer: a line per queue, and the messages per second it handed the group over the latest
    minute of samples, summed over the topics (0.0 when the broker's statistics were not given). Mirrors:
    ConsumeStats"""

    offset_table: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0

    def compute_total_diff(self) -> int:
        """Mirrors: #computeTotalDiff"""
        return sum(wrapper.diff for wrapper in self.offset_table.values())

    def compute_inflight_total_diff(self) -> int:
        """Mirrors: #computeInflightTotalDiff (pull offset minus committed offset)"""
        return sum(w.pull_offset - w.consumer_offset for w in self.offset_table.values())


def get_consume_stats(
    store: MessageStore,
    broker_name: str,
    group: str,
    topics: Iterable[str],
    broker_stats_manager: BrokerStatsManager | None = None,
) -> ConsumeStats:
    """``group``'s progress on each read queue of ``topics`` in ``store``, as broker ``broker_name`` answers it. A
    topic the broker does not have is skipped (Java logs it); a queue without a committed offset counts from 0. The
    pull offset is the committed one: only Pop records a pull offset, and a pull group's queries fall back to the
    committed offset (ConsumerOffsetManager#queryPullOffset). Java also picks the topics from the group's
    subscriptions when none are named; here the caller names them. ``broker_stats_manager``: the broker's counters,
    which give ``consume_tps`` (BrokerStatsManager#tpsGroupGetNums per topic). Mirrors:
    AdminBrokerProcessor#getConsumeStats"""
    check_instance(store, "store", MessageStore)
    check_str(broker_name, "broker_name")
    check_str(group, "group")
    topics = check_each(topics, "topics", lambda value, name: check_str(value, name))
    if broker_stats_manager is not None:
        check_instance(broker_stats_manager, "broker_stats_manager", BrokerStatsManager)
    stats = ConsumeStats()
    for topic in topics:
        if not store.has_topic(topic):
            continue
        for queue_id in range(store.read_queue_nums(topic)):
            broker_offset = max(store.get_max_offset(topic, queue_id), 0)
            consumer_offset = max(store.query_offset(group, topic, queue_id), 0)
            last = store.look_message_by_offset(topic, queue_id, consumer_offset - 1) if consumer_offset else None
            stats.offset_table[MessageQueue(topic, broker_name, queue_id)] = OffsetWrapper(
                broker_offset, consumer_offset, consumer_offset, last.store_timestamp if last is not None else 0
            )
        if broker_stats_manager is not None:
            stats.consume_tps += broker_stats_manager.tps_group_get_nums(group, topic)
    return stats

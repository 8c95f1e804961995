"""What a broker answers ``GET_CONSUME_STATS``: per queue, how far the group is behind. Dashboards and ``mqadmin
consumerProgress`` show its ``diff`` (brokerOffset - consumerOffset) as the group's backlog.

Mirrors: broker/.../processor/AdminBrokerProcessor.java (#getConsumeStats) and
remoting/.../protocol/admin/ConsumeStats.java, OffsetWrapper.java; its consumeTps comes from :mod:`rmqlib.broker.stats`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqlib.broker.consumer_manager import ConsumerManager
from rmqlib.broker.message_store import MessageStore
from rmqlib.broker.stats import BrokerStatsManager
from rmqlib.checks import check_each, check_instance, check_str, check_str_or_none
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
        """What ``mqadmin consumerProgress`` prints as Inflight: pulled, not yet committed.
        Mirrors: #computeInflightTotalDiff (pull offset minus committed offset)"""
        return sum(w.pull_offset - w.consumer_offset for w in self.offset_table.values())


def get_consume_stats(
    store: MessageStore,
    broker_name: str,
    group: str,
    topics: Iterable[str] | None = None,
    broker_stats_manager: BrokerStatsManager | None = None,
    *,
    topic: str | None = None,
    consumer_manager: ConsumerManager | None = None,
) -> ConsumeStats:
    """``group``'s progress on each read queue of its topics in ``store``, as broker ``broker_name`` answers it.

    Which topics (AdminBrokerProcessor#getTopicsForCollectingConsumeStats): ``topics``, the request's topic list,
    when it names any; else ``topic``, or with none named every topic the group has an offset of here, less those
    the group's registered subscriptions lack when it has any (``consumer_manager``, the broker's registry; None: no
    subscriptions). A topic the broker does not have is skipped (Java logs it); a queue without a committed offset
    counts from 0. The pull offset is the next offset the group's latest pull of the queue was answered with, or the
    committed one when higher or no pull was answered since the broker started (ConsumerOffsetManager#queryPullOffset);
    ``compute_inflight_total_diff`` counts what was pulled and not yet committed. ``broker_stats_manager``: the
    broker's counters, which give ``consume_tps`` (BrokerStatsManager#tpsGroupGetNums per topic).
    Mirrors: AdminBrokerProcessor#getConsumeStats"""
    check_instance(store, "store", MessageStore)
    check_str(broker_name, "broker_name")
    check_str(group, "group")
    topic_list = [] if topics is None else check_each(topics, "topics", lambda value, name: check_str(value, name))
    topic = check_str_or_none(topic, "topic")
    if broker_stats_manager is not None:
        check_instance(broker_stats_manager, "broker_stats_manager", BrokerStatsManager)
    if consumer_manager is not None:
        check_instance(consumer_manager, "consumer_manager", ConsumerManager)
    if topic_list:
        collected = list(dict.fromkeys(topic_list))
    else:
        collected = [topic] if topic else sorted(store.offsets.which_topic_by_consumer(group))
        if consumer_manager is not None and consumer_manager.find_subscription_data_count(group) > 0:
            collected = [t for t in collected if consumer_manager.find_subscription_data(group, t) is not None]
    stats = ConsumeStats()
    for name in collected:
        if not store.has_topic(name):
            continue
        for queue_id in range(store.read_queue_nums(name)):
            broker_offset = max(store.get_max_offset(name, queue_id), 0)
            consumer_offset = max(store.query_offset(group, name, queue_id), 0)
            pull_offset = max(consumer_offset, store.offsets.query_pull_offset(group, name, queue_id))
            last = store.look_message_by_offset(name, queue_id, consumer_offset - 1) if consumer_offset else None
            stats.offset_table[MessageQueue(name, broker_name, queue_id)] = OffsetWrapper(
                broker_offset, consumer_offset, pull_offset, last.store_timestamp if last is not None else 0
            )
        if broker_stats_manager is not None:
            stats.consume_tps += broker_stats_manager.tps_group_get_nums(group, name)
    return stats

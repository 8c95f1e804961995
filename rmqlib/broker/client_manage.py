"""HEART_BEAT on the broker: a consumer's heartbeat, the first way (every heartbeat carries the subscriptions) and
the second (``useHeartbeatV2``: a heartbeat whose fingerprint the broker has seen may leave them out).

Mirrors the consumer half of ``ClientManageProcessor#heartBeat`` and ``#heartBeatV2``
(broker/src/main/java/org/apache/rocketmq/broker/processor/ClientManageProcessor.java). The broker keeps one
fingerprint per group, the last one any member sent (``consumerGroupHeartbeatTable``); a second-way heartbeat whose
fingerprint differs from it is answered ``sub_change``, which makes the client send its subscriptions again next
time. A heartbeat without subscriptions registers the channel only (``ConsumerManager#registerConsumerWithoutSub``):
the group's stored subscriptions stay as the last full heartbeat left them. Not modelled: producers, the
``rejectPullConsumerEnable`` switch, the retry topic's creation and a group without a subscription group config.
"""

from __future__ import annotations

from typing import NamedTuple

from rmqlib.broker.consumer_manager import ClientChannelInfo, ConsumerManager
from rmqlib.checks import check_bool, check_instance, check_int, check_str, check_time


class HeartbeatAnswer(NamedTuple):
    """The broker's answer to a heartbeat: whether the registry changed (a CHANGE was fired), and the two extension
    fields of the response (``IS_SUPPORT_HEART_BEAT_V2``, ``IS_SUB_CHANGE``)."""

    changed: bool
    support_v2: bool
    sub_change: bool


class ClientManageProcessor:
    """A broker's heartbeat handler over its consumer registry ``consumer_manager``."""

    def __init__(self, consumer_manager: ConsumerManager):
        self.consumer_manager = check_instance(consumer_manager, "consumer_manager", ConsumerManager)
        self.consumer_group_heartbeat_table: dict[str, int] = {}  # group -> the last fingerprint a member sent

    def heart_beat(
        self,
        group: str,
        client_channel_info: ClientChannelInfo,
        consume_type,
        message_model,
        consume_from_where,
        subscriptions,
        now_ms: int,
        heartbeat_fingerprint: int = 0,
        without_sub: bool = False,
        is_notify_consumer_ids_changed_enable: bool = True,
    ) -> HeartbeatAnswer:
        """One consumer group's part of a heartbeat. ``heartbeat_fingerprint`` 0 is the first way (the broker
        stores 0 as the group's fingerprint and answers ``sub_change`` always); any other value the second way.
        ``without_sub`` (second way only) registers the channel and keeps the group's stored subscriptions;
        ``subscriptions`` is then not read."""
        check_str(group, "group", empty=True)
        check_int(heartbeat_fingerprint, "heartbeat_fingerprint", -(2**31), 2**31 - 1)  # a Java int
        check_bool(without_sub, "without_sub")
        check_time(now_ms)
        if without_sub and heartbeat_fingerprint == 0:
            raise ValueError("without_sub needs a heartbeat_fingerprint: the first way always carries subscriptions")
        table = self.consumer_group_heartbeat_table
        if heartbeat_fingerprint == 0:
            sub_change = True
        else:
            last = table.get(group)
            sub_change = last is not None and last != heartbeat_fingerprint
        manager = self.consumer_manager
        if without_sub:
            changed = manager.register_consumer_without_sub(
                group,
                client_channel_info,
                consume_type,
                message_model,
                consume_from_where,
                is_notify_consumer_ids_changed_enable,
                now_ms,
            )
        else:
            changed = manager.register_consumer(
                group,
                client_channel_info,
                consume_type,
                message_model,
                consume_from_where,
                subscriptions,
                is_notify_consumer_ids_changed_enable,
                now_ms,
            )
        table[group] = heartbeat_fingerprint  # Java stores it first; here a refused heartbeat leaves no trace
        return HeartbeatAnswer(changed, True, sub_change)

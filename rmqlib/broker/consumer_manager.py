"""The broker's consumer registry: who is in which group, and who gets told.

A consumer's heartbeat registers its channel and subscriptions with every
broker. When a group's membership or subscription changes, the broker sends
NOTIFY_CONSUMER_IDS_CHANGED to every channel of the group, and each client
rebalances at once instead of waiting for its 20 s timer.

Channels are opaque ids (``str``) distinct from client ids: two processes that
compute the same client id still have two channels, so ``get_all_client_id``
can return the same id twice (apache/rocketmq#1589).

Java keeps channels in a ``ConcurrentHashMap`` whose iteration order follows
hash codes; this model iterates in registration order, which is deterministic
and is what the notebooks show.

Notifications are records in an outbox (``DefaultConsumerIdsChangeListener.outbox``);
a simulator drains it and delivers each record to the client that owns the
channel. Nothing here sends anything or sleeps.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from rmqlib.broker.config import (
    CLIENT_HOUSEKEEPING_INTERVAL_MS,
    NOTIFY_CONSUMER_CHANGE_INITIAL_DELAY_MS,
    NOTIFY_CONSUMER_CHANGE_PERIOD_MS,
    BrokerConfig,
)
from rmqlib.broker.protocol import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    SubscriptionData,
    check_schedule_time,
    check_time,
    coerce_enum,
)
from rmqlib.checks import (
    ArgumentTypeError,
    check_bool,
    check_instance,
    check_int,
    check_items,
    check_methods,
    check_str,
)

_CLIENT_ID = attrgetter("client_id")


def _check_subscriptions(subscriptions, name: str = "subscriptions") -> list:
    return list(check_items(subscriptions, name, SubscriptionData))


def next_period_after(next_ms, now_ms, period_ms):
    """The first of ``next_ms``, ``next_ms + period_ms``, ``next_ms + 2 * period_ms``, ... that is after
    ``now_ms``: a fixed-rate schedule's next run once the missed ones have collapsed into one.

    Computed in one step (the same value, and type, as adding ``period_ms`` until past ``now_ms``), so
    catching up after a long gap costs nothing.
    """
    if next_ms > now_ms:
        return next_ms
    return next_ms + (int((now_ms - next_ms) // period_ms) + 1) * period_ms


class ConsumerGroupEvent(str, enum.Enum):
    """Mirrors: broker/.../client/ConsumerGroupEvent.java"""

    CHANGE = "CHANGE"
    UNREGISTER = "UNREGISTER"
    REGISTER = "REGISTER"
    CLIENT_REGISTER = "CLIENT_REGISTER"
    CLIENT_UNREGISTER = "CLIENT_UNREGISTER"


class ClientChannelInfo:
    """One connection of one client: channel id, client id and last heartbeat.

    Java stamps ``lastUpdateTimestamp`` when the object is built; here the
    caller may pass it, and if it is left ``None`` the first ``update_channel``
    stamps it with that call's ``now_ms``.

    Mirrors: broker/.../client/ClientChannelInfo.java
    """

    __slots__ = ("channel", "client_id", "language", "version", "last_update_timestamp")

    def __init__(
        self, channel: str, client_id: str, language: str = "JAVA", version: int = 0, last_update_timestamp=None
    ):
        if not isinstance(channel, str) or not channel:
            raise (ValueError if isinstance(channel, str) else ArgumentTypeError)(
                f"channel must be a non-empty str id, got {channel!r}"
            )
        if not isinstance(client_id, str) or not client_id:
            raise (ValueError if isinstance(client_id, str) else ArgumentTypeError)(
                f"client_id must be a non-empty str, got {client_id!r}"
            )
        check_str(language, "language")
        check_int(version, "version")
        if last_update_timestamp is not None:
            check_time(last_update_timestamp, "last_update_timestamp")
        self.channel = channel
        self.client_id = client_id
        self.language = language
        self.version = version
        self.last_update_timestamp = last_update_timestamp

    def __repr__(self) -> str:
        return (
            f"ClientChannelInfo(channel={self.channel!r}, client_id={self.client_id!r}, "
            f"last_update_timestamp={self.last_update_timestamp!r})"
        )


class ConsumerGroupInfo:
    """A group's channels, subscriptions and consume settings on one broker.

    Mirrors: broker/.../client/ConsumerGroupInfo.java
    """

    def __init__(self, group_name: str, consume_type=None, message_model=None, consume_from_where=None, now_ms=0):
        if not isinstance(group_name, str) or not group_name:
            raise (ValueError if isinstance(group_name, str) else ArgumentTypeError)(
                f"group_name must be a non-empty str, got {group_name!r}"
            )
        check_time(now_ms)
        self.group_name = group_name
        self.consume_type = None if consume_type is None else coerce_enum(ConsumeType, consume_type, "consume_type")
        self.message_model = (
            None if message_model is None else coerce_enum(MessageModel, message_model, "message_model")
        )
        self.consume_from_where = (
            None
            if consume_from_where is None
            else coerce_enum(ConsumeFromWhere, consume_from_where, "consume_from_where")
        )
        self.subscription_table: dict[str, SubscriptionData] = {}
        self.channel_info_table: dict[str, ClientChannelInfo] = {}
        self.last_update_timestamp = now_ms

    # ---- lookups ----------------------------------------------------------
    def find_channel_by_client_id(self, client_id: str) -> ClientChannelInfo | None:
        """First channel (in table order) whose client id matches.

        Mirrors: ConsumerGroupInfo.java#findChannel(String)
        """
        check_str(client_id, "client_id", empty=True)
        for info in self.channel_info_table.values():
            if info.client_id == client_id:
                return info
        return None

    def find_channel(self, channel: str) -> ClientChannelInfo | None:
        """Mirrors: ConsumerGroupInfo.java#findChannel(Channel)"""
        check_str(channel, "channel", empty=True)
        return self.channel_info_table.get(channel)

    def get_all_channel(self) -> list[str]:
        """Mirrors: ConsumerGroupInfo.java#getAllChannel"""
        return list(self.channel_info_table)

    def get_all_client_id(self) -> list[str]:
        """Client ids in channel order; duplicates are kept, as in Java.

        Mirrors: ConsumerGroupInfo.java#getAllClientId
        """
        return list(map(_CLIENT_ID, self.channel_info_table.values()))

    def get_subscribe_topics(self) -> list[str]:
        return list(self.subscription_table)

    def find_subscription_data(self, topic: str) -> SubscriptionData | None:
        if type(topic) is not str:  # a str looks up as it is (the pull path's call, twice a message)
            check_str(topic, "topic", empty=True)
        return self.subscription_table.get(topic)

    # ---- mutation ---------------------------------------------------------
    def unregister_channel(self, client_channel_info: ClientChannelInfo) -> bool:
        """Remove the channel of ``client_channel_info``; True if it was there.

        Mirrors: ConsumerGroupInfo.java#unregisterChannel
        """
        check_instance(client_channel_info, "client_channel_info", ClientChannelInfo)
        return self.channel_info_table.pop(client_channel_info.channel, None) is not None

    def do_channel_close_event(self, remote_addr: str, channel: str) -> ClientChannelInfo | None:
        """Mirrors: ConsumerGroupInfo.java#doChannelCloseEvent"""
        check_str(channel, "channel", empty=True)
        return self.channel_info_table.pop(channel, None)

    def update_channel(
        self, info_new: ClientChannelInfo, consume_type, message_model, consume_from_where, now_ms
    ) -> bool:
        """Register or refresh a channel. True only when the channel is new.

        The group's consume type, message model and consume-from-where are
        overwritten by every heartbeat (last writer wins). If the channel is
        known but now reports another client id, the new info replaces the old
        one but, as in Java, the refreshed timestamp lands on the *old* object.

        Mirrors: ConsumerGroupInfo.java#updateChannel
        """
        check_time(now_ms)
        check_instance(info_new, "info_new", ClientChannelInfo)
        updated = False
        self.consume_type = coerce_enum(ConsumeType, consume_type, "consume_type")
        self.message_model = coerce_enum(MessageModel, message_model, "message_model")
        self.consume_from_where = coerce_enum(ConsumeFromWhere, consume_from_where, "consume_from_where")
        if info_new.last_update_timestamp is None:
            info_new.last_update_timestamp = now_ms  # Java: stamped at construction
        info_old = self.channel_info_table.get(info_new.channel)
        if info_old is None:
            self.channel_info_table[info_new.channel] = info_new
            updated = True
            info_old = info_new
        elif info_old.client_id != info_new.client_id:
            self.channel_info_table[info_new.channel] = info_new
        self.last_update_timestamp = now_ms
        info_old.last_update_timestamp = now_ms
        return updated

    def update_subscription(self, sub_list: Iterable[SubscriptionData], now_ms=None) -> bool:
        """Apply a heartbeat's subscriptions; True if a topic was added or removed.

        A topic seen for the first time → changed. A newer ``sub_version`` for a
        known topic replaces the old entry *without* reporting a change. A topic
        missing from this heartbeat is removed → changed. So the group's
        subscription is whatever the last heartbeat said (apache/rocketmq#351).

        Mirrors: ConsumerGroupInfo.java#updateSubscription
        """
        sub_list = _check_subscriptions(sub_list, "sub_list")
        if now_ms is not None:
            check_time(now_ms)
        updated = False
        topics_seen = set()
        for sub in sub_list:
            old = self.subscription_table.get(sub.topic)
            if old is None:
                self.subscription_table[sub.topic] = sub
                updated = True
            elif sub.sub_version > old.sub_version:
                self.subscription_table[sub.topic] = sub
            topics_seen.add(sub.topic)
        for topic in list(self.subscription_table):
            if topic not in topics_seen:
                del self.subscription_table[topic]
                updated = True
        if now_ms is not None:
            self.last_update_timestamp = check_time(now_ms)
        return updated

    def _check(self) -> None:
        for channel, info in self.channel_info_table.items():
            assert isinstance(info, ClientChannelInfo)
            assert info.channel == channel, (channel, info)
            assert info.last_update_timestamp is not None, info
        for topic, sub in self.subscription_table.items():
            assert sub.topic == topic, (topic, sub)


class ConsumerIdsChangedNotification(NamedTuple):
    """One NOTIFY_CONSUMER_IDS_CHANGED request the broker sends (oneway). An immutable record (a named tuple: a
    group's change makes one per member, so it is built cheaply).

    Mirrors: broker/.../client/net/Broker2Client.java#notifyConsumerIdsChanged
    """

    time_ms: int
    channel: str
    client_id: str
    group: str


@dataclass(frozen=True)
class ListenerEvent:
    """A record of one ``callConsumerIdsChangeListener`` call, for transcripts and tests.

    Mirrors: broker/.../client/ConsumerManager.java#callConsumerIdsChangeListener
    """

    time_ms: int
    event: ConsumerGroupEvent
    group: str
    args: tuple


class DefaultConsumerIdsChangeListener:
    """Turns CHANGE events into NOTIFY_CONSUMER_IDS_CHANGED records.

    ``realTimeNotifyConsumerChange`` true: one notification per channel of
    the group, immediately. False: the latest channel list per group is kept
    and flushed by a timer (first at ``start_ms + 30 s``, then every 15 s);
    call :meth:`run_due` from the driver. Both paths are switched off by
    ``notifyConsumerIdsChangedEnable`` of the broker config.

    Java's real-time loop can be interrupted by a newer CHANGE for the same
    group; here every loop finishes instantly, so that race does not arise.

    Mirrors: broker/.../client/DefaultConsumerIdsChangeListener.java
    """

    def __init__(self, broker_config: BrokerConfig | None = None, start_ms=0):
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        self.broker_config = broker_config or BrokerConfig()
        self.outbox: list[ConsumerIdsChangedNotification] = []
        self.consumer_channel_map: dict[str, list[ClientChannelInfo]] = {}
        self.next_flush_ms = check_schedule_time(start_ms, "start_ms") + NOTIFY_CONSUMER_CHANGE_INITIAL_DELAY_MS

    def handle(self, event: ConsumerGroupEvent, group: str, args: tuple, now_ms) -> None:
        event = coerce_enum(ConsumerGroupEvent, event, "event")
        check_str(group, "group", empty=True)
        check_time(now_ms)
        if not isinstance(args, (tuple, list)):
            raise ArgumentTypeError(f"args must be a tuple, got {type(args).__name__}")
        if event is not ConsumerGroupEvent.CHANGE:
            return  # REGISTER/UNREGISTER only touch the filter manager in Java
        if not args:
            return
        channels = args[0]
        if channels is not None:
            channels = check_items(channels, "args[0]", ClientChannelInfo)
        if channels is None or not self.broker_config.notify_consumer_ids_changed_enable:
            return
        if self.broker_config.real_time_notify_consumer_change:
            self.outbox.extend(
                [ConsumerIdsChangedNotification(now_ms, info.channel, info.client_id, group) for info in channels]
            )
        else:
            self.consumer_channel_map[group] = list(channels)

    def notify_consumer_change(self, now_ms) -> list[ConsumerIdsChangedNotification]:
        """Flush the coalesced groups now. Mirrors: #notifyConsumerChange"""
        check_time(now_ms)
        sent = []
        if not self.consumer_channel_map:
            return sent
        pending, self.consumer_channel_map = self.consumer_channel_map, {}
        if not self.broker_config.notify_consumer_ids_changed_enable:
            return sent
        for group, channels in pending.items():
            for info in channels:
                sent.append(ConsumerIdsChangedNotification(now_ms, info.channel, info.client_id, group))
        self.outbox.extend(sent)
        return sent

    def run_due(self, now_ms) -> list[ConsumerIdsChangedNotification]:
        """Run the fixed-rate flush if its time has come (missed runs collapse into one).

        ``now_ms`` must be within +-2**53 (:data:`~rmqlib.checks.MAX_TIME_MS`); the schedule then jumps
        straight to the first period after it, however long the gap.
        """
        check_schedule_time(now_ms)
        sent = []
        if now_ms >= self.next_flush_ms:
            sent = self.notify_consumer_change(now_ms)
            self.next_flush_ms = next_period_after(self.next_flush_ms, now_ms, NOTIFY_CONSUMER_CHANGE_PERIOD_MS)
        return sent

    def drain(self) -> list[ConsumerIdsChangedNotification]:
        """Return and clear the outbox."""
        out, self.outbox = self.outbox, []
        return out


#: How many of the latest listener calls ``ConsumerManager.events`` keeps (the model's log, for transcripts).
LISTENER_EVENTS_KEPT = 1_024


class ConsumerManager:
    """All consumer groups known to one broker, and the events they raise.

    ``listeners`` receive ``handle(event, group, args, now_ms)``; the latest
    :data:`LISTENER_EVENTS_KEPT` calls are also kept in :attr:`events` (a deque; Java keeps none) so a
    transcript can show REGISTER, CLIENT_UNREGISTER, CHANGE … in order, while a long run with a big group
    (a REGISTER per heartbeat, a CHANGE holding every member per join) stays bounded. For CHANGE, ``args[0]``
    is the list of :class:`ClientChannelInfo` still in the group.

    Mirrors: broker/.../client/ConsumerManager.java
    """

    def __init__(self, listeners=None, broker_config: BrokerConfig | None = None):
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        self.broker_config = broker_config or BrokerConfig()
        if listeners is None:
            listeners = [DefaultConsumerIdsChangeListener(self.broker_config)]
        elif not isinstance(listeners, (list, tuple)):
            listeners = [listeners]
        for i, listener in enumerate(listeners):
            check_methods(listener, f"listeners[{i}]", "handle")
        self.listeners = list(listeners)
        self.channel_expired_timeout = self.broker_config.channel_expired_timeout
        self.subscription_expired_timeout = self.broker_config.subscription_expired_timeout
        self.consumer_table: dict[str, ConsumerGroupInfo] = {}
        self.topic_group_table: dict[str, set[str]] = {}
        self.consumer_compensation_table: dict[str, ConsumerGroupInfo] = {}
        self.events: deque[ListenerEvent] = deque(maxlen=LISTENER_EVENTS_KEPT)
        self.closed_channels: list[tuple[int, str]] = []

    @property
    def default_listener(self) -> DefaultConsumerIdsChangeListener | None:
        for listener in self.listeners:
            if isinstance(listener, DefaultConsumerIdsChangeListener):
                return listener
        return None

    def _call_listeners(self, event: ConsumerGroupEvent, group: str, now_ms, *args) -> None:
        self.events.append(ListenerEvent(now_ms, event, group, tuple(args)))
        for listener in self.listeners:
            listener.handle(event, group, tuple(args), now_ms)

    def _channels_of(self, info: ConsumerGroupInfo) -> list[ClientChannelInfo]:
        return list(info.channel_info_table.values())

    # ---- lookups ----------------------------------------------------------
    def get_consumer_group_info(self, group: str, from_compensation_table: bool = False):
        if type(group) is not str:  # a str looks up as it is (the pull path's call, twice a message)
            check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        if info is None and from_compensation_table:
            info = self.consumer_compensation_table.get(group)
        return info

    def find_channel(self, group: str, channel: str) -> ClientChannelInfo | None:
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        return None if info is None else info.find_channel(channel)

    def find_channel_by_client_id(self, group: str, client_id: str) -> ClientChannelInfo | None:
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        return None if info is None else info.find_channel_by_client_id(client_id)

    def find_subscription_data(self, group: str, topic: str, from_compensation_table: bool = True):
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        if info is not None:
            sub = info.find_subscription_data(topic)
            if sub is not None:
                return sub
        if from_compensation_table:
            comp = self.consumer_compensation_table.get(group)
            if comp is not None:
                return comp.find_subscription_data(topic)
        return None

    def find_subscription_data_count(self, group: str) -> int:
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        return 0 if info is None else len(info.subscription_table)

    def get_consumer_id_list(self, group: str) -> list[str] | None:
        """What GET_CONSUMER_LIST_BY_GROUP answers: client ids in channel order, or None.

        Mirrors: broker/.../processor/ConsumerManageProcessor.java#getConsumerListByGroup
        """
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        if info is None:
            return None
        return info.get_all_client_id()

    def get_all_client_id(self, group: str) -> list[str]:
        check_str(group, "group", empty=True)
        info = self.consumer_table.get(group)
        return [] if info is None else info.get_all_client_id()

    def query_topic_consume_by_who(self, topic: str) -> set[str]:
        check_str(topic, "topic", empty=True)
        return set(self.topic_group_table.get(topic, ()))

    # ---- heartbeat --------------------------------------------------------
    def register_consumer(
        self,
        group: str,
        client_channel_info: ClientChannelInfo,
        consume_type,
        message_model,
        consume_from_where,
        subscriptions,
        is_notify_consumer_ids_changed_enable: bool,
        now_ms,
        update_subscription: bool = True,
    ) -> bool:
        """Handle one consumer heartbeat for ``group``. True if channel or topics changed.

        CHANGE fires when the channel is new or a topic was added/removed, the
        group config allows notification and the group is not BROADCASTING.

        Mirrors: ConsumerManager.java#registerConsumer
        """
        check_time(now_ms)
        check_str(group, "group", empty=True)
        check_instance(client_channel_info, "client_channel_info", ClientChannelInfo)
        subscriptions = _check_subscriptions(subscriptions)
        check_bool(is_notify_consumer_ids_changed_enable, "is_notify_consumer_ids_changed_enable")
        check_bool(update_subscription, "update_subscription")
        info = self.consumer_table.get(group)
        if info is None:
            info = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where, now_ms)
            self.consumer_table[group] = info
        for sub in subscriptions:
            self.topic_group_table.setdefault(sub.topic, set()).add(group)
        r1 = info.update_channel(client_channel_info, consume_type, message_model, consume_from_where, now_ms)
        if r1:
            self._call_listeners(
                ConsumerGroupEvent.CLIENT_REGISTER, group, now_ms, client_channel_info, {s.topic for s in subscriptions}
            )
        r2 = info.update_subscription(subscriptions, now_ms) if update_subscription else False
        if (r1 or r2) and is_notify_consumer_ids_changed_enable and info.message_model is not MessageModel.BROADCASTING:
            self._call_listeners(ConsumerGroupEvent.CHANGE, group, now_ms, self._channels_of(info))
        self._call_listeners(ConsumerGroupEvent.REGISTER, group, now_ms, subscriptions, client_channel_info)
        return r1 or r2

    def register_consumer_without_sub(
        self,
        group: str,
        client_channel_info: ClientChannelInfo,
        consume_type,
        message_model,
        consume_from_where,
        is_notify_consumer_ids_changed_enable: bool,
        now_ms,
    ) -> bool:
        """Heartbeat V2 path that keeps the stored subscriptions.

        Mirrors: ConsumerManager.java#registerConsumerWithoutSub
        """
        check_time(now_ms)
        check_str(group, "group", empty=True)
        check_instance(client_channel_info, "client_channel_info", ClientChannelInfo)
        check_bool(is_notify_consumer_ids_changed_enable, "is_notify_consumer_ids_changed_enable")
        info = self.consumer_table.get(group)
        if info is None:
            info = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where, now_ms)
            self.consumer_table[group] = info
        for topic in info.subscription_table:
            self.topic_group_table.setdefault(topic, set()).add(group)
        updated = info.update_channel(client_channel_info, consume_type, message_model, consume_from_where, now_ms)
        if updated and is_notify_consumer_ids_changed_enable and info.message_model is not MessageModel.BROADCASTING:
            self._call_listeners(ConsumerGroupEvent.CHANGE, group, now_ms, self._channels_of(info))
        return updated

    def unregister_consumer(
        self, group: str, client_channel_info: ClientChannelInfo, is_notify_consumer_ids_changed_enable: bool, now_ms
    ) -> None:
        """Client shutdown (UNREGISTER_CLIENT).

        Java fires CHANGE here even when the channel was not registered, as
        long as the group exists; the empty group is dropped first, so the
        CHANGE of the last member goes to an empty channel list.

        Mirrors: ConsumerManager.java#unregisterConsumer
        """
        check_time(now_ms)
        check_str(group, "group", empty=True)
        check_instance(client_channel_info, "client_channel_info", ClientChannelInfo)
        check_bool(is_notify_consumer_ids_changed_enable, "is_notify_consumer_ids_changed_enable")
        info = self.consumer_table.get(group)
        if info is None:
            return
        if info.unregister_channel(client_channel_info):
            self._call_listeners(
                ConsumerGroupEvent.CLIENT_UNREGISTER, group, now_ms, client_channel_info, info.get_subscribe_topics()
            )
        if not info.channel_info_table:
            if self.consumer_table.pop(group, None) is not None:
                self._call_listeners(ConsumerGroupEvent.UNREGISTER, group, now_ms)
                self._clear_topic_group_table(info)
        if is_notify_consumer_ids_changed_enable and info.message_model is not MessageModel.BROADCASTING:
            self._call_listeners(ConsumerGroupEvent.CHANGE, group, now_ms, self._channels_of(info))

    def do_channel_close_event(self, remote_addr: str, channel: str, now_ms) -> bool:
        """A Netty close/exception/idle event on ``channel``: drop it from every group.

        CHANGE fires for each non-broadcast group that lost the channel; this
        path is not gated by the group's notify flag (only by the broker's).

        Mirrors: ConsumerManager.java#doChannelCloseEvent (the non-fast path)
        """
        check_time(now_ms)
        check_str(channel, "channel", empty=True)
        removed = False
        for group, info in list(self.consumer_table.items()):
            closed = info.do_channel_close_event(remote_addr, channel)
            if closed is None:
                continue
            removed = True
            self._call_listeners(
                ConsumerGroupEvent.CLIENT_UNREGISTER, group, now_ms, closed, info.get_subscribe_topics()
            )
            if not info.channel_info_table:
                if self.consumer_table.pop(group, None) is not None:
                    self._call_listeners(ConsumerGroupEvent.UNREGISTER, group, now_ms)
                    self._clear_topic_group_table(info)
            if info.message_model is not MessageModel.BROADCASTING:
                self._call_listeners(ConsumerGroupEvent.CHANGE, group, now_ms, self._channels_of(info))
        return removed

    def scan_not_active_channel(self, now_ms) -> list[tuple[str, ClientChannelInfo]]:
        """Drop channels silent for more than ``channelExpiredTimeout`` (120 s).

        Fires only CLIENT_UNREGISTER: no CHANGE, so the survivors learn about
        the loss only from their own periodic rebalance (up to 20 s later).
        The broker then closes the channel; Netty's close event finds nothing
        left to remove, so no CHANGE comes from there either. An emptied group
        is dropped without an UNREGISTER event (as in Java). Returns the
        removed ``(group, channel info)`` pairs; the closed channel ids are
        also appended to :attr:`closed_channels`.

        Mirrors: ConsumerManager.java#scanNotActiveChannel
        """
        check_time(now_ms)
        removed = []
        for group, info in list(self.consumer_table.items()):
            for channel, cci in list(info.channel_info_table.items()):
                if now_ms - cci.last_update_timestamp > self.channel_expired_timeout:
                    self._call_listeners(
                        ConsumerGroupEvent.CLIENT_UNREGISTER, group, now_ms, cci, info.get_subscribe_topics()
                    )
                    self.closed_channels.append((now_ms, channel))
                    del info.channel_info_table[channel]
                    removed.append((group, cci))
            if not info.channel_info_table:
                del self.consumer_table[group]
        self.remove_expire_consumer_group_info(now_ms)
        return removed

    # ---- compensation table (pull/proxy consumers without heartbeats) -----
    def compensate_basic_consumer_info(self, group: str, consume_type, message_model) -> None:
        """Mirrors: ConsumerManager.java#compensateBasicConsumerInfo"""
        check_str(group, "group", empty=True)
        consume_type = coerce_enum(ConsumeType, consume_type, "consume_type")
        message_model = coerce_enum(MessageModel, message_model, "message_model")
        info = self.consumer_compensation_table.get(group)
        if info is None:
            info = self.consumer_compensation_table[group] = ConsumerGroupInfo(group)
        info.consume_type = coerce_enum(ConsumeType, consume_type, "consume_type")
        info.message_model = coerce_enum(MessageModel, message_model, "message_model")

    def compensate_subscribe_data(self, group: str, topic: str, subscription_data: SubscriptionData) -> None:
        """Mirrors: ConsumerManager.java#compensateSubscribeData"""
        check_str(group, "group", empty=True)
        check_str(topic, "topic")
        check_instance(subscription_data, "subscription_data", SubscriptionData)
        info = self.consumer_compensation_table.get(group)
        if info is None:
            info = self.consumer_compensation_table[group] = ConsumerGroupInfo(group)
        info.subscription_table[topic] = subscription_data

    def remove_expire_consumer_group_info(self, now_ms) -> None:
        """Forget compensated subscriptions whose sub_version is older than 10 min.

        Mirrors: ConsumerManager.java#removeExpireConsumerGroupInfo
        """
        check_time(now_ms)
        for group, info in list(self.consumer_compensation_table.items()):
            for topic, sub in list(info.subscription_table.items()):
                if now_ms - sub.sub_version > self.subscription_expired_timeout:
                    del info.subscription_table[topic]
                    if not info.subscription_table:
                        self.consumer_compensation_table.pop(group, None)

    def _clear_topic_group_table(self, info: ConsumerGroupInfo) -> None:
        for topic in info.get_subscribe_topics():
            groups = self.topic_group_table.get(topic)
            if groups is not None:
                groups.discard(info.group_name)
                if not groups:
                    del self.topic_group_table[topic]

    def _check(self) -> None:
        for group, info in self.consumer_table.items():
            assert info.group_name == group
            assert info.channel_info_table, f"empty group {group!r} left in consumer_table"
            info._check()
        for topic, groups in self.topic_group_table.items():
            assert groups, f"empty group set for topic {topic!r}"


class ClientHousekeepingService:
    """Runs ``scan_not_active_channel`` every 10 s (first run 10 s after start).

    Mirrors: broker/.../client/ClientHousekeepingService.java
    """

    def __init__(self, consumer_manager: ConsumerManager, start_ms=0):
        check_instance(consumer_manager, "consumer_manager", ConsumerManager)
        self.consumer_manager = consumer_manager
        self.next_scan_ms = check_schedule_time(start_ms, "start_ms") + CLIENT_HOUSEKEEPING_INTERVAL_MS

    def run_due(self, now_ms) -> list[tuple[str, ClientChannelInfo]]:
        """Scan if due; missed periods collapse into one scan (the later ones would find nothing).

        ``now_ms`` must be within +-2**53 (:data:`~rmqlib.checks.MAX_TIME_MS`); the schedule then jumps
        straight to the first period after it, however long the gap.
        """
        check_schedule_time(now_ms)
        removed = []
        if now_ms >= self.next_scan_ms:
            removed = self.consumer_manager.scan_not_active_channel(now_ms)
            self.next_scan_ms = next_period_after(self.next_scan_ms, now_ms, CLIENT_HOUSEKEEPING_INTERVAL_MS)
        return removed

    def on_channel_close(self, remote_addr: str, channel: str, now_ms) -> bool:
        """Netty close/exception/idle all route here. Mirrors: #onChannelClose"""
        return self.consumer_manager.do_channel_close_event(remote_addr, channel, now_ms)

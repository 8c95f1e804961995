"""The 5.x proxy: what it answers a gRPC consumer's QUERY_ASSIGNMENT, and which queue a receive pops.

The gRPC clients (``rocketmq-clients``) never share queues among themselves. Every few seconds a push consumer asks
the proxy for its assignment, and the proxy answers from the topic's route alone: it never looks at who else is in
the group. A group that does not consume orderly gets one entry per readable broker, queue id -1 ("any queue of this
broker"); a FIFO group (``consumeMessageOrderly`` in its subscription group config) gets every readable queue of
every broker. Each member gets the same answer. When the consumer receives, the proxy keeps only the broker name of
the queue it names and pops queue -1 of that broker, orderly for a FIFO group: so the broker, not the assignment,
decides which queue each batch comes from, and orderly Pop's blocks
(:mod:`rmqlib.broker.consumer_order_info`) keep each queue's order.

A push consumer's receive asks the proxy to renew what it hands out (``autoRenew``): the proxy pops with a 60 s
invisible time, keeps each message invisible while the client holds it (renewing it once it is within 10 s of
showing, for up to 3 h), and when the client leaves, makes what it held visible again 1 s later
(:class:`ReceiptHandleManager`). "Leaves" means the proxy's consumer registry unregisters it: at once when the client
shuts down (NotifyClientTermination), but for a client that crashes only when the registry's 10 s scan finds its
last heartbeat (every 10 s) more than 120 s old, as for a silent remoting client: a gRPC client's connection is
not watched (``ClientActivity``'s telemetry stream only logs an error). :mod:`rmqlib.sim.grpc_fifo` replays it.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3):

* proxy/.../grpc/v2/route/RouteActivity.java#queryAssignment -- :func:`query_assignment`;
* proxy/.../service/route/MessageQueueSelector.java (``buildRead``, the broker-acting queues, ``getQueueByBrokerName``,
  ``selectOne``) and grpc/v2/consumer/ReceiveMessageActivity.java#ReceiveMessageQueueSelector -- :func:`receive_queue`;
* proxy/.../service/receipt/DefaultReceiptHandleManager.java, proxy/.../processor/ReceiptHandleProcessor.java,
  proxy/.../common/RenewStrategyPolicy.java -- :class:`ReceiptHandleManager`.

The answer's broker endpoints are the proxy's own in cluster mode; they are left out here (a
:class:`~rmqlib.model.MessageQueue` names the broker).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rmqlib.broker.consumer_manager import ClientChannelInfo, ConsumerGroupEvent, ConsumerManager
from rmqlib.broker.pop import AckHandle, PopMessageProcessor
from rmqlib.broker.protocol import ResponseCode
from rmqlib.checks import check_bool, check_callable, check_instance, check_int, check_mapping, check_str
from rmqlib.model import MessageQueue
from rmqlib.namesrv import TopicRouteData, is_readable, is_writeable
from rmqlib.protocol import MASTER_ID, ConsumeFromWhere, ConsumeType, MessageModel

BROKER_ACTING_QUEUE_ID = -1  # MessageQueueSelector.BROKER_ACTING_QUEUE_ID: "pop from any queue of this broker"
DEFAULT_INVISIBLE_TIME_MILLS = 60_000  # ProxyConfig.defaultInvisibleTimeMills: an auto-renewed receive's pop
RENEW_AHEAD_TIME_MILLIS = 10_000  # ProxyConfig.renewAheadTimeMillis
RENEW_MAX_TIME_MILLIS = 3 * 3_600_000  # ProxyConfig.renewMaxTimeMillis
RENEW_SCHEDULE_PERIOD_MILLIS = 5_000  # ProxyConfig.renewSchedulePeriodMillis
INVISIBLE_TIME_MILLIS_WHEN_CLEAR = 1_000  # ProxyConfig.invisibleTimeMillisWhenClear
RENEW_STRATEGY_MILLIS = (60_000, 180_000, 300_000, 600_000, 1_800_000, 3_600_000)  # RenewStrategyPolicy.next
# CustomizedRetryPolicy.next, a group's default retry policy: 1 s 5 s 10 s 30 s, 1-10 min, 20 min, 30 min, 1 h, 2 h
CUSTOMIZED_RETRY_MILLIS = (
    1_000, 5_000, 10_000, 30_000, *(m * 60_000 for m in range(1, 11)), 1_200_000, 1_800_000, 3_600_000, 7_200_000
)  # fmt: skip


class Code(enum.Enum):
    """The gRPC answer's status codes used here. Mirrors: apache.rocketmq.v2.Code"""

    OK = 20000
    FORBIDDEN = 40300
    INTERNAL_SERVER_ERROR = 50001


class Permission(enum.Enum):
    """A queue's permission as the gRPC protocol spells it. Mirrors: apache.rocketmq.v2.Permission"""

    NONE = 1
    READ = 2
    WRITE = 3
    READ_WRITE = 4


def convert_to_permission(perm: int) -> Permission:
    """Mirrors: RouteActivity#convertToPermission"""
    readable, writeable = is_readable(perm), is_writeable(perm)
    if readable and writeable:
        return Permission.READ_WRITE
    if readable:
        return Permission.READ
    if writeable:
        return Permission.WRITE
    return Permission.NONE


@dataclass(frozen=True)
class Assignment:
    """One entry of a QUERY_ASSIGNMENT answer: a queue (id -1: any queue of the broker) on a broker's master."""

    message_queue: MessageQueue
    permission: Permission


@dataclass(frozen=True)
class QueryAssignmentResponse:
    """The proxy's answer: OK with the assignments, or an error status and no assignment.
    Mirrors: apache.rocketmq.v2.QueryAssignmentResponse"""

    code: Code
    message: str
    assignments: tuple[Assignment, ...] = ()


def query_assignment(route: TopicRouteData, topic: str, fifo: bool) -> QueryAssignmentResponse:
    """What the proxy answers any member of a group reading ``topic`` over ``route`` (the name server's route).
    ``fifo``: the group's subscription config consumes orderly.

    Every readable queue data with read queues gives one entry on its broker's master (a FIFO group: one per read
    queue). A broker name whose route lists no master (only slaves are left) fails the whole answer: Java builds
    the entry with a null broker, protobuf refuses it (NullPointerException), and the proxy answers
    INTERNAL_SERVER_ERROR. No entry at all: FORBIDDEN "no readable queue".

    Mirrors: RouteActivity.java#queryAssignment
    """
    check_instance(route, "route", TopicRouteData)
    check_str(topic, "topic")
    check_bool(fifo, "fifo")
    brokers = {data.broker_name: dict(data.broker_addrs) for data in route.broker_datas}
    assignments: list[Assignment] = []
    for queue_data in route.queue_datas:
        if not (is_readable(queue_data.perm) and queue_data.read_queue_nums > 0):
            continue
        addrs = brokers.get(queue_data.broker_name)
        if addrs is None:
            continue
        if MASTER_ID not in addrs:
            return QueryAssignmentResponse(
                Code.INTERNAL_SERVER_ERROR,
                f"NullPointerException: the route of {topic} lists no master of {queue_data.broker_name}",
            )
        permission = convert_to_permission(queue_data.perm)
        queue_ids = range(queue_data.read_queue_nums) if fifo else (BROKER_ACTING_QUEUE_ID,)
        assignments += [
            Assignment(MessageQueue(topic, queue_data.broker_name, queue_id), permission) for queue_id in queue_ids
        ]
    if not assignments:
        return QueryAssignmentResponse(Code.FORBIDDEN, "no readable queue")
    return QueryAssignmentResponse(Code.OK, Code.OK.name, tuple(assignments))


def receive_queue(route: TopicRouteData, topic: str, broker_name: str) -> tuple[MessageQueue, str] | None:
    """The queue a receive for a queue of ``broker_name`` pops, and the address it is sent to: queue -1 of that
    broker, whatever queue id the client named, on its master or, with no master, its first slave. None when the
    route has no readable queue on that broker (Java then picks another broker round-robin, from a random start).

    Mirrors: ReceiveMessageActivity.ReceiveMessageQueueSelector#select, MessageQueueSelector#buildRead,
    #buildBrokerActingQueues, #getQueueByBrokerName; TopicRouteWrapper#getMasterAddrPrefer
    """
    check_instance(route, "route", TopicRouteData)
    check_str(topic, "topic")
    check_str(broker_name, "broker_name")
    readable = {data.broker_name for data in route.queue_datas if is_readable(data.perm) and data.read_queue_nums}
    if broker_name not in readable:
        return None
    for data in route.broker_datas:
        if data.broker_name == broker_name and data.broker_addrs:
            addrs = dict(data.broker_addrs)
            address = addrs.get(MASTER_ID, data.broker_addrs[0][1])
            return MessageQueue(topic, broker_name, BROKER_ACTING_QUEUE_ID), address
    return None


class RenewKind(enum.Enum):
    """Why the proxy changes a held message's invisible time. Mirrors: RenewEvent.EventType"""

    RENEW = "renew"  # still held: keep it invisible longer
    STOP_RENEW = "stop renew"  # held for renewMaxTimeMillis: hand it back after the group's retry delay
    CLEAR_GROUP = "clear group"  # its client left: visible again 1 s later


@dataclass(frozen=True)
class RenewEvent:
    """One change of invisible time the proxy sent to a broker, and the broker's answer."""

    time_ms: int
    kind: RenewKind
    channel: str
    handle: AckHandle
    invisible_time_ms: int
    code: ResponseCode


@dataclass
class MessageReceiptHandle:
    """A message the proxy handed to a client and watches: the handle it holds now (each renewal replaces it), when it
    was popped, how many times it was renewed. Mirrors: proxy/.../common/MessageReceiptHandle.java"""

    handle: AckHandle
    reconsume_times: int
    consume_timestamp: int
    renew_times: int = 0


def _message_key(handle: AckHandle) -> tuple[str, str, int, int]:
    """Which message a handle lends: its broker, topic, queue and offset (Java keys by the message id, which names
    the stored message as uniquely; a message redelivered from the retry topic is another stored copy here)."""
    return handle.broker_name, handle.topic, handle.queue_id, handle.queue_offset


def _client_key(channel: object, group: object) -> tuple[str, str]:
    """The proxy's ReceiptHandleGroupKey: a client's channel and its group."""
    return check_str(channel, "channel"), check_str(group, "group")


class ReceiptHandleManager:
    """What the proxy's clients hold, by (client channel, group), and the renewals that keep it invisible.

    The proxy calls the brokers itself: ``brokers`` maps a broker name to its
    :class:`~rmqlib.broker.pop.PopMessageProcessor`, and each change of invisible time goes to the broker the handle
    names. Mirrors: DefaultReceiptHandleManager.java (``addReceiptHandle``, ``removeReceiptHandle``,
    ``scheduleRenewTask``, ``startRenewMessage``, ``clearGroup``) and ReceiptHandleProcessor's listener; a renewal
    that fails is dropped (Java retries some failures), and the renew worker pool is not modelled.
    """

    def __init__(self, brokers: Mapping[str, PopMessageProcessor]) -> None:
        self.brokers = check_mapping(brokers, "brokers")
        self.groups: dict[tuple[str, str], dict[tuple[str, str, int, int], MessageReceiptHandle]] = {}
        self.events: list[RenewEvent] = []

    def add_receipt_handle(self, channel: str, group: str, handle: AckHandle, reconsume_times: int = 0) -> None:
        """A receive handed ``handle``'s message to the client on ``channel``. Mirrors: #addReceiptHandle"""
        key = _client_key(channel, group)
        check_instance(handle, "handle", AckHandle)
        check_int(reconsume_times, "reconsume_times", 0)
        watched = MessageReceiptHandle(handle, reconsume_times, handle.pop_time)
        self.groups.setdefault(key, {})[_message_key(handle)] = watched

    def remove_receipt_handle(self, channel: str, group: str, handle: AckHandle) -> MessageReceiptHandle | None:
        """The client acked (or changed) the message: stop watching it. Mirrors: #removeReceiptHandle"""
        key = _client_key(channel, group)
        check_instance(handle, "handle", AckHandle)
        return self.groups.get(key, {}).pop(_message_key(handle), None)

    def held(self, channel: str, group: str) -> list[AckHandle]:
        """The handles the proxy watches for one client, as they are now."""
        key = _client_key(channel, group)
        return [watched.handle for watched in self.groups.get(key, {}).values()]

    def schedule_renew_task(self, now_ms: int, is_online: Callable[[str, str], bool]) -> list[RenewEvent]:
        """The scan every 5 s: a client that is no longer registered (``is_online(channel, group)`` false) has its
        messages cleared; every other held message within 10 s of showing again is renewed (1 min, then 3, 5, 10,
        30 min, then 1 h at a time), or, once held for 3 h, handed back after the group's retry delay.
        Mirrors: #scheduleRenewTask, #startRenewMessage"""
        check_int(now_ms, "now_ms", 0)
        check_callable(is_online, "is_online")
        done: list[RenewEvent] = []
        for channel, group in list(self.groups):
            if not is_online(channel, group):
                done += self.clear_group(channel, group, now_ms)
                continue
            watched_by_key = self.groups[(channel, group)]
            for key, watched in list(watched_by_key.items()):
                if watched.handle.revive_time - now_ms > RENEW_AHEAD_TIME_MILLIS:  # its next visible time
                    continue
                if now_ms - watched.consume_timestamp < RENEW_MAX_TIME_MILLIS:
                    renew = RENEW_STRATEGY_MILLIS[min(watched.renew_times, len(RENEW_STRATEGY_MILLIS) - 1)]
                    event, new_handle = self._change(now_ms, RenewKind.RENEW, channel, watched.handle, renew)
                    if new_handle is None:
                        del watched_by_key[key]
                    else:
                        watched.handle = new_handle
                        watched.renew_times += 1
                else:
                    index = min(watched.reconsume_times + 2, len(CUSTOMIZED_RETRY_MILLIS) - 1)
                    kind = RenewKind.STOP_RENEW
                    event, _ = self._change(now_ms, kind, channel, watched.handle, CUSTOMIZED_RETRY_MILLIS[index])
                    del watched_by_key[key]
                done.append(event)
        return done

    def clear_group(self, channel: str, group: str, now_ms: int) -> list[RenewEvent]:
        """The client on ``channel`` left ``group`` (CLIENT_UNREGISTER, or found offline by the scan): everything it
        held becomes visible again 1 s from now. Mirrors: #clearGroup"""
        check_int(now_ms, "now_ms", 0)
        watched_by_key = self.groups.pop(_client_key(channel, group), {})
        return [
            self._change(now_ms, RenewKind.CLEAR_GROUP, channel, watched.handle, INVISIBLE_TIME_MILLIS_WHEN_CLEAR)[0]
            for watched in watched_by_key.values()
        ]

    def handle(self, event: ConsumerGroupEvent, group: str, args: tuple[object, ...], now_ms: int) -> None:
        """The manager's listener on the proxy's consumer registry (a
        :class:`~rmqlib.broker.consumer_manager.ConsumerManager`): a client that the registry unregisters (its
        NotifyClientTermination, or the 10 s scan finding its last heartbeat more than 120 s old) has what it held
        cleared at once. Mirrors: the ConsumerIdsChangeListener DefaultReceiptHandleManager's constructor adds"""
        if event is ConsumerGroupEvent.CLIENT_UNREGISTER and args and isinstance(args[0], ClientChannelInfo):
            self.clear_group(args[0].channel, group, now_ms)

    def _change(
        self, now_ms: int, kind: RenewKind, channel: str, handle: AckHandle, invisible_time_ms: int
    ) -> tuple[RenewEvent, AckHandle | None]:
        """The listener's changeInvisibleTime on the handle's broker. Mirrors: ReceiptHandleProcessor's listener"""
        code, new_handle = self.brokers[handle.broker_name].change_invisible_time(handle, invisible_time_ms, now_ms)
        event = RenewEvent(now_ms, kind, channel, handle, invisible_time_ms, code)
        self.events.append(event)
        return event, new_handle if code is ResponseCode.SUCCESS else None


def register_client(registry: ConsumerManager, group: str, channel_info: ClientChannelInfo, now_ms: int) -> None:
    """A push consumer's heartbeat, or its settings on the telemetry stream, reaches the proxy: it is registered (again)
    in ``group`` of the proxy's consumer registry, which stamps its last heartbeat. Mirrors: ClientActivity.java
    #registerConsumer (a push consumer consumes passively, clustering; its subscriptions are not kept here)"""
    registry.register_consumer(
        group, channel_info, ConsumeType.CONSUME_PASSIVELY, MessageModel.CLUSTERING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, [], False, now_ms, update_subscription=False,
    )  # fmt: skip


__all__ = [
    "BROKER_ACTING_QUEUE_ID",
    "DEFAULT_INVISIBLE_TIME_MILLS",
    "Assignment",
    "Code",
    "MessageReceiptHandle",
    "Permission",
    "QueryAssignmentResponse",
    "ReceiptHandleManager",
    "RenewEvent",
    "RenewKind",
    "convert_to_permission",
    "query_assignment",
    "receive_queue",
    "register_client",
]

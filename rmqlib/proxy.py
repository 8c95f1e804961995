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

* proxy/.../grpc/v2/route/RouteActivity.java#queryAssignment -- :func:`query_assignment`; #queryRoute --
  :func:`query_route`;
* proxy/.../service/route/MessageQueueSelector.java (``buildRead``, the broker-acting queues, ``getQueueByBrokerName``,
  ``selectOne``) and grpc/v2/consumer/ReceiveMessageActivity.java#ReceiveMessageQueueSelector -- :func:`receive_queue`;
* proxy/.../service/route/TopicRouteService.java (``topicCache``), ClusterTopicRouteService.java,
  MessageQueueView.java and ClusterMessageService.java#resolveBrokerAddrInReceiptHandle -- :class:`TopicRouteService`,
  :class:`MessageQueueView`;
* proxy/.../service/receipt/DefaultReceiptHandleManager.java, proxy/.../processor/ReceiptHandleProcessor.java,
  proxy/.../common/RenewStrategyPolicy.java -- :class:`ReceiptHandleManager`.

The answer's broker endpoints are the proxy's own in cluster mode; they are left out here (a
:class:`~rmqlib.model.MessageQueue` names the broker).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from rmqlib.broker.consumer_manager import ClientChannelInfo, ConsumerGroupEvent, ConsumerManager
from rmqlib.broker.pop import AckHandle, PopMessageProcessor
from rmqlib.broker.protocol import ResponseCode
from rmqlib.checks import check_bool, check_callable, check_instance, check_int, check_mapping, check_str
from rmqlib.model import MessageQueue
from rmqlib.namesrv import TopicRouteData, is_readable, is_writeable
from rmqlib.protocol import MASTER_ID, ConsumeFromWhere, ConsumeType, MessageModel

BROKER_ACTING_QUEUE_ID = -1  # MessageQueueSelector.BROKER_ACTING_QUEUE_ID: "pop from any queue of this broker"
DEFAULT_INVISIBLE_TIME_MILLS = 60_000  # ProxyConfig.defaultInvisibleTimeMills: an auto-renewed receive's pop
MIN_INVISIBLE_TIME_MILLS_FOR_RECV = 10_000  # ProxyConfig.minInvisibleTimeMillsForRecv: a receive that is not renewed
MAX_INVISIBLE_TIME_MILLS = 12 * 3_600_000  # ProxyConfig.maxInvisibleTimeMills
RENEW_AHEAD_TIME_MILLIS = 10_000  # ProxyConfig.renewAheadTimeMillis
RENEW_MAX_TIME_MILLIS = 3 * 3_600_000  # ProxyConfig.renewMaxTimeMillis
RENEW_SCHEDULE_PERIOD_MILLIS = 5_000  # ProxyConfig.renewSchedulePeriodMillis
MAX_RENEW_RETRY_TIMES = 3  # ProxyConfig.maxRenewRetryTimes: renewals that failed with an exception, in a row
TOPIC_ROUTE_CACHE_REFRESH_MS = 20_000  # ProxyConfig.topicRouteServiceCacheRefreshSeconds
TOPIC_ROUTE_CACHE_EXPIRED_MS = 300_000  # ProxyConfig.topicRouteServiceCacheExpiredSeconds (after the last read)
INVISIBLE_TIME_MILLIS_WHEN_CLEAR = 1_000  # ProxyConfig.invisibleTimeMillisWhenClear
RENEW_STRATEGY_MILLIS = (60_000, 180_000, 300_000, 600_000, 1_800_000, 3_600_000)  # RenewStrategyPolicy.next
# CustomizedRetryPolicy.next, a group's default retry policy: 1 s 5 s 10 s 30 s, 1-10 min, 20 min, 30 min, 1 h, 2 h
CUSTOMIZED_RETRY_MILLIS = (
    1_000, 5_000, 10_000, 30_000, *(m * 60_000 for m in range(1, 11)), 1_200_000, 1_800_000, 3_600_000, 7_200_000
)  # fmt: skip


class Code(enum.Enum):
    """The gRPC answer's status codes used here. Mirrors: apache.rocketmq.v2.Code"""

    OK = 20000
    BAD_REQUEST = 40000
    INVALID_RECEIPT_HANDLE = 40013
    FORBIDDEN = 40300
    MESSAGE_NOT_FOUND = 40401
    TOPIC_NOT_FOUND = 40402
    TOO_MANY_REQUESTS = 42900
    INTERNAL_SERVER_ERROR = 50001
    PROXY_TIMEOUT = 50400


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
    INTERNAL_SERVER_ERROR. No entry at all: FORBIDDEN "no readable queue". A route with no queue data or no broker
    data is no route: the proxy's cache holds it as an empty view and answers TOPIC_NOT_FOUND
    (:meth:`TopicRouteService.get_all_message_queue_view`).

    Mirrors: RouteActivity.java#queryAssignment
    """
    check_instance(route, "route", TopicRouteData)
    check_str(topic, "topic")
    check_bool(fifo, "fifo")
    if not is_topic_route_valid(route):
        return QueryAssignmentResponse(Code.TOPIC_NOT_FOUND, str(topic_not_exist(topic)))
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


@dataclass(frozen=True)
class RouteQueue:
    """One message queue of a QueryRoute answer: a queue id on one broker of the route (its master or a slave, by
    ``broker_id``) and what a client may do with it. Mirrors: apache.rocketmq.v2.MessageQueue (endpoints left out)"""

    message_queue: MessageQueue
    permission: Permission
    broker_id: int


def query_route(route: TopicRouteData, topic: str) -> tuple[RouteQueue, ...]:
    """What the proxy answers a client's QueryRoute for ``topic`` over ``route``.

    For each queue data in the route's order and each broker of its name (by broker id), the queues numbered from
    0: the read-only ones first, then the write-only ones, then the readable-and-writable ones (as many as the
    smaller of the read and write counts); a queue data that can be neither read nor written gives max(1, read,
    write) queues with no permission. A queue data whose broker name no broker data has ends the answer there
    (Java leaves the loop rather than skipping it).

    Mirrors: RouteActivity.java#queryRoute, #genMessageQueueFromQueueData
    """
    check_instance(route, "route", TopicRouteData)
    check_str(topic, "topic")
    brokers = {data.broker_name: sorted(dict(data.broker_addrs)) for data in route.broker_datas}
    answer: list[RouteQueue] = []
    for queue_data in route.queue_datas:
        broker_ids = brokers.get(queue_data.broker_name)
        if broker_ids is None:
            break
        read, write, perm = queue_data.read_queue_nums, queue_data.write_queue_nums, queue_data.perm
        both = min(read, write) if is_readable(perm) and is_writeable(perm) else 0
        runs = [
            (Permission.READ, read - both if is_readable(perm) else 0),
            (Permission.WRITE, write - both if is_writeable(perm) else 0),
            (Permission.READ_WRITE, both),
            (Permission.NONE, 0 if is_readable(perm) or is_writeable(perm) else max(1, read, write)),
        ]
        for broker_id in broker_ids:
            queue_id = 0
            for permission, count in runs:
                for _ in range(count):
                    mq = MessageQueue(topic, queue_data.broker_name, queue_id)
                    answer.append(RouteQueue(mq, permission, broker_id))
                    queue_id += 1
    return tuple(answer)


def receive_queue(route: TopicRouteData, topic: str, broker_name: str) -> tuple[MessageQueue, str] | None:
    """The queue a receive for a queue of ``broker_name`` pops, and the address it is sent to: queue -1 of that
    broker, whatever queue id the client named, on its master or, with no master, its first slave. None when the
    route has no readable queue on that broker (the proxy then picks another broker round-robin:
    :meth:`MessageQueueView.select_receive_queue`).

    Mirrors: MessageQueueSelector#buildRead, #buildBrokerActingQueues, #getQueueByBrokerName;
    TopicRouteWrapper#getMasterAddrPrefer
    """
    check_instance(route, "route", TopicRouteData)
    check_str(topic, "topic")
    check_str(broker_name, "broker_name")
    return MessageQueueView(topic, route, random.Random(0)).get_queue_by_broker_name(broker_name)


class ProxyExceptionCode(enum.Enum):
    """Why the proxy refused a call itself. Mirrors: proxy/.../common/ProxyExceptionCode.java (the codes used here)"""

    INVALID_BROKER_NAME = "INVALID_BROKER_NAME"
    FORBIDDEN = "FORBIDDEN"
    INVALID_RECEIPT_HANDLE = "INVALID_RECEIPT_HANDLE"


class ProxyException(Exception):
    """The proxy refused a call: ``code`` says why. Mirrors: proxy/.../common/ProxyException.java"""

    def __init__(self, code: ProxyExceptionCode, message: str) -> None:
        self.code = check_instance(code, "code", ProxyExceptionCode)
        super().__init__(f"{code.value}: {check_str(message, 'message', empty=True)}")


class MQClientException(Exception):
    """A call failed with a remoting response code (``response_code``): here, the proxy's cache has no route of a
    topic (TOPIC_NOT_EXIST). Mirrors: client/.../exception/MQClientException.java"""

    def __init__(self, response_code: ResponseCode, message: str) -> None:
        self.response_code = check_instance(response_code, "response_code", ResponseCode)
        super().__init__(f"{response_code.name}: {check_str(message, 'message', empty=True)}")


def topic_not_exist(topic: str) -> MQClientException:
    """What the proxy's cache raises for a topic it holds no route of.
    Mirrors: TopicRouteService#getCacheMessageQueueWrapper"""
    return MQClientException(ResponseCode.TOPIC_NOT_EXIST, f"the name server has no route of {topic}")


def is_topic_route_valid(route: TopicRouteData | None) -> bool:
    """A route with at least one queue data and one broker data. Mirrors: TopicRouteService#isTopicRouteValid"""
    return route is not None and bool(route.queue_datas) and bool(route.broker_datas)


class RemotingConnectException(Exception):
    """The proxy could not reach a broker at the address it has (the broker is down and its port closed).
    Mirrors: remoting/.../exception/RemotingConnectException.java"""


class RemotingTimeoutException(Exception):
    """A broker the proxy called did not answer in time (its host vanished, its connection still looks open).
    Mirrors: remoting/.../exception/RemotingTimeoutException.java"""


def status_code(error: BaseException) -> Code:
    """The status a gRPC client gets for a call the proxy failed with ``error``. Mirrors: ResponseBuilder#buildStatus
    and GrpcProxyException's code mapping (a topic with no route: TOPIC_NOT_FOUND; a timeout: PROXY_TIMEOUT; anything
    else: INTERNAL_SERVER_ERROR)"""
    if isinstance(error, ProxyException):
        return _STATUS_OF_PROXY_EXCEPTION[error.code]
    if isinstance(error, MQClientException) and error.response_code is ResponseCode.TOPIC_NOT_EXIST:
        return Code.TOPIC_NOT_FOUND  # TopicRouteHelper#isTopicNotExistError
    return Code.PROXY_TIMEOUT if isinstance(error, RemotingTimeoutException) else Code.INTERNAL_SERVER_ERROR


_STATUS_OF_PROXY_EXCEPTION = {
    ProxyExceptionCode.INVALID_BROKER_NAME: Code.BAD_REQUEST,
    ProxyExceptionCode.FORBIDDEN: Code.FORBIDDEN,
    ProxyExceptionCode.INVALID_RECEIPT_HANDLE: Code.INVALID_RECEIPT_HANDLE,
}


class MessageQueueView:
    """One topic's route as the proxy caches it: the route itself, what a receive may pop (queue -1 of each broker
    with readable queues, sorted) and the read selector's round-robin index. Java draws the index's start at random
    when the view is built; here it is drawn from ``rng`` when first needed (no draw is seen before that). A topic
    the name server does not know, or whose route has no queue data or no broker data, has an empty view
    (``is_empty_cached_queue``; Java's ``WRAPPED_EMPTY_QUEUE``).

    Mirrors: proxy/.../service/route/MessageQueueView.java, MessageQueueSelector.java (the read selector: ``buildRead``,
    ``buildBrokerActingQueues``, ``getQueueByBrokerName``, ``selectOne(true)``), TopicRouteWrapper.java
    """

    def __init__(self, topic: str, route: TopicRouteData | None, rng: random.Random) -> None:
        self.topic = check_str(topic, "topic")
        self.route = TopicRouteData((), ()) if route is None else check_instance(route, "route", TopicRouteData)
        self.is_empty_cached_queue = not is_topic_route_valid(self.route)
        self.rng = check_instance(rng, "rng", random.Random)
        self.broker_index: int | None = None
        self.broker_addrs = {data.broker_name: dict(data.broker_addrs) for data in self.route.broker_datas}
        acting: dict[str, tuple[MessageQueue, str]] = {}
        for data in self.route.queue_datas:
            addrs = self.broker_addrs.get(data.broker_name)
            if not (is_readable(data.perm) and data.read_queue_nums and addrs):
                continue
            address = addrs.get(MASTER_ID, next(iter(addrs.values())))  # getMasterAddrPrefer
            queue = MessageQueue(topic, data.broker_name, BROKER_ACTING_QUEUE_ID)
            acting.setdefault(data.broker_name, (queue, address))
        self.broker_acting_queues = sorted(acting.values())

    def get_queue_by_broker_name(self, broker_name: str) -> tuple[MessageQueue, str] | None:
        """Queue -1 of ``broker_name`` and its address, or None when the view has no readable queue there."""
        for queue in self.broker_acting_queues:
            if queue[0].broker_name == broker_name:
                return queue
        return None

    def select_receive_queue(self, broker_name: str) -> tuple[MessageQueue, str] | None:
        """What a receive for a queue of ``broker_name`` pops: that broker's queue -1 while the view reads from it,
        else the next broker's in turn; None when the view reads from no broker at all (the proxy then answers
        FORBIDDEN "no readable queue"). Mirrors: ReceiveMessageActivity.ReceiveMessageQueueSelector#select"""
        picked = self.get_queue_by_broker_name(broker_name)
        if picked is None and self.broker_acting_queues:
            if self.broker_index is None:
                self.broker_index = self.rng.randrange(-(2**31), 2**31)  # Random#nextInt
            picked = self.broker_acting_queues[self.broker_index % len(self.broker_acting_queues)]
            self.broker_index += 1
        return picked

    def master_addr(self, broker_name: str) -> str | None:
        """The address of ``broker_name``'s master in this view (None when only slaves are listed). Raises
        ``LookupError`` when the view does not list the broker (Java: a NullPointerException).
        Mirrors: TopicRouteWrapper#getMasterAddr"""
        addrs = self.broker_addrs.get(broker_name)
        if addrs is None:
            raise LookupError(f"the route of {self.topic} lists no broker {broker_name}")
        return addrs.get(MASTER_ID)


@dataclass
class _CachedView:
    view: MessageQueueView
    written_ms: int
    read_ms: int


class TopicRouteService:
    """The proxy's cache of routes, by topic (Caffeine's ``topicCache``). A read of a topic not cached, or left unread
    for 300 s or more, loads it from the name server; a read more than 20 s after its entry was written (Caffeine's
    refresh compares strictly, its expiry not) gets the entry as it is and sets off a reload, which replaces it (the
    name server answering at once here: Java reloads on a thread pool). A topic the name server does not know loads
    as an empty view, which a read gets as :class:`MQClientException` TOPIC_NOT_EXIST (the gRPC status
    TOPIC_NOT_FOUND) until a reload finds a route; the name server never fails here, so no reload keeps the old view
    because of an error.
    ``load_route(topic)`` is the name server's answer now (a :class:`~rmqlib.namesrv.TopicRouteData`, or None).
    ``rng`` draws each view's round-robin start.

    Every broker also registers a topic named after itself; the proxy finds a broker's address from that topic's
    cached route (:meth:`get_broker_addr`).

    Mirrors: proxy/.../service/route/TopicRouteService.java (``topicCache``, ``getAllMessageQueueView``),
    ClusterTopicRouteService.java (``getCurrentMessageQueueView``, ``getBrokerAddr``)
    """

    def __init__(
        self,
        load_route: Callable[[str], TopicRouteData | None],
        rng: random.Random,
        refresh_ms: int = TOPIC_ROUTE_CACHE_REFRESH_MS,
        expired_ms: int = TOPIC_ROUTE_CACHE_EXPIRED_MS,
    ) -> None:
        self.load_route = check_callable(load_route, "load_route")
        self.rng = check_instance(rng, "rng", random.Random)
        self.refresh_ms = check_int(refresh_ms, "refresh_ms", 1)
        self.expired_ms = check_int(expired_ms, "expired_ms", 1)
        self.cache: dict[str, _CachedView] = {}
        self.loads = 0  # calls to the name server so far (loads and reloads)

    def _load(self, topic: str) -> MessageQueueView:
        self.loads += 1
        return MessageQueueView(topic, self.load_route(topic), self.rng)

    def get_all_message_queue_view(self, topic: str, now_ms: int) -> MessageQueueView:
        """The view of ``topic`` a read at ``now_ms`` gets (see the class); raises :class:`MQClientException`
        TOPIC_NOT_EXIST when that view is empty. Mirrors: #getAllMessageQueueView, #getCacheMessageQueueWrapper"""
        check_str(topic, "topic")
        check_int(now_ms, "now_ms", 0)
        entry = self.cache.get(topic)
        if entry is None or now_ms - entry.read_ms >= self.expired_ms:
            entry = self.cache[topic] = _CachedView(self._load(topic), now_ms, now_ms)
        view = entry.view
        entry.read_ms = now_ms
        if now_ms - entry.written_ms > self.refresh_ms:  # refreshAfterWrite: this read still gets the old view
            entry.view, entry.written_ms = self._load(topic), now_ms
        if view.is_empty_cached_queue:
            raise topic_not_exist(topic)
        return view

    def get_broker_addr(self, broker_name: str, now_ms: int) -> str | None:
        """The master address of ``broker_name``, from the cached route of the topic named after it. Raises
        :class:`MQClientException` when there is no such route, ``LookupError`` when the route does not list the
        broker. Mirrors: ClusterTopicRouteService#getBrokerAddr"""
        return self.get_all_message_queue_view(broker_name, now_ms).master_addr(broker_name)

    def resolve_broker_addr_in_receipt_handle(self, broker_name: str, now_ms: int) -> str | None:
        """The address an ack or a change of invisible time goes to; a broker the cache cannot find is refused as
        INVALID_RECEIPT_HANDLE. Mirrors: ClusterMessageService#resolveBrokerAddrInReceiptHandle"""
        try:
            return self.get_broker_addr(broker_name, now_ms)
        except (LookupError, MQClientException) as error:
            code = ProxyExceptionCode.INVALID_RECEIPT_HANDLE
            raise ProxyException(code, f"cannot find broker {broker_name}") from error


def validate_receipt_handle(handle: AckHandle, now_ms: int) -> AckHandle:
    """Refuse ``handle`` as INVALID_RECEIPT_HANDLE once its message is visible again (its pop time plus its
    invisible time is ``now_ms`` or earlier): the proxy sends no ack or change of invisible time for it. Mirrors:
    AbstractProcessor#validateReceiptHandle, ReceiptHandle#isExpired"""
    check_instance(handle, "handle", AckHandle)
    if handle.revive_time <= check_int(now_ms, "now_ms", 0):
        raise ProxyException(ProxyExceptionCode.INVALID_RECEIPT_HANDLE, "receipt handle is expired")
    return handle


def changed_handle(handle: AckHandle, answer: AckHandle | None) -> AckHandle:
    """The receipt handle a broker's SUCCESS to a change of ``handle``'s invisible time gives: the broker's
    ``answer``, or, when the broker left its answer's header unset (an orderly message the group has committed past),
    one built from that header's zeros: popped at 0 for 0 ms, so already expired, and no longer orderly.
    Mirrors: MQClientAPIImpl#changeInvisibleTimeAsync (ExtraInfoUtil#buildExtraInfo from the response header)"""
    check_instance(handle, "handle", AckHandle)
    if answer is not None:
        check_instance(answer, "answer", AckHandle)
        return answer
    return replace(handle, start_offset=handle.queue_offset, pop_time=0, invisible_time=0, revive_qid=0)


class RenewKind(enum.Enum):
    """Why the proxy changes a held message's invisible time. Mirrors: RenewEvent.EventType"""

    RENEW = "renew"  # still held: keep it invisible longer
    STOP_RENEW = "stop renew"  # held for renewMaxTimeMillis: hand it back after the group's retry delay
    CLEAR_GROUP = "clear group"  # its client left: visible again 1 s later


@dataclass(frozen=True)
class RenewEvent:
    """One change of invisible time the proxy sent to a broker, and the broker's answer (``code``), or the error the
    call failed with (``code`` None)."""

    time_ms: int
    kind: RenewKind
    channel: str
    handle: AckHandle
    invisible_time_ms: int
    code: ResponseCode | None
    error: str = ""


@dataclass
class MessageReceiptHandle:
    """A message the proxy handed to a client and watches: the handle it holds now (each renewal replaces it), when it
    was popped, how many times it was renewed, and how many renewals in a row failed with an error.
    Mirrors: proxy/.../common/MessageReceiptHandle.java"""

    handle: AckHandle
    reconsume_times: int
    consume_timestamp: int
    renew_times: int = 0
    renew_retry_times: int = 0


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
    :class:`~rmqlib.broker.pop.PopMessageProcessor` (or anything with its ``change_invisible_time``), and each change
    of invisible time goes to the broker the handle names. A call may fail with a :class:`ProxyException`, a
    :class:`RemotingConnectException` or a :class:`RemotingTimeoutException`: a renewal that fails so is tried again at
    the next scans, at most 3 times in a row, unless the proxy refused it as INVALID_RECEIPT_HANDLE or
    INVALID_BROKER_NAME (with the 5 s scans renewing 10 s ahead, a handle whose renewals keep failing expires first, and
    the proxy then refuses it as expired); one the broker answers with anything but SUCCESS is dropped. A dropped
    message is left to show again when its invisible time ends (a call that times out fails here at once, not 2 s
    later).
    Mirrors: DefaultReceiptHandleManager.java (``addReceiptHandle``, ``removeReceiptHandle``, ``scheduleRenewTask``,
    ``startRenewMessage``, ``renewExceptionNeedRetry``, ``clearGroup``) and ReceiptHandleProcessor's listener; the
    renew worker pool is not modelled.
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
        30 min, then 1 h at a time), or, once held for 3 h, handed back after the group's retry delay; one whose last
        3 renewals failed with an error is dropped instead. Mirrors: #scheduleRenewTask, #startRenewMessage"""
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
                if watched.renew_retry_times >= MAX_RENEW_RETRY_TIMES:
                    del watched_by_key[key]
                    continue
                if now_ms - watched.consume_timestamp < RENEW_MAX_TIME_MILLIS:
                    renew = RENEW_STRATEGY_MILLIS[min(watched.renew_times, len(RENEW_STRATEGY_MILLIS) - 1)]
                    event, new_handle = self._change(now_ms, RenewKind.RENEW, channel, watched.handle, renew)
                    if new_handle is not None:
                        watched.handle = new_handle
                        watched.renew_times += 1
                        watched.renew_retry_times = 0
                    elif event.code is None and _renew_exception_need_retry(event.error):
                        watched.renew_retry_times += 1
                    else:
                        del watched_by_key[key]
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
        try:
            validate_receipt_handle(handle, now_ms)
            code, new_handle = self.brokers[handle.broker_name].change_invisible_time(handle, invisible_time_ms, now_ms)
        except (ProxyException, RemotingConnectException, RemotingTimeoutException) as error:
            event = RenewEvent(now_ms, kind, channel, handle, invisible_time_ms, None, _error_name(error))
            self.events.append(event)
            return event, None
        event = RenewEvent(now_ms, kind, channel, handle, invisible_time_ms, code)
        self.events.append(event)
        return event, changed_handle(handle, new_handle) if code is ResponseCode.SUCCESS else None


def _error_name(error: Exception) -> str:
    return error.code.value if isinstance(error, ProxyException) else type(error).__name__


def _renew_exception_need_retry(error: str) -> bool:
    """Mirrors: DefaultReceiptHandleManager#renewExceptionNeedRetry (by the error's name, as a RenewEvent keeps it)"""
    return error not in (ProxyExceptionCode.INVALID_BROKER_NAME.value, ProxyExceptionCode.INVALID_RECEIPT_HANDLE.value)


def register_client(
    registry: ConsumerManager, group: str, channel_info: ClientChannelInfo, now_ms: int, simple: bool = False
) -> None:
    """A consumer's heartbeat, or its settings on the telemetry stream, reaches the proxy: it is registered (again)
    in ``group`` of the proxy's consumer registry, which stamps its last heartbeat, as clustering and consuming
    passively (a push consumer) or actively (``simple``: a simple consumer). Mirrors: ClientActivity.java
    #registerConsumer, #buildConsumeType (its subscriptions are not kept here)"""
    consume_type = ConsumeType.CONSUME_ACTIVELY if check_bool(simple, "simple") else ConsumeType.CONSUME_PASSIVELY
    registry.register_consumer(
        group, channel_info, consume_type, MessageModel.CLUSTERING,
        ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, [], False, now_ms, update_subscription=False,
    )  # fmt: skip


__all__ = [
    "BROKER_ACTING_QUEUE_ID",
    "DEFAULT_INVISIBLE_TIME_MILLS",
    "MAX_INVISIBLE_TIME_MILLS",
    "MAX_RENEW_RETRY_TIMES",
    "MIN_INVISIBLE_TIME_MILLS_FOR_RECV",
    "Assignment",
    "Code",
    "MQClientException",
    "MessageQueueView",
    "MessageReceiptHandle",
    "Permission",
    "ProxyException",
    "ProxyExceptionCode",
    "QueryAssignmentResponse",
    "ReceiptHandleManager",
    "RemotingConnectException",
    "RemotingTimeoutException",
    "RenewEvent",
    "RenewKind",
    "RouteQueue",
    "TopicRouteService",
    "changed_handle",
    "convert_to_permission",
    "query_assignment",
    "query_route",
    "receive_queue",
    "register_client",
    "status_code",
    "validate_receipt_handle",
]

"""The 5.x proxy: what it answers a gRPC consumer's QUERY_ASSIGNMENT, and which queue a receive pops.

The gRPC clients (``rocketmq-clients``) never share queues among themselves. Every few seconds a push consumer asks
the proxy for its assignment, and the proxy answers from the topic's route alone: it never looks at who else is in
the group. A group that does not consume orderly gets one entry per readable broker, queue id -1 ("any queue of this
broker"); a FIFO group (``consumeMessageOrderly`` in its subscription group config) gets every readable queue of
every broker. Each member gets the same answer. When the consumer receives, the proxy keeps only the broker name of
the queue it names and pops queue -1 of that broker, orderly for a FIFO group: so the broker, not the assignment,
decides which queue each batch comes from, and orderly Pop's blocks
(:mod:`rmqlib.broker.consumer_order_info`) keep each queue's order.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3):

* proxy/.../grpc/v2/route/RouteActivity.java#queryAssignment -- :func:`query_assignment`;
* proxy/.../service/route/MessageQueueSelector.java (``buildRead``, the broker-acting queues, ``getQueueByBrokerName``,
  ``selectOne``) and grpc/v2/consumer/ReceiveMessageActivity.java#ReceiveMessageQueueSelector -- :func:`receive_queue`.

The answer's broker endpoints are the proxy's own in cluster mode; they are left out here (a
:class:`~rmqlib.model.MessageQueue` names the broker).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rmqlib.checks import check_bool, check_instance, check_str
from rmqlib.model import MessageQueue
from rmqlib.namesrv import TopicRouteData, is_readable, is_writeable
from rmqlib.protocol import MASTER_ID

BROKER_ACTING_QUEUE_ID = -1  # MessageQueueSelector.BROKER_ACTING_QUEUE_ID: "pop from any queue of this broker"


class Code(enum.Enum):
    """The gRPC answer's status codes used here. Mirrors: apache.rocketmq.v2.Code"""

    OK = 20000
    FORBIDDEN = 40300
    INTERNAL_SERVER_ERROR = 50000


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


__all__ = [
    "BROKER_ACTING_QUEUE_ID",
    "Assignment",
    "Code",
    "Permission",
    "QueryAssignmentResponse",
    "convert_to_permission",
    "query_assignment",
    "receive_queue",
]

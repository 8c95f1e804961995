"""What a client makes of a topic's route: the queues a consumer may be given, the queues a producer sends to.

Mirrors the two static methods of client/.../impl/factory/MQClientInstance.java (commit
8fc57f1468d182eea11c01e089c0250d647dc5f3): ``topicRouteData2TopicSubscribeInfo`` and
``topicRouteData2TopicPublishInfo`` (the plain case; ordered topics and static topics are not modelled).
A client asks the name server for every topic it uses at start and then every ``pollNameServerInterval``
(30 s, :data:`rmqlib.namesrv.POLL_NAME_SERVER_INTERVAL_MS`); a consumer's rebalance sees a changed route
only at its next run.
"""

from __future__ import annotations

from rmqlib.model import MessageQueue
from rmqlib.namesrv import TopicRouteData, is_readable, is_writeable


def topic_route_data_to_subscribe_info(topic: str, route: TopicRouteData) -> set[MessageQueue]:
    """Every readable broker's queues ``0 .. readQueueNums-1`` (whether or not its master is up)."""
    return {
        MessageQueue(topic, qd.broker_name, i)
        for qd in route.queue_datas
        if is_readable(qd.perm)
        for i in range(qd.read_queue_nums)
    }


def topic_route_data_to_publish_info(topic: str, route: TopicRouteData) -> list[MessageQueue]:
    """Queues ``0 .. writeQueueNums-1`` of every writeable broker that has a master, brokers in name order."""
    masters = {bd.broker_name for bd in route.broker_datas if bd.has_master()}
    return [
        MessageQueue(topic, qd.broker_name, i)
        for qd in sorted(route.queue_datas)
        if is_writeable(qd.perm) and qd.broker_name in masters
        for i in range(qd.write_queue_nums)
    ]


__all__ = ["topic_route_data_to_publish_info", "topic_route_data_to_subscribe_info"]

"""What ``mqadmin consumerProgress`` and a dashboard do to show a consumer group's progress: find the group's
brokers through its retry topic's route, ask each at the address the route offers (its master, or a slave when the
route shows none), and merge the answers into one table.

Mirrors: tools/.../admin/DefaultMQAdminExtImpl.java (#examineConsumeStats) for normal topics; static topics' queue
mappings (``convertPhysicalConsumeStats``) are not modelled.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from rmqlib.broker.admin import ConsumeStats
from rmqlib.broker.protocol import ResponseCode, build_pop_retry_topic
from rmqlib.checks import check_callable, check_enum, check_instance, check_str, check_str_or_none
from rmqlib.client.api import MQClientError
from rmqlib.namesrv import TopicRouteData
from rmqlib.protocol import MessageModel, retry_topic


def examine_consume_stats(
    group: str,
    topic_route: Callable[[str], TopicRouteData | None],
    get_consume_stats: Callable[[str, str, str | None], ConsumeStats],
    rng: random.Random,
    get_consumer_connection: Callable[[str, str], MessageModel | None],
    topic: str | None = None,
) -> ConsumeStats:
    """``group``'s progress on every broker of its route, as one table with the brokers' TPS summed.

    ``topic_route(name)`` is the name server's route of a topic (None: it has none). The route used is the first
    one found of the group's retry topic, then ``topic`` and its Pop retry topic. Each broker is asked through
    ``get_consume_stats(addr, group, topic)`` at BrokerData#selectBrokerAddr (``rng`` draws among slaves); an
    exception from any of them fails the whole call, as Java's loop catches none. An empty table makes the tool ask
    one broker of the route, drawn by ``rng``, for the group's connections: ``get_consumer_connection(addr, group)``
    is the group's message model as that broker's registry has it, None when it has no member. With none (or a
    failure on the way) the call fails with CONSUMER_NOT_ONLINE; a broadcasting group's, with BROADCAST_CONSUMPTION.
    Mirrors: DefaultMQAdminExtImpl#examineConsumeStats, #examineConsumerConnectionInfo"""
    check_str(group, "group")
    check_callable(topic_route, "topic_route")
    check_callable(get_consume_stats, "get_consume_stats")
    check_instance(rng, "rng", random.Random)
    check_callable(get_consumer_connection, "get_consumer_connection")
    topic = check_str_or_none(topic, "topic")
    route_topics = [retry_topic(group)] + ([topic, build_pop_retry_topic(topic, group)] if topic else [])
    route = next(filter(None, map(topic_route, route_topics)), None)
    if route is None:
        raise MQClientError(f"no topic route of {route_topics[-1]}", code=ResponseCode.TOPIC_NOT_EXIST)
    result = ConsumeStats()
    for broker_data in route.broker_datas:
        answer = get_consume_stats(broker_data.select_broker_addr(rng), group, topic)
        result.offset_table.update(answer.offset_table)
        result.consume_tps += answer.consume_tps
    if not result.offset_table:
        try:  # any failure to learn the group's connections counts as no member online, as in Java
            connection_route = topic_route(retry_topic(group))
            asked = rng.choice(connection_route.broker_datas) if connection_route else None
            message_model = get_consumer_connection(asked.select_broker_addr(rng), group) if asked else None
        except Exception:
            message_model = None
        if message_model is None:
            raise MQClientError(
                f"no consume stats of {group}: no member is online", code=ResponseCode.CONSUMER_NOT_ONLINE
            )
        if check_enum(message_model, "message_model", MessageModel) == MessageModel.BROADCASTING:
            raise MQClientError(
                f"no consume stats of {group}: it consumes by broadcasting", code=ResponseCode.BROADCAST_CONSUMPTION
            )
    return result

"""The broker's own copy of topic routes, which QUERY_ASSIGNMENT answers from (RocketMQ 5).

Mirrors: broker/.../topic/TopicRouteInfoManager.java (its subscribe-info table; the publish-info half serves the
escape bridge, which is not modelled)

The broker fetches a topic's route from the name server the first time it is asked for it, and then refreshes
every topic it holds every ``loadBalancePollNameServerInterval`` (30 s), starting 1 s after the broker starts. So
a broker that stopped stays in the queues a broker hands out for up to that long.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rmqlib.broker.protocol import RETRY_GROUP_TOPIC_PREFIX
from rmqlib.checks import check_str
from rmqlib.model import MessageQueue

#: BrokerConfig.loadBalancePollNameServerInterval
LOAD_BALANCE_POLL_NAME_SERVER_INTERVAL = 30_000
#: TopicRouteInfoManager#start: the scheduled refresh's first run, after the broker starts
FIRST_ROUTE_UPDATE_DELAY_MILLIS = 1_000


class TopicRouteInfoManager:
    """``fetch_subscribe_info(topic)``: the topic's readable queues as the name server routes them now, or None
    when it has no route for the topic (Java: a TOPIC_NOT_EXIST answer)."""

    def __init__(self, fetch_subscribe_info: Callable[[str], Iterable[MessageQueue] | None]):
        if not callable(fetch_subscribe_info):
            raise TypeError("fetch_subscribe_info must be callable: topic -> its queues, or None")
        self.fetch_subscribe_info = fetch_subscribe_info
        self.topic_subscribe_info_table: dict[str, frozenset[MessageQueue]] = {}

    def get_topic_subscribe_info(self, topic: str) -> set[MessageQueue] | None:
        """The topic's queues as this broker last fetched them; fetched now if it holds none. Mirrors:
        #getTopicSubscribeInfo"""
        check_str(topic, "topic")
        queues = self.topic_subscribe_info_table.get(topic)
        if not queues:
            self._update(topic)
            queues = self.topic_subscribe_info_table.get(topic)
        return None if queues is None else set(queues)

    def update_topic_route_info_from_name_server(self) -> None:
        """The scheduled task: fetch every topic this broker holds again.

        Mirrors: #updateTopicRouteInfoFromNameServer
        """
        for topic in list(self.topic_subscribe_info_table):
            self._update(topic)

    def _update(self, topic: str) -> None:
        """One topic: the name server's queues replace the held ones; a topic it no longer routes is forgotten,
        unless it is a retry topic (#cleanNoneRouteTopic)."""
        queues = self.fetch_subscribe_info(topic)
        if queues is None:
            if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                self.topic_subscribe_info_table.pop(topic, None)
            return
        self.topic_subscribe_info_table[topic] = frozenset(queues)

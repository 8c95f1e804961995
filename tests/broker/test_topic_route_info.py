"""TopicRouteInfoManager: the broker's copy of routes that QUERY_ASSIGNMENT reads, fetched on a miss and refreshed
by its scheduled task."""

import pytest

from rmqlib.broker import TopicRouteInfoManager
from rmqlib.model import MessageQueue

A0, A1, B0 = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1), MessageQueue("T", "broker-b", 0)


class NameServer:
    def __init__(self, routes):
        self.routes, self.asked = routes, []

    def route(self, topic):
        self.asked.append(topic)
        return self.routes.get(topic)


def test_a_topic_is_fetched_when_first_asked_for_and_then_answered_from_the_copy():
    namesrv = NameServer({"T": [A0, B0]})
    manager = TopicRouteInfoManager(namesrv.route)
    assert manager.get_topic_subscribe_info("T") == {A0, B0}
    namesrv.routes["T"] = [A0]  # broker-b leaves the route
    assert manager.get_topic_subscribe_info("T") == {A0, B0} and namesrv.asked == ["T"]
    manager.update_topic_route_info_from_name_server()  # the scheduled task
    assert manager.get_topic_subscribe_info("T") == {A0}


def test_a_topic_the_name_server_no_longer_routes_is_forgotten_unless_it_is_a_retry_topic():
    namesrv = NameServer({"T": [A0], "%RETRY%G": [A1]})
    manager = TopicRouteInfoManager(namesrv.route)
    manager.get_topic_subscribe_info("T"), manager.get_topic_subscribe_info("%RETRY%G")
    namesrv.routes.clear()
    manager.update_topic_route_info_from_name_server()
    assert "T" not in manager.topic_subscribe_info_table
    assert manager.topic_subscribe_info_table["%RETRY%G"] == {A1}
    assert manager.get_topic_subscribe_info("T") is None


def test_an_empty_copy_is_fetched_again_on_every_ask():
    namesrv = NameServer({"T": []})
    manager = TopicRouteInfoManager(namesrv.route)
    assert manager.get_topic_subscribe_info("T") == set()
    namesrv.routes["T"] = [A0]
    assert manager.get_topic_subscribe_info("T") == {A0} and namesrv.asked == ["T", "T"]


def test_bad_arguments_are_refused_naming_them():
    with pytest.raises(TypeError, match="fetch_subscribe_info"):
        TopicRouteInfoManager({"T": [A0]})
    with pytest.raises(TypeError, match="topic"):
        TopicRouteInfoManager(NameServer({}).route).get_topic_subscribe_info(7)

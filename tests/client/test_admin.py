"""The admin tool's consume stats (DefaultMQAdminExtImpl#examineConsumeStats) and the address a route offers
(BrokerData#selectBrokerAddr)."""

import random

import pytest

from rmqlib.broker import ConsumeStats, OffsetWrapper, ResponseCode
from rmqlib.broker.protocol import build_pop_retry_topic
from rmqlib.client.admin import examine_consume_stats
from rmqlib.client.api import MQClientError
from rmqlib.model import MessageQueue
from rmqlib.namesrv import BrokerData, RouteInfoManager, broker_address
from rmqlib.protocol import MessageModel, retry_topic

GROUP = "G"


def _cluster(*, slave_of_b: bool = False, master_b: bool = True) -> RouteInfoManager:
    """broker-a (master) and broker-b (master, slave or both), each with the group's retry topic and T."""
    table = RouteInfoManager()
    config = {retry_topic(GROUP): (1, 1), "T": (2, 2)}
    table.register_broker("broker-a", config, now_ms=0)
    if master_b:
        table.register_broker("broker-b", config, now_ms=0)
    if slave_of_b:
        table.register_broker("broker-b", config, now_ms=0, broker_id=1)
    return table


def _online(model=MessageModel.CLUSTERING):
    """GET_CONSUMER_CONNECTION_LIST answered with ``model`` at every address (None: nobody online)."""
    return lambda addr, group: model


def _answers(asked: list):
    """A broker per address whose answer names its address: one queue line and a TPS of 1.5."""

    def ask(addr, group, topic):
        asked.append((addr, group, topic))
        name = addr.split(":")[0].split("-slave")[0]
        return ConsumeStats({MessageQueue("T", name, 0): OffsetWrapper(10, 7, 7)}, consume_tps=1.5)

    return ask


def test_every_broker_of_the_retry_topics_route_is_asked_and_the_answers_merge():
    asked = []
    stats = examine_consume_stats(
        GROUP, _cluster().pickup_topic_route_data, _answers(asked), random.Random(1), _online()
    )
    assert sorted(asked) == [(broker_address("broker-a", 0), GROUP, None), (broker_address("broker-b", 0), GROUP, None)]
    assert sorted(mq.broker_name for mq in stats.offset_table) == ["broker-a", "broker-b"]
    assert stats.consume_tps == 3.0 and stats.compute_total_diff() == 6


def test_a_broker_name_without_its_master_is_asked_at_its_slave():
    asked = []
    route = _cluster(slave_of_b=True, master_b=False).pickup_topic_route_data
    examine_consume_stats(GROUP, route, _answers(asked), random.Random(1), _online())
    assert sorted(addr for addr, _, _ in asked) == [broker_address("broker-a", 0), broker_address("broker-b", 1)]
    asked.clear()  # with its master back, the master again
    examine_consume_stats(
        GROUP, _cluster(slave_of_b=True).pickup_topic_route_data, _answers(asked), random.Random(1), _online()
    )
    assert broker_address("broker-b", 1) not in [addr for addr, _, _ in asked]


def test_select_broker_addr_draws_among_slaves_only_when_there_is_no_master():
    slaves = BrokerData("b", ((1, "s1"), (2, "s2"), (3, "s3")))
    drawn = {slaves.select_broker_addr(random.Random(seed)) for seed in range(40)}
    assert drawn == {"s1", "s2", "s3"}
    rng = random.Random(7)
    state = rng.getstate()
    assert BrokerData("b", ((1, "s1"), (0, "m"))).select_broker_addr(rng) == "m"
    assert BrokerData("b", ((1, "s1"),)).select_broker_addr(rng) == "s1"
    assert rng.getstate() == state  # no draw for a master or a single slave
    with pytest.raises(ValueError, match="broker_addrs"):
        BrokerData("b", ()).select_broker_addr(rng)


def test_the_route_is_the_retry_topics_then_the_topics_then_its_pop_retry_topics():
    looked_up = []
    routes = {build_pop_retry_topic("T", GROUP): _cluster().pickup_topic_route_data(retry_topic(GROUP))}

    def topic_route(name):
        looked_up.append(name)
        return routes.get(name)

    stats = examine_consume_stats(GROUP, topic_route, _answers([]), random.Random(1), _online(), topic="T")
    assert looked_up == [retry_topic(GROUP), "T", build_pop_retry_topic("T", GROUP)] and stats.offset_table
    looked_up.clear()
    with pytest.raises(MQClientError) as missing:
        examine_consume_stats(GROUP, topic_route, _answers([]), random.Random(1), _online())
    assert missing.value.code == ResponseCode.TOPIC_NOT_EXIST and looked_up == [retry_topic(GROUP)]


def test_one_broker_that_fails_fails_the_whole_call():
    def ask(addr, group, topic):
        if addr == broker_address("broker-b", 0):
            raise TimeoutError("broker-b does not answer")
        return _answers([])(addr, group, topic)

    with pytest.raises(TimeoutError, match="broker-b"):
        examine_consume_stats(GROUP, _cluster().pickup_topic_route_data, ask, random.Random(1), _online())


@pytest.mark.parametrize(
    ("model", "code"),
    [
        (None, ResponseCode.CONSUMER_NOT_ONLINE),
        (MessageModel.BROADCASTING, ResponseCode.BROADCAST_CONSUMPTION),
    ],
)
def test_an_empty_table_asks_one_broker_for_the_groups_connections_and_says_why(model, code):
    def nothing(addr, group, topic):
        return ConsumeStats()

    asked = []

    def connection(addr, group):
        asked.append(addr)
        return model

    route = _cluster().pickup_topic_route_data
    with pytest.raises(MQClientError) as empty:
        examine_consume_stats(GROUP, route, nothing, random.Random(1), connection)
    assert empty.value.code == code and len(asked) == 1
    drawn = {tuple(_asked_with(seed)) for seed in range(20)}
    assert drawn == {(broker_address("broker-a", 0),), (broker_address("broker-b", 0),)}  # a broker drawn by rng
    quiet = examine_consume_stats(GROUP, route, nothing, random.Random(1), _online())
    assert quiet.offset_table == {} and quiet.consume_tps == 0.0  # an online clustering group: no error


def _asked_with(seed):
    asked = []
    with pytest.raises(MQClientError):
        examine_consume_stats(
            GROUP,
            _cluster().pickup_topic_route_data,
            lambda addr, group, topic: ConsumeStats(),
            random.Random(seed),
            lambda addr, group: asked.append(addr),
        )
    return asked


def test_a_failure_while_asking_for_connections_counts_as_nobody_online():
    def down(addr, group):
        raise TimeoutError(addr)

    with pytest.raises(MQClientError) as empty:
        examine_consume_stats(
            GROUP, _cluster().pickup_topic_route_data, lambda a, g, t: ConsumeStats(), random.Random(1), down
        )
    assert empty.value.code == ResponseCode.CONSUMER_NOT_ONLINE


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"group": ""}, "group"),
        ({"topic_route": None}, "topic_route"),
        ({"get_consume_stats": 3}, "get_consume_stats"),
        ({"rng": 5}, "rng"),
        ({"get_consumer_connection": "G"}, "get_consumer_connection"),
        ({"topic": 7}, "topic"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, name):
    args = dict(
        group=GROUP,
        topic_route=_cluster().pickup_topic_route_data,
        get_consume_stats=_answers([]),
        rng=random.Random(1),
        get_consumer_connection=_online(),
    )
    with pytest.raises((TypeError, ValueError), match=name):
        examine_consume_stats(**{**args, **kwargs})

"""The name server's route table and what clients make of a route (RouteInfoManager, MQClientInstance statics)."""

import pytest

from rmqlib.client.route import topic_route_data_to_publish_info, topic_route_data_to_subscribe_info
from rmqlib.model import MessageQueue
from rmqlib.namesrv import (
    BROKER_CHANNEL_EXPIRED_MS,
    PERM_INHERIT,
    PERM_READ,
    PERM_WRITE,
    BrokerData,
    QueueData,
    RouteInfoManager,
    TopicRouteData,
)


def _two_brokers() -> RouteInfoManager:
    table = RouteInfoManager()
    table.register_broker("broker-b", {"T": (4, 4), "U": (2, 2)}, now_ms=0)
    table.register_broker("broker-a", {"T": (8, 2)}, now_ms=1_000)
    return table


def test_route_lists_each_broker_once_in_registration_order():
    route = _two_brokers().pickup_topic_route_data("T")
    assert [qd.broker_name for qd in route.queue_datas] == ["broker-b", "broker-a"]
    assert {bd.broker_name for bd in route.broker_datas} == {"broker-a", "broker-b"}
    assert _two_brokers().pickup_topic_route_data("nope") is None


def test_consumers_get_read_queues_and_producers_get_write_queues():
    route = _two_brokers().pickup_topic_route_data("T")
    subscribe = topic_route_data_to_subscribe_info("T", route)
    assert len(subscribe) == 8 + 4
    assert MessageQueue("T", "broker-a", 7) in subscribe
    publish = topic_route_data_to_publish_info("T", route)
    assert publish == [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)] + [
        MessageQueue("T", "broker-b", i) for i in range(4)
    ]  # brokers by name, as Java sorts QueueData


def test_permissions_and_a_missing_master_decide_who_sees_a_broker():
    route = TopicRouteData(
        (
            QueueData("read-only", 4, 4, PERM_READ),
            QueueData("write-only", 4, 4, PERM_WRITE),
            QueueData("no-master", 4, 4),
        ),
        (
            BrokerData("read-only", ((0, "r:1"),)),
            BrokerData("write-only", ((0, "w:1"),)),
            BrokerData("no-master", ((1, "slave:1"),)),
        ),
    )
    assert {mq.broker_name for mq in topic_route_data_to_subscribe_info("T", route)} == {"read-only", "no-master"}
    assert {mq.broker_name for mq in topic_route_data_to_publish_info("T", route)} == {"write-only"}


def test_a_master_that_leaves_a_slave_behind_keeps_its_queues_in_the_route():
    table = _two_brokers()
    table.register_broker("broker-a", {"T": (8, 2)}, now_ms=2_000, broker_id=1)
    route = table.pickup_topic_route_data("T")
    assert dict(next(bd for bd in route.broker_datas if bd.broker_name == "broker-a").broker_addrs) == {
        0: "broker-a:10911",
        1: "broker-a-slave1:10911",
    }
    assert table.on_channel_destroy("broker-a")  # the master stops; its slave stays
    reduced = table.pickup_topic_route_data("T")
    assert [qd.broker_name for qd in reduced.queue_datas] == ["broker-b", "broker-a"]  # queue data kept
    broker_a = next(bd for bd in reduced.broker_datas if bd.broker_name == "broker-a")
    assert not broker_a.has_master() and dict(broker_a.broker_addrs) == {1: "broker-a-slave1:10911"}
    assert len(topic_route_data_to_subscribe_info("T", reduced)) == 8 + 4  # consumers keep every queue
    assert {mq.broker_name for mq in topic_route_data_to_publish_info("T", reduced)} == {"broker-b"}
    assert not table.on_channel_destroy("broker-a")  # the master is gone already
    # the slave, now the smallest id, re-registers a config (Java's prime slave writes the queue data)
    table.register_broker("broker-a", {"T": (6, 2)}, now_ms=3_000, broker_id=1)
    assert table.topic_queue_table["T"]["broker-a"].read_queue_nums == 6
    table.register_broker("broker-a", {"T": (8, 2)}, now_ms=4_000)  # the master is back
    # while the master is registered, a slave's registration leaves the queue data alone
    table.register_broker("broker-a", {"T": (1, 1)}, now_ms=5_000, broker_id=1)
    assert table.topic_queue_table["T"]["broker-a"].read_queue_nums == 8
    assert table.unregister_broker("broker-a", 1) and table.unregister_broker("broker-a")  # the last replica
    assert [qd.broker_name for qd in table.pickup_topic_route_data("T").queue_datas] == ["broker-b"]


def test_the_scan_expires_each_replica_on_its_own():
    table = RouteInfoManager()
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0)
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=60_000, broker_id=1)
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS + 1) == ["broker-a"]  # the master
    assert table.pickup_topic_route_data("T").queue_datas[0].broker_name == "broker-a"  # the slave holds on
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS + 60_001) == ["broker-a"]  # now the slave
    assert table.pickup_topic_route_data("T") is None


def test_a_closed_channel_removes_the_broker_at_once_and_an_empty_topic_disappears():
    table = _two_brokers()
    assert table.on_channel_destroy("broker-b")
    assert [qd.broker_name for qd in table.pickup_topic_route_data("T").queue_datas] == ["broker-a"]
    assert table.pickup_topic_route_data("U") is None
    assert not table.on_channel_destroy("broker-b")


def test_a_silent_broker_expires_only_after_more_than_120_s_without_registering():
    table = _two_brokers()
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS) == []  # broker-b: exactly 120 s, kept
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS + 1) == ["broker-b"]
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS + 1_001) == ["broker-a"]
    assert table.pickup_topic_route_data("T") is None


def test_registering_again_keeps_a_broker_alive_and_the_topics_it_no_longer_lists_by_default():
    table = _two_brokers()
    table.register_broker("broker-b", {"T": (4, 4)}, now_ms=100_000)
    assert table.scan_not_active_broker(BROKER_CHANNEL_EXPIRED_MS + 1_001) == ["broker-a"]
    assert [qd.broker_name for qd in table.pickup_topic_route_data("U").queue_datas] == ["broker-b"]
    assert table.pickup_topic_route_data("T") is not None


def test_with_delete_topic_with_broker_registration_a_topic_no_longer_listed_leaves_the_route():
    table = _two_brokers()
    table.delete_topic_with_broker_registration = True
    table.register_broker("broker-b", {"T": (4, 4)}, now_ms=100_000)
    assert table.pickup_topic_route_data("U") is None


def test_delete_topic_removes_it_from_the_brokers_named_or_from_all():
    table = _two_brokers()
    table.delete_topic("T", ["broker-a"])
    assert [qd.broker_name for qd in table.pickup_topic_route_data("T").queue_datas] == ["broker-b"]
    table.delete_topic("T", ["broker-b", "broker-a"])
    assert table.pickup_topic_route_data("T") is None and "T" not in table.topic_queue_table
    table.delete_topic("U")
    assert table.topic_queue_table == {}
    with pytest.raises(TypeError, match="topic"):
        table.delete_topic(3)


def test_the_topic_named_after_a_broker_has_one_readable_writable_queue_there_while_the_broker_is_registered():
    table = RouteInfoManager()
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0)
    route = table.pickup_broker_topic_route_data("broker-a")
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas] == [
        ("broker-a", 1, 1, PERM_INHERIT | PERM_READ | PERM_WRITE)  # TopicConfigManager: perm 7
    ]
    assert route.broker_datas == table.pickup_topic_route_data("T").broker_datas
    table.unregister_broker("broker-a")
    assert table.pickup_broker_topic_route_data("broker-a") is None
    with pytest.raises(TypeError, match="broker_name"):
        table.pickup_broker_topic_route_data(None)


def test_a_route_change_is_seen_whatever_the_order_of_its_records():
    one = TopicRouteData(
        (QueueData("a", 4, 4), QueueData("b", 4, 4)), (BrokerData("a", ((0, "a"),)), BrokerData("b", ((0, "b"),)))
    )
    same = TopicRouteData(one.queue_datas[::-1], one.broker_datas[::-1])
    grown = TopicRouteData((QueueData("a", 8, 8), QueueData("b", 4, 4)), one.broker_datas)
    assert not same.topic_route_data_changed(one)
    assert grown.topic_route_data_changed(one)
    assert one.topic_route_data_changed(None)


@pytest.mark.parametrize("bad", [{"T": (-1, 4)}, {"T": ("4", 4)}, {"": (4, 4)}])
def test_bad_topic_configs_are_refused_naming_the_argument(bad):
    with pytest.raises(ValueError, match="topic_config"):
        RouteInfoManager().register_broker("broker-a", bad, now_ms=0)

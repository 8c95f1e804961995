"""The 5.x proxy: QUERY_ASSIGNMENT for gRPC consumers, and the queue a receive pops (RouteActivity,
MessageQueueSelector)."""

import pytest

from rmqlib.model import MessageQueue
from rmqlib.namesrv import PERM_READ, PERM_WRITE, QueueData, RouteInfoManager
from rmqlib.proxy import BROKER_ACTING_QUEUE_ID, Code, Permission, query_assignment, receive_queue


def _routes() -> RouteInfoManager:
    table = RouteInfoManager()
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0)
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0, broker_id=1)  # broker-a's slave
    table.register_broker("broker-b", {"T": (2, 2)}, now_ms=0)
    return table


def test_a_group_that_is_not_fifo_gets_any_queue_of_each_readable_broker():
    answer = query_assignment(_routes().pickup_topic_route_data("T"), "T", fifo=False)
    assert answer.code is Code.OK
    assert [a.message_queue for a in answer.assignments] == [
        MessageQueue("T", "broker-a", BROKER_ACTING_QUEUE_ID),
        MessageQueue("T", "broker-b", BROKER_ACTING_QUEUE_ID),
    ]
    assert {a.permission for a in answer.assignments} == {Permission.READ_WRITE}


def test_a_fifo_group_gets_every_read_queue_of_every_broker():
    answer = query_assignment(_routes().pickup_topic_route_data("T"), "T", fifo=True)
    assert [(a.message_queue.broker_name, a.message_queue.queue_id) for a in answer.assignments] == [
        ("broker-a", 0), ("broker-a", 1), ("broker-a", 2), ("broker-a", 3), ("broker-b", 0), ("broker-b", 1)
    ]  # fmt: skip


def test_brokers_without_read_permission_or_read_queues_are_left_out_and_none_left_is_forbidden():
    table = RouteInfoManager()
    table.register_broker("broker-a", {"T": QueueData("broker-a", 4, 4, PERM_WRITE)}, now_ms=0)
    table.register_broker("broker-b", {"T": QueueData("broker-b", 0, 4)}, now_ms=0)
    table.register_broker("broker-c", {"T": QueueData("broker-c", 2, 0, PERM_READ)}, now_ms=0)
    answer = query_assignment(table.pickup_topic_route_data("T"), "T", fifo=False)
    assert [(a.message_queue.broker_name, a.permission) for a in answer.assignments] == [("broker-c", Permission.READ)]
    table.unregister_broker("broker-c")
    answer = query_assignment(table.pickup_topic_route_data("T"), "T", fifo=False)
    assert (answer.code, answer.message, answer.assignments) == (Code.FORBIDDEN, "no readable queue", ())


def test_a_broker_name_left_with_slaves_only_fails_the_whole_answer_until_its_last_replica_leaves():
    table = _routes()
    table.unregister_broker("broker-a")  # the master stops; its slave keeps the queues in the route
    for fifo in (False, True):
        answer = query_assignment(table.pickup_topic_route_data("T"), "T", fifo)
        assert answer.code is Code.INTERNAL_SERVER_ERROR and answer.assignments == ()  # broker-b's too
    table.unregister_broker("broker-a", broker_id=1)
    answer = query_assignment(table.pickup_topic_route_data("T"), "T", fifo=False)
    assert [a.message_queue.broker_name for a in answer.assignments] == ["broker-b"]


def test_a_receive_pops_any_queue_of_the_named_broker_on_its_master_or_else_its_slave():
    table = _routes()
    route = table.pickup_topic_route_data("T")
    assert receive_queue(route, "T", "broker-a") == (MessageQueue("T", "broker-a", -1), "broker-a:10911")
    assert receive_queue(route, "T", "broker-c") is None
    table.unregister_broker("broker-a")
    assert receive_queue(table.pickup_topic_route_data("T"), "T", "broker-a") == (
        MessageQueue("T", "broker-a", -1),
        "broker-a-slave1:10911",
    )


def test_bad_arguments_are_named():
    route = _routes().pickup_topic_route_data("T")
    with pytest.raises(TypeError, match="route"):
        query_assignment("T", "T", False)
    with pytest.raises(TypeError, match="fifo"):
        query_assignment(route, "T", 1)
    with pytest.raises(ValueError, match="broker_name"):
        receive_queue(route, "T", "")

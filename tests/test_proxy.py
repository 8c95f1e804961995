"""The 5.x proxy: QUERY_ASSIGNMENT for gRPC consumers, and the queue a receive pops (RouteActivity,
MessageQueueSelector)."""

import pytest

from rmqlib.broker import ResponseCode
from rmqlib.model import MessageQueue
from rmqlib.namesrv import PERM_READ, PERM_WRITE, QueueData, RouteInfoManager
from rmqlib.proxy import (
    BROKER_ACTING_QUEUE_ID,
    DEFAULT_INVISIBLE_TIME_MILLS,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    Code,
    Permission,
    ReceiptHandleManager,
    RenewKind,
    query_assignment,
    receive_queue,
)


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


# ---- the proxy's receipt handles: renewed while held, cleared when the client leaves ---------------------------


def _fifo_broker(messages=3):
    import random

    from rmqlib.broker import BrokerConfig, MessageStore, PopMessageProcessor

    config = BrokerConfig()
    store = MessageStore(config)
    store.create_topic("T", 1)
    for i in range(messages):
        store.put_message("T", 0, now_ms=0, uniq_key=f"m{i}")
    store.reput(0)
    return PopMessageProcessor(store, config, random.Random(0))


def _receive(broker, manager, channel, now_ms):
    """An auto-renewed orderly receive through the proxy: a 60 s pop, each message watched for its client."""
    got = broker.pop(
        "G", "T", -1, 32, DEFAULT_INVISIBLE_TIME_MILLS, now_ms, order=True, attempt_id=f"{channel}@{now_ms}"
    )
    for m in got.messages:
        manager.add_receipt_handle(channel, "G", m.handle)
    return [m.message.uniq_key for m in got.messages]


def test_a_held_message_is_renewed_within_ten_seconds_of_showing_so_a_slow_listener_keeps_its_queue():
    broker = _fifo_broker()
    manager = ReceiptHandleManager({"broker-a": broker})
    assert _receive(broker, manager, "A", 0) == ["m0", "m1", "m2"]
    for now in range(5_000, 120_001, RENEW_SCHEDULE_PERIOD_MILLIS):
        manager.schedule_renew_task(now, lambda channel, group: True)
    assert [(e.time_ms, e.kind, e.invisible_time_ms) for e in manager.events[::3]] == [
        (50_000, RenewKind.RENEW, 60_000),  # 60 s after the pop, minus the 10 s ahead
        (100_000, RenewKind.RENEW, 180_000),
    ]
    assert all(e.code is ResponseCode.SUCCESS for e in manager.events)
    assert [h.pop_time + h.invisible_time for h in manager.held("A", "G")] == [280_000] * 3
    assert _receive(broker, manager, "B", 120_000) == []  # without the renewals the queue was free at 60 s


def test_a_client_that_leaves_has_what_it_held_shown_again_one_second_later():
    broker = _fifo_broker()
    manager = ReceiptHandleManager({"broker-a": broker})
    _receive(broker, manager, "A", 0)
    events = manager.clear_group("A", "G", 3_000)  # A's registration is gone (shut down, or its heartbeats expired)
    assert {(e.kind, e.invisible_time_ms) for e in events} == {(RenewKind.CLEAR_GROUP, 1_000)} and len(events) == 3
    assert manager.held("A", "G") == []
    assert _receive(broker, manager, "B", 3_999) == []
    assert _receive(broker, manager, "B", 4_000) == ["m0", "m1", "m2"]


def test_the_manager_listens_on_the_proxys_registry_and_clears_a_client_it_unregisters():
    from rmqlib.broker.consumer_manager import ClientChannelInfo, ConsumerGroupEvent, ConsumerManager
    from rmqlib.proxy import register_client

    broker = _fifo_broker()
    manager = ReceiptHandleManager({"broker-a": broker})
    registry = ConsumerManager(listeners=[manager])
    a, b = ClientChannelInfo("A", "A"), ClientChannelInfo("B", "B")
    for info in (a, b):
        register_client(registry, "G", info, 0)
    _receive(broker, manager, "A", 0)
    manager.handle(ConsumerGroupEvent.CHANGE, "G", ([b],), 1_000)  # any other event clears nothing
    assert len(manager.held("A", "G")) == 3 and manager.events == []
    register_client(registry, "G", b, 100_000)
    removed = registry.scan_not_active_channel(120_001)  # A's only heartbeat, at 0, is over 120 s old; B's is not
    assert [info.client_id for _, info in removed] == ["A"]
    assert manager.held("A", "G") == [] and {e.kind for e in manager.events} == {RenewKind.CLEAR_GROUP}
    assert _receive(broker, manager, "B", 121_001) == ["m0", "m1", "m2"]


def test_the_scan_clears_a_client_it_finds_offline_and_stops_renewing_after_three_hours():
    broker = _fifo_broker(1)
    manager = ReceiptHandleManager({"broker-a": broker})
    _receive(broker, manager, "A", 0)
    manager.schedule_renew_task(5_000, lambda channel, group: False)
    assert [e.kind for e in manager.events] == [RenewKind.CLEAR_GROUP]
    broker = _fifo_broker(1)
    manager = ReceiptHandleManager({"broker-a": broker})
    _receive(broker, manager, "A", 0)
    for now in range(
        5_000, 4 * 3_600_000, RENEW_SCHEDULE_PERIOD_MILLIS
    ):  # the last renewal before 3 h ends at 3 h 49 min
        manager.schedule_renew_task(now, lambda channel, group: True)
    kinds = [e.kind for e in manager.events]
    assert kinds[-1] is RenewKind.STOP_RENEW and set(kinds[:-1]) == {RenewKind.RENEW} and manager.held("A", "G") == []
    assert [e.invisible_time_ms for e in manager.events[:7]] == [60_000, 180_000, 300_000, 600_000, 1_800_000,
                                                                3_600_000, 3_600_000]  # fmt: skip
    assert (manager.events[-2].time_ms, manager.events[-1].time_ms) == (10_120_000, 13_710_000)
    assert manager.events[-1].invisible_time_ms == 10_000  # the group's retry delay for a first consumption


def test_a_renewal_of_an_ordinary_pop_moves_its_checkpoint():
    broker = _fifo_broker(1)
    manager = ReceiptHandleManager({"broker-a": broker})
    got = broker.pop("G", "T", -1, 32, DEFAULT_INVISIBLE_TIME_MILLS, 0)
    manager.add_receipt_handle("A", "G", got.messages[0].handle)
    manager.schedule_renew_task(50_000, lambda channel, group: True)
    [ck] = broker.checkpoints.values()
    assert (ck.pop_time, ck.revive_time) == (50_000, 110_000)
    assert manager.held("A", "G")[0].pop_time == 50_000


def test_the_receipt_handle_manager_names_a_bad_argument():
    manager = ReceiptHandleManager({})
    with pytest.raises(TypeError, match="channel"):
        manager.held(["A"], "G")
    with pytest.raises(TypeError, match="handle"):
        manager.remove_receipt_handle("A", "G", None)
    with pytest.raises(TypeError, match="is_online"):
        manager.schedule_renew_task(0, None)

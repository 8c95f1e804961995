"""The 5.x proxy: QUERY_ASSIGNMENT for gRPC consumers, and the queue a receive pops (RouteActivity,
MessageQueueSelector)."""

import pytest

from rmqlib.broker import ResponseCode
from rmqlib.model import MessageQueue
from rmqlib.namesrv import PERM_READ, PERM_WRITE, QueueData, RouteInfoManager, TopicRouteData
from rmqlib.proxy import (
    BROKER_ACTING_QUEUE_ID,
    DEFAULT_INVISIBLE_TIME_MILLS,
    MAX_RENEW_RETRY_TIMES,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    TOPIC_ROUTE_CACHE_EXPIRED_MS,
    TOPIC_ROUTE_CACHE_REFRESH_MS,
    Code,
    MessageQueueView,
    MQClientException,
    Permission,
    ProxyException,
    ProxyExceptionCode,
    ReceiptHandleManager,
    RemotingConnectException,
    RenewKind,
    TopicRouteService,
    changed_handle,
    is_topic_route_valid,
    query_assignment,
    receive_queue,
    status_code,
    validate_receipt_handle,
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


def test_a_receive_for_a_broker_the_route_no_longer_reads_pops_the_others_in_turn():
    import random

    table = _routes()
    table.register_broker("broker-c", {"T": (1, 1)}, now_ms=0)
    table.unregister_broker("broker-b")
    view = MessageQueueView("T", table.pickup_topic_route_data("T"), random.Random(5))
    assert view.select_receive_queue("broker-a")[0].broker_name == "broker-a"
    assert view.broker_index is None  # nothing drawn while the named broker is there
    picked = [view.select_receive_queue("broker-b")[0].broker_name for _ in range(4)]
    assert sorted(picked[:2]) == ["broker-a", "broker-c"] and picked[2:] == picked[:2]  # round-robin, sorted queues
    start = random.Random(5).randrange(-(2**31), 2**31)
    assert picked[0] == ["broker-a", "broker-c"][start % 2]  # from a random start
    empty = MessageQueueView("T", None, random.Random(5))
    assert empty.select_receive_queue("broker-a") is None
    assert empty.is_empty_cached_queue
    assert query_assignment(empty.route, "T", False).code is Code.TOPIC_NOT_FOUND


def test_the_proxys_route_cache_reloads_an_entry_on_the_first_read_more_than_20_s_after_it_was_written():
    """Caffeine refreshes when more than refreshAfterWrite has passed (strictly), and expires an entry when
    expireAfterAccess has passed (or more)."""
    import random

    table = _routes()
    service = TopicRouteService(table.pickup_topic_route_data, random.Random(0))
    first = service.get_all_message_queue_view("T", 1_000)
    table.unregister_broker("broker-b")
    assert service.get_all_message_queue_view("T", 1_000 + TOPIC_ROUTE_CACHE_REFRESH_MS) is first
    assert service.loads == 1
    # the first read more than 20 s after the write still gets the old view, and reloads it
    assert service.get_all_message_queue_view("T", 1_000 + TOPIC_ROUTE_CACHE_REFRESH_MS + 1) is first
    assert service.loads == 2
    reloaded = service.get_all_message_queue_view("T", 1_000 + TOPIC_ROUTE_CACHE_REFRESH_MS + 2)
    assert [q.broker_name for q, _ in reloaded.broker_acting_queues] == ["broker-a"]
    # an entry unread for 300 s is gone: the next read loads it and gets the new view at once
    table.register_broker("broker-b", {"T": (2, 2)}, now_ms=0)
    later = 1_000 + TOPIC_ROUTE_CACHE_REFRESH_MS + 2 + TOPIC_ROUTE_CACHE_EXPIRED_MS
    assert [q.broker_name for q, _ in service.get_all_message_queue_view("T", later).broker_acting_queues] == [
        "broker-a",
        "broker-b",
    ]


def test_a_topic_without_a_route_is_cached_empty_and_refused_as_not_found_until_a_reload_finds_one():
    """Java's WRAPPED_EMPTY_QUEUE: a read of it raises TOPIC_NOT_EXIST (gRPC: TOPIC_NOT_FOUND), and it is reloaded
    like any entry, the first read more than 20 s after it was written still refused."""
    import random

    table = _routes()
    service = TopicRouteService(table.pickup_topic_route_data, random.Random(0))
    with pytest.raises(MQClientException) as refused:
        service.get_all_message_queue_view("New", 0)
    assert refused.value.response_code is ResponseCode.TOPIC_NOT_EXIST
    assert status_code(refused.value) is Code.TOPIC_NOT_FOUND
    table.register_broker("broker-a", {"New": (2, 2)}, now_ms=0)
    for now in (TOPIC_ROUTE_CACHE_REFRESH_MS, TOPIC_ROUTE_CACHE_REFRESH_MS + 1):  # cached; then the reloading read
        with pytest.raises(MQClientException):
            service.get_all_message_queue_view("New", now)
    view = service.get_all_message_queue_view("New", TOPIC_ROUTE_CACHE_REFRESH_MS + 2)
    assert [q.broker_name for q, _ in view.broker_acting_queues] == ["broker-a"] and service.loads == 2
    # a route whose last queue data left is no route either (isTopicRouteValid)
    assert not is_topic_route_valid(TopicRouteData((), table.pickup_topic_route_data("T").broker_datas))
    assert is_topic_route_valid(table.pickup_topic_route_data("T"))


def test_a_broker_the_cached_route_of_its_own_topic_lacks_is_an_invalid_receipt_handle():
    import random

    table = _routes()
    service = TopicRouteService(table.pickup_broker_topic_route_data, random.Random(0))
    assert service.resolve_broker_addr_in_receipt_handle("broker-b", 0) == "broker-b:10911"
    table.unregister_broker("broker-b")
    assert service.resolve_broker_addr_in_receipt_handle("broker-b", 10_000) == "broker-b:10911"  # cached
    service.get_broker_addr("broker-b", TOPIC_ROUTE_CACHE_REFRESH_MS + 1)  # the read that reloads it
    with pytest.raises(ProxyException) as refused:
        service.resolve_broker_addr_in_receipt_handle("broker-b", TOPIC_ROUTE_CACHE_REFRESH_MS + 2)
    assert refused.value.code is ProxyExceptionCode.INVALID_RECEIPT_HANDLE
    assert status_code(refused.value) is Code.INVALID_RECEIPT_HANDLE
    assert status_code(RemotingConnectException("connect to broker-b failed")) is Code.INTERNAL_SERVER_ERROR
    assert status_code(ProxyException(ProxyExceptionCode.INVALID_BROKER_NAME, "x")) is Code.BAD_REQUEST


def test_bad_arguments_are_named():
    route = _routes().pickup_topic_route_data("T")
    with pytest.raises(TypeError, match="route"):
        query_assignment("T", "T", False)
    with pytest.raises(TypeError, match="fifo"):
        query_assignment(route, "T", 1)
    with pytest.raises(ValueError, match="broker_name"):
        receive_queue(route, "T", "")


def test_the_route_cache_names_a_bad_argument():
    import random

    table = _routes()
    with pytest.raises(TypeError, match="load_route"):
        TopicRouteService("not callable", random.Random(0))
    with pytest.raises(TypeError, match="rng"):
        TopicRouteService(table.pickup_topic_route_data, 0)
    with pytest.raises(ValueError, match="refresh_ms"):
        TopicRouteService(table.pickup_topic_route_data, random.Random(0), refresh_ms=0)
    service = TopicRouteService(table.pickup_topic_route_data, random.Random(0))
    with pytest.raises(TypeError, match="topic"):
        service.get_all_message_queue_view(3, 0)
    with pytest.raises(ValueError, match="now_ms"):
        service.get_all_message_queue_view("T", -1)
    with pytest.raises(TypeError, match="route"):
        MessageQueueView("T", "a route", random.Random(0))
    with pytest.raises(TypeError, match="code"):
        ProxyException("INVALID_RECEIPT_HANDLE", "a string is not a code")


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


def test_the_proxy_registers_a_push_consumer_as_consuming_passively_and_a_simple_one_actively():
    from rmqlib.broker.consumer_manager import ClientChannelInfo, ConsumerManager
    from rmqlib.protocol import ConsumeType
    from rmqlib.proxy import register_client

    registry = ConsumerManager()
    register_client(registry, "Push", ClientChannelInfo("A", "A"), 0)
    register_client(registry, "Simple", ClientChannelInfo("B", "B"), 0, simple=True)
    assert registry.get_consumer_group_info("Push").consume_type is ConsumeType.CONSUME_PASSIVELY
    assert registry.get_consumer_group_info("Simple").consume_type is ConsumeType.CONSUME_ACTIVELY
    with pytest.raises(TypeError, match="simple"):
        register_client(registry, "Simple", ClientChannelInfo("B", "B"), 0, simple="yes")


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


class _Unreachable:
    """A broker the proxy's calls cannot reach, with ``error`` (then reachable again once ``error`` is None)."""

    def __init__(self, broker, error):
        self.broker, self.error = broker, error

    def change_invisible_time(self, handle, invisible_time_ms, now_ms):
        if self.error is not None:
            raise self.error
        return self.broker.change_invisible_time(handle, invisible_time_ms, now_ms)


def test_a_renewal_that_fails_to_connect_is_tried_at_the_next_scans_then_dropped_after_three():
    broker = _fifo_broker(1)
    reach = _Unreachable(broker, RemotingConnectException("connect to broker-a failed"))
    manager = ReceiptHandleManager({"broker-a": reach})
    _receive(broker, manager, "A", 0)
    for now in range(50_000, 59_001, 3_000):  # scans closer together than the proxy's 5 s, so the handle lasts
        manager.schedule_renew_task(now, lambda channel, group: True)
    assert [(e.time_ms, e.code, e.error) for e in manager.events] == [
        (t, None, "RemotingConnectException") for t in (50_000, 53_000, 56_000)
    ]
    assert MAX_RENEW_RETRY_TIMES == 3 and manager.held("A", "G") == []  # dropped at the 59 s scan, without a call


def test_a_renewal_still_failing_when_its_message_shows_again_is_refused_as_expired_and_dropped():
    """The proxy's scans every 5 s from 10 s before it shows: two failed tries, then at 60 s after the pop the handle
    has expired, and the proxy refuses it before calling the broker: dropped, not tried a third time."""
    broker = _fifo_broker(1)
    reach = _Unreachable(broker, RemotingConnectException("connect to broker-a failed"))
    manager = ReceiptHandleManager({"broker-a": reach})
    _receive(broker, manager, "A", 0)
    for now in range(50_000, 65_001, RENEW_SCHEDULE_PERIOD_MILLIS):
        manager.schedule_renew_task(now, lambda channel, group: True)
    assert [(e.time_ms, e.error) for e in manager.events] == [
        (50_000, "RemotingConnectException"),
        (55_000, "RemotingConnectException"),
        (60_000, "INVALID_RECEIPT_HANDLE"),
    ]
    assert manager.held("A", "G") == []


def test_the_proxy_refuses_a_receipt_handle_once_its_message_shows_again():
    broker = _fifo_broker(1)
    [popped] = broker.pop("G", "T", -1, 32, 15_000, 1_000).messages
    assert validate_receipt_handle(popped.handle, 15_999) is popped.handle
    with pytest.raises(ProxyException, match="receipt handle is expired") as refused:
        validate_receipt_handle(popped.handle, 16_000)
    assert status_code(refused.value) is Code.INVALID_RECEIPT_HANDLE
    with pytest.raises(TypeError, match="handle"):
        validate_receipt_handle("0 1 15000", 0)
    with pytest.raises(ValueError, match="now_ms"):
        validate_receipt_handle(popped.handle, -1)


def test_a_renewal_retried_once_and_then_answered_starts_counting_again():
    broker = _fifo_broker(1)
    reach = _Unreachable(broker, RemotingConnectException("connect to broker-a failed"))
    manager = ReceiptHandleManager({"broker-a": reach})
    _receive(broker, manager, "A", 0)
    manager.schedule_renew_task(50_000, lambda channel, group: True)
    manager.schedule_renew_task(55_000, lambda channel, group: True)
    reach.error = None
    manager.schedule_renew_task(59_999, lambda channel, group: True)  # the 60 s pop has not shown yet
    assert [e.code for e in manager.events] == [None, None, ResponseCode.SUCCESS]
    [watched] = manager.groups[("A", "G")].values()
    assert watched.renew_retry_times == 0 and watched.renew_times == 1


def test_a_renewal_the_proxy_refuses_as_an_invalid_receipt_handle_is_dropped_at_once():
    broker = _fifo_broker(1)
    error = ProxyException(ProxyExceptionCode.INVALID_RECEIPT_HANDLE, "cannot find broker broker-a")
    manager = ReceiptHandleManager({"broker-a": _Unreachable(broker, error)})
    _receive(broker, manager, "A", 0)
    manager.schedule_renew_task(50_000, lambda channel, group: True)
    assert [e.error for e in manager.events] == ["INVALID_RECEIPT_HANDLE"] and manager.held("A", "G") == []


def test_a_renewal_of_a_fifo_message_already_committed_gets_an_expired_handle_and_is_dropped_at_the_next_scan():
    """The broker answers SUCCESS with its header unset; the handle read from it was popped at 0 for 0 ms."""
    broker = _fifo_broker(1)
    manager = ReceiptHandleManager({"broker-a": broker})
    _receive(broker, manager, "A", 0)
    [held] = manager.held("A", "G")
    assert broker.ack_orderly(held, 1_000)[0] is ResponseCode.SUCCESS  # committed, while the proxy still watches it
    manager.schedule_renew_task(50_000, lambda channel, group: True)
    [renewed] = manager.held("A", "G")
    assert manager.events[-1].code is ResponseCode.SUCCESS and renewed == changed_handle(held, None)
    assert (renewed.pop_time, renewed.invisible_time, renewed.is_order) == (0, 0, False)
    manager.schedule_renew_task(55_000, lambda channel, group: True)
    assert manager.events[-1].error == "INVALID_RECEIPT_HANDLE" and manager.held("A", "G") == []
    assert changed_handle(held, renewed) is renewed
    with pytest.raises(TypeError, match="answer"):
        changed_handle(held, "0 0 0")


def test_the_receipt_handle_manager_names_a_bad_argument():
    manager = ReceiptHandleManager({})
    with pytest.raises(TypeError, match="channel"):
        manager.held(["A"], "G")
    with pytest.raises(TypeError, match="handle"):
        manager.remove_receipt_handle("A", "G", None)
    with pytest.raises(TypeError, match="is_online"):
        manager.schedule_renew_task(0, None)

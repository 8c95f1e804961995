"""PullRequest, PullMessageService, the pull gates and pull-result handling."""

import pytest

from rmqlib.broker import BrokerConfig, MessageStore, PullMessageProcessor, PullMessageRequest
from rmqlib.client import (
    FLOW_CONTROL,
    BrokerError,
    Message,
    ProcessQueue,
    PullMessageService,
    PullRequest,
    PullResult,
    PullStatus,
    PushConsumerConfig,
    ReadOffsetType,
    check_pull_gates,
    process_pull_exception,
    process_pull_result,
    pull_message,
)
from rmqlib.client import pull as P
from rmqlib.model import MessageQueue

MQ = MessageQueue("TopicA", "broker-a", 0)


def msgs(start, n, body=10, tags=None):
    return [
        Message(topic="TopicA", broker_name="broker-a", queue_id=0, queue_offset=start + i, body_size=body, tags=tags)
        for i in range(n)
    ]


def test_java_constants_keep_their_values():
    assert P.PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL == P.PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL == 50
    assert P.PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL == 20
    assert P.PULL_TIME_DELAY_MILLS_WHEN_SUSPEND == 1000
    assert P.BROKER_SUSPEND_MAX_TIME_MILLIS == 15000
    assert P.CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND == 30000
    assert P.PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION == 1000


def test_push_consumer_config_has_java_defaults():
    c = PushConsumerConfig()
    assert (c.pull_threshold_for_queue, c.pull_threshold_size_for_queue) == (1000, 100)
    assert c.consume_concurrently_max_span == 2000
    assert (c.pull_threshold_for_topic, c.pull_threshold_size_for_topic) == (-1, -1)
    assert (c.pull_batch_size, c.consume_message_batch_max_size, c.pull_interval) == (32, 1, 0)
    assert c.consume_timeout == 15 and c.max_reconsume_times == -1
    assert c.pull_time_delay_mills_when_exception == 1000
    assert c.message_model.value == "CLUSTERING"
    assert c.consume_from_where.value == "CONSUME_FROM_LAST_OFFSET"


@pytest.mark.parametrize(
    "field,value",
    [
        ("pull_threshold_for_queue", 0),
        ("pull_threshold_for_queue", 65536),
        ("pull_threshold_size_for_queue", 1025),
        ("consume_concurrently_max_span", 0),
        ("pull_threshold_for_topic", 0),
        ("pull_batch_size", 1025),
        ("pull_interval", -1),
        ("consume_message_batch_max_size", 0),
        ("pop_batch_nums", 33),
        ("message_model", "NOPE"),
    ],
)
def test_push_consumer_config_rejects_bad_value_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        PushConsumerConfig(**{field: value})


def test_pull_request_identity_is_group_and_queue():
    a = PullRequest("G", MQ, ProcessQueue(), 0)
    b = PullRequest("G", MQ, ProcessQueue(), 99, previously_locked=True)
    assert a == b and hash(a) == hash(b)
    assert a != PullRequest("H", MQ, ProcessQueue(), 0)
    with pytest.raises(ValueError, match="next_offset"):
        PullRequest("G", MQ, ProcessQueue(), -1)


def test_pull_service_is_fifo_and_delays_by_time_then_schedule_order():
    ps = PullMessageService()
    r = [PullRequest("G", MessageQueue("T", "b", i), ProcessQueue(), 0) for i in range(4)]
    ps.execute_pull_request_immediately(r[0])
    ps.execute_pull_request_later(r[1], 50, now_ms=100)
    ps.execute_pull_request_later(r[2], 20, now_ms=100)
    ps.execute_pull_request_later(r[3], 20, now_ms=100)
    assert ps.next_due_ms() == 120
    assert ps.due(119) == []
    assert ps.due(150) == [r[2], r[3], r[1]]
    assert [ps.take() for _ in range(5)] == [r[0], r[2], r[3], r[1], None]
    assert ps.next_due_ms() is None


def test_pull_service_rejects_negative_delay_and_ignores_later_after_shutdown():
    ps = PullMessageService()
    req = PullRequest("G", MQ, ProcessQueue(), 0)
    with pytest.raises(ValueError, match="delay_ms"):
        ps.execute_pull_request_later(req, -1, 0)
    ps.shutdown()
    ps.execute_pull_request_later(req, 10, 0)
    assert ps.next_due_ms() is None


def test_gate_dropped_stops_without_stamping_last_pull():
    pq = ProcessQueue(now_ms=0)
    pq.dropped = True
    d = check_pull_gates(pq, PushConsumerConfig(), 500, orderly=False)
    assert (d.allowed, d.delay_ms, d.reason) == (False, None, P.DROPPED)
    assert pq.last_pull_timestamp == 0


def test_gate_stamps_last_pull_even_when_flow_controlled():
    pq = ProcessQueue(now_ms=0)
    pq.put_message(msgs(0, 1001))
    d = check_pull_gates(pq, PushConsumerConfig(), 777, orderly=False)
    assert (d.allowed, d.delay_ms, d.reason) == (False, 50, P.CACHE_COUNT_FLOW_CONTROL)
    assert pq.last_pull_timestamp == 777


def test_gate_paused_waits_one_second():
    d = check_pull_gates(ProcessQueue(), PushConsumerConfig(), 0, orderly=False, paused=True)
    assert (d.delay_ms, d.reason) == (1000, P.PAUSED)


def test_gate_count_threshold_is_strictly_greater():
    pq = ProcessQueue()
    pq.put_message(msgs(0, 1000))
    assert check_pull_gates(pq, PushConsumerConfig(), 0, orderly=False).allowed


def test_gate_size_threshold_counts_whole_mebibytes():
    cfg = PushConsumerConfig(pull_threshold_size_for_queue=1)
    pq = ProcessQueue()
    pq.put_message(msgs(0, 1, body=2 * 1024 * 1024 - 1))  # 1 whole MiB: not over 1
    assert check_pull_gates(pq, cfg, 0, orderly=False).allowed
    pq.put_message(msgs(1, 1, body=1))  # now 2 MiB
    d = check_pull_gates(pq, cfg, 0, orderly=False)
    assert (d.delay_ms, d.reason) == (50, P.CACHE_SIZE_FLOW_CONTROL)


def test_gate_max_span_applies_to_concurrent_only():
    pq = ProcessQueue()
    pq.put_message(msgs(0, 1) + msgs(2001, 1))
    d = check_pull_gates(pq, PushConsumerConfig(), 0, orderly=False)
    assert (d.delay_ms, d.reason) == (50, P.MAX_SPAN_FLOW_CONTROL)
    pq.locked = True
    assert check_pull_gates(pq, PushConsumerConfig(), 0, orderly=True).allowed


def test_gate_orderly_not_locked_waits_exception_delay():
    d = check_pull_gates(ProcessQueue(), PushConsumerConfig(), 0, orderly=True)
    assert (d.allowed, d.delay_ms, d.reason) == (False, 1000, P.NOT_LOCKED)


# --------------------------------------------------------------- with a consumer
@pytest.fixture
def owned(consumer, api):
    """A consumer owning MQ after a rebalance; returns (impl, request)."""
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", [MQ])
    api.max_offsets[MQ] = 100
    impl.do_rebalance(False, 0)
    impl.pull_service.due(500)
    req = impl.pull_service.take()
    assert req.next_offset == 100
    return impl, req


def test_pull_message_builds_command_with_commit_offset_and_suspend(owned):
    impl, req = owned
    impl.offset_store.update_offset(MQ, 90, True)
    d = pull_message(req, impl, 600)
    assert d.allowed and d.command.queue_offset == 100
    assert d.command.commit_offset_enable and d.command.commit_offset == 90
    assert d.command.suspend_timeout_ms == 15000 and d.command.timeout_ms == 30000
    assert d.command.max_msg_nums == 32


def test_pull_message_refused_is_requeued_after_delay(owned):
    impl, req = owned
    impl.paused = True
    d = pull_message(req, impl, 600)
    assert not d.allowed
    assert impl.pull_service.pending == [(1600, req)]


def test_pull_found_advances_caches_and_pulls_again(owned):
    impl, req = owned
    out = process_pull_result(req, PullResult(PullStatus.FOUND, 103, 0, 103, msgs(100, 3)), impl, 700)
    assert req.next_offset == 103
    assert out.dispatch_to_consume and len(out.msgs) == 3
    assert req.process_queue.msg_count == 3
    assert impl.pull_service.take() is req


def test_pull_found_filters_tags_client_side(owned):
    impl, req = owned
    impl.subscribe("TopicA", "a || b")
    found = msgs(100, 1, tags="a") + msgs(101, 1, tags="c")
    out = process_pull_result(req, PullResult(PullStatus.FOUND, 102, 0, 102, found), impl, 0)
    assert [m.queue_offset for m in out.msgs] == [100]


def test_pull_found_with_pull_interval_waits(owned):
    impl, req = owned
    impl.config.pull_interval = 250
    process_pull_result(req, PullResult(PullStatus.FOUND, 101, 0, 101, msgs(100, 1)), impl, 700)
    assert impl.pull_service.pending == [(950, req)]


def test_no_new_msg_stores_offset_only_when_process_queue_is_empty(owned):
    impl, req = owned
    process_pull_result(req, PullResult(PullStatus.NO_NEW_MSG, 100), impl, 0)
    assert impl.offset_store.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 100
    req.process_queue.put_message(msgs(100, 1))
    process_pull_result(req, PullResult(PullStatus.NO_MATCHED_MSG, 130), impl, 0)
    assert req.next_offset == 130
    assert impl.offset_store.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 100
    assert list(impl.pull_service.queue) == [req, req]


def test_offset_illegal_drops_queue_persists_fixed_offset_and_rebalances(owned, api):
    impl, req = owned
    out = process_pull_result(req, PullResult(PullStatus.OFFSET_ILLEGAL, 40), impl, 900)
    assert out.rebalance_immediately
    assert req.process_queue.dropped
    assert MQ not in impl.process_queue_table
    assert api.offsets[("G", MQ)] == 40
    assert impl.rebalance_requests[-1] == (900, 0)
    assert len(impl.pull_service) == 0
    # the next rebalance re-creates the queue from the persisted offset
    impl.do_rebalance(False, 1000)
    impl.pull_service.due(1500)
    assert impl.pull_service.take().next_offset == 40


def test_pull_exception_delays_20ms_on_flow_control_else_exception_delay(owned):
    impl, req = owned
    assert process_pull_exception(req, BrokerError("busy", FLOW_CONTROL), impl, 0) == 20
    assert process_pull_exception(req, TimeoutError(), impl, 0) == 1000
    # ResponseCode.java: FLOW_CONTROL is 215; 207, CONSUME_MSG_TIMEOUT, is any other error
    assert FLOW_CONTROL == 215 and process_pull_exception(req, BrokerError("timeout", 207), impl, 0) == 1000


def test_a_pull_a_slave_refuses_goes_out_again_after_the_exception_delay(owned):
    impl, req = owned
    store = MessageStore(BrokerConfig(broker_role="SLAVE"))
    store.create_topic("TopicA", 1)
    answer = PullMessageProcessor(store).process_request(
        PullMessageRequest("G", "TopicA", 0, req.next_offset, client_id="c1", channel="ch1"), 600
    )
    assert answer.client_pull_status is None  # SYSTEM_BUSY: the pull callback's onException, not a result
    assert process_pull_exception(req, BrokerError(answer.remark, int(answer.code)), impl, 600) == 1000
    impl.pull_service.due(1599)
    assert impl.pull_service.take() is None
    impl.pull_service.due(1600)
    assert impl.pull_service.take() is req


def test_orderly_first_pull_after_lock_rereads_broker_offset(consumer, api):
    api.consumer_ids["G"] = ["c1"]
    impl = consumer("c1", [MQ], orderly=True)
    api.max_offsets[MQ] = 100
    impl.do_rebalance(True, 0)
    impl.pull_service.due(500)
    req = impl.pull_service.take()
    api.offsets[("G", MQ)] = 60  # another owner committed meanwhile
    d = pull_message(req, impl, 600)
    assert d.allowed and d.command.queue_offset == 60 and req.previously_locked


@pytest.fixture
def owned_with_config(consumer, api):
    api.consumer_ids["G"] = ["c1"]

    def make(orderly=False, **config):
        impl = consumer("c1", [MQ], orderly=orderly, config=PushConsumerConfig(**config))
        api.max_offsets[MQ] = 100
        impl.do_rebalance(orderly, 0)
        impl.pull_service.due(500)
        return impl, impl.pull_service.take()

    return make


@pytest.mark.parametrize(
    "case, expected",
    [
        ("clear", (True, None, P.OK)),
        ("dropped", (False, None, P.DROPPED)),
        ("paused", (False, 1000, P.PAUSED)),
        ("paused and over count", (False, 1000, P.PAUSED)),
        ("over count", (False, 50, P.CACHE_COUNT_FLOW_CONTROL)),
        ("over size", (False, 50, P.CACHE_SIZE_FLOW_CONTROL)),
        ("over span", (False, 50, P.MAX_SPAN_FLOW_CONTROL)),
        ("orderly unlocked", (False, 1000, P.NOT_LOCKED)),
        ("orderly locked, wide span", (True, None, P.OK)),
    ],
)
def test_pull_message_decides_as_the_gates_do(owned_with_config, case, expected):
    orderly = case.startswith("orderly")
    impl, req = owned_with_config(
        orderly=orderly, pull_threshold_for_queue=2, pull_threshold_size_for_queue=1, consume_concurrently_max_span=1
    )
    pq = req.process_queue
    pq.last_pull_timestamp = 7
    if orderly:
        pq.locked = case == "orderly locked, wide span"
        pq.put_message([msgs(100, 1)[0], msgs(150, 1)[0]])
    pq.dropped = case == "dropped"
    impl.paused = case.startswith("paused")
    if "over count" in case:
        pq.put_message([msgs(100, 1)[0], msgs(101, 1)[0], msgs(102, 1)[0]])
    elif case == "over size":
        pq.put_message([msgs(100, 1, body=2 * 1024 * 1024)[0]])
    elif case == "over span":
        pq.put_message([msgs(100, 1)[0], msgs(150, 1)[0]])

    d = pull_message(req, impl, 600)
    assert (d.allowed, d.delay_ms, d.reason) == expected and type(d.reason) is P.PullGateReason
    assert pq.last_pull_timestamp == (7 if case == "dropped" else 600)
    if expected[0]:
        assert d.command.queue_offset == req.next_offset and impl.pull_service.pending == []
    else:
        assert d.command is None
        assert impl.pull_service.pending == ([] if expected[1] is None else [(600 + expected[1], req)])
        again = check_pull_gates(pq, impl.config, 600, orderly=orderly, paused=impl.paused)
        assert (again.allowed, again.delay_ms, again.reason) == expected


def _pull_state(impl, req):
    pq = req.process_queue
    return (
        req.next_offset,
        pq.msg_count,
        pq.msg_size,
        pq.msg_tree.keys(),
        pq.last_pull_timestamp,
        [(t, r.message_queue) for t, r in impl.pull_service.pending],
        list(impl.pull_service.queue),
    )


@pytest.mark.parametrize("status", list(PullStatus))
def test_trusted_pull_path_does_what_the_checked_one_does(status):
    """``_pull_message_trusted`` and ``_process_pull_result_trusted`` (for callers with checked arguments) leave
    the same decision, outcome and consumer state as ``pull_message`` and ``process_pull_result``."""
    from rmqlib.client import InMemoryClientBrokerAPI, RebalanceImpl
    from rmqlib.strategies import AllocateMessageQueueAveragely

    runs = []
    for trusted in (False, True):
        api = InMemoryClientBrokerAPI()  # each run its own broker: OFFSET_ILLEGAL persists an offset there
        api.consumer_ids["G"] = ["c1"]
        api.max_offsets[MQ] = 100
        impl = RebalanceImpl("G", "c1", api, AllocateMessageQueueAveragely())
        impl.subscribe("TopicA", "*", 0)
        impl.update_topic_subscribe_info("TopicA", [MQ])
        impl.do_rebalance(False, 0)
        impl.pull_service.due(500)
        req = impl.pull_service.take()
        gate = (P._pull_message_trusted if trusted else pull_message)(req, impl, 600)
        impl.pull_service.take()
        result = PullResult(status, 103, 0, 103, msgs(100, 3) if status is PullStatus.FOUND else [])
        outcome = (P._process_pull_result_trusted if trusted else process_pull_result)(req, result, impl, 700)
        runs.append(
            (
                gate,
                outcome.status,
                [m.queue_offset for m in outcome.msgs],
                outcome.dispatch_to_consume,
                outcome.rebalance_immediately,
                _pull_state(impl, req),
                req.process_queue.dropped,
            )
        )
    assert runs[0] == runs[1]
    assert runs[0][0].allowed and runs[0][0].command.queue_offset == 100

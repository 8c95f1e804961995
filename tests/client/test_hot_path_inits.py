"""Second round of hot-path shortcuts: what they must keep exactly as before.

The per-message records (Message, PullResult, PullOutcome, ConcurrentConsumeOutcome)
have hand-written ``__init__`` methods instead of the generated ones; the
concurrent consume result no longer copies the caller's list. These tests pass on
the code before those changes too.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from rmqlib.client import (
    ConsumeConcurrentlyStatus,
    InMemoryClientBrokerAPI,
    Message,
    MessageModel,
    OffsetStore,
    ProcessQueue,
    PullResult,
    PullStatus,
    PushConsumerConfig,
    check_pull_gates,
    process_consume_result_concurrently,
    pull_message,
)
from rmqlib.client import pull as P
from rmqlib.client.consume import ConcurrentConsumeOutcome
from rmqlib.client.pull import PullOutcome
from rmqlib.model import MessageQueue

MQ = MessageQueue("TopicA", "broker-a", 0)


def msg(offset, body_size=10, **kw) -> Message:
    return Message("TopicA", 0, offset, body_size, broker_name="broker-a", **kw)


def generated_parameters(cls):
    """The parameters dataclasses would give ``cls.__init__`` from its fields."""
    specs = []
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            specs.append((f.name, f.type, dataclasses.field(default_factory=f.default_factory)))
        elif f.default is not dataclasses.MISSING:
            specs.append((f.name, f.type, dataclasses.field(default=f.default)))
        else:
            specs.append((f.name, f.type))
    ref = dataclasses.make_dataclass(cls.__name__, specs)
    return [(p.name, p.kind, repr(p.default)) for p in inspect.signature(ref).parameters.values()]


@pytest.mark.parametrize("cls", [Message, PullResult, PullOutcome, ConcurrentConsumeOutcome])
def test_hand_written_inits_take_the_generated_parameters(cls):
    own = [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()]
    assert own == generated_parameters(cls)


def test_factory_defaults_are_fresh_per_instance_and_explicit_values_are_kept():
    a, b = msg(0), msg(1)
    assert a.properties == {} and a.properties is not b.properties
    assert Message("T", 0, 0, 1, properties=None).properties is None
    r1, r2 = PullResult(PullStatus.FOUND, 1), PullResult(PullStatus.FOUND, 1)
    assert r1.msg_found_list == [] and r1.msg_found_list is not r2.msg_found_list
    found = [a]
    assert PullResult(PullStatus.FOUND, 1, 0, 1, found).msg_found_list is found
    o1, o2 = PullOutcome(PullStatus.FOUND), PullOutcome(PullStatus.FOUND)
    assert (o1.msgs, o1.dispatch_to_consume, o1.rebalance_immediately) == ([], False, False)
    assert o1.msgs is not o2.msgs
    c1, c2 = ConcurrentConsumeOutcome(True), ConcurrentConsumeOutcome(processed=True)
    assert (c1.offset, c1.sent_back, c1.resubmit, c1.resubmit_delay_ms) == (-1, [], [], 5000)
    assert c1 == c2 and c1.sent_back is not c1.resubmit and c1.sent_back is not c2.sent_back
    assert repr(o1) == "PullOutcome(status=<PullStatus.FOUND: 'FOUND'>, msgs=[], dispatch_to_consume=False, " \
                       "rebalance_immediately=False)"
    with pytest.raises(TypeError):
        PullResult(PullStatus.FOUND)  # a required parameter is still required
    with pytest.raises(TypeError, match="next_begin_offset must be an int"):
        PullResult(PullStatus.FOUND, None)


def test_process_queue_checks_every_element_before_changing_anything():
    pq = ProcessQueue()
    pq.put_message([msg(5)])
    with pytest.raises(TypeError, match="msgs: elements must be Message, got int"):
        pq.put_message([msg(6), 7])
    # a non-Message later in the list is reported before an earlier conflicting offset
    with pytest.raises(TypeError, match="msgs: elements must be Message, got str"):
        pq.put_message([msg(5, body_size=99), "x"])
    with pytest.raises(TypeError, match="msgs: elements must be Message, got NoneType"):
        pq.remove_message([msg(5), None])
    assert pq.msg_tree.keys() == [5] and pq.msg_count == 1 and pq.msg_size == 10
    pq._check()


def test_process_queue_takes_message_subclasses_and_removes_anywhere():
    class Sub(Message):
        __slots__ = ()

    pq = ProcessQueue()
    held = [Sub("TopicA", 0, o, 10, broker_name="broker-a") for o in (3, 1, 2)] + [msg(7)]
    assert pq.put_message(held)
    assert pq.msg_tree.keys() == [1, 2, 3, 7] and pq.queue_offset_max == 7 and pq.msg_size == 40
    assert pq.remove_message([held[0], held[0]]) == 1  # not the head; a duplicate is ignored
    assert pq.remove_message([held[1]]) == 2
    assert pq.msg_count == 2 and pq.msg_size == 20
    assert pq.remove_message(held) == 8
    assert (pq.msg_count, pq.msg_size) == (0, 0)
    pq._check()


def test_concurrent_result_reads_a_snapshot_of_the_callers_list():
    store = OffsetStore("G", InMemoryClientBrokerAPI())
    pq = ProcessQueue()
    batch = [msg(o) for o in range(3)]
    pq.put_message(batch)
    given = list(batch)

    def send_back(m):  # caller code that changes the list while the result is settled
        given.clear()
        return True

    out = process_consume_result_concurrently(pq, MQ, given, ConsumeConcurrentlyStatus.RECONSUME_LATER,
                                              offset_store=store, send_back=send_back)
    assert out.sent_back == batch and out.offset == 3 and pq.msg_count == 0
    pq.put_message([msg(3), msg(4)])
    acked = [msg(3)]
    out = process_consume_result_concurrently(pq, MQ, acked, ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
                                              offset_store=store, message_model=MessageModel.CLUSTERING)
    assert acked[0].queue_offset == 3 and len(acked) == 1  # the caller's list is left alone
    assert (out.offset, out.sent_back, out.resubmit) == (4, [], [])


@pytest.fixture
def owned(consumer, api):
    api.consumer_ids["G"] = ["c1"]

    def make(orderly=False, **config):
        impl = consumer("c1", [MQ], orderly=orderly, config=PushConsumerConfig(**config))
        api.max_offsets[MQ] = 100
        impl.do_rebalance(orderly, 0)
        impl.pull_service.due(500)
        return impl, impl.pull_service.take()
    return make


@pytest.mark.parametrize("case, expected", [
    ("clear", (True, None, P.OK)),
    ("dropped", (False, None, P.DROPPED)),
    ("paused", (False, 1000, P.PAUSED)),
    ("paused and over count", (False, 1000, P.PAUSED)),
    ("over count", (False, 50, P.CACHE_COUNT_FLOW_CONTROL)),
    ("over size", (False, 50, P.CACHE_SIZE_FLOW_CONTROL)),
    ("over span", (False, 50, P.MAX_SPAN_FLOW_CONTROL)),
    ("orderly unlocked", (False, 1000, P.NOT_LOCKED)),
    ("orderly locked, wide span", (True, None, P.OK)),
])
def test_pull_message_decides_as_the_gates_do(owned, case, expected):
    orderly = case.startswith("orderly")
    impl, req = owned(orderly=orderly, pull_threshold_for_queue=2, pull_threshold_size_for_queue=1,
                      consume_concurrently_max_span=1)
    pq = req.process_queue
    pq.last_pull_timestamp = 7
    if orderly:
        pq.locked = case == "orderly locked, wide span"
        pq.put_message([msg(100), msg(150)])
    pq.dropped = case == "dropped"
    impl.paused = case.startswith("paused")
    if "over count" in case:
        pq.put_message([msg(100), msg(101), msg(102)])
    elif case == "over size":
        pq.put_message([msg(100, body_size=2 * 1024 * 1024)])
    elif case == "over span":
        pq.put_message([msg(100), msg(150)])

    d = pull_message(req, impl, 600)
    assert (d.allowed, d.delay_ms, d.reason) == expected
    assert pq.last_pull_timestamp == (7 if case == "dropped" else 600)
    if expected[0]:
        assert d.command.queue_offset == req.next_offset and impl.pull_service.pending == []
    else:
        assert d.command is None
        assert impl.pull_service.pending == ([] if expected[1] is None else [(600 + expected[1], req)])
        again = check_pull_gates(pq, impl.config, 600, orderly=orderly, paused=impl.paused)
        assert (again.allowed, again.delay_ms, again.reason) == expected


def test_subclasses_still_run_post_init():
    @dataclasses.dataclass(eq=False)
    class Stamped(Message):
        note: str = ""

    with pytest.raises(ValueError, match="queue_offset must be >= 0, got -1"):
        Stamped("T", 0, -1, 1)
    assert Stamped("T", 0, 3, 1, broker_name="b", note="x").msg_id == "T@b:0:3"

    seen = []

    class Traced(PullResult):
        def __post_init__(self):
            seen.append(self.pull_status)
            super().__post_init__()

    assert Traced("FOUND", 1).pull_status is PullStatus.FOUND and seen == ["FOUND"]
    with pytest.raises(ValueError, match="next_begin_offset must be >= 0, got -2"):
        Traced(PullStatus.FOUND, -2)

    class Checked(Message):
        __slots__ = ()

        def __post_init__(self):
            seen.append(self.queue_offset)
            super().__post_init__()

    assert Checked("T", 0, 9, 1).msg_id == "T@:0:9" and seen[-1] == 9

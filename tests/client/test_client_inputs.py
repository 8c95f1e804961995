"""What the client's public constructors and entry points refuse, and what they accept.

Message, PullResult, the offset store, the consume functions and the ProcessQueue
validate every argument (the simulator's trusted constructors skip that; see
test_trusted_constructors.py): each refusal names the argument, subclasses and
enum names given as strings are accepted, and the records keep their dataclass
or named-tuple behaviour.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from enum import StrEnum

import pytest

from rmqlib.client import (
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyStatus,
    InMemoryClientBrokerAPI,
    Message,
    MessageModel,
    OffsetStore,
    ProcessQueue,
    PullCommand,
    PullDecision,
    PullResult,
    PullStatus,
    ReadOffsetType,
    process_consume_result_concurrently,
    process_consume_result_orderly,
)
from rmqlib.client.pull import PullGateReason
from rmqlib.model import MessageQueue

MQ = MessageQueue("T", "b", 0)


def msg(**kw) -> Message:
    args = dict(topic="T", queue_id=0, queue_offset=0, body_size=10, broker_name="b")
    args.update(kw)
    return Message(**args)


@pytest.mark.parametrize(
    "field, value, error, text",
    [
        ("topic", b"T", TypeError, "topic must be str, got bytes"),
        ("broker_name", None, TypeError, "broker_name must be str, got NoneType"),
        ("queue_id", True, TypeError, "queue_id must be int, got bool"),
        ("queue_id", 1.0, TypeError, "queue_id must be int, got float"),
        ("queue_offset", -1, ValueError, "queue_offset must be >= 0, got -1"),
        ("queue_offset", False, TypeError, "queue_offset must be int, got bool"),
        ("body_size", -5, ValueError, "body_size must be >= 0, got -5"),
        ("store_timestamp", 1.5, TypeError, "store_timestamp must be int, got float"),
        ("reconsume_times", -1, ValueError, "reconsume_times must be >= 0, got -1"),
        ("consume_start_timestamp", True, TypeError, "consume_start_timestamp must be int, got bool"),
        ("tags", 3, TypeError, "tags must be str or None, got int"),
    ],
)
def test_message_names_the_field_it_refuses(field, value, error, text):
    with pytest.raises(error, match=text):
        msg(**{field: value})


def test_message_accepts_subclasses_and_fills_msg_id():
    class S(str):
        pass

    class Int(int):
        pass

    m = msg(topic=S("T"), queue_id=Int(3), queue_offset=Int(7), consume_start_timestamp=5, tags="a")
    assert m.msg_id == "T@b:3:7" and m.consume_start_timestamp == 5
    assert msg(msg_id="").msg_id == "T@b:0:0"
    assert msg(msg_id="X").msg_id == "X"


def test_message_is_a_plain_dataclass_with_identity_equality():
    m = msg(tags="a", properties={"MAX_OFFSET": "9"})
    assert [f.name for f in dataclasses.fields(m)][:4] == ["topic", "queue_id", "queue_offset", "body_size"]
    for clone in (copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m)), dataclasses.replace(m)):
        assert clone is not m and clone != m  # identity equality (eq=False)
        assert (clone.queue_offset, clone.tags, clone.properties) == (0, "a", {"MAX_OFFSET": "9"})
    m.reconsume_times += 1
    m.consume_start_timestamp = 12
    assert (m.reconsume_times, m.consume_start_timestamp) == (1, 12)
    assert len({msg(), msg()}) == 2


def test_pull_result_takes_status_names_and_members():
    assert PullResult("FOUND", 3).pull_status is PullStatus.FOUND
    assert PullResult(PullStatus.NO_NEW_MSG, 3).pull_status is PullStatus.NO_NEW_MSG
    with pytest.raises(ValueError, match="is not a valid PullStatus"):
        PullResult("NOPE", 3)
    with pytest.raises(ValueError, match="next_begin_offset must be >= 0, got -1"):
        PullResult(PullStatus.FOUND, -1)


def test_pull_command_and_decision_are_immutable_records_with_value_equality():
    cmd = PullCommand(MQ, 5, 32, 1024, None, 0, False, 0)
    same = PullCommand(
        message_queue=MQ,
        queue_offset=5,
        max_msg_nums=32,
        max_msg_bytes=1024,
        sub_expression=None,
        sub_version=0,
        commit_offset_enable=False,
        commit_offset=0,
    )
    assert (
        cmd == same
        and hash(cmd) == hash(same)
        and (cmd.suspend, cmd.suspend_timeout_ms, cmd.timeout_ms) == (True, 15_000, 30_000)
    )
    assert cmd._replace(queue_offset=6).queue_offset == 6 and cmd.queue_offset == 5
    assert repr(cmd).startswith("PullCommand(message_queue=MessageQueue('T', 'b', 0), queue_offset=5,")
    decision = PullDecision(True, None, PullGateReason.OK, cmd)
    assert decision == PullDecision(allowed=True, delay_ms=None, reason=PullGateReason.OK, command=same)
    assert decision != PullDecision(True, None, PullGateReason.OK, cmd._replace(queue_offset=6))
    for record, name in ((cmd, "queue_offset"), (decision, "allowed")):
        with pytest.raises(AttributeError):
            setattr(record, name, 1)
    assert PullDecision(False, 50, PullGateReason.PAUSED).command is None


def test_pull_gate_reasons_are_an_enum_that_reads_as_its_lower_case_name():
    assert issubclass(PullGateReason, StrEnum)
    assert [r.value for r in PullGateReason] == [r.name.lower() for r in PullGateReason]
    assert PullGateReason("max_span_flow_control") is PullGateReason.MAX_SPAN_FLOW_CONTROL
    assert f"{PullGateReason.NOT_LOCKED:12}|" == "not_locked  |" and str(PullGateReason.OK) == "ok"
    with pytest.raises(ValueError):
        PullGateReason("flow_control")


def test_offset_store_checks_and_enum_values():
    store = OffsetStore("G", InMemoryClientBrokerAPI())
    with pytest.raises(TypeError, match="mq must be MessageQueue, got tuple"):
        store.update_offset(("T", "b", 0), 1, True)
    with pytest.raises(TypeError, match="offset must be int, got bool"):
        store.update_offset(MQ, True, True)
    with pytest.raises(ValueError, match="offset must be >= 0, got -3"):
        store.update_offset(MQ, -3, True)
    with pytest.raises(TypeError, match="mq must be MessageQueue, got str"):
        store.read_offset("mq", ReadOffsetType.READ_FROM_MEMORY)
    with pytest.raises(ValueError, match="is not a valid ReadOffsetType"):
        store.read_offset(MQ, "NOPE")
    assert store.read_offset(MQ, "READ_FROM_MEMORY") == -1
    store.update_offset(MQ, 5, True)
    store.update_offset(MQ, 3, True)
    assert store.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 5
    store.update_offset(MQ, 3, False)
    assert store.read_offset(MQ, "MEMORY_FIRST_THEN_STORE") == 3
    store.update_and_freeze_offset(MQ, 9)
    store.update_offset(MQ, 20, True)
    assert store.read_offset(MQ, ReadOffsetType.READ_FROM_MEMORY) == 9


def test_consume_functions_take_status_names():
    pq = ProcessQueue()
    msgs = [msg(queue_offset=o) for o in range(3)]
    pq.put_message(msgs)
    store = OffsetStore("G", InMemoryClientBrokerAPI())
    out = process_consume_result_concurrently(
        pq, MQ, msgs[:1], "CONSUME_SUCCESS", offset_store=store, message_model=MessageModel.CLUSTERING
    )
    assert out.processed and out.offset == 1
    with pytest.raises(ValueError, match="is not a valid ConsumeConcurrentlyStatus"):
        process_consume_result_concurrently(pq, MQ, msgs[1:], "NOPE", offset_store=store)
    taken = pq.take_messages(2)
    out = process_consume_result_orderly(pq, MQ, taken, "SUCCESS", offset_store=store)
    assert out.commit_offset == 3
    with pytest.raises(ValueError, match="is not a valid ConsumeOrderlyStatus"):
        process_consume_result_orderly(pq, MQ, [], "NOPE", offset_store=store)
    assert ConsumeConcurrentlyStatus("RECONSUME_LATER") is ConsumeConcurrentlyStatus.RECONSUME_LATER
    assert ConsumeOrderlyStatus("COMMIT") is ConsumeOrderlyStatus.COMMIT


def test_process_queue_takes_any_iterable_and_rejects_non_messages():
    pq = ProcessQueue()
    assert pq.put_message(msg(queue_offset=o) for o in (5, 3, 4))  # a generator: copied once, used twice
    assert pq.msg_tree.keys() == [3, 4, 5] and pq.get_max_span() == 2
    with pytest.raises(TypeError, match="msgs must be a collection of Message, got a single Message"):
        pq.put_message(msg())
    with pytest.raises(TypeError, match="msgs: elements must be Message, got int"):
        pq.remove_message([1])
    held = pq.msg_tree.values()
    assert pq.remove_message(tuple(held[1:])) == 3
    # queue_offset_max is the offset put last (4), not the highest one, as in Java
    assert pq.remove_message(held[:1]) == 5 and pq.get_max_span() == 0
    pq._check()


def test_concurrent_result_reads_a_snapshot_of_the_callers_list():
    store = OffsetStore("G", InMemoryClientBrokerAPI())
    pq = ProcessQueue()
    batch = [msg(queue_offset=o) for o in range(3)]
    pq.put_message(batch)
    given = list(batch)

    def send_back(m):  # caller code that changes the list while the result is settled
        given.clear()
        return True

    out = process_consume_result_concurrently(
        pq, MQ, given, ConsumeConcurrentlyStatus.RECONSUME_LATER, offset_store=store, send_back=send_back
    )
    assert out.sent_back == batch and out.offset == 3 and pq.msg_count == 0
    pq.put_message([msg(queue_offset=3), msg(queue_offset=4)])
    acked = [msg(queue_offset=3)]
    out = process_consume_result_concurrently(
        pq,
        MQ,
        acked,
        ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
        offset_store=store,
        message_model=MessageModel.CLUSTERING,
    )
    assert acked[0].queue_offset == 3 and len(acked) == 1  # the caller's list is left alone
    assert (out.offset, out.sent_back, out.resubmit) == (4, [], [])

"""A record's trusted constructor builds the same record as its validating constructor.

Message and PullResult are built once per pulled message and once per pull; the
public constructor (the dataclass's own ``__init__`` plus ``__post_init__``)
checks every field, and the simulator, which takes every field from the broker's
record, calls ``_trusted`` with the same fields in the same order. These tests
hold the two equal for any valid fields, and hold the public constructors to the
parameters their fields give them.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlib.client import Message, PullResult, PullStatus
from rmqlib.client.consume import ConcurrentConsumeOutcome
from rmqlib.client.pull import PullOutcome
from rmqlib.model import INT_MAX, INT_MIN


def fields_of(record) -> dict:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def trusted_parameters(cls) -> list[str]:
    return list(inspect.signature(cls._trusted).parameters)


@pytest.mark.parametrize("cls", [Message, PullResult])
def test_trusted_constructor_takes_the_leading_fields_in_field_order(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    taken = trusted_parameters(cls)
    assert taken == names[: len(taken)] and len(taken) >= 5


TEXT = st.text(max_size=8)
MESSAGE_FIELDS = st.tuples(
    TEXT,
    st.integers(INT_MIN, INT_MAX),
    st.integers(0, 2**63 - 1),
    st.integers(0, 2**31),
    st.none() | TEXT,
    st.integers(-(2**63), 2**63 - 1),
    TEXT,
    TEXT.filter(bool),
)


@given(MESSAGE_FIELDS)
def test_trusted_message_equals_the_validated_one(values):
    checked = Message(*values)
    trusted = Message._trusted(*values)
    assert type(trusted) is Message and fields_of(trusted) == fields_of(checked)
    assert trusted.properties == {} and trusted.properties is not Message._trusted(*values).properties
    assert repr(trusted) == repr(checked) and trusted.message_queue == checked.message_queue


@given(
    st.sampled_from(list(PullStatus)),
    st.integers(0, 2**40),
    st.integers(-5, 2**40),
    st.integers(-5, 2**40),
    st.integers(0, 3),
)
def test_trusted_pull_result_equals_the_validated_one(status, next_begin, min_offset, max_offset, found):
    msgs = [Message("T", 0, o, 1, broker_name="b") for o in range(found)]
    checked = PullResult(status, next_begin, min_offset, max_offset, msgs)
    trusted = PullResult._trusted(status, next_begin, min_offset, max_offset, msgs)
    assert type(trusted) is PullResult and trusted == checked  # a plain dataclass: field equality
    assert trusted.msg_found_list is msgs and checked.msg_found_list is msgs


def test_the_validating_constructor_refuses_what_the_trusted_one_would_take():
    # the trusted constructor checks nothing, so only the public one may see caller input
    assert Message._trusted("T", 0, -1, 1, None, 0, "b", "x").queue_offset == -1
    with pytest.raises(ValueError, match="queue_offset must be >= 0, got -1"):
        Message("T", 0, -1, 1, None, 0, "b", "x")
    assert PullResult._trusted("NOPE", -1, 0, 0, []).pull_status == "NOPE"
    with pytest.raises(ValueError, match="is not a valid PullStatus"):
        PullResult("NOPE", 1)


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
def test_public_constructors_take_the_fields_as_parameters(cls):
    own = [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()]
    assert own == generated_parameters(cls)


def test_factory_defaults_are_fresh_per_instance_and_explicit_values_are_kept():
    a, b = Message("T", 0, 0, 1), Message("T", 0, 1, 1)
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
    assert (
        repr(o1) == "PullOutcome(status=<PullStatus.FOUND: 'FOUND'>, msgs=[], dispatch_to_consume=False, "
        "rebalance_immediately=False)"
    )
    with pytest.raises(TypeError):
        PullResult(PullStatus.FOUND)  # a required parameter is still required
    with pytest.raises(TypeError, match="next_begin_offset must be an int"):
        PullResult(PullStatus.FOUND, None)


def test_a_subclass_extending_post_init_runs_it_under_the_public_constructor():
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
    assert type(Checked._trusted("T", 0, 9, 1, None, 0, "", "m")) is Checked and seen[-1] == 9  # no checks run

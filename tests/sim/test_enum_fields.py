"""One helper (rmqlib.checks.check_enum) turns enum fields given by name into members, for the simulator's
Scenario and ConsumerSpec and for the client's PushConsumerConfig alike, with the same messages."""

import pytest

from rmqlib.checks import ArgumentTypeError, check_enum
from rmqlib.client import PushConsumerConfig
from rmqlib.protocol import ConsumeFromWhere, MessageModel
from rmqlib.sim import ConsumerSpec, scenarios
from rmqlib.sim.scenario import ConsumeMode, LeaveKind


def test_a_member_a_value_or_a_name_gives_the_member():
    assert check_enum(LeaveKind.CRASH, "leave", LeaveKind) is LeaveKind.CRASH
    assert check_enum("crash", "leave", LeaveKind) is LeaveKind.CRASH
    assert check_enum("CRASH", "leave", LeaveKind) is LeaveKind.CRASH
    assert check_enum("BROADCASTING", "message_model", MessageModel) is MessageModel.BROADCASTING


def test_a_str_naming_no_member_is_a_value_error_listing_the_values():
    with pytest.raises(ValueError, match=r"^leave must be one of shutdown, crash, host_loss, got 'boom'$") as info:
        check_enum("boom", "leave", LeaveKind)
    assert not isinstance(info.value, TypeError)


def test_another_type_is_a_type_error_naming_the_enum():
    with pytest.raises(
        ArgumentTypeError,
        match=r"^mode must be a ConsumeMode or one of CONCURRENT, ORDERLY, POP, "
        r"got int$",
    ):
        check_enum(3, "mode", ConsumeMode)


def test_a_long_bad_name_is_cut_in_the_message():
    with pytest.raises(ValueError) as info:
        check_enum("x" * 500, "leave", LeaveKind)
    assert len(str(info.value)) < 120


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: scenarios.steady_state(message_model="BROADCAST"),
            "Scenario.message_model must be one of BROADCASTING, CLUSTERING, got 'BROADCAST'",
        ),
        (
            lambda: scenarios.steady_state(consume_mode="PUSH"),
            "Scenario.consume_mode must be one of CONCURRENT, ORDERLY, POP, got 'PUSH'",
        ),
        (
            lambda: ConsumerSpec("c@1", leave_ms=5, leave="vanish"),
            "ConsumerSpec.leave must be one of shutdown, crash, host_loss, got 'vanish'",
        ),
        (
            lambda: PushConsumerConfig(message_model="BROADCAST"),
            "message_model must be one of BROADCASTING, CLUSTERING, got 'BROADCAST'",
        ),
        (
            lambda: PushConsumerConfig(consume_from_where="LAST"),
            "consume_from_where must be one of " + ", ".join(m.value for m in ConsumeFromWhere) + ", got 'LAST'",
        ),
    ],
)
def test_simulator_and_client_settings_answer_a_bad_name_alike(build, message):
    with pytest.raises(ValueError) as info:
        build()
    assert str(info.value) == message


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: ConsumerSpec("c@1", leave_ms=5, leave=1),
            "ConsumerSpec.leave must be a LeaveKind or one of shutdown, crash, host_loss, got int",
        ),
        (
            lambda: PushConsumerConfig(message_model=1),
            "message_model must be a MessageModel or one of BROADCASTING, CLUSTERING, got int",
        ),
    ],
)
def test_simulator_and_client_settings_answer_a_wrong_type_alike(build, message):
    with pytest.raises(ArgumentTypeError) as info:
        build()
    assert str(info.value) == message


def test_names_still_set_the_fields():
    assert scenarios.steady_state(consume_mode="ORDERLY").consume_mode is ConsumeMode.ORDERLY
    assert ConsumerSpec("c@1", leave_ms=5, leave="host_loss").leave is LeaveKind.HOST_LOSS
    assert PushConsumerConfig(message_model="BROADCASTING").message_model is MessageModel.BROADCASTING

"""The pull hot path takes shortcuts for plain ints; everything else still gets the full checks.

``True`` is an int to ``isinstance`` and equals 1 as a dict key, so a careless
shortcut would accept it as queue 1 or offset 1. These tests pin the answers
and errors the shortcuts must not change.
"""

import pytest

from rmqlib.broker import (
    GetMessageStatus,
    MessageStore,
    PullMessageProcessor,
    PullMessageRequest,
    ResponseCode,
)
from rmqlib.broker.message_store import GetMessageResult
from rmqlib.broker.protocol import check_non_negative_int, check_time

NOT_A_TIME = [True, False, None, "1", float("nan"), float("inf"), float("-inf"), 1j]


@pytest.mark.parametrize("bad", NOT_A_TIME)
def test_check_time_rejects_what_is_not_a_finite_number(bad):
    with pytest.raises(ValueError, match=r"^now_ms must be a finite number of milliseconds, got "):
        check_time(bad)


@pytest.mark.parametrize("good", [0, 7, -3, 2.5, 10**18])
def test_check_time_returns_a_valid_time_unchanged(good):
    assert check_time(good) is good


@pytest.mark.parametrize("bad, message", [(True, "x must be an int, got True"), (1.0, "x must be an int, got 1.0"),
                                          (-1, "x must be >= 0, got -1")])
def test_check_non_negative_int_rejects_bools_floats_and_negatives(bad, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        check_non_negative_int(bad, "x")


def store_with_one_message():
    store = MessageStore()
    store.create_topic("T", 2)
    store.put_message("T", 1, now_ms=0)
    store.reput(0)
    return store


def test_a_bool_is_not_a_queue_id_even_though_true_hashes_like_one():
    store = store_with_one_message()
    with pytest.raises(ValueError, match="^queue_id must be an int, got True$"):
        store.get_max_offset("T", True)
    with pytest.raises(ValueError, match="^queue_id must be an int, got True$"):
        store.get_message("G", "T", True, 0, 1)
    with pytest.raises(ValueError, match="^queue_id must be an int, got True$"):
        store.put_message("T", True, now_ms=0)
    with pytest.raises(ValueError, match="^topic: unknown topic 'U'"):
        store.get_max_offset("U", 0)


@pytest.mark.parametrize("bad", [True, 0.0, "0"])
def test_get_message_offset_must_be_an_int(bad):
    with pytest.raises(ValueError, match="^offset must be an int, got "):
        store_with_one_message().get_message("G", "T", 1, bad, 1)


@pytest.mark.parametrize("bad", [True, 0, 2.0, -1])
def test_get_message_max_msg_nums_must_be_an_int_of_at_least_one(bad):
    with pytest.raises(ValueError, match="^max_msg_nums must be an int >= 1, got "):
        store_with_one_message().get_message("G", "T", 1, 0, bad)


@pytest.mark.parametrize("bad", [True, 1.0, -1])
def test_put_message_body_size_must_be_an_int_of_at_least_zero(bad):
    with pytest.raises(ValueError, match="^body_size must be an int >= 0, got "):
        store_with_one_message().put_message("T", 0, now_ms=0, body_size=bad)


def test_put_message_properties_are_stored_as_pairs_whatever_mapping_came_in():
    store = store_with_one_message()
    assert store.put_message("T", 0, now_ms=0).properties == ()
    assert store.put_message("T", 0, now_ms=0, properties={}).properties == ()
    assert store.put_message("T", 0, now_ms=0, properties=[("a", "1"), ("a", "2")]).properties == (("a", "2"),)
    assert store.put_message("T", 0, now_ms=0, properties={"b": "3"}).properties == (("b", "3"),)


@pytest.mark.parametrize("field", ["queue_offset", "commit_offset", "suspend_timeout_millis"])
@pytest.mark.parametrize("bad", [True, 1.0, -1])
def test_pull_request_header_offsets_and_timeout_must_be_non_negative_ints(field, bad):
    with pytest.raises(ValueError, match=f"^{field} must be an int >= 0, got "):
        PullMessageRequest("G", "T", 0, **{"queue_offset": 0, field: bad})


@pytest.mark.parametrize("bad", [True, 0, 1.0])
def test_pull_request_header_max_msg_nums_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="^max_msg_nums must be an int >= 1, got "):
        PullMessageRequest("G", "T", 0, 0, max_msg_nums=bad)


def test_compose_response_code_for_every_store_status():
    expected = {
        GetMessageStatus.FOUND: (ResponseCode.SUCCESS, ResponseCode.SUCCESS),
        GetMessageStatus.MESSAGE_WAS_REMOVING: (ResponseCode.PULL_RETRY_IMMEDIATELY,) * 2,
        GetMessageStatus.NO_MATCHED_MESSAGE: (ResponseCode.PULL_RETRY_IMMEDIATELY,) * 2,
        GetMessageStatus.NO_MATCHED_LOGIC_QUEUE: (ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED),
        GetMessageStatus.NO_MESSAGE_IN_QUEUE: (ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED),
        GetMessageStatus.OFFSET_FOUND_NULL: (ResponseCode.PULL_NOT_FOUND,) * 2,
        GetMessageStatus.OFFSET_OVERFLOW_ONE: (ResponseCode.PULL_NOT_FOUND,) * 2,
        GetMessageStatus.OFFSET_OVERFLOW_BADLY: (ResponseCode.PULL_OFFSET_MOVED,) * 2,
        GetMessageStatus.OFFSET_RESET: (ResponseCode.PULL_OFFSET_MOVED,) * 2,
        GetMessageStatus.OFFSET_TOO_SMALL: (ResponseCode.PULL_OFFSET_MOVED,) * 2,
    }
    assert set(expected) == set(GetMessageStatus)
    for status, (at_zero, elsewhere) in expected.items():
        result = GetMessageResult(status, 0, 0, 0)
        assert PullMessageProcessor._compose_code(PullMessageRequest("G", "T", 0, 0), result) is at_zero
        assert PullMessageProcessor._compose_code(PullMessageRequest("G", "T", 0, 5), result) is elsewhere


def test_answer_owns_its_message_list_and_a_held_pull_gets_none():
    store = store_with_one_message()
    proc = PullMessageProcessor(store)
    answer = proc.process_request(PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True), 10)
    assert answer.code is ResponseCode.SUCCESS and answer.remark == "FOUND" and len(answer.messages) == 1
    again = proc.process_request(PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True), 11)
    assert again.messages == answer.messages and again.messages is not answer.messages
    assert proc.process_request(PullMessageRequest("G", "T", 1, 1, has_subscription_flag=True), 12) is None
    overflow = proc.process_request(PullMessageRequest("G", "T", 1, 1, has_subscription_flag=True,
                                                       has_suspend_flag=False), 13)
    assert overflow.code is ResponseCode.PULL_NOT_FOUND and overflow.messages == [] and \
        overflow.remark == "OFFSET_OVERFLOW_ONE"

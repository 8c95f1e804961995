"""What the broker's pull path (store, pull processor, request header, held pull) answers and refuses.

``True`` is an int to ``isinstance`` and equals 1 as a dict key, so a careless
check would take it as queue 1 or offset 1; times are whole milliseconds, as
Java's ``long`` millis. The records built once per pull also have a trusted
constructor, which must build the same record as the validating one.
"""

import dataclasses
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rmqlib.broker import (
    GetMessageStatus,
    MessageStore,
    PullMessageProcessor,
    PullMessageRequest,
    ResponseCode,
    hold_service,
)
from rmqlib.broker.message_store import GetMessageResult
from rmqlib.broker.protocol import check_non_negative_int, check_time
from rmqlib.model import INT_MAX, INT_MIN

NOT_A_TIME = [True, False, None, "1", float("nan"), float("inf"), float("-inf"), 1j, 2.5, 1.0]


@pytest.mark.parametrize("bad", NOT_A_TIME)
def test_check_time_refuses_what_is_not_a_whole_number_of_milliseconds(bad):
    with pytest.raises(TypeError, match=r"^now_ms must be a whole number of milliseconds \(an int\), got "):
        check_time(bad)


@pytest.mark.parametrize("good", [0, 7, -3, 10**18, 2**63 - 1, -(2**63)])
def test_check_time_returns_a_valid_time_unchanged(good):
    assert check_time(good) is good


@pytest.mark.parametrize("bad", [2**63, -(2**63) - 1])
def test_check_time_refuses_a_time_outside_javas_long(bad):
    with pytest.raises(ValueError, match=r"^now_ms must be a number of milliseconds within Java's long range"):
        check_time(bad)


def test_broker_times_are_ints():
    store = store_with_one_message()
    with pytest.raises(TypeError, match="now_ms must be a whole number of milliseconds"):
        store.put_message("T", 0, now_ms=1.5)
    with pytest.raises(TypeError, match="born_timestamp must be a whole number of milliseconds"):
        store.put_message("T", 0, now_ms=1, born_timestamp=0.5)
    stored = store.put_message("T", 0, now_ms=7)
    assert type(stored.store_timestamp) is int and type(stored.born_timestamp) is int
    proc = PullMessageProcessor(store)
    with pytest.raises(TypeError, match="now_ms must be a whole number"):
        proc.process_request(PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True), 2.0)
    assert type(proc.process_request(PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True), 9).time_ms) is int


@pytest.mark.parametrize(
    "bad, message",
    [(True, "x must be an int, got True"), (1.0, "x must be an int, got 1.0"), (-1, "x must be >= 0, got -1")],
)
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
    overflow = proc.process_request(
        PullMessageRequest("G", "T", 1, 1, has_subscription_flag=True, has_suspend_flag=False), 13
    )
    assert (
        overflow.code is ResponseCode.PULL_NOT_FOUND
        and overflow.messages == []
        and overflow.remark == "OFFSET_OVERFLOW_ONE"
    )


class _StoreAnswering(MessageStore):
    """A store whose reads answer one fixed status (to drive process_request through every code)."""

    status = GetMessageStatus.FOUND

    def _get_message_trusted(self, group, topic, queue_id, offset, max_msg_nums, message_filter, max_total_msg_size):
        return GetMessageResult(self.status, offset, 0, 0)


@pytest.mark.parametrize("status", list(GetMessageStatus))
@pytest.mark.parametrize("offset", [0, 5])
def test_process_request_answers_what_compose_code_says_for_every_store_status(status, offset):
    store = _StoreAnswering()
    store.create_topic("T", 1)
    store.status = status
    request = PullMessageRequest("G", "T", 0, offset, has_suspend_flag=False, has_subscription_flag=True)
    answer = PullMessageProcessor(store).process_request(request, 0)
    expected = PullMessageProcessor._compose_code(request, GetMessageResult(status, 0, 0, 0))
    assert answer.code is expected and answer.status is status and answer.remark == status.value


def _heartbeat_processor(sub_version=3, topic="T"):
    from rmqlib.broker import ClientChannelInfo, ConsumerManager, SubscriptionData

    store = store_with_one_message()
    cm = ConsumerManager()
    cm.register_consumer(
        "G",
        ClientChannelInfo("ch", "c"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData(topic, "*", sub_version)],
        True,
        0,
    )
    return PullMessageProcessor(store, consumer_manager=cm)


@pytest.mark.parametrize(
    "group, sub_version, code, remark",
    [
        ("nobody", 0, ResponseCode.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist"),
        ("G", 4, ResponseCode.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest"),
    ],
)
def test_heartbeat_subscription_errors_keep_their_answers(group, sub_version, code, remark):
    request = PullMessageRequest(group, "T", 1, 0, sub_version=sub_version)
    answer = _heartbeat_processor().process_request(request, 0)
    assert (answer.code, answer.remark) == (code, remark)


def test_heartbeat_subscription_without_the_topic_is_not_exist():
    answer = _heartbeat_processor(topic="Other").process_request(PullMessageRequest("G", "T", 1, 0), 0)
    assert (answer.code, answer.remark) == (
        ResponseCode.SUBSCRIPTION_NOT_EXIST,
        "the consumer's subscription not exist",
    )


def test_heartbeat_subscription_at_or_past_the_requests_version_is_used():
    proc = _heartbeat_processor(sub_version=3)
    for version in (0, 3):
        answer = proc.process_request(PullMessageRequest("G", "T", 1, 0, sub_version=version), 0)
        assert answer.code is ResponseCode.SUCCESS and len(answer.messages) == 1


@pytest.mark.parametrize(
    "queue_id, offset, message",
    [
        (True, 1, "^queue_id must be an int, got True$"),
        (2, 1, "^queue_id: topic 'T' has queues 0..1, got 2$"),
        (-1, 1, "^queue_id: topic 'T' has queues 0..1, got -1$"),
        (True, -1, "^queue_id must be an int, got True$"),
        (0, -1, "^offset must be >= 0, got -1$"),
        (0, True, "^offset must be an int, got True$"),
        (0, 1.0, "^offset must be an int, got 1.0$"),
    ],
)
def test_commit_offset_checks_queue_then_offset(queue_id, offset, message):
    store = store_with_one_message()
    with pytest.raises(ValueError, match=message):
        store.commit_offset("G", "T", queue_id, offset)
    assert store.offsets.offset_table == {}


@pytest.mark.parametrize(
    "queue_id, offset, message",
    [
        (0, -1, "^offset must be >= 0, got -1$"),
        (-1, -1, "^offset must be >= 0, got -1$"),
        (-1, 0, "^queue_id must be >= 0, got -1$"),
        (True, 0, "^queue_id must be an int, got True$"),
        (0, False, "^offset must be an int, got False$"),
    ],
)
def test_consumer_offset_manager_checks_offset_then_queue(queue_id, offset, message):
    from rmqlib.broker import ConsumerOffsetManager

    manager = ConsumerOffsetManager()
    with pytest.raises(ValueError, match=message):
        manager.commit_offset("G", "T", queue_id, offset)
    manager.commit_offset("G", "T", 0, 0)
    assert manager.offset_table == {("G", "T", 0): 0}


def test_put_message_reconsume_times_is_checked():
    with pytest.raises(ValueError, match="^reconsume_times must be >= 0, got -1$"):
        store_with_one_message().put_message("T", 0, now_ms=0, reconsume_times=-1)
    with pytest.raises(ValueError, match="^reconsume_times must be an int, got True$"):
        store_with_one_message().put_message("T", 0, now_ms=0, reconsume_times=True)


def test_put_message_a_zero_size_body_takes_one_commit_log_byte():
    store = store_with_one_message()
    before = store.commit_log_max_offset
    assert store.put_message("T", 0, now_ms=0, body_size=0).commit_log_offset == before
    assert store.put_message("T", 0, now_ms=0, body_size=5).commit_log_offset == before + 1
    assert store.commit_log_max_offset == before + 6
    store._check()


def test_zero_size_bodies_never_fill_a_batch():
    # isTheBatchFull is false while the bytes taken are 0, so max_msg_nums does not cap zero-size bodies.
    store = MessageStore()
    store.create_topic("T", 1)
    for _ in range(5):
        store.put_message("T", 0, now_ms=0, body_size=0)
    store.reput(0)
    assert store.get_message("G", "T", 0, 0, 2).message_count == 5
    store.put_message("T", 0, now_ms=0, body_size=1)
    store.put_message("T", 0, now_ms=0, body_size=1)
    store.reput(0)
    assert store.get_message("G", "T", 0, 5, 1).message_count == 1  # bytes taken: the cap applies


def test_get_message_filters_the_same_with_any_subscription():
    from rmqlib.broker import SubscriptionData

    class Recording(SubscriptionData):
        codes: list = None

        def is_matched_by_consume_queue(self, tags_code):
            self.codes = (self.codes or []) + [tags_code]
            return super().is_matched_by_consume_queue(tags_code)

    store = MessageStore()
    store.create_topic("T", 1)
    for tags in ("A", "B", None, "A"):
        store.put_message("T", 0, now_ms=0, tags=tags)
    store.reput(0)
    every = [m.queue_offset for m in store.get_message("G", "T", 0, 0, 32).messages]
    assert every == [0, 1, 2, 3]
    assert [m.queue_offset for m in store.get_message("G", "T", 0, 0, 32, SubscriptionData("T")).messages] == every
    only_a = store.get_message("G", "T", 0, 0, 32, SubscriptionData("T", "A")).messages
    assert [m.queue_offset for m in only_a] == [0, 3]
    recording = Recording("T")  # a subclass is asked about every entry, even when it subscribes to every tag
    assert [m.queue_offset for m in store.get_message("G", "T", 0, 0, 32, recording).messages] == every
    assert len(recording.codes) == 4


# ------------------------------------------------------------------ trusted constructors
def fields_of(record) -> dict:
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


@pytest.mark.parametrize("cls", [PullMessageRequest, hold_service.PullRequest])
def test_trusted_constructor_takes_every_field_in_field_order(cls):
    assert list(inspect.signature(cls._trusted).parameters) == [f.name for f in dataclasses.fields(cls)]


TEXT = st.text(max_size=6)
HEADERS = st.tuples(
    TEXT,
    TEXT,
    st.integers(INT_MIN, INT_MAX),
    st.integers(0, 2**63 - 1),
    st.integers(1, 2**31),
    st.booleans(),
    st.integers(0, 2**63 - 1),
    st.booleans(),
    st.integers(0, 2**40),
    st.booleans(),
    TEXT,
    st.integers(-(2**63), 2**63 - 1),
    TEXT,
    TEXT,
    st.integers(-(2**31), 2**31),
)


@given(HEADERS)
def test_trusted_pull_request_header_equals_the_validated_one(values):
    checked, trusted = PullMessageRequest(*values), PullMessageRequest._trusted(*values)
    assert type(trusted) is PullMessageRequest and fields_of(trusted) == fields_of(checked)
    assert trusted.sys_flag == checked.sys_flag


@given(st.integers(0, 2**40), st.integers(-(2**53), 2**53), st.integers(0, 2**63 - 1), st.booleans())
def test_trusted_held_pull_equals_the_validated_one(timeout, suspended, offset, with_filter):
    from rmqlib.broker import SubscriptionData

    request = PullMessageRequest("G", "T", 0, offset)
    sub = SubscriptionData("T", "A || B", 3) if with_filter else None
    values = (request, "ch", "c1", timeout, suspended, offset, sub, sub)
    checked, trusted = hold_service.PullRequest(*values), hold_service.PullRequest._trusted(*values)
    assert type(trusted) is hold_service.PullRequest and fields_of(trusted) == fields_of(checked)
    assert trusted.deadline_ms == checked.deadline_ms == suspended + timeout


def test_only_the_validating_constructors_refuse_bad_fields():
    with pytest.raises(ValueError, match="queue_offset must be an int >= 0"):
        PullMessageRequest("G", "T", 0, -1)
    unchecked = PullMessageRequest._trusted("G", "T", 0, -1, 32, False, 0, True, 0, False, "*", 0, "", "", 0)
    assert unchecked.queue_offset == -1
    with pytest.raises(TypeError, match="suspend_timestamp must be a whole number of milliseconds"):
        hold_service.PullRequest(None, "ch", "c", 10, 0.5, 0)


def test_a_suspended_pull_is_held_as_the_validating_constructor_would_build_it():
    store = store_with_one_message()
    proc = PullMessageProcessor(store)
    request = PullMessageRequest(
        "G", "T", 1, 1, has_subscription_flag=True, suspend_timeout_millis=700, client_id="c1", channel="ch1"
    )
    assert proc.process_request(request, 40) is None
    [held] = proc.hold_service.pull_request_table["T@1"].pull_request_list
    sub = held.subscription_data
    expected = hold_service.PullRequest(request, "ch1", "c1", 700, 40, 1, sub, sub)
    assert fields_of(held) == fields_of(expected) and held.subscription_data.sub_string == "*"


# ------------------------------------------------------------------ trusted twins of methods
def test_put_message_trusted_appends_what_put_message_appends():
    checked, trusted = MessageStore(), MessageStore()
    for store in (checked, trusted):
        store.create_topic("T", 2)
    puts = [(0, 5, 1024, None, None, 0, ()), (1, 6, 0, "A", "key-1", 2, ()), (0, 6, 7, "B", None, 0, (("k", "v"),))]
    for queue_id, now, size, tags, uniq, times, pairs in puts:
        a = checked.put_message("T", queue_id, now, size, tags, uniq, None, times, dict(pairs))
        b = trusted._put_message_trusted("T", queue_id, now, size, tags, uniq, now, times, pairs)
        assert a == b
    assert checked.commit_log == trusted.commit_log and checked.commit_log_max_offset == trusted.commit_log_max_offset
    checked.reput(9)
    trusted.reput(9)
    for queue_id in (0, 1):
        assert (
            checked.get_message("G", "T", queue_id, 0, 32).messages
            == trusted._get_message_trusted("G", "T", queue_id, 0, 32, None, 256 * 1024).messages
        )
    trusted._check()


def _holding(store):
    proc = PullMessageProcessor(store)
    for offset, client in ((1, "c1"), (1, "c2")):
        request = PullMessageRequest(
            "G",
            "T",
            1,
            offset,
            has_subscription_flag=True,
            sub_expression="A",
            suspend_timeout_millis=1000,
            client_id=client,
            channel=client,
        )
        assert proc.process_request(request, 0) is None
    return proc


@pytest.mark.parametrize(
    "max_offset, now, tags_code, woken", [(2, 10, None, 2), (2, 10, 0, 0), (1, 10, None, 0), (1, 1000, None, 2)]
)
def test_notify_message_arriving_trusted_wakes_what_the_checked_one_wakes(max_offset, now, tags_code, woken):
    from rmqlib.broker.protocol import tags_code_of

    code = tags_code_of("A") if tags_code is None and max_offset == 2 else tags_code
    checked, trusted = _holding(store_with_one_message()), _holding(store_with_one_message())
    woken_a = checked.hold_service.notify_message_arriving("T", 1, max_offset, now, code)
    woken_b = trusted.hold_service._notify_message_arriving_trusted("T", 1, max_offset, now, code)
    assert [w.client_id for w in woken_a] == [w.client_id for w in woken_b] and len(woken_a) == woken
    assert checked.hold_service.held_count() == trusted.hold_service.held_count()
    assert [(r.code, r.request.client_id) for r in checked.drain()] == [
        (r.code, r.request.client_id) for r in trusted.drain()
    ]


def test_a_woken_pull_is_answered_alike_by_the_handler_and_the_public_method():
    answers = []
    for public in (True, False):
        store = store_with_one_message()
        proc = PullMessageProcessor(store)
        request = PullMessageRequest("G", "T", 1, 1, has_subscription_flag=True, client_id="c1", channel="c1")
        assert proc.process_request(request, 0) is None
        store.put_message("T", 1, now_ms=3)
        if public:
            [held] = proc.hold_service.pull_request_table["T@1"].clone_list_and_clear()
            store.reput(5)  # nothing is held now, so nothing wakes
            assert proc.drain() == []
            proc.execute_request_when_wakeup(held, 5)
        else:
            store.reput(5)  # the listener wakes the held pull; the hold service calls the processor's handler
        [response] = proc.drain()
        answers.append((response.code, [m.queue_offset for m in response.messages], response.time_ms))
    assert answers[0][:2] == answers[1][:2] == (ResponseCode.SUCCESS, [1])
    with pytest.raises(TypeError, match="held must be a PullRequest"):
        PullMessageProcessor(store_with_one_message()).execute_request_when_wakeup("held", 5)


def test_a_pull_is_checked_against_the_topic_configs_read_count_not_the_stores_queues():
    """PullMessageProcessor reads the broker's topic config at every pull: queue 1 still has its message in the
    store, but once the read count is 1 the pull is refused; a topic the config no longer has does not exist."""
    config = {"T": (2, 2)}
    proc = PullMessageProcessor(store_with_one_message(), topic_config=config)
    pull = PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True)
    assert proc.process_request(pull, 10).code is ResponseCode.SUCCESS
    config["T"] = (1, 2)
    assert proc.process_request(pull, 11).code is ResponseCode.INVALID_PARAMETER
    del config["T"]
    assert proc.process_request(pull, 12).code is ResponseCode.TOPIC_NOT_EXIST
    with pytest.raises(TypeError, match="topic_config"):
        PullMessageProcessor(store_with_one_message(), topic_config=[("T", (2, 2))])

"""MessageStore: put/reput visibility, getMessage statuses, offsets and the query-offset quirk."""

import random

import pytest

from rmqlib.broker import GetMessageStatus, MessageStore, ResponseCode, SubscriptionData, java_string_hash


def store_with(n=0, queues=2, topic="T"):
    s = MessageStore()
    s.create_topic(topic, queues)
    for i in range(n):
        s.put_message(topic, 0, now_ms=i)
    s.reput(n)
    return s


def test_java_string_hash_matches_java_values():
    assert java_string_hash("") == 0
    assert java_string_hash("TagA") == 2598919  # "TagA".hashCode() in Java
    assert java_string_hash("polygenelubricants") == -2147483648  # Integer.MIN_VALUE


def test_put_is_invisible_until_reput():
    s = store_with(0)
    msg = s.put_message("T", 0, now_ms=5)
    assert msg.queue_offset == 0
    assert s.get_max_offset("T", 0) == 0
    assert s.get_message("G", "T", 0, 0, 32).status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
    assert s.reput(6) == [msg]
    assert s.get_max_offset("T", 0) == 1
    assert s.get_message("G", "T", 0, 0, 32).messages == [msg]


def test_queue_messages_are_the_dispatched_ones_in_offset_order_as_a_copy():
    s = store_with(3)
    late = s.put_message("T", 0, now_ms=9)  # not dispatched yet
    held = s.queue_messages("T", 0)
    assert [m.queue_offset for m in held] == [0, 1, 2] and late not in held and s.queue_messages("T", 1) == []
    held.clear()
    s.reput(10)
    assert s.queue_messages("T", 0)[-1] == late and len(s.queue_messages("T", 0)) == 4
    with pytest.raises(ValueError, match="queue_id"):
        s.queue_messages("T", 2)


def test_reput_notifies_listener_with_offset_plus_one_only_when_long_polling():
    calls = []
    s = MessageStore(message_arriving_listener=lambda *a: calls.append(a))
    s.create_topic("T", 1)
    s.put_message("T", 0, now_ms=1, tags="TagA")
    s.reput(2)
    assert calls == [("T", 0, 1, java_string_hash("TagA"), 1, {}, 2)]
    s.broker_config.long_polling_enable = False
    s.put_message("T", 0, now_ms=3)
    s.reput(4)
    assert len(calls) == 1


@pytest.mark.parametrize(
    "offset, status, next_begin",
    [
        (0, GetMessageStatus.FOUND, 5),
        (3, GetMessageStatus.FOUND, 5),
        (5, GetMessageStatus.OFFSET_OVERFLOW_ONE, 5),
        (9, GetMessageStatus.OFFSET_OVERFLOW_BADLY, 5),
    ],
)
def test_get_message_status_by_position(offset, status, next_begin):
    s = store_with(5)
    r = s.get_message("G", "T", 0, offset, 32)
    assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (status, next_begin, 0, 5)


def test_get_message_empty_queue_is_no_message_in_queue_with_next_zero():
    s = store_with(0)
    r = s.get_message("G", "T", 1, 7, 32)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0)


def test_get_message_below_min_offset_is_too_small():
    s = store_with(10)
    s.delete_expired("T", 0, 4)
    r = s.get_message("G", "T", 0, 1, 32)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.OFFSET_TOO_SMALL, 4)


def test_get_message_caps_batch_at_max_msg_nums_and_32_in_memory():
    s = store_with(50)
    assert s.get_message("G", "T", 0, 0, 10).message_count == 10
    r = s.get_message("G", "T", 0, 0, 64)
    assert r.message_count == 32 and r.next_begin_offset == 32


def test_a_read_that_reaches_past_the_memory_budget_takes_what_a_read_from_disk_may():
    """A message whose commit-log position is more than the budget behind the log's end counts as on disk, and a
    batch that meets one stops at 8 messages or 64 KiB (MessageStoreConfig's InDisk limits) instead of 32 or 256 KiB."""
    s = MessageStore(access_message_in_memory_max_bytes=1_000)
    s.create_topic("T", 1)
    for i in range(50):
        s.put_message("T", 0, now_ms=i, body_size=100)  # the log ends at 5,000 bytes
    s.reput(50)
    assert s.get_message("G", "T", 0, 0, 32).message_count == 8  # from byte 0: far behind
    assert s.get_message("G", "T", 0, 40, 32).message_count == 10  # from byte 4,000: every one within 1,000 bytes
    assert store_with(50).get_message("G", "T", 0, 0, 32).message_count == 32  # no budget: all in memory
    big = MessageStore(access_message_in_memory_max_bytes=0)
    big.create_topic("T", 1)
    for i in range(20):
        big.put_message("T", 0, now_ms=i, body_size=10 * 1024)
    big.reput(20)
    assert big.get_message("G", "T", 0, 0, 32).message_count == 6  # a 7th would pass 64 KiB


def test_get_message_tag_filter_skips_and_reports_no_matched():
    s = store_with(0)
    for tag in ["B", "B", "A", "B"]:
        s.put_message("T", 0, now_ms=0, tags=tag)
    s.reput(0)
    sub = SubscriptionData("T", "A")
    r = s.get_message("G", "T", 0, 0, 32, sub)
    assert [m.queue_offset for m in r.messages] == [2] and r.next_begin_offset == 4
    r = s.get_message("G", "T", 0, 3, 32, sub)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MATCHED_MESSAGE, 4)


def test_filter_scan_stops_after_800_consume_queue_entries():
    s = store_with(0, queues=1)
    for _ in range(1000):
        s.put_message("T", 0, now_ms=0, tags="B")
    s.reput(0)
    r = s.get_message("G", "T", 0, 0, 32, SubscriptionData("T", "A"))
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MATCHED_MESSAGE, 800)


def test_query_consumer_offset_answers_zero_for_young_queue_without_stored_offset():
    s = store_with(3)
    assert s.query_offset("G", "T", 0) == -1
    assert s.query_consumer_offset("G", "T", 0) == (ResponseCode.SUCCESS, 0)
    assert s.query_consumer_offset("G", "T", 0, set_zero_if_not_found=False) == (ResponseCode.QUERY_NOT_FOUND, None)
    assert s.query_consumer_offset("G", "T", 1) == (ResponseCode.QUERY_NOT_FOUND, None)  # empty queue
    s.delete_expired("T", 0, 1)
    assert s.query_consumer_offset("G", "T", 0) == (ResponseCode.QUERY_NOT_FOUND, None)
    s.commit_offset("G", "T", 0, 2)
    assert s.query_consumer_offset("G", "T", 0) == (ResponseCode.SUCCESS, 2)


def test_query_consumer_offset_not_found_when_first_message_left_memory():
    s = MessageStore(access_message_in_memory_max_bytes=10)
    s.create_topic("T", 1)
    for i in range(5):
        s.put_message("T", 0, now_ms=i, body_size=4)
    s.reput(5)
    assert s.query_consumer_offset("G", "T", 0) == (ResponseCode.QUERY_NOT_FOUND, None)


def test_unknown_topic_queue_and_negative_offsets_are_value_errors():
    s = store_with(1)
    with pytest.raises(ValueError, match="topic"):
        s.get_max_offset("nope", 0)
    with pytest.raises(ValueError, match="queue_id"):
        s.get_min_offset("T", 2)
    with pytest.raises(ValueError, match="queue_id"):
        s.put_message("T", -1, now_ms=0)
    with pytest.raises(ValueError, match="offset"):
        s.commit_offset("G", "T", 0, -5)
    with pytest.raises(ValueError, match="max_msg_nums"):
        s.get_message("G", "T", 0, 0, 0)
    with pytest.raises(ValueError, match="queue_nums"):
        s.create_topic("T", 1)
    s._check()


@pytest.mark.parametrize("seed", range(15))
def test_seeded_stress_store_invariants(seed):
    rng = random.Random(seed)
    s = MessageStore()
    s.create_topic("T", 3)
    now = 0
    for _ in range(400):
        now += rng.randrange(5)
        q = rng.randrange(3)
        act = rng.random()
        if act < 0.5:
            s.put_message("T", q, now_ms=now, tags=rng.choice([None, "A", "B"]), body_size=rng.randrange(1, 100))
        elif act < 0.7:
            s.reput(now)
        elif act < 0.75 and s.get_max_offset("T", q) > 0:
            s.delete_expired("T", q, rng.randrange(s.get_min_offset("T", q), s.get_max_offset("T", q) + 1))
        else:
            off = rng.randrange(0, s.get_max_offset("T", q) + 3)
            r = s.get_message("G", "T", q, off, rng.randrange(1, 40), rng.choice([None, SubscriptionData("T", "A")]))
            assert (
                r.min_offset <= r.next_begin_offset <= r.max_offset or r.status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
            )
            assert all(off <= m.queue_offset < r.next_begin_offset for m in r.messages)
        s._check()


@pytest.mark.parametrize("offset_check_in_slave", [False, True])
def test_a_slave_answers_a_read_that_finds_nothing_with_the_requests_own_offset_unless_it_checks_offsets(
    offset_check_in_slave,
):
    """DefaultMessageStore#nextOffsetCorrection: only a master (or a slave with offsetCheckInSlave) corrects the next
    offset of an empty queue, an offset below the queue or one past its end."""
    from rmqlib.broker import BrokerConfig

    s = MessageStore(BrokerConfig(broker_role="SLAVE", offset_check_in_slave=offset_check_in_slave))
    s.create_topic("T", 2)
    for i in range(3):
        s.put_message("T", 0, now_ms=i)
    s.reput(3)
    past_end, empty = s.get_message("G", "T", 0, 10, 32), s.get_message("G", "T", 1, 7, 32)
    assert (past_end.status, empty.status) == (
        GetMessageStatus.OFFSET_OVERFLOW_BADLY,
        GetMessageStatus.NO_MESSAGE_IN_QUEUE,
    )
    assert (past_end.next_begin_offset, empty.next_begin_offset) == ((3, 0) if offset_check_in_slave else (10, 7))
    assert s.get_message("G", "T", 0, 3, 32).next_begin_offset == 3  # at the end: the same either way
    master = store_with(3)
    assert master.get_message("G", "T", 0, 10, 32).next_begin_offset == 3

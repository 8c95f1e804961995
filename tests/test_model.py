"""MessageQueue and the Java orderings: UTF-16 strings, 32-bit queue-id overflow, split."""

import functools
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs, java_split, java_string_compare


def test_to_string_is_java_to_string():
    assert str(MessageQueue("T", "broker-a", 3)) == "MessageQueue [topic=T, brokerName=broker-a, queueId=3]"


def test_equal_queues_hash_alike_and_are_immutable():
    a, b = MessageQueue("T", "b", 1), MessageQueue("T", "b", 1)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != MessageQueue("T", "b", 2)
    for name in ("topic", "broker_name", "queue_id"):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(a, name, getattr(b, name))
        with pytest.raises(AttributeError, match="immutable"):
            delattr(a, name)
    assert (a.topic, a.broker_name, a.queue_id) == ("T", "b", 1)
    assert pickle.loads(pickle.dumps(a)) == a


def test_order_is_topic_then_broker_then_queue_id():
    mqs = [MessageQueue("b", "x", 0), MessageQueue("a", "y", 1), MessageQueue("a", "y", 0), MessageQueue("a", "x", 9)]
    assert java_sorted_mqs(mqs) == [mqs[3], mqs[2], mqs[1], mqs[0]]


def test_strings_compare_by_utf16_code_units_not_code_points():
    # U+1F600 is the surrogate pair D83D DE00, which Java puts before U+FF5E.
    emoji, fullwidth = "\U0001f600", "\uff5e"
    assert emoji > fullwidth  # Python: code points
    assert java_string_compare(emoji, fullwidth) < 0  # Java: code units
    assert java_sorted_cids([fullwidth, emoji]) == [emoji, fullwidth]
    assert java_sorted_mqs([MessageQueue(fullwidth, "b", 0), MessageQueue(emoji, "b", 0)])[0].topic == emoji


def test_queue_id_compare_overflows_like_java():
    # queueId - other.queueId wraps in 32 bits: -1 - 2147483647 is fine, 2147483647 - (-1) wraps negative.
    low, high = MessageQueue("t", "b", -1), MessageQueue("t", "b", 2147483647)
    assert java_sorted_mqs([low, high]) == [high, low]
    assert high.compare_to(low) < 0 and low.compare_to(high) < 0


def test_bad_queue_fields_are_rejected():
    with pytest.raises(TypeError, match="topic"):
        MessageQueue(None, "b", 0)
    with pytest.raises(TypeError, match="queue_id"):
        MessageQueue("t", "b", "0")
    with pytest.raises(ValueError, match="queue_id"):
        MessageQueue("t", "b", 2**31)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a@b", ["a", "b"]),
        ("a@", ["a"]),
        ("a@@", ["a"]),
        ("@a", ["", "a"]),
        ("@", []),
        ("", [""]),
        ("a", ["a"]),
        ("a@@b@", ["a", "", "b"]),
    ],
)
def test_split_drops_trailing_empty_strings_like_java(text, expected):
    assert java_split(text, "@") == expected


@given(st.lists(st.text(max_size=4), max_size=12))
def test_java_string_order_matches_utf16_lexicographic(items):
    def units(s):
        data = s.encode("utf-16-be", "surrogatepass")
        return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]

    assert java_sorted_cids(items) == sorted(items, key=units)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["T", "U", "\U0001f600", "\ue000"]),
            st.sampled_from(["broker-a", "b", "\uffff", "\U00010000"]),
            st.integers(-(2**31), 2**31 - 1),
        ),
        max_size=25,
    ),
    st.integers(0, 2**31 - 1),
)
def test_java_sorted_mqs_gives_the_compare_to_order_with_or_without_overflowing_ids(rows, span):
    """The key-sort fast path (ids less than 2**31 apart) and the compareTo sort give the same list."""
    mqs = [MessageQueue(t, b, q) for t, b, q in rows]
    narrow = [MessageQueue(t, b, q % (span + 1)) for t, b, q in rows]  # ids within one span: the fast path
    for queues in (mqs, narrow):
        by_compare = sorted(queues, key=functools.cmp_to_key(lambda a, b: a.compare_to(b)))
        assert java_sorted_mqs(queues) == sorted(queues) == by_compare

"""GET_CONSUME_STATS: what a dashboard shows as a group's backlog (AdminBrokerProcessor#getConsumeStats)."""

import pytest

from rmqlib.broker import ConsumeStats, MessageStore, OffsetWrapper, get_consume_stats
from rmqlib.model import MessageQueue


@pytest.fixture
def store():
    store = MessageStore()
    store.create_topic("TopicTest", 3)
    for i in range(10):  # queue 0 gets 4 messages, queue 1 and 2 three each
        store.put_message("TopicTest", i % 3, now_ms=1_000 + 100 * i, uniq_key=str(i))
    store.reput(4_000)
    store.put_message("TopicTest", 0, now_ms=5_000, uniq_key="late")  # stored, not yet dispatched
    store.commit_offset("G", "TopicTest", 0, 3)
    store.commit_offset("G", "TopicTest", 1, 1)
    return store


def test_each_read_queue_has_its_max_offset_committed_offset_and_the_last_covered_store_time(store):
    stats = get_consume_stats(store, "broker-a", "G", ["TopicTest"])
    q = [MessageQueue("TopicTest", "broker-a", i) for i in range(3)]
    assert stats.offset_table == {
        q[0]: OffsetWrapper(4, 3, 3, 1_600),  # offsets 0..3 dispatched; offset 2 (message 6) stored at 1,600
        q[1]: OffsetWrapper(3, 1, 1, 1_100),
        q[2]: OffsetWrapper(3, 0, 0, 0),  # nothing committed: counted from 0, no last time
    }
    assert [w.diff for w in stats.offset_table.values()] == [1, 2, 3] and stats.compute_total_diff() == 6
    assert stats.compute_inflight_total_diff() == 0  # a pull group has no pull offset of its own


def test_a_message_counts_once_dispatched_and_another_group_or_topic_is_its_own(store):
    store.reput(6_000)  # the late message reaches its consume queue
    assert get_consume_stats(store, "broker-a", "G", ["TopicTest"]).compute_total_diff() == 7
    assert get_consume_stats(store, "broker-a", "other", ["TopicTest"]).compute_total_diff() == 11
    assert get_consume_stats(store, "broker-a", "G", ["NoSuchTopic"]) == ConsumeStats()  # skipped, as Java logs it


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(store=None), TypeError, "store"),
        (dict(broker_name=""), ValueError, "broker_name"),
        (dict(group=3), TypeError, "group"),
        (dict(topics="TopicTest"), TypeError, "topics"),
        (dict(topics=[None]), TypeError, r"topics\[0\]"),
    ],
)
def test_bad_arguments_are_refused_by_name(store, kwargs, error, name):
    call = dict(store=store, broker_name="broker-a", group="G", topics=["TopicTest"]) | kwargs
    with pytest.raises(error, match=name):
        get_consume_stats(**call)

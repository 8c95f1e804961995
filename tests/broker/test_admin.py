"""GET_CONSUME_STATS: what a dashboard shows as a group's backlog (AdminBrokerProcessor#getConsumeStats)."""

import pytest

from rmqlib.broker import (
    ClientChannelInfo,
    ConsumerManager,
    ConsumeStats,
    MessageStore,
    OffsetWrapper,
    PullRequestHoldService,
    SubscriptionData,
    get_consume_stats,
)
from rmqlib.broker.message_store import ConsumerOffsetManager
from rmqlib.broker.pull_processor import PullMessageProcessor, PullMessageRequest
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


def _topics(stats: ConsumeStats) -> set[str]:
    return {mq.topic for mq in stats.offset_table}


def test_without_a_topic_the_broker_answers_for_the_topics_the_group_has_offsets_of(store):
    store.create_topic("Other", 2)
    store.create_topic("Quiet", 2)
    store.commit_offset("G", "Other", 1, 0)
    assert _topics(get_consume_stats(store, "broker-a", "G")) == {"TopicTest", "Other"}  # not Quiet: no offset
    assert get_consume_stats(store, "broker-a", "nobody") == ConsumeStats()  # a group that committed nothing
    registry = ConsumerManager()
    registry.register_consumer(
        "G",
        ClientChannelInfo("ch", "c1"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("TopicTest", "*", 0)],
        True,
        0,
    )
    # the group's registered subscriptions leave out a topic they lack, named or not ...
    assert _topics(get_consume_stats(store, "broker-a", "G", consumer_manager=registry)) == {"TopicTest"}
    assert get_consume_stats(store, "broker-a", "G", topic="Other", consumer_manager=registry) == ConsumeStats()
    assert _topics(get_consume_stats(store, "broker-a", "G", topic="Quiet")) == {"Quiet"}  # no registry: counted
    # ... but a topic list is taken as it is
    listed = get_consume_stats(store, "broker-a", "G", ["Other", "Quiet"], consumer_manager=registry)
    assert _topics(listed) == {"Other", "Quiet"}


def test_a_pull_notes_its_next_offset_and_the_inflight_diff_counts_what_was_pulled_and_not_committed():
    store = MessageStore()
    store.create_topic("T", 2)
    processor = PullMessageProcessor(store, PullRequestHoldService(store))
    for i in range(6):
        store.put_message("T", 0, now_ms=100 + i)
    store.reput(200)

    def pull(offset, commit=None, queue_id=0):
        return PullMessageRequest(
            "G",
            "T",
            queue_id,
            offset,
            max_msg_nums=4,
            client_id="c1",
            channel="ch1",
            has_subscription_flag=True,
            has_commit_offset_flag=commit is not None,
            commit_offset=commit or 0,
        )

    assert store.offsets.query_pull_offset("G", "T", 0) == -1  # neither pulled nor committed
    assert len(processor.process_request(pull(0), 300).messages) == 4
    stats = get_consume_stats(store, "b", "G", ["T"])
    line = stats.offset_table[MessageQueue("T", "b", 0)]
    assert (line.consumer_offset, line.pull_offset) == (0, 4) and stats.compute_inflight_total_diff() == 4
    assert len(processor.process_request(pull(4, commit=3), 400).messages) == 2  # commits 3, pulls up to 6
    assert get_consume_stats(store, "b", "G", ["T"]).compute_inflight_total_diff() == 6 - 3
    assert processor.process_request(pull(6, commit=6, queue_id=0), 500) is None  # held: the offset is noted anyway
    assert store.offsets.query_pull_offset("G", "T", 0) == 6 and store.query_offset("G", "T", 0) == 6
    store.commit_offset("G", "T", 1, 2)  # no pull of queue 1: its committed offset stands in
    assert store.offsets.query_pull_offset("G", "T", 1) == 2


def test_which_topic_by_consumer_never_finds_a_name_with_an_at_sign():
    offsets = ConsumerOffsetManager()
    for group, topic in (("G", "T"), ("G", "U"), ("G@broadcast", "T"), ("G", "V@x"), ("H", "W")):
        offsets.commit_offset(group, topic, 0, 1)
    assert offsets.which_topic_by_consumer("G") == {"T", "U"}
    assert offsets.which_topic_by_consumer("G@broadcast") == set()


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(store=None), TypeError, "store"),
        (dict(broker_name=""), ValueError, "broker_name"),
        (dict(group=3), TypeError, "group"),
        (dict(topics="TopicTest"), TypeError, "topics"),
        (dict(topics=[None]), TypeError, r"topics\[0\]"),
        (dict(topic=5), TypeError, "topic"),
        (dict(consumer_manager={}), TypeError, "consumer_manager"),
    ],
)
def test_bad_arguments_are_refused_by_name(store, kwargs, error, name):
    call = dict(store=store, broker_name="broker-a", group="G", topics=["TopicTest"]) | kwargs
    with pytest.raises(error, match=name):
        get_consume_stats(**call)

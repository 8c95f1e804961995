"""The broker's counters behind a dashboard's consume TPS (StatsItem, StatsItemSet, BrokerStatsManager)."""

import random

import pytest

from rmqlib.broker import (
    BrokerConfig,
    BrokerStatsManager,
    MessageStore,
    PopMessageProcessor,
    PullMessageProcessor,
    PullMessageRequest,
    PullRequestHoldService,
    StatsItem,
    StatsItemSet,
    StatsSnapshot,
    get_consume_stats,
)
from rmqlib.broker.stats import MINUTE_SAMPLES, SAMPLING_INTERVAL_MS


def test_the_first_sample_starts_from_zero_one_interval_earlier():
    item = StatsItem("GROUP_GET_NUMS", "T@G")
    item.value, item.times = 50, 4
    item.sampling_in_seconds(20_000)
    assert list(item.cs_list_minute) == [(10_000, 0, 0), (20_000, 4, 50)]
    assert item.get_stats_data_in_minute() == StatsSnapshot(sum=50, tps=5.0, avgpt=12.5, times=4)


def test_the_minute_keeps_seven_samples_so_the_rate_is_the_last_minutes():
    item = StatsItem("GROUP_GET_NUMS", "T@G")
    for k in range(10):  # 30 messages in each 10 s, then 60 in the last
        item.value += 60 if k == 9 else 30
        item.times += 1
        item.sampling_in_seconds(10_000 * (k + 1))
    samples = list(item.cs_list_minute)
    assert len(samples) == MINUTE_SAMPLES and samples[0][0] == 40_000 and samples[-1][0] == 100_000
    snapshot = item.get_stats_data_in_minute()
    assert snapshot.sum == 5 * 30 + 60 and snapshot.tps == pytest.approx((5 * 30 + 60) / 60)
    assert snapshot.times == 6 and snapshot.avgpt == pytest.approx(210 / 6)


def test_an_item_nothing_sampled_and_a_key_nothing_counted_read_as_zero():
    assert StatsItem("S", "k").get_stats_data_in_minute() == StatsSnapshot()
    items = StatsItemSet("S")
    assert items.get_stats_data_in_minute("k") == StatsSnapshot()
    items.add_value("k", 3, 1)
    assert items.get_stats_data_in_minute("k") == StatsSnapshot()  # counted, not yet sampled
    items.sampling_in_seconds(10_000)
    assert items.get_stats_data_in_minute("k").tps == pytest.approx(0.3)


def test_a_group_and_topic_count_apart_and_a_restart_counts_from_zero():
    stats = BrokerStatsManager()
    stats.inc_group_get_nums("G", "T", 20)
    stats.inc_group_get_nums("G", "U", 5)
    stats.inc_group_get_nums("H", "T", 7)
    stats.sampling_in_seconds(0)
    stats.inc_group_get_nums("G", "T", 100)
    stats.sampling_in_seconds(SAMPLING_INTERVAL_MS)
    assert stats.tps_group_get_nums("G", "T") == pytest.approx(120 / 20)
    assert stats.tps_group_get_nums("G", "U") == pytest.approx(5 / 20)
    assert stats.tps_group_get_nums("H", "T") == pytest.approx(7 / 20)
    assert stats.tps_group_get_nums("G", "nothing") == 0.0
    assert BrokerStatsManager().tps_group_get_nums("G", "T") == 0.0  # a restarted broker's new one


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: StatsItemSet("S").add_value("k", -1, 1), ValueError, "inc_value"),
        (lambda: StatsItemSet("S").add_value("k", 1, 1.0), TypeError, "inc_times"),
        (lambda: StatsItemSet("S").add_value("", 1, 1), ValueError, "stats_key"),
        (lambda: StatsItem("S", "k").sampling_in_seconds(1.5), TypeError, "now_ms"),
        (lambda: BrokerStatsManager().inc_group_get_nums("G", "T", True), TypeError, "inc_value"),
    ],
)
def test_bad_arguments_are_refused_by_name(call, error, name):
    with pytest.raises(error, match=name):
        call()


def _pull_broker(stats):
    store = MessageStore()
    store.create_topic("T", 2)
    processor = PullMessageProcessor(store, PullRequestHoldService(store), broker_stats_manager=stats)
    return store, processor


def _pull(queue_id, offset, group="G"):
    return PullMessageRequest(group, "T", queue_id, offset, client_id="c1", channel="ch1", has_subscription_flag=True)


def test_a_pull_answer_counts_the_messages_it_hands_out_a_woken_one_too():
    stats = BrokerStatsManager()
    store, processor = _pull_broker(stats)
    for i in range(5):
        store.put_message("T", 0, now_ms=100 + i)
    store.reput(200)
    assert len(processor.process_request(_pull(0, 0), 300).messages) == 5
    assert processor.process_request(_pull(0, 5), 400) is None  # nothing new: held, nothing handed out
    assert processor.process_request(_pull(1, 0, group="other"), 400) is None
    store.put_message("T", 0, now_ms=500)
    store.put_message("T", 1, now_ms=500)
    store.reput(501)  # wakes both held pulls: one message each
    assert [len(answer.messages) for answer in processor.drain()] == [1, 1]
    stats.sampling_in_seconds(10_000)
    assert stats.tps_group_get_nums("G", "T") == pytest.approx(6 / 10)
    assert stats.tps_group_get_nums("other", "T") == pytest.approx(1 / 10)


def test_a_pop_counts_the_messages_it_hands_out():
    config = BrokerConfig(pop_from_retry_probability=0)
    store = MessageStore(config)
    store.create_topic("T", 1)
    for _ in range(3):
        store.put_message("T", 0, now_ms=0)
    store.reput(0)
    stats = BrokerStatsManager()
    pop = PopMessageProcessor(store, config, random.Random(0), broker_stats_manager=stats)
    assert len(pop.pop("G", "T", 0, 2, 60_000, now_ms=100).messages) == 2
    assert len(pop.pop("G", "T", 0, 32, 60_000, now_ms=101).messages) == 1
    assert not pop.pop("G", "T", 0, 32, 60_000, now_ms=102).messages
    stats.sampling_in_seconds(10_000)
    assert stats.tps_group_get_nums("G", "T") == pytest.approx(3 / 10)


def test_consume_stats_sum_the_rate_of_each_topic_asked_for():
    stats = BrokerStatsManager()
    store = MessageStore()
    store.create_topic("T", 1)
    store.create_topic("U", 1)
    stats.inc_group_get_nums("G", "T", 40)
    stats.inc_group_get_nums("G", "U", 20)
    stats.inc_group_get_nums("H", "T", 1_000)
    stats.sampling_in_seconds(10_000)
    assert get_consume_stats(store, "b", "G", ["T", "U"], stats).consume_tps == pytest.approx(6.0)
    assert get_consume_stats(store, "b", "G", ["T"], stats).consume_tps == pytest.approx(4.0)
    assert get_consume_stats(store, "b", "G", ["T", "U"]).consume_tps == 0.0  # no counters given
    with pytest.raises(TypeError, match="broker_stats_manager"):
        get_consume_stats(store, "b", "G", ["T"], broker_stats_manager={})

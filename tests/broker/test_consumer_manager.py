"""ConsumerManager / ConsumerGroupInfo / DefaultConsumerIdsChangeListener behaviour."""

import random

import pytest

from rmqlib.broker import (
    BrokerConfig,
    ClientChannelInfo,
    ClientHousekeepingService,
    ConsumerGroupEvent,
    ConsumerManager,
    DefaultConsumerIdsChangeListener,
    SubscriptionData,
)
from rmqlib.broker.consumer_manager import LISTENER_EVENTS_KEPT

G, T = "DEFAULT_GROUP", "DEFAULT_TOPIC"
PUSH, CLUSTER, BCAST, LAST = "CONSUME_PASSIVELY", "CLUSTERING", "BROADCASTING", "CONSUME_FROM_LAST_OFFSET"


def make(config=None):
    config = config or BrokerConfig()
    listener = DefaultConsumerIdsChangeListener(config)
    return ConsumerManager([listener], config), listener


def heartbeat(cm, channel, cid, now, topics=(T,), model=CLUSTER, notify=True, group=G, version=0):
    subs = [SubscriptionData(t, "*", version) for t in topics]
    return cm.register_consumer(group, ClientChannelInfo(channel, cid), PUSH, model, LAST, subs, notify, now)


def changes(cm):
    return [e for e in cm.events if e.event is ConsumerGroupEvent.CHANGE]


def test_first_heartbeat_registers_group_and_notifies_its_channel():
    cm, listener = make()
    assert heartbeat(cm, "ch1", "c1", 0) is True
    assert cm.get_consumer_id_list(G) == ["c1"]
    assert [(n.channel, n.client_id, n.group) for n in listener.drain()] == [("ch1", "c1", G)]
    cm._check()


def test_consumer_joining_notifies_every_channel_of_the_group():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0)
    heartbeat(cm, "ch2", "c2", 10)
    listener.drain()
    assert heartbeat(cm, "ch3", "c3", 20) is True
    sent = listener.drain()
    assert [(n.client_id, n.group, n.time_ms) for n in sent] == [("c1", G, 20), ("c2", G, 20), ("c3", G, 20)]


def test_the_listener_log_keeps_only_the_latest_calls():
    """Every heartbeat is a REGISTER call: a long run must not keep them all (Java keeps none)."""
    cm, _ = make()
    for i in range(LISTENER_EVENTS_KEPT + 10):
        heartbeat(cm, "ch1", "c1", i)
    assert len(cm.events) == LISTENER_EVENTS_KEPT
    assert cm.events[-1].time_ms == LISTENER_EVENTS_KEPT + 9 and cm.events[0].time_ms == 10
    assert {e.event for e in cm.events} == {ConsumerGroupEvent.REGISTER}  # the first heartbeat's CHANGE is gone


def test_repeated_heartbeat_changes_nothing_and_notifies_nobody():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0)
    listener.drain()
    assert heartbeat(cm, "ch1", "c1", 30_000) is False
    assert listener.drain() == []
    assert cm.find_channel(G, "ch1").last_update_timestamp == 30_000


def test_newer_sub_version_replaces_silently_without_change():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0, version=1)
    listener.drain()
    assert heartbeat(cm, "ch1", "c1", 1000, version=5) is False
    assert cm.find_subscription_data(G, T).sub_version == 5
    assert listener.drain() == []


def test_topic_missing_from_heartbeat_is_removed_and_counts_as_change():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0, topics=("A", "B"))
    listener.drain()
    assert heartbeat(cm, "ch2", "c2", 10, topics=("A", "B")) is True  # new channel
    listener.drain()
    # c2 heartbeats with a different subscription: last heartbeat wins for the whole group
    assert heartbeat(cm, "ch2", "c2", 20, topics=("A",)) is True
    assert cm.get_consumer_group_info(G).get_subscribe_topics() == ["A"]
    assert len(listener.drain()) == 2


def test_broadcasting_group_never_fires_change():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0, model=BCAST)
    heartbeat(cm, "ch2", "c2", 0, model=BCAST)
    assert changes(cm) == [] and listener.drain() == []
    assert cm.get_consumer_group_info(G) is not None


def test_group_notify_flag_false_suppresses_change_on_register():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0, notify=False)
    assert changes(cm) == []


def test_broker_notify_flag_false_suppresses_notifications_but_not_events():
    cm, listener = make(BrokerConfig(notify_consumer_ids_changed_enable=False))
    heartbeat(cm, "ch1", "c1", 0)
    assert len(changes(cm)) == 1
    assert listener.drain() == []


def test_coalesced_notify_flushes_latest_channels_first_at_30s_then_every_15s():
    cm, listener = make(BrokerConfig(real_time_notify_consumer_change=False))
    heartbeat(cm, "ch1", "c1", 0)
    heartbeat(cm, "ch2", "c2", 1000)
    assert listener.drain() == []
    assert listener.run_due(29_999) == []
    sent = listener.run_due(30_000)
    assert [(n.client_id, n.time_ms) for n in sent] == [("c1", 30_000), ("c2", 30_000)]
    assert listener.next_flush_ms == 45_000
    heartbeat(cm, "ch3", "c3", 31_000)
    assert listener.run_due(44_999) == []
    assert [n.client_id for n in listener.run_due(45_000)] == ["c1", "c2", "c3"]
    assert listener.run_due(60_000) == []


def test_unregister_removes_channel_and_notifies_remaining():
    cm, listener = make()
    a, b = ClientChannelInfo("ch1", "c1"), ClientChannelInfo("ch2", "c2")
    subs = [SubscriptionData(T)]
    cm.register_consumer(G, a, PUSH, CLUSTER, LAST, subs, True, 0)
    cm.register_consumer(G, b, PUSH, CLUSTER, LAST, subs, True, 0)
    listener.drain()
    cm.unregister_consumer(G, a, True, 100)
    assert [n.client_id for n in listener.drain()] == ["c2"]
    assert cm.get_consumer_id_list(G) == ["c2"]


def test_unregister_last_broadcast_member_removes_group_without_change():
    # ConsumerManagerTest#unregisterConsumerTest
    cm, listener = make()
    info = ClientChannelInfo("ch1", "1")
    cm.register_consumer(G, info, PUSH, BCAST, "CONSUME_FROM_FIRST_OFFSET", [SubscriptionData(T)], True, 0)
    cm.unregister_consumer(G, info, True, 10)
    assert changes(cm) == []
    assert cm.get_consumer_group_info(G) is None
    assert cm.query_topic_consume_by_who(T) == set()
    assert [e.event for e in cm.events][-1] is ConsumerGroupEvent.UNREGISTER


def test_channel_close_event_removes_channel_and_fires_change():
    cm, listener = make()
    heartbeat(cm, "ch1", "c1", 0)
    heartbeat(cm, "ch2", "c2", 0)
    listener.drain()
    assert cm.do_channel_close_event("10.0.0.1:1234", "ch1", 500) is True
    assert [(n.client_id, n.time_ms) for n in listener.drain()] == [("c2", 500)]
    assert cm.do_channel_close_event("10.0.0.1:1234", "ch1", 600) is False


def test_channel_close_event_on_unknown_channel_does_nothing():
    # ConsumerManagerTest#doChannelCloseEventTest
    cm, listener = make()
    assert cm.do_channel_close_event("127.0.0.1", "nope", 0) is False
    assert list(cm.events) == [] and cm.consumer_table == {}


def test_silent_host_removed_only_by_scan_after_120s_without_change_notify():
    cm, listener = make()
    hk = ClientHousekeepingService(cm, start_ms=0)
    heartbeat(cm, "ch1", "c1", 0)
    heartbeat(cm, "ch2", "c2", 0)
    listener.drain()
    # c1 keeps heart-beating every 30 s, c2's host is gone (no close event reaches the broker)
    removed_at = None
    for now in range(10_000, 200_001, 10_000):
        if now % 30_000 == 0:
            heartbeat(cm, "ch1", "c1", now)
        if hk.run_due(now):
            removed_at = now
            break
        assert cm.get_consumer_id_list(G) == ["c1", "c2"], now
    assert removed_at == 130_000  # first 10 s scan with a silence strictly over 120 s
    assert cm.get_consumer_id_list(G) == ["c1"]
    assert listener.drain() == []
    assert all(e.time_ms == 0 for e in changes(cm))  # only the join-time CHANGEs
    assert (130_000, "ch2") in cm.closed_channels
    # Netty's close event for the closed channel finds nothing: still no CHANGE
    assert cm.do_channel_close_event("addr", "ch2", 130_001) is False
    assert listener.drain() == []


def test_scan_uses_strictly_greater_than_channel_expired_timeout():
    cm, _ = make()
    heartbeat(cm, "ch1", "c1", 0)
    assert cm.scan_not_active_channel(120_000) == []
    assert [c.client_id for _, c in cm.scan_not_active_channel(120_001)] == ["c1"]
    assert cm.get_consumer_group_info(G) is None  # emptied group is dropped


def test_identical_client_ids_on_two_channels_are_both_listed():
    cm, listener = make()
    heartbeat(cm, "ch1", "10.0.0.1@DEFAULT", 0)
    heartbeat(cm, "ch2", "10.0.0.1@DEFAULT", 0)
    assert cm.get_consumer_id_list(G) == ["10.0.0.1@DEFAULT", "10.0.0.1@DEFAULT"]
    assert cm.find_channel_by_client_id(G, "10.0.0.1@DEFAULT").channel == "ch1"


def test_same_channel_new_client_id_replaces_info_but_stamps_the_old_object():
    cm, _ = make()
    heartbeat(cm, "ch1", "c1", 0)
    old = cm.find_channel(G, "ch1")
    new = ClientChannelInfo("ch1", "c1-renamed", last_update_timestamp=5)
    assert cm.register_consumer(G, new, PUSH, CLUSTER, LAST, [SubscriptionData(T)], True, 1000) is False
    assert cm.get_consumer_id_list(G) == ["c1-renamed"]
    assert old.last_update_timestamp == 1000 and new.last_update_timestamp == 5


def test_query_topic_consume_by_who_and_subscription_lookups():
    cm, _ = make()
    heartbeat(cm, "ch1", "c1", 0)
    assert cm.query_topic_consume_by_who(T) == {G}
    assert cm.find_subscription_data_count(G) == 1
    assert cm.find_subscription_data(G, T).topic == T


def test_compensated_subscription_expires_after_ten_minutes():
    cm, _ = make()
    cm.compensate_subscribe_data(G, T, SubscriptionData(T, "*", 0))
    cm.compensate_subscribe_data(G, T + "_1", SubscriptionData(T, "*", 500_000))
    assert cm.find_subscription_data(G, T, True) is not None
    assert cm.find_subscription_data(G, T, False) is None
    cm.remove_expire_consumer_group_info(600_001)
    assert cm.find_subscription_data(G, T) is None
    assert cm.find_subscription_data(G, T + "_1") is not None


def test_bad_arguments_raise_value_error_naming_them():
    cm, _ = make()
    with pytest.raises(ValueError, match="message_model"):
        cm.register_consumer(G, ClientChannelInfo("ch", "c"), PUSH, "CLUSTER", LAST, [], True, 0)
    with pytest.raises(ValueError, match="channel"):
        ClientChannelInfo("", "c")
    with pytest.raises(ValueError, match="now_ms"):
        heartbeat(cm, "ch", "c", None)


@pytest.mark.parametrize("seed", range(20))
def test_seeded_stress_keeps_invariants(seed):
    rng = random.Random(seed)
    cm, listener = make(BrokerConfig(real_time_notify_consumer_change=rng.random() < 0.5))
    hk = ClientHousekeepingService(cm)
    now = 0
    for _ in range(300):
        now += rng.randrange(0, 20_000)
        group = rng.choice(["g1", "g2"])
        ch = f"ch{rng.randrange(6)}"
        action = rng.random()
        if action < 0.6:
            topics = rng.sample(["A", "B", "C"], rng.randrange(1, 3))
            heartbeat(
                cm, ch, f"c{rng.randrange(4)}", now, topics=topics, group=group, model=rng.choice([CLUSTER, BCAST])
            )
        elif action < 0.75:
            cm.unregister_consumer(group, ClientChannelInfo(ch, "x"), True, now)
        else:
            cm.do_channel_close_event("addr", ch, now)
        before = hk.next_scan_ms
        hk.run_due(now)
        listener.run_due(now)
        cm._check()
        for n in listener.drain():
            assert n.time_ms == now
        if hk.next_scan_ms != before:  # a scan ran now: nobody silent over 120 s is left
            for info in cm.consumer_table.values():
                assert all(now - c.last_update_timestamp <= 120_000 for c in info.channel_info_table.values())


def test_broker_core_imports_no_sim_or_viz_libraries():
    import subprocess
    import sys

    code = (
        "import sys, rmqlib.broker; bad = [m for m in ('simpy', 'plotly', 'ipywidgets') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0

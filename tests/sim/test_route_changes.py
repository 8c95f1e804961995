"""Routes that change during a run: queues added, a broker joining, stopping, vanishing; read != write."""

import pytest

from rmqlib.broker import ClientChannelInfo, SubscriptionData
from rmqlib.namesrv import BROKER_CHANNEL_EXPIRED_MS, SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS
from rmqlib.sim import BrokerOutage, Scenario, TopicChange, scenarios, simulate
from rmqlib.sim.engine import Simulation


def _events(result, kind, who=None):
    return [e for e in result.events if e.kind == kind and (who is None or e.who == who)]


def _first_owned(result, queue_part):
    starts = [i.start_ms for q, intervals in result.ownership.items() if queue_part in q for i in intervals]
    return min(starts) if starts else None


def test_new_queues_wait_for_each_consumers_route_poll_and_then_a_rebalance():
    sc = scenarios.topic_grows()
    result = simulate(sc, seed=2)
    change = sc.topic_changes[0].at_ms
    sightings = [e.time_ms for e in _events(result, "route") if "broker-a 8r/8w" in e.detail and e.who != "producers"]
    assert len(sightings) == len(sc.consumers)  # each consumer learns the new route once
    assert all(change < t <= change + sc.poll_name_server_interval_ms for t in sightings)
    latest = change + sc.poll_name_server_interval_ms + sc.rebalance_interval_ms + sc.rebalance_min_interval_ms
    for queue_id in range(4, 8):
        first = _first_owned(result, f"brokerName=broker-a, queueId={queue_id}]")
        assert first is not None and min(sightings) <= first <= latest, (queue_id, first)
    assert result.lost == [] and result.unconsumed() == {}
    assert result.offset_violations == []
    waits = result.waits_for_owner(change)  # the queues nobody owned at the change: exactly the new ones
    assert sorted(waits) == sorted(q for q in result.queues if "broker-a" in q and int(q[-2]) >= 4)
    assert all(w == result.first_owned_ms(q) - change for q, w in waits.items())


def test_a_stopped_broker_leaves_the_route_at_once_and_its_queues_come_back_with_it():
    sc = scenarios.broker_outage()
    outage = sc.outages[0]
    result = simulate(sc, seed=2)
    assert [e.time_ms for e in _events(result, "route removed", "broker-b")] == [outage.down_ms]
    assert result.counters.get("sent_elsewhere", 0) > 0  # sends meant for broker-b before the producers' poll
    assert result.counters.get("send_failed", 0) == 0  # refused at once, so retried on broker-a
    b_batches = [
        b for q, batches in result.consumption.items() if "broker-b" in q and "TopicTest" in q for b in batches
    ]
    assert not [b for b in b_batches if outage.down_ms + sc.rpc_latency_ms < b.start_ms < outage.up_ms]
    assert [b for b in b_batches if b.start_ms > outage.up_ms], "broker-b's queues were not consumed after it returned"
    assert result.lost == [] and result.offset_violations == []


def test_a_vanished_broker_stays_in_the_route_until_its_registration_is_older_than_120_s():
    sc = scenarios.broker_vanishes()
    down = sc.outages[0].down_ms
    result = simulate(sc, seed=2)
    [removed] = [e.time_ms for e in _events(result, "route removed", "broker-b")]
    last_registration = down // sc.register_name_server_period_ms * sc.register_name_server_period_ms
    assert removed % SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS == 0
    assert (
        last_registration - sc.register_name_server_period_ms + BROKER_CHANNEL_EXPIRED_MS
        < removed
        <= last_registration + BROKER_CHANNEL_EXPIRED_MS + SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS
    )
    assert result.lost == []
    # sends to it time out and fail (no time left to retry) until the producers' route drops it
    assert result.counters.get("send_failed", 0) > 0 and result.counters.get("sent_elsewhere", 0) == 0
    producers_drop = min(e.time_ms for e in _events(result, "route", "producers") if e.time_ms > removed)
    rate = sc.produce_rate_per_queue * sc.topics["TopicTest"]  # broker-b's share, messages a second
    failing_ms = min(producers_drop, sc.duration_ms) - down  # producers stop at duration_ms
    assert result.counters["send_failed"] == pytest.approx(rate * failing_ms / 1000, rel=0.05)


@pytest.mark.parametrize("read, write", [(4, 8), (2, 4)])
def test_messages_on_write_queues_nobody_reads_stay_unconsumed(read, write):
    sc = scenarios.steady_state(topic_changes=(TopicChange(60_000, "broker-a", read, write),))
    result = simulate(sc, seed=2)
    unread = result.unconsumed()
    assert unread and sum(unread.values()) == len(result.lost)
    assert all("broker-a" in q and int(q.rsplit("=", 1)[1].rstrip("]")) >= read for q in unread)


def test_shrinking_write_queues_first_strands_nothing_shrinking_read_queues_first_does():
    wrong = scenarios.steady_state(
        topic_changes=(TopicChange(60_000, "broker-a", 2, 4), TopicChange(100_000, "broker-a", 2, 2))
    )
    right = scenarios.steady_state(
        topic_changes=(TopicChange(60_000, "broker-a", 4, 2), TopicChange(150_000, "broker-a", 2, 2))
    )
    assert sum(simulate(wrong, seed=2).unconsumed().values()) > 0
    assert simulate(right, seed=2).unconsumed() == {}


def _producers_see(result, after_ms):
    return min(e.time_ms for e in _events(result, "route", "producers") if e.time_ms > after_ms)


def test_sends_to_a_queue_past_both_counts_fail_until_the_producers_see_the_route():
    change = TopicChange(61_000, "broker-a", 2, 2)  # just after the producers' poll at 60.01 s
    sc = scenarios.steady_state(topic_changes=(change,))
    result = simulate(sc, seed=2)
    refused_ms = _producers_see(result, change.at_ms) - change.at_ms
    rate = sc.produce_rate_per_queue  # messages a second on each queue
    # the broker refuses queues 2 and 3 (INVALID_PARAMETER) and the producer does not retry that code
    assert result.counters["send_failed"] == pytest.approx(2 * rate * refused_ms / 1000, rel=0.02)
    assert "sent_elsewhere" not in result.counters
    # so queues 2 and 3 hold only what they got before the change, and consumers had read all of it
    for queue_id in (2, 3):
        stored = result.stored[f"MessageQueue [topic=TopicTest, brokerName=broker-a, queueId={queue_id}]"]
        assert stored == pytest.approx(rate * (change.at_ms - sc.produce_start_ms) / 1000, abs=2)
    assert result.lost == []


def test_sends_to_a_broker_that_dropped_the_topic_are_retried_on_another_broker():
    change = TopicChange(61_000, "broker-a", 0, 0)
    sc = scenarios.steady_state(topic_changes=(change,))
    result = simulate(sc, seed=2)
    refused_ms = _producers_see(result, change.at_ms) - change.at_ms
    # TOPIC_NOT_EXIST is a code the producer retries: every send meant for broker-a lands on broker-b
    assert result.counters["sent_elsewhere"] == pytest.approx(
        4 * sc.produce_rate_per_queue * refused_ms / 1000, rel=0.02
    )
    assert "send_failed" not in result.counters
    assert result.lost == []


def test_a_broker_refuses_pulls_past_its_read_count_from_the_moment_it_shrinks():
    """Consumers learn the new route only at their next poll, but the broker checks every pull against its own
    read count (PullMessageProcessor): queues 2 and 3 are consumed no more from the change on."""
    change = TopicChange(35_000, "broker-a", 2, 4)
    result = simulate(scenarios.steady_state(topic_changes=(change,)), seed=1)
    for queue_id in (2, 3):
        batches = result.consumption[f"MessageQueue [topic=TopicTest, brokerName=broker-a, queueId={queue_id}]"]
        assert change.at_ms - 1_000 < max(batch.end_ms for batch in batches) <= change.at_ms + 100


def test_a_consumer_reconnecting_to_a_restarted_broker_heartbeats_it_at_once():
    """onChannelActive: a restart shorter than the consumers' route poll. Each consumer's first request to the
    restarted broker opens a new connection, which heartbeats it and asks for a rebalance, so no pull waits for
    the 30 s heartbeat to rebuild the broker's consumer registry."""
    outage = BrokerOutage("broker-b", 40_000, 50_000)
    result = simulate(scenarios.steady_state(outages=(outage,)), seed=1)
    reconnects = {e.who: e.time_ms for e in _events(result, "heartbeat") if "a new connection" in e.detail}
    assert sorted(reconnects) == sorted(spec.client_id for spec in result.scenario.consumers)  # once each
    pullers = {i.holder for q, spans in result.ownership.items() if "broker-b" in q for i in spans}
    assert pullers and all(outage.up_ms <= reconnects[cid] < outage.up_ms + 1_000 for cid in pullers)
    assert max(result.latencies_ms) < 2_000 and result.lost == []


def test_with_every_broker_down_clients_keep_their_last_route_and_sends_fail():
    sc = scenarios.steady_state(
        outages=(BrokerOutage("broker-a", 60_000, 90_000), BrokerOutage("broker-b", 60_000, 90_000))
    )
    result = simulate(sc, seed=2)
    consumer_routes = [e for e in _events(result, "route") if e.who != "producers" and 60_000 <= e.time_ms < 90_000]
    assert consumer_routes == []  # the name server knows the topic no more: the poll fails, the old route stays
    assert result.counters.get("send_failed", 0) > 0
    assert result.lost == []


def test_route_change_runs_are_deterministic():
    sc = scenarios.broker_joins(start_jitter_ms=3_000)
    one, two = simulate(sc, seed=5), simulate(sc, seed=5)
    assert one.summary() == two.summary() and one.event_log == two.event_log


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(outages=(BrokerOutage("broker-x", 10_000),)), "outages"),
        (dict(outages=(BrokerOutage("broker-a", 10_000, 50_000), BrokerOutage("broker-a", 40_000))), "outages"),
        (dict(topic_changes=(TopicChange(10_000, "broker-a", -1, 4),)), "topic_changes"),
    ],
)
def test_bad_route_changes_are_refused_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=f"Scenario.{field}"):
        Scenario(**changes)


def test_a_pause_counts_only_while_the_route_lists_the_queue():
    grown = simulate(scenarios.topic_grows(produce_rate_per_queue=2.0), seed=0)
    change = grown.scenario.topic_changes[0].at_ms
    for queue, wait in grown.waits_for_owner(change).items():  # a new queue is paused from the change to its owner
        assert grown.pauses()[queue][0] == (change, change + wait)
    down = simulate(scenarios.broker_outage(produce_rate_per_queue=2.0), seed=0)
    outage = down.scenario.outages[0]
    for queue, gaps in down.pauses().items():
        if "broker-b" in queue and "TopicTest" in queue:
            assert gaps and all(not (outage.down_ms < a < outage.up_ms) for a, _ in gaps), (queue, gaps)
            assert gaps[0][0] == outage.up_ms  # back in the route, waiting for its next owner
            assert down.routed[queue] == [(0, outage.down_ms), (outage.up_ms, down.scenario.end_ms)]


def test_a_restarted_broker_assigns_queues_from_its_new_registry():
    """A restart empties the broker's consumer registry; QUERY_ASSIGNMENT (QueryAssignmentProcessor, which asks the
    broker's ConsumerManager each time) must answer from that new registry, not from the one before the restart."""
    broker = Simulation(scenarios.broker_outage(), seed=1).brokers["broker-b"]
    cid = "10.0.0.1@1001"
    broker.consumer_manager.register_consumer(
        "GID_sim",
        ClientChannelInfo(f"{cid}->broker-b", cid),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("TopicTest", "*", 0)],
        False,
        0,
    )
    assert broker.assignment.query_assignment("TopicTest", "GID_sim", cid, "AVG", "CLUSTERING")  # a member: queues
    broker.go_down(silent=False)
    broker.come_up()
    assert broker.assignment.consumer_manager is broker.consumer_manager
    # nobody has registered with the restarted broker yet: no group, so no valid answer
    assert broker.assignment.query_assignment("TopicTest", "GID_sim", cid, "AVG", "CLUSTERING") is None

"""A Pop group across topic changes: a broker pops from the read queues its topic config has now, so queues
added to a broker are served at once (no route poll, no rebalance), queues taken away stop being served at
once and the acks of their in-flight messages fail (the messages come back through the retry topic), and a
new broker waits for the routes and a rebalance, as in pull mode."""

from functools import cache

from rmqlib.broker.pop_long_polling import POP_POLL_TIME_MILLIS
from rmqlib.client import PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION
from rmqlib.client.rebalance import DISPATCH_POP_REQUEST_DELAY_MILLS
from rmqlib.sim import TopicChange, scenarios, simulate
from rmqlib.sim.engine import Simulation

POP = dict(consume_mode="POP", consume_time_ms=200.0)


@cache
def grows(consume_mode: str):
    extra = POP if consume_mode == "POP" else dict(consume_time_ms=200.0)
    return simulate(scenarios.topic_grows(**extra), seed=0)


def test_queues_added_to_a_broker_are_popped_from_the_moment_of_the_change():
    """broker-a goes from 4 to 8 queues at 60 s. Every member's (broker-a, -1) assignment reaches the new queues
    at once; in pull mode they wait for each member's route poll and next rebalance."""
    pop, pull = grows("POP"), grows("CONCURRENT")
    new = [q for q in pop.queues if "broker-a" in q and "TopicTest" in q and int(q.split("queueId=")[1][:-1]) >= 4]
    assert len(new) == 4
    members = {spec.client_id for spec in pop.scenario.consumers}
    for queue in new:
        assert {i.holder for i in pop.ownership[queue] if i.start_ms == 60_000} == members
    assert pop.total_pause_ms() == 0 and pull.total_pause_ms() > 0
    bound = 2 * pop.scenario.rpc_latency_ms + pop.scenario.consume_time_ms
    assert pop.latency_percentile(99) <= bound < pull.latency_percentile(99)
    assert len(pop.lost) == 0 and pop.duplicates == 0


def test_queues_taken_from_a_broker_stop_being_popped_and_their_acks_fail():
    """broker-a goes from 4 to 2 queues at 60 s: no pop after that returns a message of queues 2 and 3, and an
    ack of one popped before (ACK_MESSAGE checks the read queue count) fails, so the message revives after its
    invisible time and is delivered again: one duplicate per failed ack, nothing lost."""
    sc = scenarios.topic_grows(topic_changes=(TopicChange(60_000, "broker-a", 2, 2),), **POP)
    sim = Simulation(sc, seed=0)
    result = sim.run()
    acks = [(t, h) for t, h, _ in sim.brokers["broker-a"].pop.ack_log if h.topic == "TopicTest"]
    assert any(h.queue_id >= 2 for _, h in acks)  # they were popped and acked before the change
    assert all(h.queue_id < 2 for t, h in acks if h.pop_time >= 60_000 or t > 60_000)
    assert 0 < result.counters["acks_failed"] == result.duplicates
    assert len(result.lost) == 0 and not any(result.never_delivered.values())
    revived = sim.brokers["broker-a"].revive.revived
    assert revived and all(ck.queue_id >= 2 and ck.pop_time < 60_000 for _, ck, _ in revived)


def test_a_broker_that_drops_the_topic_refuses_pops_until_no_assignment_names_it():
    """broker-b drops TopicTest at 60 s (``0, 0``). Pops it held end at their 15 s poll time, and each one after
    that is refused (TOPIC_NOT_EXIST) and goes out again pullTimeDelayMillsWhenException later, until the member's
    next rebalance takes broker-b out of its assignment (the brokers' route copies dropped it at 61 s)."""
    sc = scenarios.topic_grows(
        topic_changes=(TopicChange(60_000, "broker-b", 0, 0),), rebalance_interval_ms=120_000, **POP
    )
    result = simulate(sc, seed=0)
    failed = result.events_of("pop failed")
    assert failed and {e.detail for e in failed} == {"broker-b: TOPIC_NOT_EXIST"}
    rounds = {}
    for e in result.events_of("rebalance"):
        if e.time_ms > 61_000:
            rounds.setdefault(e.who, e.time_ms)
    by_member: dict[str, list[int]] = {}
    for e in failed:
        by_member.setdefault(e.who, []).append(e.time_ms)
    assert set(by_member) == set(rounds)
    retry_gap = PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION + 2 * sc.rpc_latency_ms
    for member, times in by_member.items():
        # the pop broker-b held across the change went out in the last second before it
        assert 60_000 - 1_000 + POP_POLL_TIME_MILLIS < times[0] and times[-1] <= rounds[member] + retry_gap
        assert {b - a for a, b in zip(times, times[1:])} == {retry_gap}
    # the acks of the messages popped just before the change are refused, and the topic is gone from broker-b's
    # config, so its revive passes their checkpoints over: consumed once, never again
    assert result.counters["acks_failed"] > 0 and not result.events_of("revive")
    assert len(result.lost) == 0 and result.duplicates == 0


def test_a_pop_to_a_broker_missing_from_the_clients_routes_takes_the_route_first():
    """broker-c joins at 60 s, and the members poll the name server only every 100 s. A member's rebalance asks a
    broker whose route copy (refreshed at 61 s) has broker-c already, so its assignment names a broker it has no
    address for: PullAPIWrapper#popAsync then updates the topic's route first and the pop goes out."""
    sc = scenarios.broker_joins(poll_name_server_interval_ms=100_000, **POP)
    result = simulate(sc, seed=0)
    routes = {e.who: e.time_ms for e in result.events_of("route") if e.who != "producers" and e.time_ms < 100_000}
    assert set(routes) == {spec.client_id for spec in sc.consumers} and not result.events_of("pop failed")
    rounds = {(e.who, e.time_ms) for e in result.events_of("rebalance")}
    queues = [q for q in result.queues if "broker-c" in q and "TopicTest" in q]
    for member, at in routes.items():  # the route came with the first pop, sent 500 ms after the round
        assert (member, at - DISPATCH_POP_REQUEST_DELAY_MILLS) in rounds
        for queue in queues:  # and the member can reach broker-c's queues from then on
            assert min(i.start_ms for i in result.ownership[queue] if i.holder == member) == at
    assert len(result.lost) == 0 and result.produced > 0


def test_a_pop_to_a_broker_in_no_route_fails_without_a_request_and_goes_out_again_a_second_later():
    """broker-c joins at 60 s and drops the topic at 62 s, after the brokers' 61 s route refresh: their copies name
    it until 91 s, so members are assigned a broker that no route has. popAsync finds no address even after taking
    the route, throws before anything is sent, and the pop goes out again pullTimeDelayMillsWhenException later."""
    changes = (TopicChange(60_000, "broker-c", 4, 4), TopicChange(62_000, "broker-c", 0, 0))
    sc = scenarios.broker_joins(topic_changes=changes, poll_name_server_interval_ms=100_000, **POP)
    result = simulate(sc, seed=0)
    unrouted = [e for e in result.events_of("pop failed") if e.detail == "broker-c: not in any route"]
    assert unrouted and all(62_000 < e.time_ms for e in unrouted)
    by_member: dict[str, list[int]] = {}
    for e in unrouted:
        by_member.setdefault(e.who, []).append(e.time_ms)
    assert set(by_member) == {spec.client_id for spec in sc.consumers}
    assert {b - a for t in by_member.values() for a, b in zip(t, t[1:])} == {PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION}
    assert len(result.lost) == 0

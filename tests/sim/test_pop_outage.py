"""A Pop group across a broker outage (scenarios.pop_broker_outage): pops to the broker fail and go out again
pullTimeDelayMillsWhenException later, the brokers keep assigning it until their copies of the routes are refreshed,
acks that fail bring their messages back after the invisible time, and nothing is lost."""

from functools import cache

from rmqlib.broker.pop_long_polling import POP_POLL_TIME_MILLIS
from rmqlib.broker.topic_route_info import FIRST_ROUTE_UPDATE_DELAY_MILLIS, LOAD_BALANCE_POLL_NAME_SERVER_INTERVAL
from rmqlib.client import PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION
from rmqlib.sim import BrokerOutage, scenarios, simulate
from rmqlib.sim.consumer_node import POP_RPC_TIMEOUT_MS
from rmqlib.sim.engine import Simulation


@cache
def run(seed: int = 1, silent: bool = False):
    sc = scenarios.pop_broker_outage()
    if silent:
        sc = sc.replace(outages=(BrokerOutage("broker-b", 70_000, 130_000, silent=True),))
    return simulate(sc, seed=seed)


def test_pops_to_a_stopped_broker_go_out_again_a_second_later_until_no_assignment_names_it():
    """Each failed pop waits pullTimeDelayMillsWhenException (1 s). The brokers answer QUERY_ASSIGNMENT from their
    own copy of the routes, refreshed 1 s after they start and then every 30 s: stopped at 62 s, just after the
    61 s refresh, broker-b stays in the assignments until the 91 s one, and leaves a member's at its next round."""
    sc = scenarios.pop_broker_outage(outages=(BrokerOutage("broker-b", 62_000, 130_000),))
    result = simulate(sc, seed=1)
    failed = [e.time_ms for e in result.events_of("pop failed")]
    refresh = FIRST_ROUTE_UPDATE_DELAY_MILLIS + 3 * LOAD_BALANCE_POLL_NAME_SERVER_INTERVAL  # 91 s
    assert refresh < max(failed) <= refresh + sc.rebalance_interval_ms + PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION + 100
    by_member: dict[str, list[int]] = {}
    for e in result.events_of("pop failed"):
        by_member.setdefault(e.who, []).append(e.time_ms)
    for times in by_member.values():  # one assignment per broker: a member's pops fail one after another
        assert all(b - a >= PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION for a, b in zip(times, times[1:]))
    assert result.counters["pops_failed"] == len(failed)


def test_pops_to_a_vanished_broker_fail_only_at_their_rpc_timeout():
    """A silent broker answers nothing: a pop fails at its RPC timeout, the 15 s poll time plus 10 s."""
    result = run(silent=True)
    [outage] = result.scenario.outages
    members = len(result.scenario.consumers)
    attempt_ms = POP_POLL_TIME_MILLIS + 10_000 + PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION
    per_member = (outage.up_ms - outage.down_ms) // attempt_ms
    assert 0 < result.counters["pops_failed"] <= members * (per_member + 1)


def test_a_pop_held_by_a_broker_that_vanishes_and_comes_back_fails_at_its_rpc_timeout():
    """No answer ever comes on the connection a held pop was sent on, even though the broker is back within the
    15 s it would have held the pop: the pop fails 25 s after it was sent. (A pop sent while the broker is away
    fails 25 s after too, so only a held one can fail before 25 s after the broker vanished.)"""
    outage = BrokerOutage("broker-b", 70_000, 75_000, silent=True)
    result = simulate(scenarios.pop_broker_outage(outages=(outage,)), seed=1)
    failed = result.events_of("pop failed")
    assert failed and {e.detail for e in failed} == {"broker-b: no answer before the timeout"}
    held_since = outage.down_ms - POP_POLL_TIME_MILLIS - result.scenario.rpc_latency_ms  # the oldest held pop's send
    assert min(e.time_ms for e in failed) < outage.down_ms + POP_RPC_TIMEOUT_MS
    assert all(held_since + POP_RPC_TIMEOUT_MS <= e.time_ms for e in failed)
    assert result.lost == [] and result.unconsumed() == {}


def test_failed_acks_bring_their_messages_back_after_the_invisible_time_and_nothing_is_lost():
    result = run()
    sc, [outage] = result.scenario, result.scenario.outages
    failed = result.counters["acks_failed"]
    assert failed > 0 and result.duplicates == failed  # each is revived once and consumed again
    revives = [e for e in result.events_of("revive") if e.who == "broker-b"]
    assert revives and all(e.time_ms >= outage.up_ms for e in revives)
    assert min(e.time_ms for e in revives) >= outage.down_ms + sc.pop_invisible_time_ms
    assert result.lost == [] and result.unconsumed() == {}


def test_without_the_outage_no_pop_or_ack_fails():
    result = simulate(scenarios.pop_broker_outage(outages=()), seed=1)
    assert "pops_failed" not in result.counters and "acks_failed" not in result.counters
    assert result.duplicates == 0 and result.lost == []


def test_an_ack_reaches_the_broker_one_network_delay_after_the_listener_returns():
    """DefaultMQPushConsumerImpl#ackAsync sends ACK_MESSAGE; the broker applies it when it arrives: the quickest
    ack comes a delay for the pop's answer, the listener call and a delay for the ack after the pop."""
    sc = scenarios.pop_broker_outage(outages=(), rpc_latency_ms=5, consume_time_ms=200.0, duration_ms=40_000)
    sim = Simulation(sc, seed=1)
    sim.run()
    gaps = [at - handle.pop_time for broker in sim.brokers.values() for at, handle, _ in broker.pop.ack_log]
    assert len(gaps) > 100 and min(gaps) == 5 + 200 + 5


def test_an_ack_in_flight_when_its_broker_restarts_fails():
    """The restart closed the connection the ack was sent on: it is only logged, never applied."""
    sim = Simulation(scenarios.pop_broker_outage(), seed=1)
    consumer, broker = next(iter(sim.consumers.values())), sim.brokers["broker-b"]
    consumer.ack_async(broker, handle=None)  # in flight for one network delay
    broker.go_down(silent=False)
    broker.come_up()
    sim.clock.run(until=sim.scenario.rpc_latency_ms + 1)
    assert sim.recorder.counters["acks_failed"] == 1 and broker.pop.ack_log == []


def test_once_a_member_forgets_the_stopped_broker_its_pops_fail_without_a_request():
    """MQClientInstance's heartbeat task first drops the addresses of brokers no route has (cleanOfflineBroker).
    After a member's route poll has dropped broker-b and its next heartbeat tick has run, a pop to broker-b finds no
    address, takes the topic's route (which still lacks broker-b) and fails before anything is sent: one second
    apart, where a pop refused by the closed connection fails a second plus two network delays apart."""
    result = run()
    sc = result.scenario
    unrouted, refused = {}, {}
    for e in result.events_of("pop failed"):
        (unrouted if e.detail == "broker-b: not in any route" else refused).setdefault(e.who, []).append(e.time_ms)
    assert unrouted and set(unrouted) <= set(refused)
    for member, times in unrouted.items():
        dropped = min(
            e.time_ms
            for e in result.events_of("route")
            if e.who == member and e.time_ms > 70_000 and "broker-b" not in e.detail
        )
        forgot = min(e.time_ms for e in result.events_of("heartbeat") if e.who == member and e.time_ms >= dropped)
        assert forgot <= times[0] and max(refused[member]) < times[0]
        assert {b - a for a, b in zip(times, times[1:])} == {PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION}
        assert {b - a for a, b in zip(refused[member], refused[member][1:])} == {
            PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION + 2 * sc.rpc_latency_ms
        }

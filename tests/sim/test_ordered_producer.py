"""Ordered messages in the simulator: each sent to the queue its order id selects, and out of order only when an
order moves to another queue while its older messages still wait in the old one."""

import pytest

from rmqlib.client.producer import SelectMessageQueueByHash
from rmqlib.model import MessageQueue
from rmqlib.sim import scenarios, simulate
from rmqlib.sim.engine import Simulation

SEEDS = [1, 2]
SELECT = SelectMessageQueueByHash().select


def _run(scenario, seed):
    """The result, each message's queue and store time (by id), and when the producers' route changed."""
    sim = Simulation(scenario, seed)
    result = sim.run()
    stored = {
        int(m.uniq_key): (MessageQueue(m.topic, name, m.queue_id), m.store_timestamp)
        for name, broker in sim.brokers.items()
        for m in broker.store.commit_log
        if m.topic in scenario.topics
    }
    changes = [e.time_ms for e in result.events_of("route") if e.who == "producers"]
    return result, stored, changes


def _sent(scenario) -> int:
    """Sends over the run: the topic's first write queues at ``produce_rate_per_queue`` each, all the while."""
    seconds = (scenario.duration_ms - scenario.produce_start_ms) / 1000
    queues = sum(scenario.topics.values()) * len(scenario.brokers)
    return round(seconds * scenario.produce_rate_per_queue * queues)


def _view(write_queues: dict[str, int], topic="TopicTest") -> list[MessageQueue]:
    return [MessageQueue(topic, broker, q) for broker, count in write_queues.items() for q in range(count)]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_order_goes_to_the_queue_its_id_selects_in_the_producers_route_of_the_moment(seed):
    result, stored, [change] = _run(scenarios.ordered_topic_grows(), seed)
    before, after = _view({"broker-a": 4, "broker-b": 4}), _view({"broker-a": 8, "broker-b": 4})
    assert set(result.orders) == set(range(100)) and len(stored) == result.produced
    for order_id, messages in result.orders.items():
        for message_id, _ in messages:
            queue, stored_ms = stored[message_id]
            assert queue == SELECT(before if stored_ms < change else after, None, order_id)
    assert result.counters.get("send_failed", 0) == 0 and result.produced == _sent(result.scenario)


@pytest.mark.parametrize("seed", SEEDS)
def test_an_order_is_consumed_out_of_order_only_when_it_moved_queues_with_a_backlog_behind_it(seed):
    """Every message consumed ahead of an older one of its order was sent after the producers' route changed, to
    the queue its order moved to; orders that kept their queue stay in order; with a fast listener nothing waits,
    and every order holds."""
    result, stored, [change] = _run(scenarios.ordered_topic_grows(), seed)
    before, after = _view({"broker-a": 4, "broker-b": 4}), _view({"broker-a": 8, "broker-b": 4})
    moved = {k for k in range(100) if SELECT(before, None, k) != SELECT(after, None, k)}
    broken = result.out_of_order()
    assert len(broken) >= 20 and set(broken) <= moved and len(moved) > 50
    for order_id, message_ids in broken.items():
        for message_id in message_ids:
            queue, stored_ms = stored[message_id]
            assert stored_ms >= change and queue == SELECT(after, None, order_id)
    assert result.lost == [] and result.overlapping_calls() == {}
    fast = simulate(scenarios.ordered_topic_grows(consume_time_ms=1.0), seed=seed)
    assert fast.out_of_order() == {} and fast.lost == [] and fast.produced == result.produced


def test_out_of_order_counts_a_message_finished_before_an_older_one_of_its_order():
    result = simulate(scenarios.ordered_topic_grows(consume_time_ms=1.0, drain_ms=10_000), seed=1)
    assert result.out_of_order() == {}
    order_id, messages = next((k, v) for k, v in result.orders.items() if len(v) >= 3)
    (first, t1), (second, t2), (third, t3) = messages[:3]
    result.orders[order_id] = [(first, t3 + 1), (second, t2), (third, float("inf"))]
    assert result.out_of_order() == {order_id: [second]}
    result.orders[order_id] = [(first, float("inf")), (second, t2), (third, t3)]
    assert result.out_of_order() == {order_id: [second, third]}


@pytest.mark.parametrize("seed", SEEDS)
def test_ordered_sends_to_a_stopped_broker_fail_until_the_producers_route_drops_it(seed):
    """A send with a selector is tried on its queue only: while broker-b is down and still in the producers'
    route, the orders that select it fail (never messages); after the route poll they hash over broker-a's
    queues, and every message sent is consumed."""
    scenario = scenarios.broker_outage(order_keys=100, consume_mode="ORDERLY")
    result, stored, changes = _run(scenario, seed)
    [outage] = scenario.outages
    dropped = changes[0]
    failed = result.counters["send_failed"]
    assert outage.down_ms < dropped <= outage.down_ms + scenario.poll_name_server_interval_ms + 10 and failed > 0
    both, only_a = _view({"broker-a": 4, "broker-b": 4}), _view({"broker-a": 4})
    for order_id, messages in result.orders.items():
        for message_id, _ in messages:
            queue, stored_ms = stored[message_id]
            if outage.down_ms <= stored_ms < dropped:
                assert SELECT(both, None, order_id).broker_name == "broker-a" == queue.broker_name
            elif dropped <= stored_ms < outage.up_ms:
                assert queue == SELECT(only_a, None, order_id)
    assert result.produced + failed == _sent(scenario) and result.lost == []

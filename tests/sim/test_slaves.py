"""A broker with a slave: while its master is away its queues stay in the routes, nobody's queues move, the slave
refuses every pull and takes the offset commits, and the queues stand still until the master is back. With
``slave_read_enable`` the slave serves what it holds, a copy of its master's messages, and sends every pull that finds
nothing straight back."""

import pytest

from rmqlib.sim import BrokerOutage, ConsumerSpec, TopicChange, scenarios, simulate
from rmqlib.sim.engine import Simulation

DOWN, UP = 70_000, 130_000  # scenarios.broker_outage_with_slave


def _events(result, kind, who=None):
    return [e for e in result.events if e.kind == kind and (who is None or e.who == who)]


def _broker_b_queues(result):
    return result.queues_on("broker-b", "TopicTest")


def test_with_a_slave_no_queue_moves_while_the_master_is_away_and_without_one_they_all_leave():
    with_slave = simulate(scenarios.broker_outage_with_slave(), seed=7)
    without = simulate(scenarios.broker_outage(), seed=7)
    assert [e.detail for e in _events(with_slave, "route reduced", "broker-b")] == ["master gone, slave stays"]
    assert not _events(with_slave, "route removed")
    for queue in _broker_b_queues(with_slave):
        # one owner from the start to the master's return: no interval ends or starts in between
        assert not [i for i in with_slave.ownership[queue] if DOWN <= i.start_ms < UP or DOWN <= i.end_ms < UP]
    # without a slave the name server drops broker-b, and every consumer drops its queues at its next route poll
    assert _events(without, "route removed", "broker-b")
    for queue in _broker_b_queues(without):
        assert [i for i in without.ownership[queue] if DOWN <= i.end_ms < UP], queue


def test_the_queues_stand_still_the_slave_refuses_each_pull_and_the_client_tries_again_a_second_later():
    sc = scenarios.broker_outage_with_slave()
    result = simulate(sc, seed=7)
    for queue in _broker_b_queues(result):
        assert not [b for b in result.consumption[queue] if DOWN <= b.start_ms < UP], queue
    refused = _events(result, "pull refused", "broker-b/slave")
    assert refused and all(DOWN < e.time_ms < UP + sc.poll_name_server_interval_ms for e in refused)
    by_request = {}
    for e in refused:
        by_request.setdefault(e.detail, []).append(e.time_ms)
    gaps = {b - a for times in by_request.values() for a, b in zip(times, times[1:], strict=False)}
    # pullTimeDelayMillsWhenException (1 s), plus the request's way there and the answer's way back
    assert gaps == {1_000 + 2 * sc.rpc_latency_ms}
    assert len(_events(result, "notify")) > len([e for e in _events(result, "notify") if "slave" not in e.detail])


def test_commits_go_to_the_slave_while_the_master_is_away_and_the_master_keeps_its_old_offsets():
    sc = scenarios.broker_outage_with_slave(
        outages=(BrokerOutage("broker-b", DOWN, None),), duration_ms=100_000, drain_ms=20_000
    )
    sim = Simulation(sc, seed=7)
    result = sim.run()
    master, slave = sim.brokers["broker-b"], sim.slaves["broker-b"]
    group = sc.consumer_group
    ahead = 0
    for queue_id in range(4):
        on_master = master.store.query_offset(group, "TopicTest", queue_id)
        on_slave = slave.store.query_offset(group, "TopicTest", queue_id)
        stored = result.stored[f"MessageQueue [topic=TopicTest, brokerName=broker-b, queueId={queue_id}]"]
        assert on_master <= on_slave == stored  # the slave has everything consumed, the master what it had at 70 s
        ahead += on_slave > on_master
    assert ahead > 0
    assert [e.time_ms for e in _events(result, "slave sync")] == [61_000]  # a minute after the slave started


def test_a_queue_handed_over_while_the_master_is_away_starts_from_the_slaves_offset():
    late = ConsumerSpec("10.0.0.9@1009", join_ms=100_000)
    sc = scenarios.broker_outage_with_slave(consumers=scenarios.broker_outage_with_slave().consumers + (late,))
    result = simulate(sc, seed=3, trace=True)
    asked = [e for e in _events(result, "find consumer ids", late.client_id) if e.time_ms < UP]
    assert asked and {e.detail.split(":")[0] for e in asked} <= {"broker-a", "broker-b/slave"}
    assert any("broker-b/slave" in e.detail and "5 member(s)" in e.detail for e in asked)
    taken = [e for e in _events(result, "take", late.client_id) if e.time_ms < UP and "broker-b" in e.detail]
    assert taken, "the late consumer takes a queue of broker-b while its master is away"
    queue = taken[0].detail
    queue_id = int(queue.rsplit("=", 1)[1].rstrip("]"))
    first_pull = next(
        e
        for e in _events(result, "pull", late.client_id)
        if e.detail.startswith(f"broker-b TopicTest@{queue_id} ") and e.time_ms >= taken[0].time_ms
    )
    # the master is down, so the start offset came from the slave: what the last owner committed there
    assert int(first_pull.detail.rsplit(" ", 1)[1]) == result.stored[queue]
    assert queue not in result.redelivered_offsets()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"slaves": ("broker-z",)}, "Scenario.slaves: a tuple of distinct names"),
        ({"slaves": ("broker-b", "broker-b")}, "Scenario.slaves: a tuple of distinct names"),
        ({"slaves": "broker-b"}, "Scenario.slaves: a tuple of distinct names"),
        ({"consume_mode": "POP"}, "Scenario.slaves: not modelled with POP"),
    ],
)
def test_bad_slaves_are_refused_with_the_field_named(overrides, message):
    with pytest.raises(ValueError, match=message):
        scenarios.broker_outage_with_slave(**overrides)


def test_a_topic_change_on_a_broker_with_a_slave_is_refused():
    with pytest.raises(ValueError, match="Scenario.slaves: a topic change on a broker with a slave"):
        scenarios.broker_outage_with_slave(topic_changes=(TopicChange(10_000, "broker-b", 8, 8),))


def test_a_vanished_master_with_a_slave_leaves_the_route_reduced_and_no_queue_moves():
    sc = scenarios.broker_vanishes(slaves=("broker-b",), produce_rate_per_queue=2.0)
    result = simulate(sc, seed=1)
    reduced = _events(result, "route reduced", "broker-b")
    assert [e.detail for e in reduced] == ["master's registration expired"] and not _events(result, "route removed")
    last_registered = DOWN // sc.register_name_server_period_ms * sc.register_name_server_period_ms
    assert 120_000 < reduced[0].time_ms - last_registered <= 125_000  # 120 s, found by the name server's 5 s scan
    for queue in _broker_b_queues(result):  # the queues keep their owners to the end: nothing tells them to move
        assert not [i for i in result.ownership[queue] if DOWN <= i.end_ms < sc.end_ms], queue
    # pulls to the silent master wait out their timeout; once the route shows no master, the slave refuses them
    assert min(e.time_ms for e in _events(result, "pull refused")) > reduced[0].time_ms


@pytest.mark.parametrize("seed", [0, 3])
def test_an_orderly_group_never_runs_two_listeners_on_one_queue_across_the_masters_outage(seed):
    # lock requests go to the master only: while it is away they fail, the client-side locks run out, and after the
    # return the restarted master's empty lock table is filled by whoever asks first
    result = simulate(scenarios.broker_outage_with_slave(consume_mode="ORDERLY", produce_rate_per_queue=2.0), seed=seed)
    assert result.overlapping_calls() == {} and result.lost == []
    for queue in _broker_b_queues(result):
        assert not [b for b in result.consumption[queue] if DOWN <= b.start_ms < UP], queue
    assert _events(result, "pull refused")


def test_the_slave_holds_every_message_its_master_stores_at_the_same_offsets():
    sim = Simulation(scenarios.broker_outage_with_slave(duration_ms=140_000, drain_ms=10_000), seed=2)
    sim.run()
    master, slave = sim.brokers["broker-b"].store, sim.slaves["broker-b"].store
    copied = [(m.topic, m.queue_id, m.queue_offset, m.uniq_key) for m in slave.commit_log]
    assert copied == [(m.topic, m.queue_id, m.queue_offset, m.uniq_key) for m in master.commit_log] and copied
    assert slave.reput_from_index == len(slave.commit_log)  # dispatched: a pull can read every copy
    assert "broker-a" not in sim.slaves and len(sim.brokers["broker-a"].store.commit_log) > 0


# a group behind its producers: broker-b holds more than its consumers cache (1,000 messages per queue)
BEHIND = dict(produce_rate_per_queue=70.0, consume_threads=2, consume_time_ms=20.0, drain_ms=600_000)


def _broker_b_consumed_while_away(result):
    return sorted(b.start_ms for b in result.listener_calls(_broker_b_queues(result), DOWN + 1, UP))


def test_with_slave_reads_a_group_behind_goes_on_reading_broker_b_from_the_slave():
    off = simulate(scenarios.broker_outage_with_slave(**BEHIND), seed=0)
    on = simulate(scenarios.broker_outage_with_slave(slave_read_enable=True, **BEHIND), seed=0)
    assert not _events(on, "pull refused") and _events(off, "pull refused")
    assert on.counters["slave_pull_found"] > 0 and "slave_pull_found" not in off.counters
    read_off, read_on = _broker_b_consumed_while_away(off), _broker_b_consumed_while_away(on)
    # without slave reads the consumers only finish what they had cached; with them they read on from the slave
    assert len(read_on) > len(read_off) > 0 and read_on[-1] > read_off[-1]
    assert on.lost == [] == off.lost and not [q for q in _broker_b_queues(on) if on.ownership[q][-1].start_ms > DOWN]


@pytest.mark.parametrize("latency", [1, 2])
def test_with_slave_reads_a_caught_up_group_pulls_the_slave_once_per_round_trip(latency):
    sc = scenarios.broker_outage_with_slave(slave_read_enable=True, produce_rate_per_queue=2.0, rpc_latency_ms=latency)
    result = simulate(sc, seed=0)
    assert _broker_b_consumed_while_away(result) == []  # nothing was left on broker-b to read
    retries = result.counters["slave_pull_retry"]
    # broker-b's 4 queues and its retry queue, each pulled again as soon as the slave's answer is back, from each
    # owner's first route poll after the stop (within 30 s) to its first after the return (within 30 s)
    round_trip = 2 * latency
    away, poll = UP - DOWN, sc.poll_name_server_interval_ms
    assert 5 * (away - poll) / round_trip < retries < 5 * (away + poll) / round_trip
    assert "slave_pull_found" not in result.counters and not _events(result, "pull refused")


def test_slave_read_enable_needs_a_slave_and_a_bool():
    with pytest.raises(ValueError, match="Scenario.slave_read_enable: reads from a slave need one"):
        scenarios.broker_outage(slave_read_enable=True)
    with pytest.raises(ValueError, match="Scenario.slave_read_enable: True or False"):
        scenarios.broker_outage_with_slave(slave_read_enable=1)

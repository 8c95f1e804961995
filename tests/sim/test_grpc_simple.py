"""gRPC simple consumers in the simulator: no assignment, receives in turn over the route, and nothing renewed."""

import itertools

import pytest

from rmqlib.sim import ConsumerSpec, LeaveKind, TopicChange, scenarios, simulate

SEEDS = [1, 2]


def _revived(result) -> int:
    return sum(int(e.detail.split()[0]) for e in result.events_of("revive"))


@pytest.mark.parametrize("seed", SEEDS)
def test_what_a_crashed_simple_consumer_held_comes_back_after_its_invisible_duration_not_two_minutes(seed):
    simple, push = simulate(scenarios.grpc_simple_crash(), seed=seed), simulate(scenarios.grpc_crash(), seed=seed)
    invisible = simple.scenario.simple_invisible_ms
    assert _revived(simple) > 0 and simple.lost == [] and simple.duplicates == 0
    # nothing renews it and the proxy clears nothing: the broker revives it once the receive's 15 s are over
    assert "proxy renew" not in simple.counters and simple.events_of("proxy cleared") == []
    [crash] = simple.events_of("leave")
    last_pop = max(e.time_ms for e in simple.events_of("pop") if e.who == crash.who)
    assert min(e.time_ms for e in simple.events_of("revive")) >= last_pop + invisible
    assert invisible < simple.latencies_ms.max() < invisible + 5_000
    assert push.latencies_ms.max() > push.scenario.channel_expired_ms > simple.latencies_ms.max()


def test_each_member_receives_from_the_routes_queues_in_turn_so_from_every_broker():
    """Four queues on each of two brokers: every member's receives go four to broker-a, then four to broker-b."""
    run = simulate(
        scenarios.grpc_simple_crash(brokers=("broker-a", "broker-b"), produce_rate_per_queue=50.0, consume_time_ms=1.0),
        seed=1,
    )
    brokers_by_member: dict[str, list[str]] = {}
    for e in run.events_of("pop"):
        brokers_by_member.setdefault(e.who, []).append(e.detail.split()[2])
    assert len(brokers_by_member) == 4
    for who, brokers in brokers_by_member.items():
        runs = [(broker, len(list(group))) for broker, group in itertools.groupby(brokers)]
        assert {length for _, length in runs[1:-1]} == {4}, who
        assert {broker for broker, _ in runs} == {"broker-a", "broker-b"}
    assert run.summary()["rebalances"] == 0 == run.summary()["notifications"]  # nobody rebalances, nobody is told


@pytest.mark.parametrize("seed", SEEDS)
def test_a_batch_that_takes_longer_than_its_invisible_duration_is_handed_out_again_and_consumed_twice(seed):
    slow = simulate(scenarios.grpc_simple_slow_batch(), seed=seed)
    small = simulate(scenarios.grpc_simple_slow_batch(simple_max_message_num=12), seed=seed)
    batch_ms = slow.scenario.simple_max_message_num * slow.scenario.consume_time_ms
    assert batch_ms > slow.scenario.simple_invisible_ms > small.scenario.simple_max_message_num * 1_200
    assert slow.duplicates == _revived(slow) > 0 and slow.lost == []
    # every late ack still counts at the broker, and the copy handed out again is acked too
    assert slow.counters["acks"] == slow.produced + slow.duplicates
    assert small.duplicates == 0 == _revived(small) and small.lost == []


def test_a_simple_consumer_that_shuts_down_finishes_its_batch_and_leaves_the_proxy_at_once():
    base = scenarios.grpc_simple_crash().consumers
    leaving = ConsumerSpec(base[-1].client_id, leave_ms=base[-1].leave_ms, leave=LeaveKind.SHUTDOWN)
    run = simulate(scenarios.grpc_simple_crash(consumers=base[:-1] + (leaving,)), seed=1)
    [gone] = run.events_of("proxy unregistered")
    assert gone.who == leaving.client_id and gone.detail == "NotifyClientTermination"
    assert leaving.leave_ms <= gone.time_ms < leaving.leave_ms + 1_000
    assert run.duplicates == 0 and run.lost == [] and _revived(run) == 0


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"consume_mode": "ORDERLY"}, "consume_mode"),
        ({"message_model": "BROADCASTING"}, "message_model"),
        ({"topic_changes": (TopicChange(30_000, "broker-a", read_queue_nums=8, write_queue_nums=8),)}, "client"),
        ({"simple_invisible_ms": 9_999}, "simple_invisible_ms"),
        ({"simple_max_message_num": 33}, "simple_max_message_num"),
        ({"simple_await_ms": 0}, "simple_await_ms"),
    ],
)
def test_what_a_simple_consumer_group_does_not_model_is_refused_by_name(changes, field):
    with pytest.raises(ValueError, match=field):
        scenarios.grpc_simple_crash(**changes)

"""A gRPC group when the topic changes: the broker serves its own topic config at once, the proxy's assignments
follow its cached route."""

from collections import Counter

import pytest

from rmqlib.client.grpc_push import RECEIVING_FAILURE_BACKOFF_DELAY_MS, SCAN_ASSIGNMENTS_PERIOD_MS
from rmqlib.proxy import TOPIC_ROUTE_CACHE_REFRESH_MS
from rmqlib.sim import TopicChange, scenarios, simulate
from rmqlib.sim.proxy_node import GRPC_MAX_LONG_POLLING_MS

MODES = ["CONCURRENT", "ORDERLY"]


def grpc(build, mode, **overrides):
    return simulate(build(client="GRPC", consume_mode=mode, produce_rate_per_queue=2.0, **overrides), seed=1)


@pytest.mark.parametrize("mode", MODES)
def test_queues_added_on_a_broker_are_popped_at_once_whatever_the_assignment_says(mode):
    """The proxy pops queue -1 of the broker, which reads its own config: the four new queues have a reader from the
    change on, with no pause and no stall, even while a FIFO group's assignment still lists the old four."""
    run = grpc(scenarios.topic_grows, mode)
    [change] = run.scenario.topic_changes
    new = [q for q in run.ownership if "brokerName=broker-a" in q and int(q.split("queueId=")[1].rstrip("]")) >= 4]
    assert len(new) == 4
    assert all(min(i.start_ms for i in run.ownership[q]) == change.at_ms for q in new)
    assert all(run.consumption.get(q) for q in new)
    assert run.total_pause_ms() == 0 and run.total_stall_ms() == 0
    assert run.lost == [] and run.duplicates == 0 and run.unconsumed() == {}


@pytest.mark.parametrize("mode", MODES)
def test_a_new_broker_reaches_the_assignments_only_when_the_proxy_reloads_the_topics_route(mode):
    run = grpc(scenarios.broker_joins, mode)
    [change] = run.scenario.topic_changes
    taken = [e.time_ms for e in run.events_of("take") if "brokerName=broker-c" in e.detail]
    assert taken and change.at_ms < min(taken)
    # the entry was written at most 20 s before the change; a read (every 5 s per member) reloads it
    assert max(taken) <= change.at_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + SCAN_ASSIGNMENTS_PERIOD_MS + 1_000
    # meanwhile the producers send to broker-c, whose messages wait: its queues stall until the members take them
    on_c = [q for q in run.stalls() if "brokerName=broker-c" in q]
    assert on_c and all(spans and spans[0][1] <= max(taken) + 1_000 for q in on_c for spans in [run.stalls()[q]])
    assert run.lost == [] and run.duplicates == 0 and run.unconsumed() == {}


@pytest.mark.parametrize("mode", MODES)
def test_a_topic_deleted_on_a_broker_fails_its_receives_until_the_assignments_leave_it_out(mode):
    deleted = (TopicChange(60_000, "broker-b", 0, 0),)
    run = grpc(scenarios.topic_grows, mode, topic_changes=deleted)
    failed = run.events_of("receive failed")
    assert failed and all(e.detail.endswith("the broker answered TOPIC_NOT_EXIST") for e in failed)
    # the receive each process queue of broker-b had held there (one per member, or one per queue for a FIFO
    # group) is refused when its poll time ends; by its 1 s back-off the proxy's route has lost broker-b, and the
    # member's scan has dropped those queues: none fails twice
    per_member = Counter(e.who for e in failed)
    assert set(per_member) == {s.client_id for s in run.scenario.consumers}
    assert set(per_member.values()) == {1 if mode == "CONCURRENT" else 4}
    assert all(60_000 < e.time_ms <= 60_000 + GRPC_MAX_LONG_POLLING_MS + 1_000 for e in failed)
    assert run.lost == [] and run.duplicates == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_topic_deleted_on_every_broker_is_refused_by_the_proxy_itself_once_its_route_is_reloaded(mode):
    """With no broker left, the name server has no route: the proxy's reload caches the topic as empty and answers
    TOPIC_NOT_FOUND without asking a broker. A receive held at a broker when the topic went is refused by that
    broker when its poll time ends, and only the receives after it by the proxy. A failed scan changes nothing, so
    every process queue keeps receiving, 1 s and a round trip apart, to the end of the run."""
    gone = (TopicChange(60_000, "broker-a", 0, 0), TopicChange(60_000, "broker-b", 0, 0))
    run = grpc(scenarios.topic_grows, mode, topic_changes=gone)
    failed = run.events_of("receive failed")
    by_proxy = _times_by_queue(e for e in failed if "TOPIC_NOT_FOUND" in e.detail)
    by_broker = _times_by_queue(e for e in failed if e.detail.endswith("the broker answered TOPIC_NOT_EXIST"))
    assert sum(map(len, by_proxy.values())) + sum(map(len, by_broker.values())) == len(failed)
    assert min(min(times) for times in by_proxy.values()) <= 60_000 + TOPIC_ROUTE_CACHE_REFRESH_MS + 2_000
    latency = run.scenario.rpc_latency_ms
    assert by_proxy.keys() >= by_broker.keys() and len(by_proxy) == 2 * len(run.scenario.consumers)
    assert max(max(times) for times in by_broker.values()) <= 60_000 + GRPC_MAX_LONG_POLLING_MS + 2 * latency
    if mode == "ORDERLY":  # a member receives from each of a broker's four queues; the log names only the broker
        return
    for queue, times in by_proxy.items():
        assert max(by_broker.get(queue, [0])) < times[0]
        assert {b - a for a, b in zip(times, times[1:])} == {RECEIVING_FAILURE_BACKOFF_DELAY_MS + 2 * latency}
        assert times[-1] > run.scenario.end_ms - 2_000


def _times_by_queue(events):
    times: dict[tuple[str, str], list[int]] = {}
    for e in events:
        times.setdefault((e.who, e.detail.split(":")[0]), []).append(e.time_ms)
    return times

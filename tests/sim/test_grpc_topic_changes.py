"""A gRPC group when the topic changes: the broker serves its own topic config at once, the proxy's assignments
follow its cached route."""

from collections import Counter

import pytest

from rmqlib.client.grpc_push import SCAN_ASSIGNMENTS_PERIOD_MS
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

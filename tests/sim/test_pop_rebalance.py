"""A Pop group's rebalance in the simulator is RebalanceImpl's own with clientRebalance off: per subscribed topic a
QUERY_ASSIGNMENT to a broker (RebalanceImpl#getRebalanceResultFromBroker), a heartbeat when an assignment changes
(messageQueueChanged), and a new PopRequest dispatched 500 ms after the round."""

from functools import cache

from rmqlib.client import DISPATCH_PULL_REQUEST_DELAY_MILLS
from rmqlib.sim import ConsumerSpec, scenarios, simulate
from rmqlib.sim.engine import Simulation

RETRY = "topic=%RETRY%GID_sim,"


@cache
def run(name: str, seed: int = 1, **overrides):
    return simulate(scenarios.ALL[name](**overrides), seed=seed)


def test_the_group_retry_topic_is_assigned_in_pull_mode_and_pulled_by_one_member_at_a_time():
    """QueryAssignmentProcessor answers a retry topic in PULL mode: the queue of %RETRY%GID_sim goes to one member
    (AVG), which pulls it the ordinary way, while every member pops every queue of the topic."""
    result = run("pop_mode")
    members = {spec.client_id for spec in result.scenario.consumers}
    [retry] = [spans for queue, spans in result.ownership.items() if RETRY in queue]
    assert all(a.end_ms <= b.start_ms for a, b in zip(retry, retry[1:]))  # never two owners at once
    popped = [spans for queue, spans in result.ownership.items() if "topic=TopicTest," in queue]
    assert len(popped) == 4 and all({span.holder for span in spans} == members for spans in popped)
    held = [e for e in result.events_of("pull held") if "%RETRY%GID_sim@" in e.detail]
    assert held and {e.detail.split(" from ")[1] for e in held} <= {span.holder for span in retry}


def owner_crashes():
    """pop_crash with the crash of the member that AVG gives the retry topic's only queue (the first client id)."""
    ids = scenarios.client_ids(4)
    consumers = (ConsumerSpec(ids[0], leave_ms=60_030, leave="crash"),) + tuple(ConsumerSpec(c) for c in ids[1:])
    return run("pop_crash", consumers=consumers)


def test_when_the_retry_queues_owner_crashes_another_member_takes_it():
    result = owner_crashes()
    dead = result.scenario.consumers[0]
    [retry] = [spans for queue, spans in result.ownership.items() if RETRY in queue]
    assert [span.holder for span in retry] == [dead.client_id, result.scenario.consumers[1].client_id]
    assert retry[0].end_ms == dead.leave_ms and retry[1].start_ms - dead.leave_ms <= 1_000
    assert retry[-1].end_ms == result.scenario.end_ms


def test_a_changed_assignment_sends_a_heartbeat():
    """RebalancePushImpl#messageQueueChanged: every round that changes a member's retry-topic queue (a member
    joined or left) sends a heartbeat at that instant, apart from the 30 s ones."""
    result = owner_crashes()
    heartbeats = {(e.who, e.time_ms) for e in result.events_of("heartbeat")}
    moves = [e for e in result.events_of("take", "drop") if RETRY in e.detail]
    assert any(e.time_ms > result.scenario.consumers[0].leave_ms for e in moves)
    assert all((e.who, e.time_ms) in heartbeats for e in moves)


def test_a_new_assignment_starts_popping_500_ms_after_its_round():
    """RebalanceImpl dispatches a new PopRequest DISPATCH_PULL_REQUEST_DELAY_MILLS after the round; with messages
    already waiting, the first pop answers two network delays later."""
    sc = scenarios.pop_mode(
        consumers=(ConsumerSpec("10.0.0.1@1001", join_ms=5_000),), start_jitter_ms=0, produce_start_ms=0
    )
    result = simulate(sc, seed=1)
    first_round = min(e.time_ms for e in result.events_of("rebalance"))
    first_pop = min(e.time_ms for e in result.events_of("pop"))
    assert first_pop - first_round == DISPATCH_PULL_REQUEST_DELAY_MILLS + 2 * sc.rpc_latency_ms


def test_pop_share_queue_num_gives_each_member_the_queues_allocate4pop_names():
    """With ``pop_share_queue_num`` n > 0 the brokers answer QUERY_ASSIGNMENT with queues, not brokers
    (QueryAssignmentProcessor#allocate4Pop): each member pops its own share and the next n members' shares. At the
    end of the run every member holds exactly what the broker's model names for it; by default, every queue."""
    sc = scenarios.pop_mode(pop_share_queue_num=1, duration_ms=60_000, drain_ms=30_000)
    sim = Simulation(sc, seed=1)
    result = sim.run()
    held: dict[str, set[str]] = {}
    for queue, spans in result.ownership.items():
        for span in spans:
            if "topic=TopicTest," in queue and span.end_ms == sc.end_ms:
                held.setdefault(span.holder, set()).add(queue)
    assignment = sim.brokers["broker-a"].assignment
    for spec in sc.consumers:
        named = assignment.do_load_balance("TopicTest", sc.consumer_group, spec.client_id, "CLUSTERING", "AVG")
        assert held[spec.client_id] == {str(mq) for mq in named} and all(mq.queue_id >= 0 for mq in named)
    topic_queues = {q for q in result.queues if "topic=TopicTest," in q}
    assert set().union(*held.values()) == topic_queues and max(map(len, held.values())) < len(topic_queues)
    everything = run("pop_mode", duration_ms=60_000, drain_ms=30_000)
    queues = {q for q in everything.ownership if "topic=TopicTest," in q}
    assert all({i.holder for i in everything.ownership[q]} == {s.client_id for s in sc.consumers} for q in queues)
    assert len(result.lost) == 0

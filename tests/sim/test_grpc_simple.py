"""gRPC simple consumers in the simulator: no assignment, receives in turn over the route, and nothing renewed."""

import dataclasses
import itertools
import math

import pytest

from rmqlib.client.grpc_simple import ROUTE_UPDATE_INITIAL_DELAY_MS, ROUTE_UPDATE_PERIOD_MS
from rmqlib.proxy import TOPIC_ROUTE_CACHE_REFRESH_MS
from rmqlib.sim import ConsumerSpec, LeaveKind, scenarios, simulate
from rmqlib.sim.proxy_node import GRPC_MAX_LONG_POLLING_MS, ProxyNode

SEEDS = [1, 2]


def _revived(result) -> int:
    return sum(int(e.detail.split()[0]) for e in result.events_of("revive"))


def _beyond(result, first: int) -> int:
    """The messages the run's receives brought beyond the first ``first`` of each batch."""
    return sum(max(0, int(e.detail.split()[0]) - first) for e in result.events_of("pop"))


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
@pytest.mark.parametrize("batch", [16, 13, 12])
def test_every_message_acked_after_its_invisible_duration_is_refused_handed_out_again_and_consumed_twice(seed, batch):
    """1.2 s a message and 15 s invisible: the first 12 of a batch are acked in time; the proxy refuses each later
    ack (its receipt handle has expired), the broker revives the message, and it is consumed again."""
    run = simulate(scenarios.grpc_simple_slow_batch(simple_max_message_num=batch), seed=seed)
    fits = int(run.scenario.simple_invisible_ms // run.scenario.consume_time_ms)
    late = _beyond(run, fits)
    assert fits == 12 and (late > 0) == (batch > fits)
    assert run.duplicates == late == _revived(run) == run.counters.get("acks refused", 0) and run.lost == []
    assert run.counters["acks"] == run.produced + run.duplicates  # the copy handed out again is acked in time


@pytest.mark.parametrize("seed", SEEDS)
def test_extending_each_message_before_processing_it_saves_those_still_invisible_and_skips_the_rest(seed):
    """changeInvisibleDuration before each message: the first 13 of a batch of 16 (started before 15 s) get a fresh
    15 s and are acked in time; the proxy refuses the change for each later one (expired), the application skips
    it, and the broker hands it out again: consumed once, by whoever receives it next."""
    run = simulate(scenarios.grpc_simple_change_invisible(), seed=seed)
    in_time = math.ceil(run.scenario.simple_invisible_ms / run.scenario.consume_time_ms)
    late = _beyond(run, in_time)
    refused = run.events_of("change refused")
    assert in_time == 13 and late > 0 and len(refused) == late == _revived(run)
    assert {e.detail for e in refused} == {"broker-a: INVALID_RECEIPT_HANDLE"}
    assert run.duplicates == 0 == run.counters.get("acks refused", 0) and run.lost == []
    assert run.counters["invisible time changes"] == run.produced + late and run.counters["acks"] == run.produced
    # each message waits for its change's answer and its ack's, four network delays each
    latency, consume = run.scenario.rpc_latency_ms, run.scenario.consume_time_ms
    starts_by_member: dict[str, list[int]] = {}
    for batch in itertools.chain.from_iterable(run.consumption.values()):
        starts_by_member.setdefault(batch.consumer, []).append(batch.start_ms)
    gaps = {b - a for starts in starts_by_member.values() for a, b in itertools.pairwise(sorted(starts))}
    assert min(gaps) == consume + 8 * latency


def test_a_member_that_dies_waiting_for_a_changes_answer_sends_nothing_more(monkeypatch):
    """A member crashes one millisecond after sending a change of invisible time, while its answer is on the way
    (four network delays): it neither acks that message nor goes on to the next one."""
    sent: list[tuple[str, str, int]] = []

    def recording(kind, method):
        def call(self, client_id, *args):
            sent.append((kind, client_id, int(self.clock.now)))
            return method(self, client_id, *args)

        return call

    monkeypatch.setattr(ProxyNode, "ack", recording("ack", ProxyNode.ack))
    monkeypatch.setattr(
        ProxyNode, "change_invisible_duration", recording("change", ProxyNode.change_invisible_duration)
    )
    base = scenarios.grpc_simple_change_invisible()
    member = base.consumers[-1]
    simulate(base, seed=1)
    change_at = min(t for kind, who, t in sent if kind == "change" and who == member.client_id and t > 70_000)
    sent.clear()
    dying = dataclasses.replace(member, leave_ms=change_at + 1, leave=LeaveKind.CRASH)
    run = simulate(scenarios.grpc_simple_change_invisible(consumers=base.consumers[:-1] + (dying,)), seed=1)
    assert run.scenario.rpc_latency_ms == 1
    mine = [(kind, t) for kind, who, t in sent if who == member.client_id]
    assert ("change", change_at) in mine and max(t for _, t in mine) == change_at
    assert run.lost == [] and run.duplicates == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_fifo_simple_group_that_extends_each_message_keeps_its_order(seed):
    """An orderly change moves the queue's lock-free time with the message: the queue stays blocked while the member
    works, the messages it skips are lent again in order, and no queue is read by two members at once."""
    plain = simulate(scenarios.grpc_simple_slow_batch(consume_mode="ORDERLY"), seed=seed)
    extended = simulate(scenarios.grpc_simple_change_invisible(consume_mode="ORDERLY"), seed=seed)
    assert plain.overlapping_calls() and plain.duplicates > 0
    assert extended.overlapping_calls() == {} and extended.duplicates == 0 and extended.lost == []
    assert extended.events_of("change refused")
    for batches in extended.consumption.values():
        offsets = [o for b in sorted(batches, key=lambda b: b.start_ms) for o in b.offsets]
        assert offsets == sorted(offsets)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_fifo_simple_group_keeps_each_queues_order_only_while_its_batches_fit_in_their_invisible_time(seed):
    """The broker blocks a FIFO queue while its batch is out, until the batch is acked or its invisible time ends;
    then it lends the queue again from the first unacked message, to whoever asks, while the first member works on."""
    slow = simulate(scenarios.grpc_simple_slow_batch(consume_mode="ORDERLY"), seed=seed)
    fitting = simulate(scenarios.grpc_simple_slow_batch(consume_mode="ORDERLY", simple_max_message_num=12), seed=seed)
    assert slow.overlapping_calls() and slow.duplicates > 0 and slow.lost == []
    assert fitting.overlapping_calls() == {} and fitting.duplicates == 0 and fitting.lost == []
    for batches in fitting.consumption.values():
        offsets = [o for b in sorted(batches, key=lambda b: b.start_ms) for o in b.offsets]
        assert offsets == sorted(offsets)


def test_a_crashed_fifo_simple_consumers_batch_blocks_its_queue_for_its_invisible_time_not_two_minutes():
    """Seed 1: the crashed member has a batch out, which blocks its queue for the 15 s it asked for, where a push
    consumer's blocks its queues until the proxy drops it."""
    simple = simulate(scenarios.grpc_simple_crash(consume_mode="ORDERLY"), seed=1)
    push = simulate(scenarios.grpc_fifo_crash(), seed=1)
    invisible = simple.scenario.simple_invisible_ms
    assert invisible <= simple.longest_stall_ms() < invisible + 1_000 < 120_000 < push.longest_stall_ms()
    assert simple.duplicates == 0 and simple.lost == []


def test_a_receive_sent_to_an_idle_broker_waits_out_its_long_poll_there_while_the_other_broker_fills_up():
    """Broker-b takes no new messages: half of each member's receives wait 20 s on it (the proxy's longest poll), so
    a simple group falls minutes behind; a shorter await helps; push consumers (a receive loop per queue) keep up."""
    idle = simulate(scenarios.grpc_simple_idle_broker(), seed=1)
    shorter = simulate(scenarios.grpc_simple_idle_broker(simple_await_ms=5_000), seed=1)
    written = simulate(scenarios.grpc_simple_idle_broker(topic_changes=()), seed=1)
    push = simulate(scenarios.grpc_simple_idle_broker(client="GRPC"), seed=1)
    assert all(n == 0 for q, n in idle.stored.items() if "brokerName=broker-b" in q)
    assert all(run.lost == [] for run in (idle, shorter, written, push))
    runs = {"idle": idle, "shorter": shorter, "written": written, "push": push}
    longest = {name: run.latencies_ms.max() for name, run in runs.items()}
    assert longest["idle"] > 1_000_000 and longest["idle"] > 4 * longest["shorter"] > 400_000
    assert max(longest["written"], longest["push"]) < 1_000
    # until the backlog is gone, the receives that come back empty (all of them broker-b's) take nearly all the time
    backlog_ms = max(b.end_ms for batches in idle.consumption.values() for b in batches)
    empty = idle.counters["pulls"] - len(idle.events_of("pop"))
    assert all("broker-a" in e.detail for e in idle.events_of("pop"))
    assert empty * GRPC_MAX_LONG_POLLING_MS > 0.9 * len(idle.scenario.consumers) * backlog_ms


@pytest.mark.parametrize("threads", [1, 3])
def test_a_simple_consumer_that_shuts_down_finishes_its_batch_and_leaves_the_proxy_at_once(threads):
    """With several receiving threads it waits for each one's batch in hand."""
    base = scenarios.grpc_simple_crash().consumers
    leaving = ConsumerSpec(base[-1].client_id, leave_ms=base[-1].leave_ms, leave=LeaveKind.SHUTDOWN)
    run = simulate(scenarios.grpc_simple_crash(consumers=base[:-1] + (leaving,), simple_threads=threads), seed=1)
    [gone] = run.events_of("proxy unregistered")
    assert gone.who == leaving.client_id and gone.detail == "NotifyClientTermination"
    sc = run.scenario
    batch_ms = sc.simple_max_message_num * (sc.consume_time_ms + 4 * sc.rpc_latency_ms)  # each message, then its ack
    # one thread's batch, or a second one its receive brought just after the shutdown began
    assert leaving.leave_ms <= gone.time_ms < leaving.leave_ms + (1 if threads == 1 else 2) * batch_ms + 100
    assert run.duplicates == 0 and run.lost == [] and _revived(run) == 0


def test_receiving_threads_read_the_busy_broker_in_proportion_while_each_still_waits_out_the_idle_one():
    """Broker-b takes no new messages: each thread's eight receives in turn bring at most 4 x 16 messages from broker-a
    for four 20 s long polls on broker-b, 0.8 messages/s; four threads a member drain the backlog four times as fast."""
    runs = {t: simulate(scenarios.grpc_simple_idle_broker(simple_threads=t), seed=1) for t in (1, 4)}
    per_thread = 4 * runs[1].scenario.simple_max_message_num / (4 * GRPC_MAX_LONG_POLLING_MS / 1000)
    busy_s = {}
    for threads, run in runs.items():
        busy_s[threads] = max(b.end_ms for bs in run.consumption.values() for b in bs) / 1000
        rate = run.produced / busy_s[threads]
        assert 0.9 * per_thread < rate / (threads * len(run.scenario.consumers)) <= per_thread
        assert run.lost == [] and run.duplicates == 0
    assert 3.6 < busy_s[1] / busy_s[4] < 4.4


def _at_a_route_fetch(run, who: str, t_ms: int) -> bool:
    """``t_ms`` is when one of the member's route fetches came back: the schedule starts once the start-up fetch is
    back (two network delays after joining), fetches 10 s later and every 30 s, each back two delays later."""
    [joined] = [e.time_ms for e in run.events_of("join") if e.who == who]
    since = t_ms - joined - 4 * run.scenario.rpc_latency_ms - ROUTE_UPDATE_INITIAL_DELAY_MS
    return since >= 0 and since % ROUTE_UPDATE_PERIOD_MS == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_simple_group_meets_a_stopped_broker_through_the_proxys_route_cache_and_its_own(seed):
    """Receives naming broker-b fail a second apart until the proxy's cached route loses it, then pop broker-a;
    each member leaves broker-b out, and takes it back after its return, only at one of its own 30 s route fetches."""
    run = simulate(scenarios.grpc_broker_outage(client="GRPC_SIMPLE"), seed=seed)
    [stop] = run.scenario.outages
    failed = run.events_of("receive failed")
    assert failed and all(e.detail.startswith("broker-b:") for e in failed)
    assert stop.down_ms <= min(e.time_ms for e in failed)
    assert max(e.time_ms for e in failed) < stop.down_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + 5_000
    assert run.counters["receives redirected"] > 0
    on_b = [e for e in run.events if e.kind in ("drop", "take") and "brokerName=broker-b" in e.detail]
    left_out = {e.who: e.time_ms for e in on_b if e.kind == "drop" and stop.down_ms < e.time_ms < stop.up_ms}
    taken_back = {e.who: e.time_ms for e in reversed(on_b) if e.kind == "take" and e.time_ms > stop.up_ms}
    members = {s.client_id for s in run.scenario.consumers}
    assert set(left_out) == set(taken_back) == members
    assert all(_at_a_route_fetch(run, who, t) for moves in (left_out, taken_back) for who, t in moves.items())
    assert max(taken_back.values()) < stop.up_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + ROUTE_UPDATE_PERIOD_MS + 1_000
    # an ack that failed leaves its message to be revived once broker-b is back: that is all that comes twice
    assert run.duplicates == run.counters.get("acks failed", 0) + run.counters.get("acks refused", 0) > 0
    assert run.lost == []


def test_a_simple_group_reads_queues_added_on_a_broker_at_once_and_a_new_broker_at_a_route_fetch():
    grows = simulate(scenarios.topic_grows(client="GRPC_SIMPLE", produce_rate_per_queue=2.0), seed=1)
    [change] = grows.scenario.topic_changes
    new = [q for q in grows.ownership if "brokerName=broker-a" in q and int(q.split("queueId=")[1].rstrip("]")) >= 4]
    assert len(new) == 4 and all(min(i.start_ms for i in grows.ownership[q]) == change.at_ms for q in new)
    assert all(grows.consumption.get(q) for q in new) and grows.total_pause_ms() == 0
    joins = simulate(scenarios.broker_joins(client="GRPC_SIMPLE", produce_rate_per_queue=2.0), seed=1)
    [change] = joins.scenario.topic_changes
    taken = [e for e in joins.events_of("take") if "brokerName=broker-c" in e.detail]
    assert taken and all(change.at_ms < e.time_ms and _at_a_route_fetch(joins, e.who, e.time_ms) for e in taken)
    assert max(e.time_ms for e in taken) < change.at_ms + TOPIC_ROUTE_CACHE_REFRESH_MS + ROUTE_UPDATE_PERIOD_MS
    for run in (grows, joins):
        assert run.lost == [] and run.duplicates == 0 and run.unconsumed() == {}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"consume_mode": "POP"}, "consume_mode"),
        ({"message_model": "BROADCASTING"}, "message_model"),
        ({"slaves": ("broker-a",)}, "client"),
        ({"simple_invisible_ms": 9_999}, "simple_invisible_ms"),
        ({"simple_max_message_num": 33}, "simple_max_message_num"),
        ({"simple_await_ms": 0}, "simple_await_ms"),
        ({"simple_change_invisible": 1}, "simple_change_invisible"),
        ({"simple_threads": 0}, "simple_threads"),
        ({"simple_threads": 65}, "simple_threads"),
    ],
)
def test_what_a_simple_consumer_group_does_not_model_is_refused_by_name(changes, field):
    with pytest.raises(ValueError, match=field):
        scenarios.grpc_simple_crash(**changes)

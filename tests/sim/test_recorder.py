"""The recorder's own checks and logs: they must catch what the invariant tests rely on them to catch."""

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.model import MessageQueue
from rmqlib.sim import ConsumeBatch, ConsumerSpec, Event, scenarios, simulate
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder, _OffsetTally
from rmqlib.sim.result import ConsumptionLog, EventLog


def test_a_commit_past_an_unconsumed_offset_is_reported():
    sim = Recorder(scenarios.steady_state())
    sim.on_commit("broker-a", "TopicTest", 0, 0, 0)  # nothing consumed, nothing passed
    assert sim.offset_violations == []
    sim.on_commit("broker-a", "TopicTest", 0, 3, 0)
    assert sim.offset_violations == ["TopicTest@broker-a:0 committed 3 at 0 but offset 0 was never consumed"]


def test_low_water_waits_for_the_gap_to_be_consumed():
    sim = Recorder(scenarios.steady_state())
    mq = MessageQueue("TopicTest", "broker-a", 0)
    tally = sim.queue_tallies[mq] = sim.offset_tallies[("broker-a", "TopicTest", 0)] = _OffsetTally(str(mq))
    tally.consumed([0, 1, 3, 4])
    assert tally.low_water == 2 and tally.pending == {3, 4}
    sim.on_commit("broker-a", "TopicTest", 0, 4, 0)
    assert len(sim.offset_violations) == 1
    tally.consumed([2])
    assert tally.low_water == 5 and tally.pending == set()
    sim.on_commit("broker-a", "TopicTest", 0, 5, 0)
    assert len(sim.offset_violations) == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=5).map(sorted), max_size=12))
def test_low_water_is_the_lowest_offset_never_consumed(batches):
    """In order, out of order, redelivered (each batch ascending, as a listener call's): the tally agrees with the
    set of every offset consumed so far."""
    tally, seen = _OffsetTally("q"), set()
    for offsets in batches:
        tally.consumed(offsets)
        seen.update(offsets)
        low = min(set(range(len(seen) + 1)) - seen)
        assert tally.low_water == low and tally.pending == {o for o in seen if o > low}


def test_logs_build_records_in_time_order_and_survive_pickling():
    log = EventLog()
    log.append(5, "rebalance", "c1", "balanced")
    log.append(2, "join", "c1")
    log.append(5, "drop", "c1", "q")
    assert log.events() == [
        Event(2, "join", "c1", ""),
        Event(5, "rebalance", "c1", "balanced"),
        Event(5, "drop", "c1", "q"),
    ]
    batches = ConsumptionLog()
    batches.append("q0", "c1", 0, 2, [0, 1])
    batches.append("q1", "c2", 1, 2, [7])
    batches.append("q0", "c1", 2, 3, [2])
    assert batches.by_queue() == {
        "q0": [ConsumeBatch("q0", "c1", 0, 2, (0, 1)), ConsumeBatch("q0", "c1", 2, 3, (2,))],
        "q1": [ConsumeBatch("q1", "c2", 1, 2, (7,))],
    }
    assert pickle.loads(pickle.dumps(log)) == log and pickle.loads(pickle.dumps(batches)) == batches
    assert (repr(log), repr(batches)) == ("EventLog(3 lines)", "ConsumptionLog(3 listener calls)")


def test_result_records_match_the_logs():
    result = simulate(scenarios.steady_state(duration_ms=30_000, drain_ms=30_000), seed=1)
    assert len(result.events) == len(result.event_log) == result.counters["events"]
    assert sum(len(b) for b in result.consumption.values()) == len(result.consumption_log)
    consumed = sorted(o for batches in result.consumption.values() for b in batches for o in b.offsets)
    assert len(consumed) == result.produced  # steady state: every message consumed exactly once


def _run_program(env, later, seed: int) -> list[str]:
    """A random program of calls and plain simpy timeouts, each of which schedules more; returns the run order."""
    import random

    order: list[str] = []
    budget = [60]

    def step(label: str) -> None:
        order.append(f"{label}@{env.now}")
        rng = random.Random(f"{seed}/{label}")
        for i in range(rng.randint(0, 3)):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            child, delay = f"{label}.{i}", rng.choice((0, 0, 1, 1, 2))
            if rng.random() < 0.7:
                later(delay, step, child)
            else:  # an ordinary simpy event in between
                env.timeout(delay).callbacks.append(lambda _event, child=child: step(child))

    later(0, step, "root")
    env.run()
    return order


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_batched_calls_run_in_the_order_plain_simpy_events_would(seed):
    import simpy

    plain = simpy.Environment()

    def plain_later(delay, action, *args):
        plain.timeout(delay).callbacks.append(lambda _event: action(*args))

    batched = Clock()
    assert _run_program(batched, batched.later, seed) == _run_program(plain, plain_later, seed)


def test_calls_back_to_back_at_one_instant_share_one_simpy_event():

    env, order = Clock(), []
    for name in "abc":
        env.later(5, order.append, name)
    env.later(6, order.append, "d")
    env.timeout(5)  # an event scheduled in between closes the batch: "e" goes in a new one
    env.later(6, order.append, "e")
    env.run()
    assert order == ["a", "b", "c", "d", "e"]
    assert next(env._eid) == 4  # batch a-b-c, batch d, the timeout, batch e


def _call_program(env, call, seed: int) -> list[str]:
    """A random program of bare calls (normal and urgent), timeouts and processes, each of which schedules more;
    returns the run order with each step's time."""
    import random

    import simpy

    order: list[str] = []
    budget = [80]

    def step(label: str) -> None:
        order.append(f"{label}@{env.now}")
        rng = random.Random(f"{seed}/{label}")
        for i in range(rng.randint(0, 4)):
            if budget[0] <= 0:
                return
            budget[0] -= 1
            child, delay, roll = f"{label}.{i}", rng.choice((0, 0, 0, 1, 2)), rng.random()
            if roll < 0.6:  # a run of these at one instant shares one queue entry in the Clock
                call(delay, lambda _event, child=child: step(child), simpy.core.NORMAL)
            elif roll < 0.7:
                call(delay, lambda _event, child=child: step(child), simpy.core.URGENT)
            elif roll < 0.85:
                env.timeout(delay).callbacks.append(lambda _event, child=child: step(child))
            else:  # a process starts with an urgent event: a run in progress must give way to it

                def proc(child=child, delay=delay):
                    step(child + "/start")
                    yield env.timeout(delay)
                    step(child + "/end")

                env.process(proc())

    call(0, lambda _event: step("root"), simpy.core.NORMAL)
    env.run()
    return order


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_bare_calls_run_and_are_numbered_as_plain_simpy_events_would(seed):
    import simpy

    plain = simpy.Environment()

    def plain_call(delay, action, priority):
        event = simpy.Event(plain)
        event._ok, event._value = True, None
        event.callbacks.append(action)
        plain.schedule(event, priority, delay)

    clock = Clock()
    assert _call_program(clock, clock.call, seed) == _call_program(plain, plain_call, seed)
    assert next(clock._eid) == next(plain._eid)  # every call took a number of its own


def test_calls_numbered_back_to_back_share_one_queue_entry_and_give_way_to_an_urgent_event():
    import simpy

    clock, order = Clock(), []
    for name in "abc":
        clock.call(1, lambda _event, name=name: order.append(name))
    assert len(clock._queue) == 1  # one entry for the run a-b-c
    clock.call(1, lambda _event: order.append("d"))  # numbered right after c: joins the run
    clock.timeout(1)  # takes a number: the next call starts a new run
    clock.call(1, lambda _event: order.append("e"))
    assert len(clock._queue) == 3
    clock.run()
    assert order == ["a", "b", "c", "d", "e"]

    clock, order = Clock(), []

    def first(_event):
        order.append("first")
        clock.call(0, lambda _event: order.append("urgent"), simpy.core.URGENT)

    clock.call(1, first)
    clock.call(1, lambda _event: order.append("second"))
    clock.run()
    assert order == ["first", "urgent", "second"]


def test_event_log_extend_records_what_appending_each_line_would():
    one_by_one, at_once = EventLog(), EventLog()
    for time_ms, who in ((3, "c1"), (3, "c2"), (4, "c3")):
        one_by_one.append(time_ms, "notify", who, "from broker-a")
    at_once.extend([3, 3, 4], "notify", ["c1", "c2", "c3"], "from broker-a")
    assert at_once == one_by_one
    with pytest.raises(ValueError, match="times_ms and whos"):
        at_once.extend([1], "notify", ["c1", "c2"])


def test_every_offset_a_broker_stores_reaches_the_recorders_check(monkeypatch):
    """Commits piggy-backed on pulls and commits sent on their own both go past Recorder.on_commit."""
    from rmqlib.broker.message_store import ConsumerOffsetManager

    stored, checked = [], []
    store_commit, check_commit = ConsumerOffsetManager._commit_offset_trusted, Recorder.on_commit

    def storing(self, group, topic, queue_id, offset):
        stored.append((topic, queue_id, offset))
        store_commit(self, group, topic, queue_id, offset)

    def checking(self, broker_name, topic, queue_id, offset, now_ms):
        checked.append((topic, queue_id, offset))
        check_commit(self, broker_name, topic, queue_id, offset, now_ms)

    monkeypatch.setattr(ConsumerOffsetManager, "_commit_offset_trusted", storing)
    monkeypatch.setattr(Recorder, "on_commit", checking)
    simulate(scenarios.steady_state(duration_ms=20_000), seed=3)
    assert len(stored) > 100 and checked == stored


@pytest.mark.parametrize("mode", ["CONCURRENT", "ORDERLY", "POP"])
def test_unconsumed_counts_the_lost_messages_per_queue(mode):
    """Cut off while consumers lag behind: every mode, Pop too (which keeps no per-queue consumption log)."""
    sc = scenarios.pop_mode(consume_mode=mode, duration_ms=30_000, drain_ms=0, consume_time_ms=500.0, consume_threads=1)
    result = simulate(sc, seed=1)
    unconsumed = result.unconsumed()
    assert result.lost and sum(unconsumed.values()) == len(result.lost)
    assert set(unconsumed) <= set(result.stored) and all(0 < n <= result.stored[q] for q, n in unconsumed.items())


@pytest.mark.parametrize("mode", ["CONCURRENT", "POP"])
def test_unconsumed_leaves_out_what_no_member_subscribes_to_in_every_mode(mode):
    """Two members subscribe to TagA of messages tagged TagA and TagB: the TagB messages are nobody's to consume,
    in Pop mode as in pull mode, so nothing counts as unconsumed or lost."""
    members = tuple(ConsumerSpec(f"10.0.0.{i}@100{i}", subscription="TagA") for i in (1, 2))
    sc = scenarios.steady_state(
        consume_mode=mode, message_tags=("TagA", "TagB"), consumers=members, duration_ms=20_000, drain_ms=20_000
    )
    result = simulate(sc, seed=1)
    assert result.unsubscribed and result.lost == [] and result.unconsumed() == {}

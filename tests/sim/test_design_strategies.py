"""Our designs (rmqlib.designs) run through the simulator's ordinary RocketMQ consumers, as any strategy does."""

from __future__ import annotations

import pytest

from rmqlib.allocation import allocate_group
from rmqlib.designs import AllocateMessageQueueConsistentHashBoundedLoad, AllocateMessageQueueSticky
from rmqlib.model import MessageQueue, java_sorted_mqs
from rmqlib.sim import scenarios, simulate
from rmqlib.sim.kafka_group import change_ms, owners_at, pauses_after
from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueConsistentHash

SHORT = dict(topics={"TopicTest": 4}, produce_rate_per_queue=2.0, duration_ms=80_000, drain_ms=20_000)


def _queues(scenario) -> list[MessageQueue]:
    return java_sorted_mqs(
        [MessageQueue(t, b, q) for t, n in scenario.topics.items() for b in scenario.brokers for q in range(n)]
    )


def _owners(run, at_ms: int) -> dict[str, str]:
    """Who owned each of the scenario's queues at ``at_ms`` (the group's retry queues left out)."""
    return {queue: cid for queue, cid in owners_at(run, at_ms).items() if queue in run.queues}


def _final_members(scenario) -> list[str]:
    return [s.client_id for s in scenario.consumers if s.leave_ms is None]


@pytest.mark.parametrize(
    "strategy",
    [
        AllocateMessageQueueAveragely(),
        AllocateMessageQueueConsistentHash(10),
        AllocateMessageQueueConsistentHashBoundedLoad(0.25, 10),
    ],
    ids=lambda s: s.name,
)
def test_a_scenario_takes_a_stateless_design_and_ends_with_its_answer(strategy):
    scenario = scenarios.scale_out(**SHORT, strategy=strategy)
    run = simulate(scenario, seed=0)
    want = allocate_group(strategy, _queues(scenario), _final_members(scenario), scenario.consumer_group)
    got = _owners(run, scenario.end_ms - 1)
    assert got == {str(mq): cid for cid, mqs in want.items() for mq in mqs}
    assert not run.lost and not run.offset_violations


def test_the_sticky_model_reads_its_previous_assignment_from_its_memory():
    """Each consumer node calls the one strategy object with its own client id; with a shared memory the
    group ends where the memory says, and a join moves only the newcomers' share."""
    strategy = AllocateMessageQueueSticky("shared")
    scenario = scenarios.scale_out(**SHORT, strategy=strategy)
    run = simulate(scenario, seed=0)
    queues = _queues(scenario)
    remembered = strategy.remembered(scenario.consumer_group, "any", queues)
    assert _owners(run, scenario.end_ms - 1) == {str(mq): cid for cid, mqs in remembered.items() for mq in mqs}
    at = change_ms(scenario)
    before, after = _owners(run, at - 1), _owners(run, scenario.end_ms - 1)
    moved = {q for q in after if before.get(q) != after[q]}
    assert len(moved) == len(queues) // 2 and all(after[q] not in before.values() for q in moved)
    assert run.duplicates == 0


def test_the_sticky_model_with_its_own_memory_splits_the_group_in_the_simulator_too():
    strategy = AllocateMessageQueueSticky("own")
    scenario = scenarios.scale_out(**SHORT, strategy=strategy)
    run = simulate(scenario, seed=0)
    assert run.lost and max(pauses_after(run, change_ms(scenario)).values()) > 10_000
    newcomer = _final_members(scenario)[-1]
    old = _final_members(scenario)[0]
    queues = _queues(scenario)
    # each member remembers its own answer, and the two answers disagree
    assert strategy.remembered(scenario.consumer_group, newcomer, queues) != strategy.remembered(
        scenario.consumer_group, old, queues
    )

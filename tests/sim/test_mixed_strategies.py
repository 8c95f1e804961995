"""Members of one group that run different allocation strategies (``ConsumerSpec.strategy``): each takes its share of
its own strategy's answer, so some queues get two owners and some none."""

from collections import Counter
from functools import cache

import pytest

from rmqlib.allocation import allocate_group
from rmqlib.model import MessageQueue
from rmqlib.sim import Scenario, scenarios, simulate
from rmqlib.sim.scenario import ConsumerSpec
from rmqlib.strategies import strategy_from_name


@cache
def run(consume_mode="CONCURRENT", seed=1, **overrides):
    return simulate(scenarios.mixed_strategies(consume_mode=consume_mode, **overrides), seed=seed)


def expected_owners(result):
    """Per TopicTest queue, the members whose own strategy gives it to them, computed without the simulator."""
    sc = result.scenario
    cids = sorted(s.client_id for s in sc.consumers)
    queues = sorted(MessageQueue("TopicTest", b, i) for b in sc.brokers for i in range(sc.topics["TopicTest"]))
    owners: dict[str, set[str]] = {str(q): set() for q in queues}
    for spec in sc.consumers:
        for q in allocate_group(sc.strategy_of(spec), queues, cids)[spec.client_id]:
            owners[str(q)].add(spec.client_id)
    return owners


@pytest.mark.parametrize("seed", [1, 2])
def test_each_member_owns_its_share_of_its_own_strategys_answer(seed):
    result = run(seed=seed)
    owned = result.owned_at(60_000)
    seen: dict[str, set[str]] = {}
    for member, queues in owned.items():
        for q in queues:
            seen.setdefault(q, set()).add(member)
    expected = expected_owners(result)
    assert {q: seen.get(q, set()) for q in expected} == expected
    assert Counter(map(len, expected.values())) == Counter({1: 4, 2: 2, 0: 2})


def test_queues_with_two_owners_are_consumed_twice_and_those_with_none_never():
    result = run()
    expected = expected_owners(result)
    none = {q for q, who in expected.items() if not who}
    two = {q for q, who in expected.items() if len(who) == 2}
    assert set(result.unconsumed()) == none
    assert result.duplicates == sum(result.stored[q] for q in two)
    assert set(result.overlapping_calls()) == two


def test_one_strategy_for_all_reads_every_queue_once():
    result = run(consumers=tuple(ConsumerSpec(s.client_id) for s in scenarios.mixed_strategies().consumers))
    assert result.scenario.strategies_agree
    assert result.lost == [] and result.duplicates == 0


def test_a_strategy_by_name_is_built_once_per_member_and_bad_ones_are_refused():
    spec = ConsumerSpec("a", strategy="AVG_BY_CIRCLE")
    assert spec.strategy.name == "AVG_BY_CIRCLE"
    assert not scenarios.mixed_strategies().strategies_agree
    assert Scenario(consumers=(ConsumerSpec("a", strategy="AVG"), ConsumerSpec("b"))).strategies_agree
    with pytest.raises(ValueError, match="ConsumerSpec.strategy"):
        ConsumerSpec("a", strategy="NO_SUCH")
    with pytest.raises(ValueError, match="a: strategy must be"):
        Scenario(consumers=(ConsumerSpec("a", strategy=3),))
    with pytest.raises(ValueError, match="POP needs AVG or AVG_BY_CIRCLE.*CONSISTENT_HASH"):
        Scenario(consume_mode="POP", consumers=(ConsumerSpec("a", strategy=strategy_from_name("CONSISTENT_HASH")),))


def test_a_pop_group_asks_the_broker_with_each_members_strategy():
    # with pop_share_queue_num 1 the broker deals each member its own share and the next one's, by the strategy the
    # member names in its QUERY_ASSIGNMENT: the mixed group's assignments differ from an all-AVG group's
    mixed = run("POP", pop_share_queue_num=1)
    same = run(
        "POP", pop_share_queue_num=1, consumers=tuple(ConsumerSpec(s.client_id) for s in mixed.scenario.consumers)
    )
    assert mixed.owned_at(60_000) != same.owned_at(60_000)

"""Consistent hashing with bounded loads: a partition, nobody above the bound, stateless, close to the ring."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rmqlib.allocation import allocate_group, make_cids, moved_queues, random_cids, spread_queues
from rmqlib.designs import (
    MAX_EPSILON,
    AllocateMessageQueueConsistentHashBoundedLoad,
    bounded_assign,
    load_bound,
)
from rmqlib.model import java_sorted_cids
from rmqlib.strategies import AllocateMessageQueueConsistentHash, AllocateMessageQueueStrategy

epsilons = st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, 3.0])


@given(st.integers(1, 64), st.integers(1, 24), epsilons, st.integers(0, 10_000))
@settings(max_examples=150, deadline=None)
def test_every_queue_once_and_nobody_above_the_bound(queues, consumers, epsilon, seed):
    mqs = spread_queues(queues, ("broker-a", "broker-b"))
    cids = java_sorted_cids(random_cids(consumers, seed))
    result = bounded_assign(mqs, cids, epsilon, 5)
    taken = [mq for mine in result.values() for mq in mine]
    assert sorted(taken) == sorted(mqs)
    assert max(map(len, result.values())) <= math.ceil((1 + epsilon) * queues / consumers - 1e-9)


@given(st.integers(1, 48), st.integers(1, 12), st.integers(0, 1000))
@settings(max_examples=60, deadline=None)
def test_when_the_bound_never_binds_it_is_rocketmqs_consistent_hash(queues, consumers, seed):
    mqs = spread_queues(queues, ("broker-a", "broker-b"))
    cids = java_sorted_cids(random_cids(consumers, seed))
    plain = AllocateMessageQueueConsistentHash(10).allocate_all("g", mqs, cids)
    if max(map(len, plain.values())) <= load_bound(queues, consumers, 0.25):
        assert bounded_assign(mqs, cids, 0.25, 10) == plain
    if consumers <= 1 + MAX_EPSILON:  # the bound is then at least the number of queues
        assert bounded_assign(mqs, cids, MAX_EPSILON, 10) == plain


def test_the_bound_evens_out_a_skewed_ring():
    mqs, cids = spread_queues(64, ("broker-a", "broker-b")), java_sorted_cids(random_cids(8, 3))
    plain = AllocateMessageQueueConsistentHash(10).allocate_all("g", mqs, cids)
    bounded = bounded_assign(mqs, cids, 0.25, 10)
    assert max(map(len, plain.values())) > 10 >= max(map(len, bounded.values()))  # ceil(1.25 * 64 / 8) = 10


def test_every_member_computes_the_same_answer_stateless():
    strategy = AllocateMessageQueueConsistentHashBoundedLoad(0.25)
    mqs, cids = spread_queues(32), java_sorted_cids(make_cids(6))
    whole = strategy.allocate_all("g", mqs, cids)
    assert {cid: strategy.allocate("g", cid, mqs, cids) for cid in cids} == whole
    assert strategy.allocate_all("g", mqs, cids) == whole  # no memory: the same answer again
    assert AllocateMessageQueueConsistentHashBoundedLoad.stateless is True
    assert isinstance(strategy, AllocateMessageQueueStrategy) and strategy.name == "CONSISTENT_HASH_BOUNDED"


def test_a_join_moves_few_queues_compared_with_avg():
    mqs = spread_queues(128, ("broker-a", "broker-b"))
    grown = random_cids(17, 5)
    strategy = AllocateMessageQueueConsistentHashBoundedLoad(0.25)
    before, after = allocate_group(strategy, mqs, grown[:16]), allocate_group(strategy, mqs, grown)
    assert len(moved_queues(before, after)) <= 3 * (128 // 17)


def test_epsilon_zero_is_perfect_balance():
    mqs, cids = spread_queues(30), java_sorted_cids(random_cids(7, 1))
    loads = sorted(map(len, bounded_assign(mqs, cids, 0.0, 10).values()))
    assert loads[-1] == 5  # ceil(30 / 7); 7 x 5 >= 30


def test_load_bound_rounds_up_without_floating_point_surprises():
    assert load_bound(10, 1, 0.1) == 11
    assert load_bound(64, 8, 0.25) == 10
    assert load_bound(0, 3, 0.25) == 0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(epsilon=-0.1), ValueError, "epsilon"),
        (dict(epsilon=MAX_EPSILON + 1), ValueError, "epsilon"),
        (dict(epsilon=float("nan")), ValueError, "epsilon"),
        (dict(epsilon="0.2"), TypeError, "epsilon"),
        (dict(virtual_node_cnt=0), ValueError, "virtual_node_cnt"),
        (dict(virtual_node_cnt=2.5), TypeError, "virtual_node_cnt"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        AllocateMessageQueueConsistentHashBoundedLoad(**kwargs)


def test_empty_input_and_non_members_answer_like_java():
    strategy = AllocateMessageQueueConsistentHashBoundedLoad()
    assert strategy.allocate("g", "stranger", spread_queues(4), ["a"]) == []
    with pytest.raises(ValueError, match="mq_all"):
        strategy.allocate("g", "a", [], ["a"])


def test_large_groups_stay_fast():
    from support import time_limit

    mqs, cids = spread_queues(20_000, ("broker-a", "broker-b")), random_cids(2_000, 1)
    with time_limit(20):
        result = bounded_assign(mqs, cids, 0.0, 10)
    assert max(map(len, result.values())) == 10


def test_the_strategies_stay_in_the_core_without_simulation_or_plotting():
    import subprocess
    import sys

    code = (
        "import sys, rmqlib.designs\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('simpy', 'plotly', 'ipywidgets')"
        " or m.startswith(('rmqlib.sim', 'rmqlib.viz', 'rmqlib.designs.compare')))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""

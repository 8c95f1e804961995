"""Two processes of a group that compute the same client id (``ConsumerSpec.same_client_id_as``): the brokers list
the id twice, both members take its share, and the next share has no owner (``cidAll.indexOf``)."""

import dataclasses
from collections import Counter
from functools import cache

import pytest

from rmqlib.sim import ORDERLY, Scenario, scenarios, simulate
from rmqlib.sim.scenario import ConsumerSpec

FIRST, TWIN = "10.0.0.1@orders", "10.0.0.1@orders #2"


@cache
def run(consume_mode="CONCURRENT", twin_crashes_at=None, distinct=False, seed=1):
    sc = scenarios.shared_client_id(consume_mode=consume_mode)
    twin = sc.consumers[1]
    if twin_crashes_at is not None:
        twin = dataclasses.replace(twin, leave_ms=twin_crashes_at, leave="crash")
    if distinct:
        twin = dataclasses.replace(twin, same_client_id_as=None)
    return simulate(sc.replace(consumers=(sc.consumers[0], twin, *sc.consumers[2:])), seed=seed)


def holders(result):
    """Per topic queue, the members that believed they owned it once producers started (the group has settled)."""
    since = result.scenario.produce_start_ms
    return {
        q: who
        for q, spans in result.ownership.items()
        if "%RETRY%" not in q and (who := {i.holder for i in spans if i.end_ms > since})
    }


def topic_queues(result, broker, *ids):
    return {str(q) for q in result.queues if f"brokerName={broker}, queueId=" in q and int(q[-2]) in ids}


def test_the_brokers_list_the_shared_id_twice():
    traced = simulate(scenarios.shared_client_id(duration_ms=20_000, drain_ms=5_000), seed=1, trace=True)
    all_joined = max(e.time_ms for e in traced.events_of("join"))
    answers = {e.detail.split(", ")[-1] for e in traced.events_of("find consumer ids") if e.time_ms > all_joined}
    assert answers == {"4 member(s)"}  # four channels, three distinct ids


@pytest.mark.parametrize("seed", [1, 2])
def test_both_twins_take_the_first_share_and_the_second_share_has_no_owner(seed):
    result = run(seed=seed)
    owned = holders(result)
    first, second = topic_queues(result, "broker-a", 0, 1), topic_queues(result, "broker-a", 2, 3)
    assert {q for q, who in owned.items() if who == {FIRST, TWIN}} == first
    assert not second & set(owned)  # nobody ever owned them
    assert all(len(who) == 1 and who.isdisjoint({FIRST, TWIN}) for q, who in owned.items() if q not in first)
    # the second share is never read: no owner since the producers started, and its messages stand still
    assert result.unconsumed() == {q: result.stored[q] for q in second}
    assert len(result.lost) == sum(result.stored[q] for q in second)
    sc = result.scenario
    for q in second:  # standing still from the first message (the producers' first burst) to the end of the run
        [(start, stop)] = result.stalls()[q]
        assert 0 < start - sc.produce_start_ms <= sc.produce_batch_ms and stop == sc.end_ms
        assert result.pauses()[q] == [(sc.produce_start_ms, sc.end_ms)]


def test_owned_at_names_each_members_queues_at_an_instant():
    result = run()
    owned = result.owned_at(60_000)
    first, second = topic_queues(result, "broker-a", 0, 1), topic_queues(result, "broker-a", 2, 3)
    assert list(owned) == [FIRST, TWIN, "10.0.0.2@orders", "10.0.0.3@orders"]
    topic = {member: {q for q in queues if "%RETRY%" not in q} for member, queues in owned.items()}
    assert topic[FIRST] == topic[TWIN] == first
    assert not second & set().union(*topic.values())
    assert all(len(topic[m]) == 2 for m in owned)
    assert all(queues == [] for queues in result.owned_at(0).values())  # nobody has started yet
    with pytest.raises(ValueError, match="at_ms"):
        result.owned_at(-1)


def test_every_message_of_the_first_share_is_consumed_once_by_each_twin():
    result = run()
    first = topic_queues(result, "broker-a", 0, 1)
    by_queue = {q: Counter(o for b in result.consumption[q] for o in b.offsets) for q in first}
    assert all(set(counts.values()) == {2} and len(counts) == result.stored[q] for q, counts in by_queue.items())
    assert result.duplicates == sum(result.stored[q] for q in first)
    assert {b.consumer for q in first for b in result.consumption[q]} == {FIRST, TWIN}


def test_distinct_ids_share_evenly_with_nothing_lost_or_doubled():
    result = run(distinct=True)
    assert result.lost == [] and result.duplicates == 0
    assert all(len(who) == 1 for who in holders(result).values())


def test_orderly_twins_both_hold_the_lock_and_consume_one_queue_at_once():
    result = run(ORDERLY)
    first = topic_queues(result, "broker-a", 0, 1)
    calls = result.overlapping_calls()
    assert set(calls) == first
    assert all({a.consumer, b.consumer} == {FIRST, TWIN} for q in first for a, b in calls[q])
    # the broker's lock table knows one id: the shared one holds each lock, so neither twin is ever refused
    assert all({i.holder for i in result.lock_ownership[q]} == {FIRST} for q in first)
    assert run(ORDERLY, distinct=True).overlapping_calls() == {}


def test_when_one_twin_dies_the_group_heals_and_the_backlog_is_read():
    result = run(twin_crashes_at=60_000)
    second = topic_queues(result, "broker-a", 2, 3)
    assert result.lost == []
    waits = result.waits_for_owner(60_000)
    assert set(waits) == second and all(0 < w <= 10 for w in waits.values())  # the channel close notifies at once
    # what waited from the producers' start to the crash is read then: the longest stall ends just after it
    assert 60_000 - result.scenario.produce_start_ms <= result.longest_stall_ms() < 60_000
    assert result.duplicates < run().duplicates


@pytest.mark.parametrize(
    "consumers, overrides, message",
    [
        ((ConsumerSpec("a", same_client_id_as="a"),), {}, "must name another member"),
        ((ConsumerSpec("a"), ConsumerSpec("b", same_client_id_as="c")), {}, "must name another member"),
        (
            (ConsumerSpec("a"), ConsumerSpec("b", same_client_id_as="a"), ConsumerSpec("c", same_client_id_as="b")),
            {},
            "sends its own client id",
        ),
        ((ConsumerSpec("a"), ConsumerSpec("b", same_client_id_as="a")), {"client": "GRPC"}, "remoting client"),
        (
            (ConsumerSpec("a"), ConsumerSpec("b", same_client_id_as="a")),
            {"message_model": "BROADCASTING"},
            "CLUSTERING group",
        ),
    ],
)
def test_a_shared_id_must_name_another_member_of_a_clustering_remoting_group(consumers, overrides, message):
    with pytest.raises(ValueError, match=message) as error:
        Scenario(consumers=consumers, **overrides)
    assert "consumers" in str(error.value)

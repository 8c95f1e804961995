"""The comparison adapter: every design answers for the same group, and the measurements mean what they say."""

import pytest

from rmqlib.allocation import allocate_group, imbalance, make_cids, moved_queues
from rmqlib.allocation import owners as queue_owners
from rmqlib.designs import compare
from rmqlib.designs.compare import (
    DESIGNS,
    MEASURED,
    broker_assignment_cost,
    broker_side,
    changes_summary,
    design_queues,
    design_summary,
    format_table,
    measure,
    measured_table,
    memory_disagreement,
    owners,
    simulated_changes,
    view_disagreement,
)
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely


@pytest.mark.parametrize("design", MEASURED)
@pytest.mark.parametrize("consumers, queues", [(3, 8), (5, 32), (12, 8)])
def test_every_measured_design_gives_every_queue_exactly_one_owner(design, consumers, queues):
    mqs, cids = design_queues(queues), make_cids(consumers)
    answer = owners(design, cids, mqs)
    assert sorted(answer) == sorted(cids)
    held = queue_owners(answer)
    assert set(held) == set(mqs) and all(len(who) == 1 for who in held.values())


@pytest.mark.parametrize(
    "design",
    [d for d in MEASURED if d not in ("CONSISTENT_HASH", "CONSISTENT_HASH_BOUNDED", "MACHINE_ROOM_NEARBY-AVG")],
)
def test_every_design_but_the_hash_rings_and_nearby_balances_to_within_one(design):
    for consumers, queues in ((3, 10), (7, 64), (16, 8)):
        assert imbalance(owners(design, make_cids(consumers), design_queues(queues))) <= 1, (consumers, queues)


def test_nearby_balances_each_room_not_the_group():
    # 10 queues in two rooms of 5; consumers dealt over the rooms: two in room1, one in room2
    answer = owners("MACHINE_ROOM_NEARBY-AVG", make_cids(3), design_queues(10))
    assert sorted(map(len, answer.values())) == [2, 3, 5]


def test_the_broker_answers_what_client_avg_computes():
    mqs, cids = design_queues(30), make_cids(7)
    assert broker_side(cids, mqs) == allocate_group(AllocateMessageQueueAveragely(), mqs, cids)
    assert owners("BROKER_AVG", cids, mqs) == owners("AVG", cids, mqs)


def test_kafka_range_on_one_topic_is_avg_and_roundrobin_is_avg_by_circle():
    # RangeAssignor Javadoc: per topic, partitions in order, the first (partitions % members) members get one more
    mqs, cids = design_queues(11), make_cids(4)
    count = {cid: len(q) for cid, q in owners("KAFKA_RANGE", cids, mqs).items()}
    assert count == {cid: len(q) for cid, q in owners("AVG", cids, mqs).items()}
    assert owners("KAFKA_RANGE", cids, mqs) == owners("AVG", cids, mqs)  # same sort order on both sides
    assert owners("KAFKA_ROUNDROBIN", cids, mqs) == owners("AVG_BY_CIRCLE", cids, mqs)


@pytest.mark.parametrize("design", ["STICKY", "KAFKA_STICKY", "KAFKA_COOPERATIVE_STICKY", "KAFKA_UNIFORM"])
def test_sticky_designs_move_only_the_newcomers_share(design):
    mqs, cids = design_queues(24), make_cids(5)
    before = owners(design, cids, mqs)
    grown = make_cids(6)
    after = owners(design, grown, mqs, previous=before)
    assert set(moved_queues(before, after)) == set(after[grown[-1]])
    assert len(after[grown[-1]]) == 24 // 6


def test_measure_counts_what_it_names():
    row = measure("AVG", 8, 32, seed=3)
    assert row["imbalance"] == 0 and row["peak"] == 1.0 and row["split"] == 0
    assert row["least_out"] == 32 // 9 and row["least_in"] == 4
    assert row["moved_out"] >= row["least_out"] and row["moved_in"] >= row["least_in"]
    assert measure("AVG", 8, 32, seed=3) == row  # seeded


def test_the_table_sums_up_stickiness_against_balance():
    rows = measured_table(["AVG", "STICKY", "CONSISTENT_HASH", "CONSISTENT_HASH_BOUNDED"], (4, 16), (64, 256))
    summary = {row["design"]: row for row in design_summary(rows)}
    assert summary["ours: sticky"]["join: x fewest"] == 1.0 == summary["ours: sticky"]["leave: x fewest"]
    assert summary["RocketMQ AVG"]["join: x fewest"] > 2 * summary["ours: sticky"]["join: x fewest"]
    assert (
        summary["RocketMQ CONSISTENT_HASH"]["worst peak / fair share"]
        > 1.25
        >= summary["ours: bounded hash"]["worst peak / fair share"]
    )  # ceil(1.25 x 4) / 4 with epsilon 0.25
    text = format_table(design_summary(rows))
    assert text.splitlines()[0].startswith("design") and "ours: sticky" in text


def test_own_memory_leaves_gaps_and_overlaps_that_last_and_shared_memory_does_not():
    own = memory_disagreement(4, 16, rounds=3, memory="own")
    assert own[0]["unowned"] == own[0]["doubled"] == 0
    assert all(r["unowned"] > 0 and r["doubled"] > 0 for r in own[1:])
    assert all(r["unowned"] == r["doubled"] == 0 for r in memory_disagreement(4, 16, memory="shared"))


def test_members_with_stale_views_split_queues_client_side_but_not_broker_side():
    found = view_disagreement(consumers=8, queues=32, stale=2, seed=0)
    assert found["client_split"] > 0 and found["broker_split"] == 0
    assert view_disagreement(consumers=8, queues=32, stale=0)["client_split"] == 0


def test_both_sides_send_one_request_per_member_and_topic_and_the_broker_does_the_work():
    client, broker = broker_assignment_cost(10, 32, topics=3)
    assert client["requests per round"] == broker["requests per round"] == 30
    assert broker["allocations on the broker"] == 30 and client["allocations on the broker"] == 0
    assert broker["sorted items on the broker"] == 30 * (10 + 32)


def test_simulated_changes_show_the_price_of_disagreeing_memories():
    rows = simulated_changes(
        seeds=(0,), designs=["RocketMQ AVG", "ours: sticky, own memory"], changes=["scale_out"], kafka=False
    )
    by = {row["design"]: row for row in rows}
    assert by["RocketMQ AVG"]["unconsumed"] == 0
    assert by["ours: sticky, own memory"]["unconsumed"] > 0  # queues nobody owns are never read
    assert by["ours: sticky, own memory"]["pause_ms"] > 10 * by["RocketMQ AVG"]["pause_ms"]
    summary = changes_summary(rows)
    assert [r["design"] for r in summary] == ["RocketMQ AVG", "ours: sticky, own memory"]


def test_kafka_protocols_pay_their_own_detection_and_rounds():
    rows = [r for r in simulated_changes(seeds=(0,), designs=[], changes=["crash", "scale_out"])]
    by = {(r["design"], r["change"]): r for r in rows}
    # a crash waits for the session timeout (45 s) before anyone takes the dead member's partitions
    assert by[("Kafka eager (range)", "crash")]["pause_ms"] >= 45_000
    # eager stops every partition on a join; cooperative only the moved ones
    eager, coop = by[("Kafka eager (range)", "scale_out")], by[("Kafka cooperative (cooperative-sticky)", "scale_out")]
    assert eager["moved"] > coop["moved"]


def test_every_design_is_measured_in_the_simulator_the_same_way():
    rows = simulated_changes(
        seeds=(0,),
        designs=["RocketMQ AVG", "RocketMQ broker-side (Pop)"],
        changes=["scale_out"],
        kafka=["Kafka eager (range)", "Kafka cooperative (cooperative-sticky)"],
    )
    by = {row["design"]: row for row in rows}
    assert set(by) == {
        "RocketMQ AVG",
        "RocketMQ broker-side (Pop)",
        "Kafka eager (range)",
        "Kafka cooperative (cooperative-sticky)",
    }
    assert all(set(row) == set(rows[0]) for row in rows)
    # Pop mode gives every consumer every queue (popShareQueueNum 0): no queue waits for a reader
    assert by["RocketMQ broker-side (Pop)"]["pause_ms"] == 0
    # eager stops all 16 partitions, cooperative only the moved ones, for longer
    eager, coop = by["Kafka eager (range)"], by["Kafka cooperative (cooperative-sticky)"]
    assert eager["paused"] == 16 > coop["paused"] > 0 and coop["longest_ms"] > eager["longest_ms"]
    assert eager["duplicates"] == coop["duplicates"] == 0
    assert by["RocketMQ AVG"]["paused"] > 0 and by["RocketMQ AVG"]["longest_ms"] < 3_000


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: simulated_changes(designs=[], kafka=["Kafka lazy"]), ValueError, "kafka"),
        (lambda: simulated_changes(designs=[], kafka=[3]), TypeError, "kafka"),
        (lambda: owners("NOPE", ["a"], design_queues(2)), ValueError, "design"),
        (lambda: owners("AVG", [], design_queues(2)), ValueError, "cids"),
        (lambda: owners("AVG", ["a"], []), ValueError, "mqs"),
        (lambda: owners("AVG", ["a"], ["q"]), TypeError, "mqs"),
        (lambda: owners("AVG", "a", design_queues(2)), TypeError, "cids"),
        (lambda: owners("STICKY", ["a"], design_queues(2), previous=[1]), TypeError, "previous"),
        (lambda: measure("AVG", 1, 8), ValueError, "consumers"),
        (lambda: measure("AVG", 4, 0), ValueError, "queues"),
        (lambda: measured_table(["AVG"], (200,) * 60, (1000,) * 60), ValueError, "consumer-queue pairs"),
        (lambda: simulated_changes(designs=["nope"]), ValueError, "designs"),
        (lambda: simulated_changes(changes=["explode"]), ValueError, "changes"),
        (lambda: memory_disagreement(memory="nobody"), ValueError, "memory"),
        (lambda: view_disagreement(consumers=4, stale=5), ValueError, "stale"),
        (lambda: design_summary([1]), TypeError, "rows"),
    ],
)
def test_bad_input_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_every_design_names_its_source_and_who_decides():
    for design in DESIGNS.values():
        assert design.source and design.decides in ("every client", "elected member", "broker", "an operator")
    assert not DESIGNS["STICKY"].stateless and DESIGNS["CONSISTENT_HASH_BOUNDED"].stateless
    assert "CONFIG" not in MEASURED
    everyone = owners("CONFIG", make_cids(3), design_queues(4))
    assert all(len(q) == 4 for q in everyone.values())  # CONFIG hands every member the whole configured list


def test_two_topics_map_to_two_kafka_topics():
    mqs = [MessageQueue("A", "broker-a", i) for i in range(4)] + [MessageQueue("B", "broker-a", i) for i in range(2)]
    answer = owners("KAFKA_ROUNDROBIN", make_cids(2), mqs)
    assert sorted(mq for q in answer.values() for mq in q) == sorted(mqs)
    assert compare._partitions(compare._mq_list(mqs))[0] == {"A": 4, "B": 2}


def test_a_scenario_takes_our_strategies_as_it_takes_rocketmqs():
    from rmqlib.designs import AllocateMessageQueueConsistentHashBoundedLoad, AllocateMessageQueueSticky
    from rmqlib.sim import Scenario, scenarios

    for strategy in (AllocateMessageQueueSticky("shared"), AllocateMessageQueueConsistentHashBoundedLoad(0.5)):
        assert Scenario(strategy=strategy).strategy is strategy
        assert scenarios.scale_out(strategy=strategy).strategy.name == strategy.name


def test_range_on_two_topics_follows_the_javadoc_example():
    # RangeAssignor's Javadoc: C0 and C1 subscribe to t0 and t1 of 3 partitions each -> C0 [t0p0, t0p1, t1p0, t1p1],
    # C1 [t0p2, t1p2]. Queue k of a topic (in RocketMQ's order) is partition k.
    mqs = [MessageQueue(t, "broker-a", i) for t in ("t0", "t1") for i in range(3)]
    answer = owners("KAFKA_RANGE", ["C0", "C1"], mqs)
    assert {cid: [(mq.topic, mq.queue_id) for mq in q] for cid, q in answer.items()} == {
        "C0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)],
        "C1": [("t0", 2), ("t1", 2)],
    }


def test_the_static_slider_figure_builds_for_the_chapters_counts():
    from rmqlib.viz.designs import designs_frames_figure

    fig = designs_frames_figure(queues=32, consumer_counts=(2, 4, 8, 16, 32, 64), initial=8)
    assert len(fig.layout.sliders[0].steps) == 6 and fig.layout.sliders[0].active == 2


def test_the_broker_answers_every_topic_and_refuses_a_strategy_it_does_not_know():
    mqs = [MessageQueue(t, "broker-a", i) for t in ("A", "B") for i in range(3)]
    answer = broker_side(make_cids(2), mqs)
    assert sorted(mq for q in answer.values() for mq in q) == sorted(mqs)
    assert broker_side(make_cids(2), mqs, "AVG_BY_CIRCLE") == owners("AVG_BY_CIRCLE", make_cids(2), mqs)
    with pytest.raises(ValueError, match="strategy_name"):
        broker_side(make_cids(2), mqs, "CONSISTENT_HASH")


def test_rocketmq_allocates_each_topic_alone_and_kafka_roundrobin_deals_them_together():
    mqs = [MessageQueue(t, "broker-a", i) for t in ("A", "B") for i in range(4)]
    cids = make_cids(3)
    per_topic = sorted(map(len, owners("AVG", cids, mqs).values()), reverse=True)
    assert per_topic == [4, 2, 2]  # each topic's remainder goes to the same first member (chapter 02)
    assert sorted(map(len, owners("KAFKA_ROUNDROBIN", cids, mqs).values()), reverse=True) == [3, 3, 2]
    assert sorted(map(len, owners("KAFKA_RANGE", cids, mqs).values()), reverse=True) == [4, 2, 2]
    assert owners("BROKER_AVG", cids, mqs) == owners("AVG", cids, mqs)


def test_kip848_range_ignores_the_previous_assignment_and_uniform_keeps_it():
    mqs, cids = design_queues(24), make_cids(5)
    before = owners("KAFKA_SERVER_RANGE", cids, mqs)
    after = make_cids(6)
    assert owners("KAFKA_SERVER_RANGE", after, mqs, previous=before) == owners("KAFKA_SERVER_RANGE", after, mqs)
    assert DESIGNS["KAFKA_SERVER_RANGE"].stateless and not DESIGNS["KAFKA_UNIFORM"].stateless

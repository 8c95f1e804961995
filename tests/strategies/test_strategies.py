"""Behaviours of the six strategies that RocketMQ's own unit tests pin down, and more."""

import pytest

from rmqlib.allocation import make_cids, make_queues
from rmqlib.model import MessageQueue
from rmqlib.strategies import (
    STRATEGIES,
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
    MappingMachineRoomResolver,
    PrefixMachineRoomResolver,
    strategy_from_name,
)

GROUP = "GID_test"
CHECKED = [
    AllocateMessageQueueAveragely(),
    AllocateMessageQueueAveragelyByCircle(),
    AllocateMessageQueueConsistentHash(),
    AllocateMessageQueueByMachineRoom({"room1"}),
    AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), PrefixMachineRoomResolver()),
]


def counts(strategy, n_mq, n_cid):
    mqs, cids = make_queues("T", ["broker-a"], n_mq), make_cids(n_cid)
    return [len(strategy.allocate(GROUP, cid, mqs, cids)) for cid in cids]


def test_averagely_gives_remainder_to_first_consumers():
    assert counts(AllocateMessageQueueAveragely(), 10, 4) == [3, 3, 2, 2]


def test_averagely_gives_contiguous_blocks():
    mqs, cids = make_queues("T", ["b"], 10), make_cids(4)
    got = [[mq.queue_id for mq in AllocateMessageQueueAveragely().allocate(GROUP, c, mqs, cids)] for c in cids]
    assert got == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]


def test_averagely_leaves_consumers_beyond_queue_count_idle():
    assert counts(AllocateMessageQueueAveragely(), 3, 5) == [1, 1, 1, 0, 0]


def test_by_circle_deals_queues_round_robin():
    mqs, cids = make_queues("T", ["b"], 10), make_cids(4)
    got = [[mq.queue_id for mq in AllocateMessageQueueAveragelyByCircle().allocate(GROUP, c, mqs, cids)] for c in cids]
    assert got == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]


@pytest.mark.parametrize("strategy", CHECKED, ids=lambda s: s.name)
def test_empty_arguments_raise_value_error_in_java_order(strategy):
    mqs, cids = make_queues("T", ["b"], 2), make_cids(2)
    with pytest.raises(ValueError, match="current_cid"):
        strategy.allocate(GROUP, "", [], [])
    with pytest.raises(ValueError, match="current_cid"):
        strategy.allocate(GROUP, None, mqs, cids)
    with pytest.raises(ValueError, match="mq_all"):
        strategy.allocate(GROUP, cids[0], [], [])
    with pytest.raises(ValueError, match="mq_all"):
        strategy.allocate(GROUP, cids[0], None, cids)
    with pytest.raises(ValueError, match="cid_all"):
        strategy.allocate(GROUP, cids[0], mqs, None)


@pytest.mark.parametrize("strategy", CHECKED, ids=lambda s: s.name)
def test_non_member_gets_nothing(strategy):
    assert strategy.allocate(GROUP, str(2**31 - 1), make_queues("T", ["b"], 6), make_cids(2)) == []


@pytest.mark.parametrize("strategy", CHECKED, ids=lambda s: s.name)
def test_wrong_types_raise_type_error(strategy):
    mqs, cids = make_queues("T", ["b"], 2), make_cids(2)
    with pytest.raises(TypeError, match="mq_all"):
        strategy.allocate(GROUP, cids[0], "queues", cids)
    with pytest.raises(TypeError, match="mq_all"):
        strategy.allocate(GROUP, cids[0], [("T", "b", 0)], cids)
    with pytest.raises(TypeError, match="cid_all"):
        strategy.allocate(GROUP, cids[0], mqs, cids[0])
    with pytest.raises(TypeError, match="cid_all"):
        strategy.allocate(GROUP, cids[0], mqs, [cids[0], 7])
    with pytest.raises(TypeError, match="current_cid"):
        strategy.allocate(GROUP, 7, mqs, cids)


def test_names_match_java_get_name():
    assert {name: cls.name if name != "MACHINE_ROOM_NEARBY" else None for name, cls in STRATEGIES.items()} == {
        "AVG": "AVG",
        "AVG_BY_CIRCLE": "AVG_BY_CIRCLE",
        "CONSISTENT_HASH": "CONSISTENT_HASH",
        "CONFIG": "CONFIG",
        "MACHINE_ROOM": "MACHINE_ROOM",
        "MACHINE_ROOM_NEARBY": None,
    }
    nearby = AllocateMachineRoomNearby(AllocateMessageQueueAveragelyByCircle(), PrefixMachineRoomResolver())
    assert nearby.name == "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"


def test_strategy_from_name_builds_each_strategy_and_rejects_unknown_names():
    assert strategy_from_name("CONSISTENT_HASH", virtual_node_cnt=3).virtual_node_cnt == 3
    assert strategy_from_name("MACHINE_ROOM_NEARBY-CONSISTENT_HASH").name == "MACHINE_ROOM_NEARBY-CONSISTENT_HASH"
    with pytest.raises(ValueError, match="unknown strategy 'AVERAGE'"):
        strategy_from_name("AVERAGE")


def test_negative_virtual_nodes_raise_at_construction():
    with pytest.raises(ValueError, match="virtual_node_cnt"):
        AllocateMessageQueueConsistentHash(-1)


def test_zero_virtual_nodes_give_everyone_nothing():
    strategy = AllocateMessageQueueConsistentHash(0)
    mqs, cids = make_queues("T", ["b"], 4), make_cids(3)
    assert all(strategy.allocate(GROUP, c, mqs, cids) == [] for c in cids)


def test_consistent_hash_duplicate_cid_gets_double_weight():
    # Java numbers a repeated node's virtual nodes after the ones it already owns: a-10..a-19.
    ring = AllocateMessageQueueConsistentHash(10).ring(["a@1", "b@1", "a@1"])
    assert ring.vnode_count() == {"a@1": 20, "b@1": 10}


def test_ring_collision_later_insert_wins():
    buckets = {"a-0": 5, "b-0": 5, "a-1": 1}
    strategy = AllocateMessageQueueConsistentHash(2, hash_function=lambda key: buckets.get(key, 9))
    ring = strategy.ring(["a", "b"])
    # a-0 (5), a-1 (1), b-0 (5, overwrites a-0), b-1 (9)
    assert [int(p) for p in ring.positions] == [1, 5, 9]
    assert ring.owners == ["a", "b", "b"]
    assert ring.collisions == [(5, "a-0", "b-0")]


def test_custom_hash_function_routes_to_first_position_at_or_after_key_and_wraps():
    def position(key):
        return {"a-0": 10, "b-0": 20}.get(key) or int(key[-2]) * 10

    strategy = AllocateMessageQueueConsistentHash(1, hash_function=position)
    # queue hash = queueId * 10; 10 -> a (equal position), 15 would go to b, 30 wraps to a
    mqs = [MessageQueue("T", "b", i) for i in (1, 2, 3)]
    assert strategy.allocate(GROUP, "a", mqs, ["a", "b"]) == [mqs[0], mqs[2]]
    assert strategy.allocate(GROUP, "b", mqs, ["a", "b"]) == [mqs[1]]


def test_custom_hash_must_return_int():
    strategy = AllocateMessageQueueConsistentHash(1, hash_function=lambda key: "x")
    with pytest.raises(TypeError, match="hash_function"):
        strategy.allocate(GROUP, "a", make_queues("T", ["b"], 1), ["a"])


def test_config_returns_configured_list_without_any_check():
    mqs = make_queues("T", ["b"], 2)
    strategy = AllocateMessageQueueByConfig(mqs[:1])
    assert strategy.allocate(GROUP, "", [], []) == mqs[:1]
    assert strategy.allocate(GROUP, "nobody", mqs, ["a"]) == mqs[:1]
    assert AllocateMessageQueueByConfig().allocate(GROUP, "a", mqs, ["a"]) is None


def test_machine_room_takes_only_listed_rooms_and_even_blocks():
    mqs = [MessageQueue("T", f"{room}@broker", q) for room in ("room1", "room2") for q in range(5)]
    mqs.append(MessageQueue("T", "room1@b@c", 0))  # three parts: ignored
    mqs.append(MessageQueue("T", "room1@", 0))  # one part after split: ignored
    strategy = AllocateMessageQueueByMachineRoom({"room1"})
    cids = make_cids(2)
    got = [strategy.allocate(GROUP, c, mqs, cids) for c in cids]
    assert got == [[mqs[0], mqs[1], mqs[4]], [mqs[2], mqs[3]]]


def test_machine_room_without_rooms_fails_only_on_a_two_part_name():
    strategy = AllocateMessageQueueByMachineRoom(None)
    assert strategy.allocate(GROUP, "a", make_queues("T", ["plain"], 2), ["a"]) == []
    with pytest.raises(ValueError, match="consumer_idcs"):
        strategy.allocate(GROUP, "a", [MessageQueue("T", "idc@b", 0)], ["a"])


def test_nearby_keeps_queues_in_room_and_shares_consumerless_rooms():
    mqs = make_queues("T", ["IDC1-a"], 4) + make_queues("T", ["IDC2-a"], 3)
    cids = ["IDC1-c1", "IDC1-c2"]
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), PrefixMachineRoomResolver())
    first, second = (strategy.allocate(GROUP, c, mqs, cids) for c in cids)
    assert first == mqs[0:2] + mqs[4:6] and second == mqs[2:4] + mqs[6:7]


def test_nearby_rejects_an_unplaced_queue_or_consumer():
    resolver = MappingMachineRoomResolver({"a": "r1"}, {"c1": "r1"})
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), resolver)
    with pytest.raises(ValueError, match="machine room is empty for mq"):
        strategy.allocate(GROUP, "c1", [MessageQueue("T", "zz", 0)], ["c1"])
    with pytest.raises(ValueError, match="machine room is empty for consumer"):
        strategy.allocate(GROUP, "c1", [MessageQueue("T", "a", 0)], ["c1", "c2"])


def test_nearby_visits_rooms_in_java_string_order():
    # Two consumer-less rooms; U+1F600 sorts before U+FF5E in Java, after it in Python.
    rooms = {"A": "home", "B": "\uff5e", "C": "\U0001f600"}
    resolver = MappingMachineRoomResolver(rooms, {"c1": "home"})
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), resolver)
    mqs = [MessageQueue("T", b, 0) for b in ("B", "C")]
    assert [mq.broker_name for mq in strategy.allocate(GROUP, "c1", mqs, ["c1"])] == ["C", "B"]

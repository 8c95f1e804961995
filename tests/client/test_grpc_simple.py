"""A 5.x gRPC simple consumer: the route as QueryRoute gives it, and each receive's queue taken in turn
(RouteActivity#queryRoute, SubscriptionLoadBalancer, SimpleConsumerImpl#receive0)."""

import random

import pytest

from rmqlib.client.grpc_simple import SimpleConsumerImpl, SubscriptionLoadBalancer
from rmqlib.model import MessageQueue
from rmqlib.namesrv import PERM_READ, PERM_WRITE, BrokerData, QueueData, RouteInfoManager, TopicRouteData
from rmqlib.proxy import Permission, RouteQueue, query_route


def _route() -> TopicRouteData:
    table = RouteInfoManager()
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0)
    table.register_broker("broker-a", {"T": (4, 4)}, now_ms=0, broker_id=1)  # broker-a's slave
    table.register_broker("broker-b", {"T": (2, 3)}, now_ms=0)
    return table.pickup_topic_route_data("T")


def _shape(answer) -> list[tuple[str, int, int, str]]:
    return [(q.message_queue.broker_name, q.broker_id, q.message_queue.queue_id, q.permission.name) for q in answer]


def test_query_route_numbers_each_replicas_queues_read_only_then_write_only_then_both():
    answer = query_route(_route(), "T")
    assert _shape(answer) == (
        [("broker-a", 0, i, "READ_WRITE") for i in range(4)]
        + [("broker-a", 1, i, "READ_WRITE") for i in range(4)]
        + [("broker-b", 0, 0, "WRITE")]  # 3 write queues, 2 read: one write-only, then two of both
        + [("broker-b", 0, i, "READ_WRITE") for i in (1, 2)]
    )
    assert {q.message_queue.topic for q in answer} == {"T"}


def test_query_route_gives_a_broker_that_can_neither_be_read_nor_written_queues_without_permission():
    route = TopicRouteData(
        (
            QueueData("broker-a", 2, 0, PERM_READ),
            QueueData("broker-b", 1, 3, 0),
            QueueData("broker-c", 0, 2, PERM_WRITE),
        ),
        tuple(BrokerData(name, ((0, f"{name}:10911"),)) for name in ("broker-a", "broker-b", "broker-c")),
    )
    assert _shape(query_route(route, "T")) == [
        ("broker-a", 0, 0, "READ"),
        ("broker-a", 0, 1, "READ"),
        ("broker-b", 0, 0, "NONE"),
        ("broker-b", 0, 1, "NONE"),
        ("broker-b", 0, 2, "NONE"),
        ("broker-c", 0, 0, "WRITE"),
        ("broker-c", 0, 1, "WRITE"),
    ]


def test_query_route_stops_at_a_queue_data_whose_broker_the_route_lacks():
    route = TopicRouteData(
        (QueueData("broker-a", 1, 1), QueueData("broker-x", 1, 1), QueueData("broker-b", 1, 1)),
        (BrokerData("broker-a", ((0, "a:10911"),)), BrokerData("broker-b", ((0, "b:10911"),))),
    )
    assert [q.message_queue.broker_name for q in query_route(route, "T")] == ["broker-a"]


def test_the_balancer_takes_the_readable_master_queues_in_turn_and_keeps_its_place_across_an_update():
    simple = SimpleConsumerImpl("G", "c1", {"T": "*"}, random.Random(3))
    balancer = simple.update_subscription_load_balancer("T", query_route(_route(), "T"))
    assert [(mq.broker_name, mq.queue_id) for mq in balancer.message_queues] == [
        ("broker-a", 0), ("broker-a", 1), ("broker-a", 2), ("broker-a", 3), ("broker-b", 1), ("broker-b", 2)
    ]  # fmt: skip
    taken = [simple.take_message_queue("T") for _ in range(12)]
    assert taken[6:] == taken[:6] and set(taken) == set(balancer.message_queues)
    start = balancer.message_queues.index(taken[0])
    assert taken[:6] == [balancer.message_queues[(start + i) % 6] for i in range(6)]
    # a new route (broker-b gone) goes on from the same turn, over its own queues
    only_a = [q for q in query_route(_route(), "T") if q.message_queue.broker_name == "broker-a"]
    after = simple.update_subscription_load_balancer("T", only_a)
    assert after is not balancer and after.message_queues == balancer.message_queues[:4]
    assert simple.take_message_queue("T") == after.message_queues[(start + 12) % 4]


def test_the_turn_starts_at_random_and_the_same_seed_starts_it_at_the_same_place():
    def first(seed: int) -> MessageQueue:
        simple = SimpleConsumerImpl("G", "c1", {"T": "*"}, random.Random(seed))
        simple.update_subscription_load_balancer("T", query_route(_route(), "T"))
        return simple.take_message_queue("T")

    assert first(1) == first(1)
    assert len({first(seed) for seed in range(40)}) == 6


def test_receives_take_the_subscribed_topics_in_turn():
    simple = SimpleConsumerImpl("G", "c1", {"A": "*", "B": "TagB"}, random.Random(0))
    topics = [simple.next_topic() for _ in range(4)]
    assert topics[0] != topics[1] and topics[:2] == topics[2:]
    assert set(topics) == {("A", "*"), ("B", "TagB")}


def test_the_turn_over_topics_follows_the_order_a_java_hash_map_iterates_them():
    """#receive0 copies the subscriptions into a HashMap and takes its keys' list: TopicC, TopicB, TopicTest (see
    tests/test_protocol.py), whatever order they were subscribed in."""
    for subscribed in (["TopicTest", "TopicB", "TopicC"], ["TopicB", "TopicC", "TopicTest"]):
        simple = SimpleConsumerImpl("G", "c1", dict.fromkeys(subscribed, "*"), random.Random(3))
        turn = [simple.next_topic()[0] for _ in range(6)]
        start = turn.index("TopicC")
        assert (turn + turn)[start : start + 3] == ["TopicC", "TopicB", "TopicTest"]


def test_a_turn_past_javas_largest_int_wraps_as_an_atomic_integer_does():
    mqs = [RouteQueue(MessageQueue("T", "b", i), Permission.READ_WRITE, 0) for i in range(3)]
    simple = SimpleConsumerImpl("G", "c1", {"T": "*"}, random.Random(0))
    balancer = simple.update_subscription_load_balancer("T", mqs)
    balancer._turn.value = 2**31 - 1
    # 2147483647 mod 3 = 1; then -2147483648 mod 3 = 1 (IntMath.mod is never negative), -2147483647 mod 3 = 2
    assert [simple.take_message_queue("T").queue_id for _ in range(3)] == [1, 1, 2]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="no readable message queue"):
        SimpleConsumerImpl("G", "c1", {"T": "*"}, random.Random(0)).update_subscription_load_balancer(
            "T",
            [RouteQueue(MessageQueue("T", "b", 0), Permission.READ_WRITE, 1)],  # a slave's queue only
        )
    with pytest.raises(ValueError, match="no route of 'T'"):
        SimpleConsumerImpl("G", "c1", {"T": "*"}, random.Random(0)).take_message_queue("T")
    with pytest.raises(ValueError, match="no topic"):
        SimpleConsumerImpl("G", "c1", {}, random.Random(0)).next_topic()
    with pytest.raises(TypeError, match="route\\[0\\]"):
        SubscriptionLoadBalancer(["T"], None)  # type: ignore[list-item, arg-type]
    with pytest.raises(TypeError, match="subscriptions"):
        SimpleConsumerImpl("G", "c1", ["T"], random.Random(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rng"):
        SimpleConsumerImpl("G", "c1", {"T": "*"}, 7)  # type: ignore[arg-type]

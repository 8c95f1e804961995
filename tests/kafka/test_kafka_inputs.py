"""Bad input to the Kafka models gets a ValueError or TypeError that names the argument; absurd sizes are refused."""

import pytest

from support import time_limit

from rmqlib.kafka import ASSIGNORS, StickyAssignor, Subscription, TopicPartition, UniformAssignor
from rmqlib.kafka.types import MAX_MEMBERS, MAX_TOTAL_PARTITIONS


@pytest.mark.parametrize(
    "args, word",
    [
        (("", 0), "topic"),
        (("a b", 0), "topic"),
        ((".", 0), "topic"),
        (("x" * 250, 0), "topic"),
        ((3, 0), "topic"),
        (("t", -1), "partition"),
        (("t", 1.0), "partition"),
        (("t", True), "partition"),
        (("t", 10**9), "partition"),
    ],
)
def test_topic_partition_checks_its_fields(args, word):
    with pytest.raises((ValueError, TypeError), match=word):
        TopicPartition(*args)


def test_topic_partition_orders_and_prints_like_kafka():
    assert sorted([TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)]) == [
        TopicPartition("a", 2),
        TopicPartition("a", 10),
        TopicPartition("b", 0),
    ]
    assert str(TopicPartition("orders", 3)) == "orders-3"


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"topics": "t"}, "topics"),
        ({"topics": ["t", "t"]}, "topics"),
        ({"topics": ["t"], "owned_partitions": ["t-0"]}, "owned_partitions"),
        ({"topics": ["t"], "owned_partitions": [TopicPartition("t", 0)] * 2}, "owned_partitions"),
        ({"topics": ["t"], "generation": -2}, "generation"),
        ({"topics": ["t"], "generation": "1"}, "generation"),
        ({"topics": ["t"], "rack_id": 5}, "rack_id"),
        ({"topics": ["t"], "group_instance_id": ""}, "group_instance_id"),
    ],
)
def test_subscription_checks_its_fields(kwargs, word):
    with pytest.raises((ValueError, TypeError), match=word):
        Subscription(**kwargs)


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
@pytest.mark.parametrize(
    "ppt, subs, word",
    [
        ([("t", 3)], {"A": Subscription(["t"])}, "partitions_per_topic"),
        ({"t": -1}, {"A": Subscription(["t"])}, "partitions_per_topic"),
        ({"t": 3}, {"A": ["t"]}, "subscriptions"),
        ({"t": 3}, {"": Subscription(["t"])}, "subscriptions"),
        ({"t": 3}, {"A": Subscription(["t"], [TopicPartition("t", 5)])}, "owned_partitions"),
        ({"t": MAX_TOTAL_PARTITIONS + 1}, {"A": Subscription(["t"])}, "partitions_per_topic"),
    ],
)
def test_assign_names_the_bad_argument(name, ppt, subs, word):
    if word == "owned_partitions" and name in ("uniform", "server-range"):
        return  # KIP-848's assignors read the coordinator's previous assignment, never a member's claim
    with pytest.raises((ValueError, TypeError), match=word):
        ASSIGNORS[name]().assign(ppt, subs)


@pytest.mark.parametrize(
    "previous, word",
    [
        ({"A": [TopicPartition("t", 0)], "B": [TopicPartition("t", 0)]}, "both"),
        ({"A": ["t-0"]}, "previous"),
        ({"A": [TopicPartition("t", 9)]}, "previous"),
        ([("A", [])], "previous"),
    ],
)
def test_server_assignors_check_the_previous_assignment(previous, word):
    subs = {"A": Subscription(["t"]), "B": Subscription(["t"])}
    for name in ("uniform", "server-range"):
        with pytest.raises((ValueError, TypeError), match=word):
            ASSIGNORS[name]().assign({"t": 3}, subs, previous)


def test_too_many_members_is_refused_before_any_work():
    subs = {f"m{i}": Subscription(["t"]) for i in range(MAX_MEMBERS + 1)}
    with pytest.raises(ValueError, match="subscriptions"):
        UniformAssignor().assign({"t": 1}, subs)


def test_the_general_sticky_path_refuses_work_it_could_not_finish():
    subs = {f"m{i}": Subscription(["t"] if i % 2 else ["t", "u"]) for i in range(200)}
    with pytest.raises(ValueError, match="general sticky"):
        StickyAssignor().assign({"t": 1000, "u": 1000}, subs)


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_largest_identical_group_finishes(name):
    subs = {f"consumer-{i}": Subscription(["t", "u"]) for i in range(2000)}
    with time_limit(20):
        got = ASSIGNORS[name]().assign({"t": 50_000, "u": 50_000}, subs)
    assert sum(len(v) for v in got.values()) == 100_000


def test_largest_mixed_sticky_group_finishes():
    subs = {f"m{i}": Subscription(["t"] if i % 3 else ["t", "u"]) for i in range(60)}
    with time_limit(20):
        got = StickyAssignor().assign({"t": 2500, "u": 1500}, subs)
    assert sum(len(v) for v in got.values()) == 4000


def test_topic_partition_pickles_without_its_cached_hash():
    import pickle
    import subprocess
    import sys

    data = pickle.dumps({TopicPartition("orders", 7): "x"})
    code = (
        "import pickle, sys; from rmqlib.kafka import TopicPartition as T; "
        "d = pickle.loads(sys.stdin.buffer.read()); print(d[T('orders', 7)])"
    )
    done = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True)
    assert done.stdout.strip() == b"x"  # another process, another str hash seed: the key is still found

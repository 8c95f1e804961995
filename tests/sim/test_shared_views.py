"""SharedViews: what the simulated consumers share gives each of them exactly what its own computation gives."""

import random

import pytest

from rmqlib.model import INT_MAX, MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.sim.shared_views import SharedViews
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueConsistentHash,
)


def queues(n, brokers=("broker-b", "broker-a")):
    return {MessageQueue("T", b, i) for b in brokers for i in range(n)}


def cids(n):
    return [f"10.0.0.{i}@{i}" for i in range(n)]


@pytest.mark.parametrize(
    "strategy",
    [AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle(), AllocateMessageQueueConsistentHash(5)],
)
def test_every_consumer_gets_what_its_own_allocate_gives(strategy):
    views, rng = SharedViews(), random.Random(3)
    for _ in range(5):
        mq_set, members = queues(rng.randrange(1, 12)), cids(rng.randrange(1, 9))
        rng.shuffle(members)
        for cid in members + ["stranger@1"]:
            mq_all, cid_all = views.sorted_mqs(set(mq_set)), views.sorted_cids(list(members))
            assert mq_all == java_sorted_mqs(mq_set) and cid_all == java_sorted_cids(members)
            expected = strategy.allocate("G", cid, java_sorted_mqs(mq_set), java_sorted_cids(members))
            assert views.allocate(strategy, "G", cid, mq_all, cid_all) == expected


def test_equal_views_share_one_sorted_list_and_one_whole_group_answer():
    views, strategy = SharedViews(), AllocateMessageQueueAveragely()
    a, b = views.sorted_mqs(queues(4)), views.sorted_mqs(set(queues(4)))
    assert a is b
    c1, c2 = views.sorted_cids(cids(3)), views.sorted_cids(cids(3)[::-1])
    assert c1 is not c2 and c1 == c2  # member lists differ in order: each is its own view
    views.allocate(strategy, "G", cids(3)[0], a, c1)
    views.allocate(strategy, "G", cids(3)[1], a, c1)
    assert len(views._groups) == 1


def test_overflowing_queue_ids_are_sorted_for_each_caller():
    views = SharedViews()
    mqs = {MessageQueue("T", "b", -5), MessageQueue("T", "b", INT_MAX), MessageQueue("T", "b", 0)}
    first, second = views.sorted_mqs(mqs), views.sorted_mqs(mqs)
    assert first == java_sorted_mqs(mqs) and first is not second and views._mqs == {}


def test_a_strategy_that_refuses_the_view_raises_for_each_caller_as_its_own_call_would():
    views, strategy = SharedViews(), AllocateMessageQueueAveragely()
    mq_all, cid_all = views.sorted_mqs(queues(2)), views.sorted_cids(cids(2))
    with pytest.raises(ValueError):
        views.allocate(strategy, "G", "", mq_all, cid_all)


def test_unlisted_strategies_and_lists_from_elsewhere_go_straight_to_allocate():
    views = SharedViews()
    calls = []

    class Counting(AllocateMessageQueueAveragely):
        def allocate(self, *args):
            calls.append(args[1])
            return super().allocate(*args)

    mq_all, cid_all = views.sorted_mqs(queues(3)), views.sorted_cids(cids(2))
    views.allocate(Counting(), "G", cids(2)[0], mq_all, cid_all)
    views.allocate(AllocateMessageQueueAveragely(), "G", cids(2)[0], list(mq_all), cid_all)
    assert calls == [cids(2)[0]] and views._groups == {}


def test_a_view_one_consumer_asks_about_costs_no_whole_group_answer():
    views, strategy = SharedViews(), AllocateMessageQueueAveragely()
    wholes = []
    original = strategy.allocate_all
    strategy.allocate_all = lambda *args: wholes.append(args) or original(*args)
    mq_all, members = views.sorted_mqs(queues(6)), views.sorted_cids(cids(3))
    first = views.allocate(strategy, "G", members[0], mq_all, members)
    assert wholes == []  # one consumer so far: its own allocate
    second = views.allocate(strategy, "G", members[1], mq_all, members)
    third = views.allocate(strategy, "G", members[2], mq_all, members)
    assert len(wholes) == 1  # from the second on, one whole-group answer serves everyone
    assert [first, second, third] == [
        strategy.allocate("G", c, java_sorted_mqs(queues(6)), java_sorted_cids(cids(3))) for c in members
    ]


def test_a_route_version_gives_every_consumer_one_frozenset_that_its_table_keeps():
    from rmqlib.client import RebalanceImpl
    from rmqlib.client.fake_api import InMemoryClientBrokerAPI
    from rmqlib.namesrv import BrokerData, QueueData, TopicRouteData
    from rmqlib.sim.routes import Routes

    route = TopicRouteData(
        queue_datas=(QueueData("broker-a", 3, 3), QueueData("broker-b", 2, 2)),
        broker_datas=(BrokerData("broker-a", ((0, "a:10911"),)), BrokerData("broker-b", ((0, "b:10911"),))),
    )
    views = SharedViews()
    got = views.subscribe_queues("T", route, Routes.ordered)
    assert type(got) is frozenset and views.subscribe_queues("T", route, Routes.ordered) is got
    assert got == {MessageQueue("T", b, i) for b, n in (("broker-a", 3), ("broker-b", 2)) for i in range(n)}
    impls = [RebalanceImpl("G", f"c@{i}", InMemoryClientBrokerAPI(), AllocateMessageQueueAveragely()) for i in range(2)]
    for impl in impls:
        impl.subscribe("T", "*", 0)
        impl.update_topic_subscribe_info("T", got)
    assert all(impl.topic_subscribe_info_table["T"] is got for impl in impls)
    sorted_once = views.sorted_mqs(got)
    assert views.sorted_mqs(impls[1].topic_subscribe_info_table["T"]) is sorted_once == java_sorted_mqs(got)
    impls[0].update_topic_subscribe_info("T", list(got))  # anything but a frozenset: a set of its own, as before
    assert type(impls[0].topic_subscribe_info_table["T"]) is set


def test_old_views_answers_are_dropped_and_computed_again_alike():
    from rmqlib.sim.shared_views import MAX_GROUP_ANSWERS

    views, strategy = SharedViews(), AllocateMessageQueueAveragely()
    mq_all = views.sorted_mqs(queues(5))
    member_lists = [views.sorted_cids(cids(2 + k)) for k in range(MAX_GROUP_ANSWERS + 3)]
    first_answers = [
        [views.allocate(strategy, "G", cid, mq_all, members) for cid in members] for members in member_lists
    ]
    assert len(views._groups) == MAX_GROUP_ANSWERS
    again = [views.allocate(strategy, "G", cid, mq_all, member_lists[0]) for cid in member_lists[0]]
    assert (
        again
        == first_answers[0]
        == [strategy.allocate("G", cid, list(mq_all), list(member_lists[0])) for cid in member_lists[0]]
    )

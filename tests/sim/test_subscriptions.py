"""Tags, tag subscriptions and per-consumer topics in the simulator: who gets what when a group's members agree or
not."""

from collections import Counter
from functools import cache

import pytest

from rmqlib.broker.query_assignment import QueryAssignmentProcessor
from rmqlib.model import MessageQueue
from rmqlib.sim import BrokerOutage, ConsumerSpec, Scenario, scenarios, simulate
from rmqlib.sim.kafka_group import simulate_kafka_group
from rmqlib.sim.scenarios import client_ids

SHORT = dict(duration_ms=30_000, drain_ms=20_000)


def group(*subscriptions: str) -> tuple[ConsumerSpec, ...]:
    return tuple(ConsumerSpec(cid, subscription=sub) for cid, sub in zip(client_ids(len(subscriptions)), subscriptions))


@cache
def run(seed: int = 1, **overrides):
    return simulate(scenarios.mixed_subscriptions(**SHORT, **overrides), seed=seed)


def consumed_tags(result) -> dict[str, Counter]:
    """Per consumer, the tags of the messages its listener got (offset o of a queue carries tags[o % len(tags)]
    when no send was retried on another queue)."""
    tags = result.scenario.message_tags
    by_consumer: dict[str, Counter] = {}
    for batches in result.consumption.values():
        for batch in batches:
            for offset in batch.offsets:
                by_consumer.setdefault(batch.consumer, Counter())[tags[offset % len(tags)]] += 1
    assert by_consumer, "some listener got messages"
    return by_consumer


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (dict(message_tags=("TagA", "TagA")), "message_tags"),
        (dict(message_tags=("Tag A",)), "message_tags"),
        (dict(message_tags=("",)), "message_tags"),
        (dict(message_tags=tuple(f"T{i}" for i in range(65))), "message_tags"),
        (dict(message_tags="TagA"), "message_tags"),
        (dict(consumers=group("TagA", " || ")), "consumers"),
        (dict(consumers=group("TagA", None)), "consumers"),
        (dict(consumers=(ConsumerSpec("c1", topics=("TopicOrders",)),)), "consumers"),
        (dict(consumers=(ConsumerSpec("c1", topics=()),)), "consumers"),
        (dict(consumers=(ConsumerSpec("c1", topics=("TopicTest", "TopicTest")),)), "consumers"),
        (dict(consumers=(ConsumerSpec("c1", topics="TopicTest"),)), "consumers"),
    ],
)
def test_bad_tags_and_subscriptions_are_refused_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=rf"^Scenario\.{field}:"):
        Scenario(**changes)


def test_a_list_of_tags_is_kept_as_a_tuple():
    assert Scenario(message_tags=["TagA", "TagB"]).message_tags == ("TagA", "TagB")


@pytest.mark.parametrize("name", ["mixed_subscriptions", "mixed_topics"])
def test_the_kafka_group_model_refuses_tags_and_per_consumer_topics(name):
    with pytest.raises(ValueError, match="scenario.message_tags/consumers"):
        simulate_kafka_group(scenarios.ALL[name]())


def test_what_a_group_subscribes_to():
    two = {"TopicTest": 4, "TopicOrders": 2}
    assert Scenario(consumers=group("TagA", "TagB || TagA")).tags_taken("TopicTest") == {"TagA", "TagB"}
    assert Scenario(consumers=group("TagA", "*")).tags_taken("TopicTest") is None
    only_orders = (ConsumerSpec("c1", topics=("TopicOrders",)), ConsumerSpec("c2", topics=["TopicOrders"]))
    assert Scenario(topics=two, consumers=only_orders).tags_taken("TopicTest") == frozenset()
    assert Scenario(topics=two, consumers=only_orders).consumers[1].topics == ("TopicOrders",)
    assert Scenario(consumers=group("TagA || TagB", "TagB||TagA")).subscriptions_agree
    assert not Scenario(consumers=group("TagA", "TagA || TagB")).subscriptions_agree
    assert not Scenario(
        topics=two, consumers=(ConsumerSpec("c1", topics=("TopicTest",)), ConsumerSpec("c2"))
    ).subscriptions_agree
    assert Scenario(
        topics=two, consumers=(ConsumerSpec("c1", topics=("TopicOrders", "TopicTest")), ConsumerSpec("c2"))
    ).subscriptions_agree
    assert not Scenario().narrows_subscriptions and Scenario(message_tags=("TagA",)).narrows_subscriptions
    assert Scenario(consumers=group("TagA", "TagA")).narrows_subscriptions
    assert Scenario(consumers=(ConsumerSpec("c1", topics=("TopicTest",)),)).narrows_subscriptions


def test_untagged_runs_record_no_tags_and_filter_nothing():
    result = simulate(scenarios.steady_state(**SHORT), seed=1)
    assert result.message_tags is None and result.unsubscribed == frozenset()
    assert result.tag_of(0) is None
    assert not [key for key in result.counters if key.startswith("filtered")]
    assert result.events_of("subscription") == []


def test_each_queue_takes_the_tags_in_turn_and_a_group_that_agrees_gets_exactly_its_tags():
    tags = ("TagA", "TagB", "TagC")
    result = run(message_tags=tags, consumers=group("TagA || TagC", "TagC||TagA", "TagA||TagC", " TagC || TagA "))
    assert result.lost == [] and result.offset_violations == [] and sum(result.unconsumed().values()) == 0
    wanted = {mid for mid in result.delivered if result.tag_of(mid) in ("TagA", "TagC")}
    assert {mid for mid, n in result.delivered.items() if n} == wanted
    assert result.unsubscribed == set(result.delivered) - wanted  # the TagB messages, not meant for the group
    assert 0.3 < len(result.unsubscribed) / result.produced < 0.37
    # every consumed offset o of a queue carries tags[o % 3]: the queue's messages took the tags in turn
    assert set().union(*consumed_tags(result).values()) == {"TagA", "TagC"}
    assert result.counters["filtered by broker"] >= len(result.unsubscribed)
    assert "filtered by client" not in result.counters  # the broker already filtered by the same tags


def test_members_that_disagree_consume_only_what_the_brokers_last_subscription_and_their_own_both_take():
    result = run()
    final = {change.broker: change.expression for change in result.subscription_changes()}
    assert set(final) == {"broker-a", "broker-b"} and len(set(final.values())) == 1
    stored_tag = final["broker-a"]
    winners = {s.client_id for s in result.scenario.consumers if s.subscription == stored_tag}
    got = consumed_tags(result)
    assert {cid for cid, tags in got.items() if sum(tags.values())} == winners
    assert all(set(tags) == {stored_tag} for tags in got.values())
    # the winners' queues lose the other tag at the broker; the losers' queues lose everything
    delivered = {mid for mid, n in result.delivered.items() if n}
    assert result.unsubscribed == frozenset() and set(result.lost) == set(result.delivered) - delivered
    assert 0.7 < len(result.lost) / result.produced < 0.8
    assert sum(result.unconsumed().values()) == len(result.lost)
    filtered = result.counters["filtered by broker"] + result.counters["filtered by client"]
    assert filtered >= len(result.lost) and result.counters["filtered by client"] > 0
    assert result.offset_violations == []  # a commit may pass what a filter skipped


def test_the_group_subscription_flips_to_whichever_member_changed_its_queues_last():
    """RebalancePushImpl#messageQueueChanged versions a member's subscription anew and heartbeats it; a broker's
    ConsumerGroupInfo keeps the newest version, so the group's expression changes with each member's round."""
    result = run()
    changes = result.subscription_changes("broker-a")
    assert len(changes) >= 3 and {c.broker for c in changes} == {"broker-a"}
    expressions = [c.expression for c in changes]
    assert all(a != b for a, b in zip(expressions, expressions[1:]))  # logged only when the expression changes
    assert set(expressions) == {"TagA", "TagB"}
    subscription_of = {spec.client_id: spec.subscription for spec in result.scenario.consumers}
    assert all(subscription_of[c.sender] == c.expression for c in changes)  # the sender's own expression wins
    assert len(result.subscription_changes()) == len(result.events_of("subscription"))


def test_in_broadcasting_the_members_whose_tag_lost_get_nothing():
    result = run(message_model="BROADCASTING")
    got = consumed_tags(result)
    takers = {cid for cid, tags in got.items() if sum(tags.values())}
    assert len(takers) == 2 and len({s.subscription for s in result.scenario.consumers if s.client_id in takers}) == 1
    assert 0.45 < len(result.lost) / result.produced < 0.55  # the other tag: nobody got it


def test_sends_retried_elsewhere_keep_their_tag():
    sc = scenarios.broker_outage(message_tags=("TagA", "TagB"), consumers=group(*["TagA"] * 4))
    result = simulate(sc, seed=1)
    assert result.counters["sent_elsewhere"] > 0
    assert result.lost == [] and result.offset_violations == []
    tags = Counter(result.tag_of(mid) for mid in result.delivered)
    assert abs(tags["TagA"] - tags["TagB"]) <= len(sc.brokers) * sum(sc.topics.values())  # about half each
    assert all(result.tag_of(mid) == "TagA" for mid, n in result.delivered.items() if n)


def test_a_tag_subscription_without_tagged_messages_takes_nothing():
    result = run(message_tags=(), consumers=group("TagA", "TagA"))
    assert sum(result.delivered.values()) == 0 and result.lost == []
    assert len(result.unsubscribed) == result.produced > 0


@pytest.mark.parametrize("seed", (1, 2))
def test_tagged_runs_are_deterministic(seed):
    a = simulate(scenarios.mixed_subscriptions(**SHORT), seed=seed)
    b = simulate(scenarios.mixed_subscriptions(**SHORT), seed=seed)
    assert a.delivered == b.delivered and a.events == b.events and a.message_tags == b.message_tags


def test_tag_of_names_the_argument():
    with pytest.raises(ValueError, match="message_id"):
        run().tag_of(-1)


def topic_of(queue: str) -> str:
    """The topic of a queue as a result names it (MessageQueue's Java toString)."""
    return queue.split("topic=")[1].split(",")[0]


def consumed_topics(result) -> dict[str, set[str]]:
    """Per consumer, the topics of the queues its listener consumed from."""
    topics: dict[str, set[str]] = {}
    for queue, batches in result.consumption.items():
        for batch in batches:
            topics.setdefault(batch.consumer, set()).add(topic_of(queue))
    return topics


@cache
def topics_run(agree: bool = False):
    overrides = dict(duration_ms=90_000, drain_ms=20_000)
    if agree:
        overrides["consumers"] = tuple(ConsumerSpec(cid) for cid in client_ids(4))
    return simulate(scenarios.mixed_topics(**overrides), seed=1)


def test_members_on_different_topics_each_read_only_their_share_of_their_topic():
    result = topics_run()
    specs = {s.client_id: s for s in result.scenario.consumers}
    got = consumed_topics(result)
    assert {cid: set(specs[cid].topics) for cid in got} == got and len(got) == 4
    # each topic's queues are dealt over all four members, so the two that do not subscribe to it leave half
    assert 0.45 < len(result.lost) / result.produced < 0.55 and result.unsubscribed == frozenset()
    assert sum(result.unconsumed().values()) == len(result.lost) and result.offset_violations == []


def test_members_on_different_topics_rewrite_the_groups_topics_at_every_heartbeat():
    """ConsumerGroupInfo#updateSubscription drops the topics a heartbeat leaves out and reports a change, so every
    heartbeat of the other pair takes a topic out, notifies every member, and pulls of it are refused meanwhile."""
    result, agreed = topics_run(), topics_run(agree=True)
    removed = [c for c in result.subscription_changes() if c.expression == "none"]
    settled = result.scenario.produce_start_ms
    assert removed and max(e.time_ms for e in removed) > 60_000  # heartbeats every 30 s go on doing it
    assert [e for e in result.events_of("notify") if e.time_ms > settled]  # and rounds keep coming
    assert not [e for e in agreed.events_of("notify") if e.time_ms > settled]
    assert result.counters["pulls refused: SUBSCRIPTION_NOT_EXIST"] > 0
    assert agreed.lost == [] and not [key for key in agreed.counters if key.startswith("pulls refused")]


# ---- Pop: each pop carries its member's own expression ----------------------------------------------------------
POP_BURSTS = dict(consume_mode="POP", produce_batch_ms=1000)  # a queue's ten messages of a second arrive together


def delivered_tags(result) -> Counter:
    """The tags of the messages some listener got (a Pop run keeps no per-queue consumption log)."""
    return Counter(result.tag_of(mid) for mid, count in result.delivered.items() if count)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_pop_group_whose_members_take_different_tags_loses_what_the_first_pop_to_reach_it_does_not_want(seed):
    """Every member pops every queue; a pop takes the messages its own expression takes and moves the group's offset
    past the rest (addCkMock), so each burst's other tag is gone: half the messages, whoever pops first. Unlike the
    push group (question 33), no expression wins: every member consumes, and both tags are consumed alike."""
    result = run(seed=seed, **POP_BURSTS)
    assert len(result.lost) == result.produced // 2 and not result.unsubscribed and result.duplicates == 0
    assert all(n > 0 for n in result.consumed_by().values()) and len(result.consumed_by()) == 4
    assert delivered_tags(result) == {"TagA": result.produced // 4, "TagB": result.produced // 4}
    assert result.counters.get("filtered by client", 0) == 0  # the broker filtered by the pop's expression already


def test_a_pop_group_whose_members_agree_on_their_tags_loses_nothing():
    result = run(consumers=group(*["TagA || TagB"] * 4), **POP_BURSTS)
    assert result.produced > 0 and not result.lost and result.duplicates == 0
    assert sum(delivered_tags(result).values()) == result.produced


def test_a_pop_group_that_takes_one_tag_leaves_the_other_unsubscribed_not_lost():
    result = run(consumers=group(*["TagA"] * 4), **POP_BURSTS)
    assert len(result.unsubscribed) == result.produced // 2 and not result.lost
    assert delivered_tags(result) == {"TagA": result.produced // 2}


# ---- Pop with per-consumer topics: the broker pops by the pop's own topic ---------------------------------------
@cache
def pop_topics_run(pop_share_queue_num: int = -1):
    overrides = dict(duration_ms=90_000, drain_ms=20_000, pop_share_queue_num=pop_share_queue_num)
    return simulate(scenarios.mixed_topics(consume_mode="POP", **overrides), seed=1)


def test_a_pop_group_on_different_topics_reads_each_topic_in_full_by_its_own_members():
    """A pop names its topic and expression, and the broker pops without looking up the group's registered topics
    (it adds the pop's to them instead), so no pop is refused; by default every member pops every queue of the
    topics it subscribes to. The heartbeats still swap the group's topics and notify every member, as with pulls."""
    result = pop_topics_run()
    assert result.produced > 0 and not result.lost and not result.unsubscribed and result.duplicates == 0
    stored = Counter()
    for queue, n in result.stored.items():
        stored[topic_of(queue)] += n
    consumed = Counter()
    for spec in result.scenario.consumers:
        consumed[spec.topics[0]] += result.consumed_by()[spec.client_id]
    assert consumed == stored and len(stored) == 2
    assert all(n > 0 for n in result.consumed_by().values())
    assert "pops_failed" not in result.counters
    settled = result.scenario.produce_start_ms
    assert [c for c in result.subscription_changes() if c.expression == "none" and c.time_ms > settled]
    assert [e for e in result.events_of("notify") if e.time_ms > settled]


def test_a_pop_group_on_different_topics_sharing_queues_leaves_the_shares_dealt_to_members_without_the_topic():
    """With popShareQueueNum 1 the broker deals each topic's queues over every member of the group, as a pull group's
    rebalance does (allocate4Pop), each member taking its own share and its neighbour's: the shares that only
    members without the topic hold are never read."""
    result = pop_topics_run(pop_share_queue_num=1)
    sc = result.scenario
    members = sorted(spec.client_id for spec in sc.consumers)
    unread = set()
    for topic, queues in sc.topics.items():
        mq_all = sorted(MessageQueue(topic, broker, q) for broker in sc.brokers for q in range(queues))
        read = {
            mq
            for spec in sc.consumers
            if topic in spec.topics
            for mq in QueryAssignmentProcessor.allocate_for_pop(
                "AVG", sc.consumer_group, spec.client_id, mq_all, members, 1
            )
        }
        unread |= {str(mq) for mq in mq_all if mq not in read}
    assert len(unread) == 4 and set(result.unconsumed()) == unread
    assert sum(result.unconsumed().values()) == len(result.lost) and result.duplicates == 0


# ---- useHeartbeatV2: a heartbeat whose fingerprint a broker took leaves the subscriptions out --------------------
def test_with_heartbeat_v2_a_settled_group_sends_bare_heartbeats_and_consumes_as_before():
    first_way = simulate(scenarios.steady_state(**SHORT), seed=1)
    second_way = simulate(scenarios.steady_state(use_heartbeat_v2=True, **SHORT), seed=1)
    assert second_way.counters["heartbeats without subscriptions"] > 0
    assert "heartbeats without subscriptions" not in first_way.counters
    assert second_way.consumed_by() == first_way.consumed_by() and second_way.lost == first_way.lost == []
    assert len(second_way.events_of("notify")) == len(first_way.events_of("notify"))


def test_heartbeat_v2_thins_but_does_not_stop_the_churn_of_members_on_different_topics():
    """The broker keeps one fingerprint per group, so members with other topics keep answering each other
    sub_change and most heartbeats still carry the subscriptions; a bare one leaves the group's topics as they are,
    which skips a swap now and then."""
    first_way = topics_run()
    second_way = simulate(scenarios.mixed_topics(duration_ms=90_000, drain_ms=20_000, use_heartbeat_v2=True), seed=1)
    settled = first_way.scenario.produce_start_ms
    late = [len([e for e in r.events_of("notify") if e.time_ms > settled]) for r in (first_way, second_way)]
    assert 0 < late[1] < late[0]
    assert second_way.counters["heartbeats without subscriptions"] > 0
    assert second_way.counters["pulls refused: SUBSCRIPTION_NOT_EXIST"] > 0
    assert 0.45 < len(second_way.lost) / second_way.produced < 0.55


def test_with_heartbeat_v2_a_broker_restart_shorter_than_a_route_poll_can_leave_a_member_refused_for_good():
    """What the model predicts from the Java read at 8fc57f14: a 5 s restart changes nobody's queues through the
    routes, and the members' tables still hold the restarted broker's fingerprint, so they send it bare heartbeats.
    The one full heartbeat it gets (a member whose queues changed as the group re-formed there) sets the group's
    subscription version to that member's; a member whose own version is newer has every pull of that broker refused
    SUBSCRIPTION_NOT_LATEST, and nothing sends that broker its subscriptions again while its queues stay put. With
    the first way every heartbeat carries them, and nothing is refused."""
    outage = (BrokerOutage("broker-b", 70_000, 75_000),)
    first_way = simulate(scenarios.broker_outage(outages=outage), seed=11)
    second_way = simulate(scenarios.broker_outage(outages=outage, use_heartbeat_v2=True), seed=11)
    assert first_way.lost == [] and not [key for key in first_way.counters if key.startswith("pulls refused")]
    assert second_way.counters["pulls refused: SUBSCRIPTION_NOT_LATEST"] > 100 and second_way.lost
    assert second_way.unconsumed() and all("brokerName=broker-b" in queue for queue in second_way.unconsumed())

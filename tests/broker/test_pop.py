"""Pop mode on the broker: server-side allocation (QUERY_ASSIGNMENT), pop/ack/change-invisible-time, revive."""

import random

import pytest

from rmqlib.broker import (
    POP_ORDER_REVIVE_QUEUE,
    SERVER_SIDE_STRATEGIES,
    AckHandle,
    BrokerConfig,
    ClientChannelInfo,
    ConsumeInitMode,
    ConsumerManager,
    MessageRequestMode,
    MessageStore,
    PopLongPollingService,
    PopMessageProcessor,
    PopReviveService,
    QueryAssignmentProcessor,
    ResponseCode,
    SubscriptionData,
    build_pop_retry_topic,
)
from rmqlib.model import MessageQueue

RETRY = "%RETRY%G_T"


def setup(n=0, queues=2, prob=20, seed=0):
    config = BrokerConfig(pop_from_retry_probability=prob)
    store = MessageStore(config)
    store.create_topic("T", queues)
    for i in range(n):
        store.put_message("T", i % queues, now_ms=0)
    store.reput(0)
    pop = PopMessageProcessor(store, config, random.Random(seed))
    return store, pop, PopReviveService(pop)


# ---- allocation ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["AVG", "AVG_BY_CIRCLE"])
def test_allocate_for_pop_sizes_like_java_test(name):
    fn = SERVER_SIDE_STRATEGIES[name]
    # QueryAssignmentProcessorTest#testAllocate4Pop, for the two server-side strategies
    for mq_size in range(1, 17):
        mq_all = [MessageQueue("T", "b", i) for i in range(mq_size)]
        for cid_size in range(1, 17):
            cid_all = [str(i) for i in range(cid_size)]
            for share in range(16):
                for cid in cid_all:
                    n = len(QueryAssignmentProcessor.allocate_for_pop(fn, "G", cid, mq_all, cid_all, share))
                    assert 0 < n <= mq_size
                    if share <= 0 or share >= cid_size - 1:
                        assert n == mq_size
                    elif mq_size < cid_size:
                        assert n == 1
                    elif mq_size % cid_size == 0:
                        assert n == mq_size // cid_size * (share + 1)
                    else:
                        avg = mq_size // cid_size
                        assert avg * (share + 1) <= n <= (avg + 1) * (share + 1)


def test_allocate_for_pop_share_everything_gives_queue_id_minus_one_per_broker():
    mq_all = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(4)]
    got = set(QueryAssignmentProcessor.allocate_for_pop("AVG", "G", "c1", mq_all, ["c1", "c2"], -1))
    assert got == {MessageQueue("T", "a", -1), MessageQueue("T", "b", -1)}


def test_allocate_for_pop_own_share_plus_next_cids_on_the_ring():
    mq_all = [MessageQueue("T", "b", i) for i in range(6)]
    cids = ["c0", "c1", "c2"]
    got = QueryAssignmentProcessor.allocate_for_pop("AVG", "G", "c2", mq_all, cids, 1)
    assert [mq.queue_id for mq in got] == [4, 5, 0, 1]


def test_allocate_for_pop_more_cids_than_queues_gives_index_mod_queues():
    mq_all = [MessageQueue("T", "b", i) for i in range(2)]
    cids = [f"c{i}" for i in range(5)]
    got = QueryAssignmentProcessor.allocate_for_pop("AVG", "G", "c3", mq_all, cids, 1)
    assert [mq.queue_id for mq in got] == [1]


def _qap(clients, mode=None, share=-1, route=None):
    cm = ConsumerManager()
    for i, cid in enumerate(clients):
        cm.register_consumer(
            "G",
            ClientChannelInfo(f"ch{i}", cid),
            "CONSUME_PASSIVELY",
            "CLUSTERING",
            "CONSUME_FROM_LAST_OFFSET",
            [SubscriptionData("T")],
            True,
            0,
        )
    route = route or {"T": [MessageQueue("T", "b", i) for i in range(4)]}
    qap = QueryAssignmentProcessor(cm, route)
    if mode:
        assert qap.set_message_request_mode("T", "G", mode, share) is ResponseCode.SUCCESS
    return qap


def test_query_assignment_pull_mode_is_avg_over_sorted_cids():
    qap = _qap(["10.0.0.2@x", "10.0.0.1@x"])
    got = qap.query_assignment("T", "G", "10.0.0.1@x", "AVG", "CLUSTERING")
    assert {a.message_queue.queue_id for a in got} == {0, 1}
    assert {a.mode for a in got} == {MessageRequestMode.PULL}


def test_query_assignment_takes_the_request_bodys_order_as_the_client_sends_it():
    """QueryAssignmentRequestBody: topic, group, client id, strategy name, message model (the client API's order);
    doLoadBalance takes the model before the strategy. Swapped, the model is refused by name."""
    qap = _qap(["10.0.0.1@x"])
    assert qap.query_assignment("T", "G", "10.0.0.1@x", "AVG", "CLUSTERING")
    with pytest.raises(ValueError, match="message_model"):
        qap.query_assignment("T", "G", "10.0.0.1@x", "CLUSTERING", "AVG")
    assert qap.do_load_balance("T", "G", "10.0.0.1@x", "CLUSTERING", "AVG")


def test_query_assignment_pop_mode_default_share_gives_whole_topic():
    qap = _qap(["a", "b"], mode="POP", share=-1)
    got = qap.query_assignment("T", "G", "a", "AVG_BY_CIRCLE", "CLUSTERING")
    assert {a.message_queue for a in got} == {MessageQueue("T", "b", -1)}
    assert {a.mode for a in got} == {MessageRequestMode.POP}


def test_query_assignment_unknown_strategy_or_topic_or_group_is_none():
    qap = _qap(["a"])
    assert qap.do_load_balance("T", "G", "a", "CLUSTERING", "CONSISTENT_HASH") is None
    assert qap.do_load_balance("nope", "G", "a", "CLUSTERING", "AVG") is None
    assert qap.do_load_balance("T", "nogroup", "a", "CLUSTERING", "AVG") is None
    assert qap.do_load_balance("T", "G", "stranger", "CLUSTERING", "AVG") == set()
    assert len(qap.do_load_balance("T", "G", "a", "BROADCASTING", "AVG")) == 4


def test_set_mode_on_retry_topic_is_refused():
    qap = _qap(["a"])
    assert qap.set_message_request_mode("%RETRY%G", "G", "POP") is ResponseCode.NO_PERMISSION
    assert qap.get_message_request_mode("%RETRY%G", "G")[0] is MessageRequestMode.PULL


# ---- pop / ack / revive ---------------------------------------------------------


def test_pop_advances_offset_at_pop_time_and_writes_a_checkpoint():
    store, pop, _ = setup(6, queues=1, prob=0)
    r = pop.pop("G", "T", 0, 4, 60_000, now_ms=100)
    assert r.code is ResponseCode.SUCCESS
    assert [m.message.queue_offset for m in r.messages] == [0, 1, 2, 3]
    assert store.query_offset("G", "T", 0) == 4
    [ck] = pop.checkpoints.values()
    assert (ck.start_offset, ck.pop_time, ck.invisible_time, ck.queue_offset_diff) == (0, 100, 60_000, [0, 1, 2, 3])
    r2 = pop.pop("G", "T", 0, 32, 60_000, now_ms=101)
    assert [m.message.queue_offset for m in r2.messages] == [4, 5]
    pop._check()


def test_pop_more_than_32_is_invalid_parameter():
    store, pop, _ = setup(1)
    assert pop.pop("G", "T", 0, 33, 60_000, 0).code is ResponseCode.INVALID_PARAMETER


def test_pop_empty_answers_polling_timeout_and_bad_topic_queue_codes():
    store, pop, _ = setup(0)
    assert pop.pop("G", "T", -1, 32, 60_000, 0).code is ResponseCode.POLLING_TIMEOUT
    assert pop.pop("G", "X", 0, 32, 60_000, 0).code is ResponseCode.TOPIC_NOT_EXIST
    assert pop.pop("G", "T", 2, 32, 60_000, 0).code is ResponseCode.INVALID_PARAMETER


def test_a_topic_config_decides_which_queues_a_broker_pops_and_acks():
    """With the broker's topic config, a pop reads its read queues as they are now: after the count shrinks from 4
    to 2, queue-id -1 scans queues 0 and 1 only, queue 2 is an illegal queue id and an ack of a message popped
    from queue 3 is refused (MESSAGE_ILLEGAL); after the topic is dropped, pops and acks find no topic."""
    config = BrokerConfig(pop_from_retry_probability=0)
    store = MessageStore(config)
    store.create_topic("T", 4)
    for i in range(8):
        store.put_message("T", i % 4, now_ms=0)
    store.reput(0)
    topic_config = {"T": (4, 4)}
    pop = PopMessageProcessor(store, config, random.Random(0), topic_config)
    [popped] = pop.pop("G", "T", 3, 1, 60_000, 1).messages
    topic_config["T"] = (2, 2)
    got = pop.pop("G", "T", -1, 32, 60_000, 2).messages
    assert sorted(m.message.queue_id for m in got) == [0, 0, 1, 1]
    assert pop.pop("G", "T", 2, 32, 60_000, 3).code is ResponseCode.INVALID_PARAMETER
    assert pop.ack(popped.handle, 4) is ResponseCode.MESSAGE_ILLEGAL
    assert pop.change_invisible_time(popped.handle, 10_000, 4)[0] is ResponseCode.MESSAGE_ILLEGAL
    assert pop.ack(got[0].handle, 5) is ResponseCode.SUCCESS
    del topic_config["T"]
    assert pop.pop("G", "T", -1, 32, 60_000, 6).code is ResponseCode.TOPIC_NOT_EXIST
    assert pop.ack(got[1].handle, 7) is ResponseCode.TOPIC_NOT_EXIST
    assert store.topic_queue_nums["T"] == 4  # the store keeps the queues and their messages


def test_revive_adds_the_retry_topic_to_the_topic_config():
    """PopReviveService#addRetryTopicIfNotExist: the revived copy's retry topic enters the broker's topic config
    (one queue), so the next pops read it."""
    config = BrokerConfig(pop_from_retry_probability=0)
    store = MessageStore(config)
    store.create_topic("T", 1)
    store.put_message("T", 0, now_ms=0)
    store.reput(0)
    topic_config = {"T": (1, 1)}
    pop = PopMessageProcessor(store, config, random.Random(0), topic_config)
    first = pop.pop("G", "T", -1, 32, 10_000, 0).messages[0]
    [copy] = PopReviveService(pop).revive(12_001)
    assert topic_config == {"T": (1, 1), RETRY: (1, 1)} and copy.topic == RETRY
    store.reput(12_002)
    again = pop.pop("G", "T", -1, 32, 10_000, 12_003).messages
    assert [m.message.uniq_key for m in again] == [first.message.uniq_key]
    with pytest.raises(ValueError, match="topic_config"):
        PopMessageProcessor(store, config, random.Random(0), [("T", (1, 1))])


def test_revive_passes_over_the_checkpoints_of_a_topic_the_broker_dropped():
    """PopReviveService#mergeAndRevive skips a due checkpoint whose topic (for a pop retry topic, the topic it
    retries) is gone from the broker's config: its unacked messages are never revived."""
    config = BrokerConfig(pop_from_retry_probability=0)
    store = MessageStore(config)
    store.create_topic("T", 1)
    store.create_topic("U", 1)
    for topic in ("T", "U"):
        store.put_message(topic, 0, now_ms=0)
    store.reput(0)
    topic_config = {"T": (1, 1), "U": (1, 1)}
    pop = PopMessageProcessor(store, config, random.Random(0), topic_config)
    revive = PopReviveService(pop)
    pop.pop("G", "T", -1, 32, 10_000, 0)
    [kept] = pop.pop("G", "U", -1, 32, 10_000, 0).messages
    del topic_config["T"]
    [copy] = revive.revive(12_001)
    assert copy.uniq_key == kept.message.uniq_key and pop.checkpoints == {}
    assert [ck.topic for _, ck in revive.skipped] == ["T"]
    store.reput(12_002)  # the copy of U's message, popped from U's retry topic, then U dropped too
    [again] = pop.pop("G", "U", -1, 32, 10_000, 12_003).messages
    assert again.handle.topic == build_pop_retry_topic("U", "G")
    del topic_config["U"]
    assert revive.revive(30_000) == [] and [ck.topic for _, ck in revive.skipped][1:] == [again.handle.topic]


def test_queue_id_minus_one_scans_all_queues_from_a_random_start():
    store, pop, _ = setup(8, queues=4, prob=0, seed=1)
    rng = random.Random(1)
    start = rng.randrange(100) % 4
    r = pop.pop("G", "T", -1, 3, 60_000, 0)
    assert [m.message.queue_id for m in r.messages] == [start, start, (start + 1) % 4]


def test_no_ack_then_revive_after_invisible_time_redelivers_from_retry_topic():
    store, pop, revive = setup(1, queues=1, prob=0)
    first = pop.pop("G", "T", 0, 32, 10_000, now_ms=0).messages[0]
    assert revive.revive(10_000) == []  # invisible time just over
    assert revive.revive(12_000) == []  # within the 2 s revive margin
    [copy] = revive.revive(12_001)
    assert copy.topic == RETRY == build_pop_retry_topic("T", "G")
    assert copy.reconsume_times == 1 and copy.uniq_key == first.message.uniq_key
    assert pop.pop("G", "T", 0, 32, 10_000, now_ms=12_001).code is ResponseCode.POLLING_TIMEOUT  # not dispatched yet
    store.reput(12_002)
    again = pop.pop("G", "T", 0, 32, 10_000, now_ms=12_003).messages
    assert [m.message.uniq_key for m in again] == [first.message.uniq_key]
    assert again[0].is_retry and again[0].topic == "T" and again[0].handle.topic == RETRY


def test_ack_prevents_revive():
    store, pop, revive = setup(2, queues=1, prob=0)
    msgs = pop.pop("G", "T", 0, 32, 10_000, now_ms=0).messages
    assert pop.ack(msgs[0].handle, 5_000) is ResponseCode.SUCCESS
    [copy] = revive.revive(20_000)
    assert copy.uniq_key == msgs[1].message.uniq_key
    pop.ack(msgs[1].handle, 20_001)  # too late: still SUCCESS, but the copy exists (a duplicate)
    assert pop.checkpoints == {}


def test_ack_all_removes_checkpoint_and_nothing_revives():
    store, pop, revive = setup(3, queues=1, prob=0)
    for m in pop.pop("G", "T", 0, 32, 10_000, now_ms=0).messages:
        pop.ack(m.handle, 1)
    assert pop.checkpoints == {} and revive.revive(10**9) == []


def test_change_invisible_time_postpones_revive_and_needs_the_new_handle():
    store, pop, revive = setup(1, queues=1, prob=0)
    m = pop.pop("G", "T", 0, 32, 10_000, now_ms=0).messages[0]
    code, handle = pop.change_invisible_time(m.handle, 30_000, now_ms=8_000)
    assert code is ResponseCode.SUCCESS and handle.revive_time == 38_000
    assert revive.revive(20_000) == []
    pop.ack(m.handle, 21_000)  # the old handle no longer matches anything live
    assert len(revive.revive(40_001)) == 1


def test_change_invisible_time_then_ack_new_handle():
    store, pop, revive = setup(1, queues=1, prob=0)
    m = pop.pop("G", "T", 0, 32, 10_000, now_ms=0).messages[0]
    _, handle = pop.change_invisible_time(m.handle, 30_000, now_ms=8_000)
    pop.ack(handle, 9_000)
    assert revive.revive(10**6) == []


def test_ack_out_of_range_is_no_message():
    store, pop, _ = setup(1, queues=1)
    bad = AckHandle("G", "T", 0, 5, 0, 0, 1000, 0, "broker-a")
    assert pop.ack(bad, 0) is ResponseCode.NO_MESSAGE
    with pytest.raises(ValueError, match="handle"):
        pop.ack("nope", 0)


def test_retry_first_with_probability_20_percent():
    store, pop, revive = setup(0, queues=1, prob=20, seed=3)
    store.create_topic(RETRY, 1)
    rng = random.Random(3)
    for _ in range(40):
        store.put_message("T", 0, now_ms=0)
        store.put_message(RETRY, 0, now_ms=0)
    store.reput(0)
    for _ in range(20):
        r = pop.pop("G", "T", 0, 1, 60_000, 0)
        retry_first = rng.randrange(100) < 20
        assert r.messages[0].is_retry == retry_first


def test_init_offset_max_pops_the_newest_when_queue_is_old():
    store, pop, _ = setup(0, queues=1, prob=0)
    for _ in range(5):
        store.put_message("T", 0, now_ms=0)
    store.reput(0)
    store.delete_expired("T", 0, 2)
    r = pop.pop("G", "T", 0, 32, 60_000, 0, init_mode=ConsumeInitMode.MAX)
    assert [m.message.queue_offset for m in r.messages] == [4]


def test_revive_service_runs_every_second():
    store, pop, revive = setup(1, queues=1, prob=0)
    pop.pop("G", "T", 0, 32, 1000, 0)
    assert revive.run_due(999) == []
    assert revive.run_due(1000) == []  # 1000 - 1000 is not past the 2 s margin
    assert revive.run_due(3001) != []


@pytest.mark.parametrize("seed", range(15))
def test_seeded_stress_every_message_acked_or_in_flight(seed):
    rng = random.Random(seed)
    store, pop, revive = setup(0, queues=2, seed=seed)
    outstanding = {}  # uniq_key -> latest handle
    acked = set()
    now = 0
    for _ in range(400):
        now += rng.randrange(0, 3000)
        act = rng.random()
        if act < 0.3:
            m = store.put_message("T", rng.randrange(2), now_ms=now)
            outstanding[m.uniq_key] = None
        elif act < 0.5:
            store.reput(now)
        elif act < 0.75:
            r = pop.pop("G", "T", rng.choice([-1, 0, 1]), rng.randrange(1, 33), rng.choice([5000, 20000]), now)
            for pm in r.messages:
                outstanding[pm.message.uniq_key] = pm.handle
        elif act < 0.9:
            live = [(k, h) for k, h in outstanding.items() if h is not None]
            if live:
                k, h = rng.choice(live)
                assert pop.ack(h, now) is ResponseCode.SUCCESS
                acked.add(k)
                outstanding[k] = None
        else:
            revive.run_due(now)
        pop._check()
        store._check()
    # at-least-once: drain everything (revive far in the future, pop and ack) and
    # every message ever put must have been acked at least once
    for _ in range(50):
        now += 100_000
        store.reput(now)
        revive.revive(now)
        store.reput(now)
        got = pop.pop("G", "T", -1, 32, 5000, now)
        for pm in got.messages:
            pop.ack(pm.handle, now)
            acked.add(pm.message.uniq_key)
        if not got.messages and not pop.checkpoints and store.behind() == 0:
            break
    assert set(outstanding) <= acked
    assert pop.in_flight() == 0


# ---- processRequest: the pop, then the long polling ------------------------------------------------------------


def test_process_request_holds_an_empty_pop_and_a_pop_that_leaves_messages_wakes_the_next_held_one():
    store, pop, _ = setup(0, queues=1)
    polling = PopLongPollingService()
    assert pop.process_request("first", polling, "G", "T", -1, 1, 60_000, born_ms=0, now_ms=0) == (None, [])
    assert pop.process_request("second", polling, "G", "T", -1, 1, 60_000, born_ms=1, now_ms=1) == (None, [])
    assert polling.held == ["first", "second"]
    store.put_message("T", 0, now_ms=2)
    store.put_message("T", 0, now_ms=2)
    store.reput(2)
    # a third pop takes one of the two (max 1) and leaves one: the first held pop is woken to run again
    answer, woken = pop.process_request("third", polling, "G", "T", -1, 1, 60_000, born_ms=2, now_ms=2)
    assert answer.code is ResponseCode.SUCCESS and len(answer.messages) == 1 and answer.rest_num == 1
    assert woken == ["first"] and polling.held == ["second"]


def test_process_request_answers_polling_full_or_timeout_when_it_cannot_hold_the_pop():
    _, pop, _ = setup(0, queues=1)
    full, _ = pop.process_request("p", PopLongPollingService(max_pop_polling_size=0), "G", "T", -1, 1, 60_000, 0, 0)
    assert full.code is ResponseCode.POLLING_FULL and not full.messages
    late, _ = pop.process_request("p", PopLongPollingService(), "G", "T", -1, 1, 60_000, born_ms=0, now_ms=20_000)
    assert late.code is ResponseCode.POLLING_TIMEOUT and not late.messages


# ---- orderly pops (a FIFO group's) -------------------------------------------------------------------------------


def offsets_of(result):
    return [(m.message.queue_id, m.message.queue_offset) for m in result.messages]


def test_an_orderly_pop_leaves_the_offset_at_its_batch_and_keeps_every_other_pop_off_that_queue():
    store, pop, _ = setup(6, queues=1, prob=0)
    first = pop.pop("G", "T", 0, 3, 1000, now_ms=100, order=True, attempt_id="a1")
    assert offsets_of(first) == [(0, 0), (0, 1), (0, 2)]
    assert store.query_offset("G", "T", 0) == 0 and not pop.checkpoints  # no checkpoint: the offset is the record
    assert all(m.handle.is_order and m.handle.start_offset == 0 for m in first.messages)
    assert pop.pop("G", "T", 0, 3, 1000, now_ms=200, order=True, attempt_id="b1").messages == []
    # the same attempt, retried (its answer was lost), gets the same batch again, lent anew at 200
    retried = pop.pop("G", "T", 0, 3, 1000, now_ms=200, order=True, attempt_id="a1")
    assert offsets_of(retried) == offsets_of(first) and retried.order_count_info == first.order_count_info
    assert pop.ack(first.messages[0].handle, 250) is ResponseCode.SUCCESS  # the lost answer's handle: no effect
    assert store.query_offset("G", "T", 0) == 0
    assert pop.ack(retried.messages[1].handle, 300) is ResponseCode.SUCCESS
    assert store.query_offset("G", "T", 0) == 0  # message 0 is still out
    assert pop.ack(retried.messages[0].handle, 300) is ResponseCode.SUCCESS
    assert store.query_offset("G", "T", 0) == 2
    # message 2 is never acked: once its invisible time has passed, the next orderly pop gets it again, first
    assert pop.pop("G", "T", 0, 3, 1000, now_ms=1199, order=True, attempt_id="b2").messages == []
    again = pop.pop("G", "T", 0, 3, 1000, now_ms=1200, order=True, attempt_id="b3")
    assert offsets_of(again) == [(0, 2), (0, 3), (0, 4)]
    assert again.order_count_info == {("T", 0, 2): 1, ("T", 0, 3): 0, ("T", 0, 4): 0}
    # the first consumer's late ack of message 2 belongs to the old batch: nothing moves
    assert pop.ack(retried.messages[2].handle, 1300) is ResponseCode.SUCCESS
    assert store.query_offset("G", "T", 0) == 2


def test_an_orderly_pop_of_any_queue_skips_the_blocked_ones_and_never_reads_the_retry_topic():
    store, pop, _ = setup(4, queues=2, prob=100)  # a pop that is not orderly would read the retry topic first
    store.create_topic(RETRY, 1)
    store.put_message(RETRY, 0, now_ms=0)
    store.reput(0)
    first = pop.pop("G", "T", -1, 1, 1000, now_ms=0, order=True, attempt_id="a1")
    second = pop.pop("G", "T", -1, 32, 1000, now_ms=1, order=True, attempt_id="b1")
    assert not any(m.is_retry for m in first.messages + second.messages)
    [(queue_a, _)] = offsets_of(first)
    assert {queue for queue, _ in offsets_of(second)} == {1 - queue_a}  # the other queue only
    assert pop.pop("G", "T", -1, 32, 1000, now_ms=2, order=True, attempt_id="c1").messages == []
    plain = pop.pop("G", "T", -1, 32, 1000, now_ms=3)
    assert any(m.is_retry for m in plain.messages)


def hold_two_orderly_pops(messages):
    store, pop, _ = setup(messages, queues=1)
    polling = PopLongPollingService()
    lent, _ = pop.process_request("a", polling, "G", "T", 0, 1, 60_000, 0, 0, order=True, attempt_id="a1")
    for name, queue_id in (("any", -1), ("queue-0", 0)):
        held, _ = pop.process_request(name, polling, "G", "T", queue_id, 1, 60_000, 1, 1, order=True, attempt_id=name)
        assert held is None
    return pop, polling, lent


def test_an_orderly_ack_that_ends_the_block_wakes_the_queue_own_held_pop_and_its_timer_one_for_any_queue():
    """The ack wakes the pop held under the queue's own key at once; the one held for any queue (-1) waits for the
    queue's lock-free timer, which fires on the timer wheel's next tick (it started with the pop at 0 ms and ticks
    every 100 ms), and only if messages wait."""
    pop, polling, lent = hold_two_orderly_pops(1)  # nothing waits past the acked message: the timer wakes nobody
    code, woken = pop.ack_orderly(lent.messages[0].handle, 2, polling)
    assert code is ResponseCode.SUCCESS and woken == ["queue-0"] and polling.held == ["any"]
    assert pop.next_lock_free_ms() == 100 and pop.notify_lock_free(100, polling) == [] and polling.held == ["any"]
    pop, polling, lent = hold_two_orderly_pops(2)  # one more message waits: the timer wakes "any"
    assert pop.ack_orderly(lent.messages[0].handle, 2, polling) == (ResponseCode.SUCCESS, ["queue-0"])
    assert pop.next_lock_free_ms() == 100
    assert pop.notify_lock_free(99, polling) == [] and pop.notify_lock_free(100, polling) == ["any"]


def test_a_batch_that_times_out_wakes_a_held_pop_when_its_lock_free_timer_fires():
    pop, polling, lent = hold_two_orderly_pops(2)
    assert pop.next_lock_free_ms() == 60_100  # pop time plus invisible time, 60 000 ms, is a tick: it fires on the next
    assert pop.notify_lock_free(60_099, polling) == []
    assert pop.notify_lock_free(60_100, polling) == ["any"] and pop.next_lock_free_ms() is None


def test_an_orderly_change_of_invisible_time_keeps_the_pop_time_and_moves_only_that_message():
    """The new handle starts at the message's own offset, as the client builds it from its request."""
    store, pop, _ = setup(2, queues=1)
    lent = pop.pop("G", "T", 0, 2, 1000, now_ms=100, order=True, attempt_id="a1")
    code, handle = pop.change_invisible_time(lent.messages[1].handle, 5000, now_ms=500)
    assert code is ResponseCode.SUCCESS
    assert (handle.pop_time, handle.invisible_time, handle.revive_qid) == (100, 5400, POP_ORDER_REVIVE_QUEUE)
    assert handle.start_offset == handle.queue_offset == 1 and lent.messages[1].handle.start_offset == 0
    pop.ack(lent.messages[0].handle, 600)
    assert pop.pop("G", "T", 0, 2, 1000, now_ms=5499, order=True, attempt_id="b1").messages == []
    assert offsets_of(pop.pop("G", "T", 0, 2, 1000, now_ms=5500, order=True, attempt_id="b2")) == [(0, 1)]
    assert pop.change_invisible_time(lent.messages[0].handle, 5000, now_ms=5600) == (ResponseCode.SUCCESS, None)


def test_ack_orderly_refuses_a_handle_an_ordinary_pop_lent():
    _, pop, _ = setup(1, queues=1)
    [lent] = pop.pop("G", "T", 0, 1, 1000, now_ms=0).messages
    with pytest.raises(ValueError, match="handle"):
        pop.ack_orderly(lent.handle, 1)

"""Long polling: PullRequestHoldService + PullMessageProcessor, stepped by hand."""

import random

import pytest

from rmqlib.broker import (
    BROKER_SUSPEND_MAX_TIME_MILLIS,
    BrokerConfig,
    ClientChannelInfo,
    ConsumerManager,
    ManyPullRequest,
    MessageStore,
    PullMessageProcessor,
    PullMessageRequest,
    PullRequest,
    PullRequestHoldService,
    ResponseCode,
    SubscriptionData,
    build_key,
)


def setup(long_polling=True, queues=2):
    config = BrokerConfig(long_polling_enable=long_polling)
    store = MessageStore(config)
    store.create_topic("T", queues)
    hold = PullRequestHoldService(store, config)
    proc = PullMessageProcessor(store, hold)
    return store, hold, proc


def pull(offset=0, queue_id=0, **kw):
    kw.setdefault("has_subscription_flag", True)
    return PullMessageRequest("G", "T", queue_id, offset, client_id="c1", channel="ch1", **kw)


def test_suspend_timeout_is_the_consumers_15000():
    assert BROKER_SUSPEND_MAX_TIME_MILLIS == 15_000
    assert pull().suspend_timeout_millis == 15_000


def test_pull_with_nothing_new_is_suspended_without_response():
    store, hold, proc = setup()
    assert proc.process_request(pull(), 0) is None
    assert hold.held_count("T", 0) == 1
    assert list(hold.pull_request_table) == ["T@0"]


def test_held_pull_is_woken_by_new_message_only_after_reput():
    store, hold, proc = setup()
    proc.process_request(pull(), 1000)
    store.put_message("T", 0, now_ms=1200)
    assert proc.drain() == [] and hold.held_count() == 1  # in the commit log, not dispatched
    store.reput(1201)
    [resp] = proc.drain()
    assert resp.code is ResponseCode.SUCCESS and resp.time_ms == 1201
    assert [m.queue_offset for m in resp.messages] == [0] and resp.next_begin_offset == 1
    assert hold.held_count() == 0


def test_message_on_another_queue_does_not_wake():
    store, hold, proc = setup()
    proc.process_request(pull(queue_id=0), 0)
    store.put_message("T", 1, now_ms=10)
    store.reput(10)
    assert proc.drain() == [] and hold.held_count("T", 0) == 1


def test_tag_mismatch_keeps_the_request_held():
    store, hold, proc = setup()
    proc.process_request(pull(sub_expression="A"), 0)
    store.put_message("T", 0, now_ms=10, tags="B")
    store.reput(10)
    assert proc.drain() == [] and hold.held_count() == 1
    store.put_message("T", 0, now_ms=20, tags="A")
    store.reput(20)
    [resp] = proc.drain()
    assert resp.code is ResponseCode.SUCCESS and [m.tags for m in resp.messages] == ["A"]


def test_held_pull_times_out_at_exactly_15000_not_14999():
    store, hold, proc = setup()
    proc.process_request(pull(), 0)
    assert hold.check_hold_request(14_999) == []
    assert hold.held_count() == 1
    [woken] = hold.check_hold_request(15_000)
    [resp] = proc.drain()
    assert resp.code is ResponseCode.PULL_NOT_FOUND and resp.client_pull_status == "NO_NEW_MSG"
    assert resp.time_ms == 15_000 and hold.held_count() == 0


def test_timeout_is_only_noticed_by_the_5s_scan_with_long_polling():
    store, hold, proc = setup()
    proc.process_request(pull(), 1000)  # deadline 16000
    wake_times = []
    for now in range(0, 30_001, 500):
        if hold.run_due(now):
            wake_times.append(now)
    assert wake_times == [20_000]  # scans at 5000, 10000, 15000, 20000


def test_short_polling_holds_1s_and_wakes_only_on_the_1s_scan():
    store, hold, proc = setup(long_polling=False)
    assert hold.wait_interval_ms == 1000
    proc.process_request(pull(), 200)
    held = hold.pull_request_table["T@0"].pull_request_list[0]
    assert held.timeout_millis == 1000  # shortPollingTimeMills, not the client's 15000
    store.put_message("T", 0, now_ms=300)
    store.reput(300)  # no arrival notification without long polling
    assert proc.drain() == []
    assert hold.run_due(999) == []
    [woken] = hold.run_due(1000)  # first scan: the new message is found
    [resp] = proc.drain()
    assert resp.code is ResponseCode.SUCCESS and resp.time_ms == 1000


def test_short_polling_empty_queue_answers_not_found_at_first_scan_past_the_hold():
    store, hold, proc = setup(long_polling=False)
    proc.process_request(pull(), 200)  # deadline 1200
    assert hold.run_due(1000) == []
    assert hold.run_due(2000) != []  # next scan 1000 ms after the previous one
    assert proc.drain()[0].code is ResponseCode.PULL_NOT_FOUND


def test_woken_request_never_resuspends_and_does_not_commit_offset():
    store, hold, proc = setup()
    req = pull(has_commit_offset_flag=True, commit_offset=0)
    proc.process_request(req, 0)
    assert store.query_offset("G", "T", 0) == 0  # first run stores the piggy-backed offset
    store.commit_offset("G", "T", 0, 7)
    hold.check_hold_request(15_000)
    assert hold.held_count() == 0
    assert store.query_offset("G", "T", 0) == 7  # the re-run did not overwrite it


def test_pull_without_suspend_flag_answers_not_found_immediately():
    store, hold, proc = setup()
    resp = proc.process_request(pull(has_suspend_flag=False), 0)
    assert resp.code is ResponseCode.PULL_NOT_FOUND and hold.held_count() == 0


@pytest.mark.parametrize(
    "n, offset, code, nxt",
    [
        (3, 0, ResponseCode.SUCCESS, 3),
        (3, 5, ResponseCode.PULL_OFFSET_MOVED, 3),  # overflow badly
        (0, 4, ResponseCode.PULL_OFFSET_MOVED, 0),  # empty queue, non-zero offset
    ],
)
def test_pull_response_codes(n, offset, code, nxt):
    store, hold, proc = setup()
    for i in range(n):
        store.put_message("T", 0, now_ms=i)
    store.reput(n)
    resp = proc.process_request(pull(offset), 10)
    assert (resp.code, resp.next_begin_offset) == (code, nxt)


def test_no_matched_message_is_retry_immediately():
    store, hold, proc = setup()
    store.put_message("T", 0, now_ms=0, tags="B")
    store.reput(0)
    resp = proc.process_request(pull(sub_expression="A"), 1)
    assert resp.code is ResponseCode.PULL_RETRY_IMMEDIATELY and resp.next_begin_offset == 1


def test_unknown_topic_and_bad_queue_get_java_codes():
    store, hold, proc = setup()
    r = proc.process_request(PullMessageRequest("G", "nope", 0, 0), 0)
    assert r.code is ResponseCode.TOPIC_NOT_EXIST
    assert proc.process_request(pull(queue_id=2), 0).code is ResponseCode.INVALID_PARAMETER
    assert proc.process_request(pull(queue_id=-1), 0).code is ResponseCode.INVALID_PARAMETER
    with pytest.raises(ValueError, match="queue_offset"):
        pull(-1)


def test_subscription_from_heartbeat_and_not_latest():
    config = BrokerConfig()
    store = MessageStore(config)
    store.create_topic("T", 1)
    cm = ConsumerManager(broker_config=config)
    proc = PullMessageProcessor(store, consumer_manager=cm)
    req = PullMessageRequest("G", "T", 0, 0, sub_version=5, has_suspend_flag=False)
    assert proc.process_request(req, 0).code is ResponseCode.SUBSCRIPTION_NOT_EXIST
    cm.register_consumer(
        "G",
        ClientChannelInfo("ch", "c"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("T", "*", 3)],
        True,
        0,
    )
    assert proc.process_request(req, 0).code is ResponseCode.SUBSCRIPTION_NOT_LATEST
    cm.register_consumer(
        "G",
        ClientChannelInfo("ch", "c"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("T", "*", 5)],
        True,
        1,
    )
    assert proc.process_request(req, 1).code is ResponseCode.PULL_NOT_FOUND


def test_keys_not_splitting_into_two_parts_are_never_scanned():
    store, hold, proc = setup()
    held = PullRequest(None, "ch", "c", 0, 0, 0)
    hold.pull_request_table["a@b@0"] = ManyPullRequest([held])
    assert hold.check_hold_request(10**9) == []
    assert hold.held_count() == 1
    assert build_key("T", 3) == "T@3"


def test_many_pull_request_clone_and_clear():
    mpr = ManyPullRequest()
    assert mpr.clone_list_and_clear() is None and mpr.is_empty()
    mpr.add_pull_request("a")
    mpr.add_pull_request(["b", "c"])
    assert mpr.clone_list_and_clear() == ["a", "b", "c"] and mpr.is_empty()


def test_notify_rereads_store_when_given_offset_is_stale():
    store, hold, proc = setup()
    proc.process_request(pull(), 0)
    store.put_message("T", 0, now_ms=1)
    store.broker_config.long_polling_enable = False  # dispatch silently
    store.reput(1)
    woken = hold.notify_message_arriving("T", 0, 0, 2)  # stale max offset 0
    assert len(woken) == 1 and proc.drain()[0].code is ResponseCode.SUCCESS


@pytest.mark.parametrize("seed", range(15))
def test_seeded_stress_every_pull_is_answered_once(seed):
    rng = random.Random(seed)
    store, hold, proc = setup(long_polling=rng.random() < 0.7)
    answered, sent = {}, 0
    now = 0
    for _ in range(300):
        now += rng.randrange(0, 3000)
        act = rng.random()
        if act < 0.3:
            q = rng.randrange(2)
            req = pull(
                rng.randrange(0, store.get_max_offset("T", q) + 2),
                queue_id=q,
                sub_expression=rng.choice(["*", "A"]),
                opaque=sent,
            )
            sent += 1
            resp = proc.process_request(req, now)
            if resp is not None:
                answered[req.opaque] = resp
        elif act < 0.6:
            store.put_message("T", rng.randrange(2), now_ms=now, tags=rng.choice(["A", "B"]))
        else:
            store.reput(now)
        hold.run_due(now)
        for resp in proc.drain():
            assert resp.request.opaque not in answered, "answered twice"
            answered[resp.request.opaque] = resp
        hold._check()
        store._check()
        for mpr in hold.pull_request_table.values():
            for held in mpr.pull_request_list:
                assert now < held.deadline_ms + hold.wait_interval_ms + 3000
    assert len(answered) + hold.held_count() == sent


def test_woken_log_keeps_only_the_latest_wake_ups():
    from rmqlib.broker.hold_service import WOKEN_LOG_SIZE

    store, hold, proc = setup()
    for offset in range(WOKEN_LOG_SIZE + 5):
        assert proc.process_request(pull(offset), offset) is None
        store.put_message("T", 0, now_ms=offset)
        store.reput(offset)
        [resp] = proc.drain()
        assert resp.code is ResponseCode.SUCCESS
    assert len(hold.woken_log) == WOKEN_LOG_SIZE
    offsets = [request.request_command.queue_offset for _, request, _ in hold.woken_log]
    assert offsets == list(range(5, WOKEN_LOG_SIZE + 5))


def test_a_failing_wakeup_handler_is_recorded_and_the_other_held_pulls_still_wake():
    """Java catches a failed executeRequestWhenWakeup per request; the scan goes on with the rest."""
    from rmqlib.broker import MessageStore, PullRequest, PullRequestHoldService

    store = MessageStore()
    store.create_topic("T", 1)
    calls = []

    def handler(request, now_ms):
        calls.append(request.client_id)
        if request.client_id == "bad":
            raise RuntimeError("channel closed")

    hold = PullRequestHoldService(store, wakeup_handler=handler)
    for cid in ("bad", "good"):
        hold.suspend_pull_request("T", 0, PullRequest(None, f"ch-{cid}", cid, 15_000, 0, 0))
    woken = hold.check_hold_request(20_000)  # both expired
    assert calls == ["bad", "good"] and len(woken) == 2
    assert [(key, type(exc).__name__) for _, key, exc in hold.failure_log] == [("wakeup of bad", "RuntimeError")]

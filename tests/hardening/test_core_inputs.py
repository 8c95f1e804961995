"""Bad input to the core's public entry points: a clear error naming the argument, never a crash or a hang.

Every public constructor and function of rmqlib.model, rmqlib.hashring, rmqlib.strategies, rmqlib.client
and rmqlib.broker is listed in ``ENTRIES`` with arguments that work. Hypothesis replaces one argument (or
two) with something wrong -- another type, a bool for an int, NaN or infinity, a negative, zero or huge
number, an empty or exotic string, a list with duplicates or mixed items -- and the call must either
succeed or raise ``ValueError``/``TypeError`` whose message names a replaced argument, within a 2 s alarm.

The second half pins the reproducers of issue 12 one by one.
"""

from __future__ import annotations

import math
import os
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import TooSlow, time_limit

from rmqlib import hashring, model, protocol, proxy, strategies
from rmqlib.broker import (
    POP_ORDER_REVIVE_QUEUE,
    AckHandle,
    AdminBrokerProcessor,
    BrokerConfig,
    BrokerMemberGroup,
    ClientChannelInfo,
    ClientHousekeepingService,
    ClientManageProcessor,
    ConsumerGroupInfo,
    ConsumerManager,
    ConsumerOffsetManager,
    ConsumerOrderInfoManager,
    DefaultConsumerIdsChangeListener,
    MessageStore,
    NotifyMessageArrivingListener,
    PopLongPollingService,
    PopMessageProcessor,
    PopReviveService,
    PullMessageProcessor,
    PullMessageRequest,
    PullRequestHoldService,
    QueryAssignmentProcessor,
    RebalanceLockManager,
    SlaveSynchronize,
    SubscriptionData,
    TopicRouteInfoManager,
    send_back,
)
from rmqlib.broker import hold_service as broker_hold
from rmqlib.broker import protocol as broker_protocol
from rmqlib.checks import MAX_TIME_MS
from rmqlib.client import (
    BrokerError,
    ConsumerData,
    ControllableOffset,
    InMemoryClientBrokerAPI,
    LocalFileOffsetStore,
    Message,
    OffsetStore,
    ProcessQueue,
    PullMessageService,
    PullRequest,
    PullResult,
    PushConsumerConfig,
    RebalanceImpl,
    RebalanceService,
    check_pull_gates,
    process_consume_result_concurrently,
    process_consume_result_orderly,
    process_pull_exception,
    process_pull_result,
    pull_message,
)
from rmqlib.client.grpc_push import PushConsumerImpl
from rmqlib.client.heartbeat import HeartbeatV2State, heartbeat_fingerprint
from rmqlib.client.pop import PopProcessQueue
from rmqlib.model import MessageQueue
from rmqlib.namesrv import RouteInfoManager

ALARM_S = 10.0  # catches a hang; a slow or busy machine stays well inside it
#: Examples per entry point; raise it for a deeper local run (RMQLIB_HARDENING_EXAMPLES=500 pytest ...).
EXAMPLES = int(os.environ.get("RMQLIB_HARDENING_EXAMPLES", "12"))
MQ = MessageQueue("T", "broker-a", 0)
MQS = [MessageQueue("T", "broker-a", q) for q in range(4)]
CIDS = ["c1", "c2", "c3"]
_NAMES = RouteInfoManager()
_NAMES.register_broker("broker-a", {"T": (4, 4)}, now_ms=0)
ROUTE = _NAMES.pickup_topic_route_data("T")


Hung = TooSlow


def alarm(seconds: float = ALARM_S):
    return time_limit(seconds)


# ----------------------------------------------------------------------------------------------- bad values
class Opaque:
    """An object of no expected type (it has no attributes the code could mistake for an API)."""

    def __repr__(self) -> str:
        return "Opaque()"


FIXED_BAD = [
    None,
    True,
    False,
    math.nan,
    math.inf,
    -math.inf,
    0,
    -1,
    -2,
    1.5,
    -0.0,
    2**31,
    2**53 + 1,
    2**63,
    2**64,
    -(2**64),
    10**30,
    "",
    " ",
    "x",
    "@",
    "a@b@c",
    "é😀\x00\ud800",
    "%RETRY%",
    b"x",
    [],
    [1, "a"],
    [None],
    ["c1", "c1"],
    [MQ, MQ],
    [MQ, "x"],
    {},
    {"a": 1},
    (),
    set(),
    Opaque(),
    1j,
    MQ,
    st,
]
BAD = st.one_of(
    st.sampled_from(FIXED_BAD),
    st.integers(-10, 10),
    st.integers(min_value=2**31),
    st.integers(max_value=-(2**31)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=2), st.none()), max_size=4),
)


# ------------------------------------------------------------------------------------------- the fixtures
def store(queues: int = 2) -> MessageStore:
    s = MessageStore()
    s.create_topic("T", queues)
    s.put_message("T", 0, 0)
    s.reput(0)
    return s


def held_request(**kw):
    fields = dict(
        request_command=None,
        channel="ch",
        client_id="c1",
        timeout_millis=1000,
        suspend_timestamp=0,
        pull_from_this_offset=0,
    )
    fields.update(kw)
    return broker_hold.PullRequest(**fields)


def msg(offset: int = 0, **kw) -> Message:
    return Message(
        kw.pop("topic", "T"), kw.pop("queue_id", 0), offset, kw.pop("body_size", 10), broker_name="broker-a", **kw
    )


def impl() -> RebalanceImpl:
    api = InMemoryClientBrokerAPI()
    api.consumer_ids["G"] = ["c1"]
    r = RebalanceImpl("G", "c1", api, strategies.AllocateMessageQueueAveragely())
    r.subscribe("T", "*", 0)
    r.update_topic_subscribe_info("T", MQS)
    return r


def pull_request(r: RebalanceImpl | None = None) -> PullRequest:
    return PullRequest("G", MQ, ProcessQueue(), 0)


def pq_with(n: int = 3) -> ProcessQueue:
    pq = ProcessQueue()
    pq.put_message([msg(o) for o in range(n)])
    return pq


def pop_processor() -> PopMessageProcessor:
    return PopMessageProcessor(store())


def handle(**kw) -> AckHandle:
    fields = dict(
        group="G",
        topic="T",
        queue_id=0,
        queue_offset=0,
        start_offset=0,
        pop_time=0,
        invisible_time=60000,
        revive_qid=0,
        broker_name="broker-a",
    )
    fields.update(kw)
    return AckHandle(**fields)


def query_assignment() -> QueryAssignmentProcessor:
    cm = ConsumerManager()
    cm.register_consumer(
        "G",
        ClientChannelInfo("ch1", "c1"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("T")],
        True,
        0,
    )
    return QueryAssignmentProcessor(cm, {"T": MQS})


def consumer_manager() -> ConsumerManager:
    cm = ConsumerManager()
    cm.register_consumer(
        "G",
        ClientChannelInfo("ch1", "c1"),
        "CONSUME_PASSIVELY",
        "CLUSTERING",
        "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData("T")],
        True,
        0,
    )
    return cm


# An entry: (label, call, good keyword arguments). ``call(**kwargs)`` builds whatever it needs afresh.
# A heartbeat's arguments that work (ConsumerManager.register_consumer, ClientManageProcessor.heart_beat)
REGISTER_CONSUMER = dict(
    group="G",
    client_channel_info=ClientChannelInfo("ch", "c1"),
    consume_type="CONSUME_PASSIVELY",
    message_model="CLUSTERING",
    consume_from_where="CONSUME_FROM_LAST_OFFSET",
    subscriptions=[SubscriptionData("T")],
    is_notify_consumer_ids_changed_enable=True,
    now_ms=0,
)

ENTRIES = [
    # ---- rmqlib.model / protocol / hashring
    ("MessageQueue", MessageQueue, dict(topic="T", broker_name="b", queue_id=0)),
    ("MessageQueue.compare_to", lambda other: MQ.compare_to(other), dict(other=MQ)),
    ("java_string_compare", model.java_string_compare, dict(a="a", b="b")),
    ("utf16_key", model.utf16_key, dict(s="a")),
    ("java_split", model.java_split, dict(s="a@b", sep="@")),
    ("java_sorted_cids", model.java_sorted_cids, dict(cids=CIDS)),
    ("java_sorted_mqs", model.java_sorted_mqs, dict(mqs=MQS)),
    ("retry_topic", protocol.retry_topic, dict(consumer_group="G")),
    ("java_string_hash", protocol.java_string_hash, dict(s="tag")),
    ("SubscriptionData", SubscriptionData, dict(topic="T", sub_string="a || b", sub_version=0)),
    ("SubscriptionData.build", SubscriptionData.build, dict(topic="T", sub_string="a", now_ms=0)),
    ("SubscriptionData.matches", lambda tags: SubscriptionData("T", "a").matches(tags), dict(tags="a")),
    (
        "SubscriptionData.is_matched_by_consume_queue",
        lambda tags_code: SubscriptionData("T", "a").is_matched_by_consume_queue(tags_code),
        dict(tags_code=97),
    ),
    ("md5_hash", hashring.md5_hash, dict(key="c1-0")),
    ("HashRing.build", hashring.HashRing.build, dict(cids=CIDS, virtual_node_cnt=3, hash_function=None)),
    ("HashRing.route", lambda key: hashring.HashRing.build(CIDS, 3).route(key), dict(key=str(MQ))),
    ("HashRing.route_many", lambda keys: hashring.HashRing.build(CIDS, 3).route_many(keys), dict(keys=["a", "b"])),
    # ---- rmqlib.strategies
    *[
        (
            f"{cls.__name__}.allocate",
            lambda consumer_group, current_cid, mq_all, cid_all, cls=cls: cls().allocate(
                consumer_group, current_cid, mq_all, cid_all
            ),
            dict(consumer_group="G", current_cid="c1", mq_all=MQS, cid_all=CIDS),
        )
        for cls in (
            strategies.AllocateMessageQueueAveragely,
            strategies.AllocateMessageQueueAveragelyByCircle,
            strategies.AllocateMessageQueueConsistentHash,
            strategies.AllocateMessageQueueByMachineRoom,
        )
    ],
    (
        "AllocateMessageQueueAveragely.allocate_all",
        lambda consumer_group, mq_all, cid_all: strategies.AllocateMessageQueueAveragely().allocate_all(
            consumer_group, mq_all, cid_all
        ),
        dict(consumer_group="G", mq_all=MQS, cid_all=CIDS),
    ),
    (
        "AllocateMessageQueueConsistentHash",
        strategies.AllocateMessageQueueConsistentHash,
        dict(virtual_node_cnt=10, hash_function=None),
    ),
    ("AllocateMessageQueueByConfig", strategies.AllocateMessageQueueByConfig, dict(message_queue_list=MQS)),
    (
        "AllocateMessageQueueByConfig.allocate",
        lambda consumer_group, current_cid, mq_all, cid_all: strategies.AllocateMessageQueueByConfig(MQS).allocate(
            consumer_group, current_cid, mq_all, cid_all
        ),
        dict(consumer_group="G", current_cid="c1", mq_all=MQS, cid_all=CIDS),
    ),
    ("AllocateMessageQueueByMachineRoom", strategies.AllocateMessageQueueByMachineRoom, dict(consumer_idcs={"a"})),
    ("PrefixMachineRoomResolver", strategies.PrefixMachineRoomResolver, dict(separator="-")),
    (
        "MappingMachineRoomResolver",
        strategies.MappingMachineRoomResolver,
        dict(broker_rooms={"broker-a": "r1"}, consumer_rooms={"c1": "r1"}),
    ),
    (
        "AllocateMachineRoomNearby",
        strategies.AllocateMachineRoomNearby,
        dict(strategy=strategies.AllocateMessageQueueAveragely(), resolver=strategies.PrefixMachineRoomResolver()),
    ),
    (
        "AllocateMachineRoomNearby.allocate",
        lambda consumer_group, current_cid, mq_all, cid_all: strategies.AllocateMachineRoomNearby(
            strategies.AllocateMessageQueueAveragely(), strategies.PrefixMachineRoomResolver()
        ).allocate(consumer_group, current_cid, mq_all, cid_all),
        dict(consumer_group="G", current_cid="c1", mq_all=MQS, cid_all=CIDS),
    ),
    (
        "strategy_from_name",
        strategies.strategy_from_name,
        dict(name="MACHINE_ROOM_NEARBY-CONSISTENT_HASH", virtual_node_cnt=5),
    ),
    # ---- rmqlib.client
    (
        "Message",
        Message,
        dict(
            topic="T",
            queue_id=0,
            queue_offset=0,
            body_size=1,
            tags="a",
            store_timestamp=0,
            broker_name="b",
            msg_id="m",
            reconsume_times=0,
            consume_start_timestamp=None,
            properties={"MAX_OFFSET": "9"},
        ),
    ),
    ("ProcessQueue", ProcessQueue, dict(now_ms=0)),
    ("ProcessQueue.put_message", lambda msgs: ProcessQueue().put_message(msgs), dict(msgs=[msg(0), msg(1)])),
    (
        "ProcessQueue.remove_message",
        lambda msgs, now_ms: pq_with().remove_message(msgs, now_ms),
        dict(msgs=[msg(0)], now_ms=5),
    ),
    (
        "ProcessQueue.take_messages",
        lambda batch_size, now_ms: pq_with().take_messages(batch_size, now_ms),
        dict(batch_size=2, now_ms=5),
    ),
    (
        "ProcessQueue.make_message_to_consume_again",
        lambda msgs: pq_with().make_message_to_consume_again(msgs),
        dict(msgs=[msg(0)]),
    ),
    (
        "ProcessQueue.clean_expired_msg",
        lambda now_ms, consume_timeout, orderly: pq_with().clean_expired_msg(now_ms, consume_timeout, orderly),
        dict(now_ms=10**6, consume_timeout=15, orderly=False),
    ),
    ("ProcessQueue.is_pull_expired", lambda now_ms: ProcessQueue().is_pull_expired(now_ms), dict(now_ms=5)),
    ("ProcessQueue.is_lock_expired", lambda now_ms: ProcessQueue().is_lock_expired(now_ms), dict(now_ms=5)),
    (
        "process_consume_result_concurrently",
        lambda pq, mq, msgs, status, offset_store, message_model, send_back, ack_index, now_ms: (
            process_consume_result_concurrently(
                pq,
                mq,
                msgs,
                status,
                offset_store=offset_store,
                message_model=message_model,
                send_back=send_back,
                ack_index=ack_index,
                now_ms=now_ms,
            )
        ),
        dict(
            pq=pq_with(),
            mq=MQ,
            msgs=[msg(0), msg(1)],
            status="CONSUME_SUCCESS",
            offset_store=LocalFileOffsetStore("G"),
            message_model="CLUSTERING",
            send_back=None,
            ack_index=0,
            now_ms=0,
        ),
    ),
    (
        "process_consume_result_orderly",
        lambda pq, mq, msgs, status, offset_store, auto_commit, max_reconsume_times, suspend_current_queue_time_millis, context_suspend_current_queue_time_millis, send_back: (  # noqa: E501 (a lambda's parameters cannot wrap)
            process_consume_result_orderly(
                pq,
                mq,
                msgs,
                status,
                offset_store=offset_store,
                auto_commit=auto_commit,
                max_reconsume_times=max_reconsume_times,
                suspend_current_queue_time_millis=suspend_current_queue_time_millis,
                context_suspend_current_queue_time_millis=context_suspend_current_queue_time_millis,
                send_back=send_back,
            )
        ),
        dict(
            pq=pq_with(),
            mq=MQ,
            msgs=[msg(0)],
            status="SUSPEND_CURRENT_QUEUE_A_MOMENT",
            offset_store=LocalFileOffsetStore("G"),
            auto_commit=True,
            max_reconsume_times=3,
            suspend_current_queue_time_millis=1000,
            context_suspend_current_queue_time_millis=-1,
            send_back=None,
        ),
    ),
    ("ControllableOffset", ControllableOffset, dict(offset=0)),
    (
        "ControllableOffset.update",
        lambda target, increase_only: ControllableOffset(3).update(target, increase_only),
        dict(target=5, increase_only=True),
    ),
    ("OffsetStore", OffsetStore, dict(consumer_group="G", api=InMemoryClientBrokerAPI())),
    (
        "OffsetStore.update_offset",
        lambda mq, offset, increase_only: OffsetStore("G", None).update_offset(mq, offset, increase_only),
        dict(mq=MQ, offset=3, increase_only=True),
    ),
    (
        "OffsetStore.read_offset",
        lambda mq, type: OffsetStore("G", InMemoryClientBrokerAPI()).read_offset(mq, type),
        dict(mq=MQ, type="MEMORY_FIRST_THEN_STORE"),
    ),
    (
        "OffsetStore.persist_all",
        lambda mqs: OffsetStore("G", InMemoryClientBrokerAPI()).persist_all(mqs),
        dict(mqs=MQS),
    ),
    ("OffsetStore.clone_offset_table", lambda topic: OffsetStore("G", None).clone_offset_table(topic), dict(topic="T")),
    (
        "LocalFileOffsetStore",
        lambda consumer_group, file: LocalFileOffsetStore(consumer_group, file).load(),
        dict(consumer_group="G", file={MQ: 3}),
    ),
    (
        "PullRequest",
        PullRequest,
        dict(
            consumer_group="G", message_queue=MQ, process_queue=ProcessQueue(), next_offset=0, previously_locked=False
        ),
    ),
    (
        "PullMessageService.execute_pull_request_later",
        lambda pull_request, delay_ms, now_ms: PullMessageService().execute_pull_request_later(
            pull_request, delay_ms, now_ms
        ),
        dict(pull_request=pull_request(), delay_ms=10, now_ms=0),
    ),
    ("PullMessageService.due", lambda now_ms: PullMessageService().due(now_ms), dict(now_ms=0)),
    (
        "check_pull_gates",
        lambda pq, config, now_ms, orderly, paused: check_pull_gates(
            pq, config, now_ms, orderly=orderly, paused=paused
        ),
        dict(pq=ProcessQueue(), config=PushConsumerConfig(), now_ms=0, orderly=False, paused=False),
    ),
    (
        "pull_message",
        lambda req, impl, now_ms: pull_message(req, impl, now_ms),
        dict(req=pull_request(), impl=impl(), now_ms=0),
    ),
    (
        "PullResult",
        PullResult,
        dict(pull_status="FOUND", next_begin_offset=1, min_offset=0, max_offset=1, msg_found_list=[msg(0)]),
    ),
    (
        "process_pull_result",
        process_pull_result,
        dict(req=pull_request(), result=PullResult("FOUND", 1, 0, 1, [msg(0)]), impl=impl(), now_ms=0),
    ),
    (
        "process_pull_exception",
        process_pull_exception,
        dict(req=pull_request(), error=BrokerError("x", 207), impl=impl(), now_ms=0),
    ),
    ("BrokerError", BrokerError, dict(message="boom", code=1)),
    (
        "ConsumerData",
        ConsumerData,
        dict(
            group_name="G",
            consume_type="CONSUME_PASSIVELY",
            message_model="CLUSTERING",
            consume_from_where="CONSUME_FROM_LAST_OFFSET",
            subscription_data_set=[SubscriptionData("T")],
        ),
    ),
    (
        "PushConsumerConfig",
        PushConsumerConfig,
        dict(
            message_model="CLUSTERING",
            pull_batch_size=32,
            consume_timestamp_ms=None,
            client_rebalance=True,
            pull_threshold_for_topic=-1,
            max_reconsume_times=-1,
        ),
    ),
    (
        "RebalanceImpl",
        RebalanceImpl,
        dict(
            consumer_group="G",
            client_id="c1",
            api=InMemoryClientBrokerAPI(),
            strategy=strategies.AllocateMessageQueueAveragely(),
            config=PushConsumerConfig(),
            consume_orderly=False,
            offset_store=None,
            pull_service=None,
            rebalance_service=None,
            message_queue_listener=None,
            now_ms=0,
            step_listener=None,
        ),
    ),
    (
        "RebalanceImpl.do_rebalance",
        lambda is_order, now_ms: impl().do_rebalance(is_order, now_ms),
        dict(is_order=False, now_ms=0),
    ),
    (
        "RebalanceImpl.subscribe",
        lambda topic, sub_expression, now_ms: impl().subscribe(topic, sub_expression, now_ms),
        dict(topic="U", sub_expression="a", now_ms=0),
    ),
    (
        "RebalanceImpl.update_topic_subscribe_info",
        lambda topic, mqs: impl().update_topic_subscribe_info(topic, mqs),
        dict(topic="T", mqs=MQS),
    ),
    (
        "RebalanceImpl.update_process_queue_table_in_rebalance",
        lambda topic, mq_set, need_lock, now_ms: impl().update_process_queue_table_in_rebalance(
            topic, mq_set, need_lock, now_ms
        ),
        dict(topic="T", mq_set=set(MQS), need_lock=False, now_ms=0),
    ),
    (
        "RebalanceImpl.message_queue_changed",
        lambda topic, mq_all, mq_divided, now_ms: impl().message_queue_changed(topic, mq_all, mq_divided, now_ms),
        dict(topic="T", mq_all=set(MQS), mq_divided={MQ}, now_ms=0),
    ),
    ("RebalanceImpl.lock", lambda mq, now_ms: impl().lock(mq, now_ms), dict(mq=MQ, now_ms=0)),
    (
        "RebalanceImpl.unlock",
        lambda mq, oneway, now_ms: impl().unlock(mq, oneway, now_ms),
        dict(mq=MQ, oneway=True, now_ms=0),
    ),
    (
        "RebalanceImpl.rebalance_later",
        lambda delay_ms, now_ms: impl().rebalance_later(delay_ms, now_ms),
        dict(delay_ms=500, now_ms=0),
    ),
    ("RebalanceService", RebalanceService, dict(now_ms=0, wait_interval=20000, min_interval=1000)),
    ("RebalanceService.run_due", lambda now_ms: RebalanceService().run_due(now_ms), dict(now_ms=10**6)),
    (
        "RebalanceService.rebalance_later",
        lambda delay_ms, now_ms: RebalanceService().rebalance_later(delay_ms, now_ms),
        dict(delay_ms=5, now_ms=0),
    ),
    ("RebalanceService.register", lambda consumer: RebalanceService().register(consumer), dict(consumer=impl())),
    (
        "InMemoryClientBrokerAPI.lock_batch_mq",
        lambda broker_name, group, client_id, mqs, now_ms: InMemoryClientBrokerAPI().lock_batch_mq(
            broker_name, group, client_id, mqs, now_ms
        ),
        dict(broker_name="broker-a", group="G", client_id="c1", mqs={MQ}, now_ms=0),
    ),
    # ---- rmqlib.broker
    (
        "BrokerConfig",
        BrokerConfig,
        dict(
            long_polling_enable=True,
            short_polling_time_mills=1000,
            revive_queue_num=8,
            pop_from_retry_probability=20,
            default_pop_share_queue_num=-1,
            broker_name="b",
            default_message_request_mode="PULL",
            slave_read_enable=False,
            broker_role="SLAVE",
        ),
    ),
    (
        "ClientChannelInfo",
        ClientChannelInfo,
        dict(channel="ch", client_id="c1", language="JAVA", version=0, last_update_timestamp=None),
    ),
    (
        "ConsumerGroupInfo",
        ConsumerGroupInfo,
        dict(group_name="G", consume_type="CONSUME_PASSIVELY", message_model=None, consume_from_where=None, now_ms=0),
    ),
    (
        "ConsumerGroupInfo.update_subscription",
        lambda sub_list, now_ms: ConsumerGroupInfo("G").update_subscription(sub_list, now_ms),
        dict(sub_list=[SubscriptionData("T")], now_ms=0),
    ),
    ("ConsumerManager", ConsumerManager, dict(listeners=None, broker_config=BrokerConfig())),
    (
        "ConsumerManager.register_consumer",
        lambda **arguments: ConsumerManager().register_consumer(**arguments),
        REGISTER_CONSUMER,
    ),
    ("ClientManageProcessor", ClientManageProcessor, dict(consumer_manager=ConsumerManager())),
    (
        "ClientManageProcessor.heart_beat",
        lambda **arguments: ClientManageProcessor(ConsumerManager()).heart_beat(**arguments),
        dict(REGISTER_CONSUMER, heartbeat_fingerprint=7, without_sub=False),
    ),
    (
        "heartbeat_fingerprint",
        heartbeat_fingerprint,
        dict(
            consumers=[
                ConsumerData(
                    "G", "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET", [SubscriptionData("T")]
                )
            ]
        ),
    ),
    (
        "HeartbeatV2State.with_sub",
        lambda addr, fingerprint: HeartbeatV2State().with_sub(addr, fingerprint),
        dict(addr="a", fingerprint=7),
    ),
    (
        "HeartbeatV2State.answered",
        lambda addr, fingerprint, with_sub, support_v2, sub_change: HeartbeatV2State().answered(
            addr, fingerprint, with_sub, support_v2, sub_change
        ),
        dict(addr="a", fingerprint=7, with_sub=True, support_v2=True, sub_change=False),
    ),
    (
        "ConsumerManager.unregister_consumer",
        lambda group, client_channel_info, is_notify_consumer_ids_changed_enable, now_ms: (
            consumer_manager().unregister_consumer(
                group, client_channel_info, is_notify_consumer_ids_changed_enable, now_ms
            )
        ),
        dict(
            group="G",
            client_channel_info=ClientChannelInfo("ch1", "c1"),
            is_notify_consumer_ids_changed_enable=True,
            now_ms=5,
        ),
    ),
    (
        "ConsumerManager.get_consumer_id_list",
        lambda group: consumer_manager().get_consumer_id_list(group),
        dict(group="G"),
    ),
    (
        "ConsumerManager.do_channel_close_event",
        lambda remote_addr, channel, now_ms: consumer_manager().do_channel_close_event(remote_addr, channel, now_ms),
        dict(remote_addr="1.2.3.4", channel="ch1", now_ms=5),
    ),
    (
        "ConsumerManager.scan_not_active_channel",
        lambda now_ms: consumer_manager().scan_not_active_channel(now_ms),
        dict(now_ms=10**6),
    ),
    (
        "ConsumerManager.compensate_subscribe_data",
        lambda group, topic, subscription_data: ConsumerManager().compensate_subscribe_data(
            group, topic, subscription_data
        ),
        dict(group="G", topic="T", subscription_data=SubscriptionData("T")),
    ),
    (
        "DefaultConsumerIdsChangeListener",
        DefaultConsumerIdsChangeListener,
        dict(broker_config=BrokerConfig(), start_ms=0),
    ),
    (
        "DefaultConsumerIdsChangeListener.run_due",
        lambda now_ms: DefaultConsumerIdsChangeListener().run_due(now_ms),
        dict(now_ms=1_700_000_000_000),
    ),
    (
        "DefaultConsumerIdsChangeListener.handle",
        lambda event, group, args, now_ms: DefaultConsumerIdsChangeListener().handle(event, group, args, now_ms),
        dict(event="CHANGE", group="G", args=([ClientChannelInfo("ch", "c1")],), now_ms=0),
    ),
    ("ClientHousekeepingService", ClientHousekeepingService, dict(consumer_manager=ConsumerManager(), start_ms=0)),
    (
        "ClientHousekeepingService.run_due",
        lambda now_ms: ClientHousekeepingService(consumer_manager()).run_due(now_ms),
        dict(now_ms=1_700_000_000_000),
    ),
    (
        "PullRequestHoldService",
        PullRequestHoldService,
        dict(store=store(), broker_config=BrokerConfig(), wakeup_handler=None, start_ms=0),
    ),
    ("hold.PullRequest", held_request, dict(timeout_millis=1000, suspend_timestamp=0, pull_from_this_offset=0)),
    (
        "PullRequestHoldService.suspend_pull_request",
        lambda topic, queue_id, pull_request: PullRequestHoldService(store()).suspend_pull_request(
            topic, queue_id, pull_request
        ),
        dict(topic="T", queue_id=1, pull_request=held_request()),
    ),
    (
        "PullRequestHoldService.notify_message_arriving",
        lambda topic, queue_id, max_offset, now_ms, tags_code: PullRequestHoldService(store()).notify_message_arriving(
            topic, queue_id, max_offset, now_ms, tags_code
        ),
        dict(topic="T", queue_id=0, max_offset=3, now_ms=0, tags_code=None),
    ),
    (
        "PullRequestHoldService.run_due",
        lambda now_ms: PullRequestHoldService(store()).run_due(now_ms),
        dict(now_ms=10**6),
    ),
    (
        "NotifyMessageArrivingListener",
        NotifyMessageArrivingListener,
        dict(pull_request_hold_service=PullRequestHoldService(store()), pop_message_processor=None),
    ),
    ("RebalanceLockManager", RebalanceLockManager, dict(lock_max_live_time=60000)),
    (
        "RebalanceLockManager.try_lock_batch",
        lambda group, mqs, client_id, now_ms: RebalanceLockManager().try_lock_batch(group, mqs, client_id, now_ms),
        dict(group="G", mqs=MQS, client_id="c1", now_ms=0),
    ),
    (
        "RebalanceLockManager.is_locked",
        lambda group, mq, client_id, now_ms: RebalanceLockManager().is_locked(group, mq, client_id, now_ms),
        dict(group="G", mq=MQ, client_id="c1", now_ms=0),
    ),
    (
        "RebalanceLockManager.unlock_batch",
        lambda group, mqs, client_id: RebalanceLockManager().unlock_batch(group, mqs, client_id),
        dict(group="G", mqs=MQS, client_id="c1"),
    ),
    (
        "MessageStore",
        MessageStore,
        dict(broker_config=BrokerConfig(), message_arriving_listener=None, access_message_in_memory_max_bytes=None),
    ),
    (
        "MessageStore.create_topic",
        lambda topic, queue_nums: MessageStore().create_topic(topic, queue_nums),
        dict(topic="T", queue_nums=4),
    ),
    (
        "MessageStore.put_message",
        lambda topic, queue_id, now_ms, body_size, tags, uniq_key, born_timestamp, reconsume_times, properties: (
            store().put_message(
                topic, queue_id, now_ms, body_size, tags, uniq_key, born_timestamp, reconsume_times, properties
            )
        ),
        dict(
            topic="T",
            queue_id=1,
            now_ms=0,
            body_size=10,
            tags="a",
            uniq_key="u",
            born_timestamp=0,
            reconsume_times=0,
            properties={"k": "v"},
        ),
    ),
    (
        "MessageStore.get_message",
        lambda group, topic, queue_id, offset, max_msg_nums, message_filter, max_total_msg_size: store().get_message(
            group, topic, queue_id, offset, max_msg_nums, message_filter, max_total_msg_size
        ),
        dict(
            group="G",
            topic="T",
            queue_id=0,
            offset=0,
            max_msg_nums=32,
            message_filter=SubscriptionData("T", "a"),
            max_total_msg_size=1024,
        ),
    ),
    (
        "MessageStore.delete_expired",
        lambda topic, queue_id, new_min_offset: store().delete_expired(topic, queue_id, new_min_offset),
        dict(topic="T", queue_id=0, new_min_offset=1),
    ),
    (
        "MessageStore.commit_offset",
        lambda group, topic, queue_id, offset: store().commit_offset(group, topic, queue_id, offset),
        dict(group="G", topic="T", queue_id=0, offset=1),
    ),
    (
        "MessageStore.query_consumer_offset",
        lambda group, topic, queue_id, set_zero_if_not_found: store().query_consumer_offset(
            group, topic, queue_id, set_zero_if_not_found
        ),
        dict(group="G", topic="T", queue_id=0, set_zero_if_not_found=None),
    ),
    (
        "MessageStore.look_message_by_offset",
        lambda topic, queue_id, offset: store().look_message_by_offset(topic, queue_id, offset),
        dict(topic="T", queue_id=0, offset=0),
    ),
    (
        "PullMessageRequest",
        PullMessageRequest,
        dict(
            consumer_group="G",
            topic="T",
            queue_id=0,
            queue_offset=0,
            max_msg_nums=32,
            has_commit_offset_flag=False,
            commit_offset=0,
            has_suspend_flag=True,
            suspend_timeout_millis=15000,
            has_subscription_flag=True,
            sub_expression="*",
            sub_version=0,
            client_id="c1",
            channel="ch",
            opaque=0,
        ),
    ),
    (
        "PullMessageProcessor",
        PullMessageProcessor,
        dict(store=store(), hold_service=None, consumer_manager=None, broker_config=None),
    ),
    (
        "PullMessageProcessor.process_request",
        lambda request, now_ms, broker_allow_suspend: PullMessageProcessor(store()).process_request(
            request, now_ms, broker_allow_suspend
        ),
        dict(
            request=PullMessageRequest("G", "T", 1, 0, has_subscription_flag=True), now_ms=0, broker_allow_suspend=True
        ),
    ),
    (
        "consumer_send_msg_back",
        send_back.consumer_send_msg_back,
        dict(consumer_group="G", reconsume_times=0, delay_level=0, max_reconsume_times=16),
    ),
    ("retry_timeline", send_back.retry_timeline, dict(consumer_group="G", max_reconsume_times=16, delay_level=0)),
    ("delay_level_millis", send_back.delay_level_millis, dict(level=3)),
    ("dlq_topic", send_back.dlq_topic, dict(consumer_group="G")),
    (
        "PopMessageProcessor",
        PopMessageProcessor,
        dict(store=store(), broker_config=None, rng=random.Random(1), topic_config={"T": (4, 4)}),
    ),
    (
        "PopMessageProcessor.pop",
        lambda **kwargs: pop_processor().pop(**kwargs),
        dict(
            group="G",
            topic="T",
            queue_id=-1,
            max_msg_nums=32,
            invisible_time=60000,
            now_ms=0,
            init_mode=0,
            sub_expression="*",
            order=True,
            attempt_id="a1",
        ),
    ),
    ("AckHandle", handle, dict(queue_id=0, queue_offset=0, pop_time=0, topic="T")),
    (
        "PopMessageProcessor.ack",
        lambda handle, now_ms: pop_processor().ack(handle, now_ms),
        dict(handle=handle(), now_ms=0),
    ),
    (
        "PopMessageProcessor.ack_orderly",
        lambda handle, now_ms: pop_processor().ack_orderly(handle, now_ms),
        dict(handle=handle(revive_qid=POP_ORDER_REVIVE_QUEUE), now_ms=0),
    ),
    (
        "PopMessageProcessor.notify_lock_free",
        lambda now_ms, long_polling: pop_processor().notify_lock_free(now_ms, long_polling),
        dict(now_ms=0, long_polling=PopLongPollingService()),
    ),
    (
        "ConsumerOrderInfoManager.update",
        lambda **kwargs: ConsumerOrderInfoManager().update(**kwargs),
        dict(
            attempt_id="a1",
            topic="T",
            group="G",
            queue_id=0,
            pop_time=0,
            invisible_time=60000,
            queue_offsets=[0, 1],
            now_ms=0,
        ),
    ),
    (
        "ConsumerOrderInfoManager.commit_and_next",
        lambda **kwargs: ConsumerOrderInfoManager().commit_and_next(**kwargs),
        dict(topic="T", group="G", queue_id=0, queue_offset=0, pop_time=0, now_ms=0),
    ),
    (
        "PopMessageProcessor.change_invisible_time",
        lambda handle, invisible_time, now_ms: pop_processor().change_invisible_time(handle, invisible_time, now_ms),
        dict(handle=handle(), invisible_time=1000, now_ms=0),
    ),
    (
        "PopReviveService",
        PopReviveService,
        dict(pop_message_processor=pop_processor(), revive_margin_ms=2000, start_ms=0),
    ),
    ("PopReviveService.run_due", lambda now_ms: PopReviveService(pop_processor()).run_due(now_ms), dict(now_ms=10**6)),
    ("PopProcessQueue", PopProcessQueue, dict(now_ms=0)),
    ("PopProcessQueue.inc_found_msg", lambda count: PopProcessQueue().inc_found_msg(count), dict(count=3)),
    ("TopicRouteInfoManager", TopicRouteInfoManager, dict(fetch_subscribe_info=lambda topic: MQS)),
    (
        "TopicRouteInfoManager.get_topic_subscribe_info",
        lambda topic: TopicRouteInfoManager(lambda name: MQS).get_topic_subscribe_info(topic),
        dict(topic="T"),
    ),
    (
        "QueryAssignmentProcessor",
        QueryAssignmentProcessor,
        dict(consumer_manager=ConsumerManager(), topic_route={"T": MQS}, broker_config=None),
    ),
    (
        "QueryAssignmentProcessor.set_message_request_mode",
        lambda topic, group, mode, pop_share_queue_num: query_assignment().set_message_request_mode(
            topic, group, mode, pop_share_queue_num
        ),
        dict(topic="T", group="G", mode="POP", pop_share_queue_num=1),
    ),
    (
        "QueryAssignmentProcessor.do_load_balance",
        lambda topic, group, client_id, message_model, strategy_name, mode, pop_share_queue_num: (
            query_assignment().do_load_balance(
                topic, group, client_id, message_model, strategy_name, mode, pop_share_queue_num
            )
        ),
        dict(
            topic="T",
            group="G",
            client_id="c1",
            message_model="CLUSTERING",
            strategy_name="AVG",
            mode="POP",
            pop_share_queue_num=1,
        ),
    ),
    (
        "QueryAssignmentProcessor.query_assignment",
        lambda topic, group, client_id, strategy_name, message_model: query_assignment().query_assignment(
            topic, group, client_id, strategy_name, message_model
        ),
        dict(topic="T", group="G", client_id="c1", message_model="CLUSTERING", strategy_name="AVG_BY_CIRCLE"),
    ),
    (
        "PopMessageProcessor.get_pop_offset",
        lambda topic, group, queue_id, init_mode, init: pop_processor().get_pop_offset(
            topic, group, queue_id, init_mode, init
        ),
        dict(topic="T", group="G", queue_id=0, init_mode=1, init=True),
    ),
    ("PopReviveService.revive", lambda now_ms: PopReviveService(pop_processor()).revive(now_ms), dict(now_ms=10**6)),
    ("tags_code_of", broker_protocol.tags_code_of, dict(tags="a")),
    ("build_pop_retry_topic", broker_protocol.build_pop_retry_topic, dict(topic="T", group="G", enable_retry_v2=False)),
    (
        "coerce_enum",
        lambda enum_cls, value: broker_protocol.coerce_enum(enum_cls, value, "value"),
        dict(enum_cls=broker_protocol.MessageModel, value="CLUSTERING"),
    ),
    ("MessageStore.read_queue_nums", lambda topic: store().read_queue_nums(topic), dict(topic="T")),
    ("MessageStore.reput", lambda now_ms: store().reput(now_ms), dict(now_ms=3)),
    (
        "MessageStore.check_in_mem_by_consume_offset",
        lambda topic, queue_id, consume_offset: store().check_in_mem_by_consume_offset(topic, queue_id, consume_offset),
        dict(topic="T", queue_id=0, consume_offset=0),
    ),
    (
        "BrokerMemberGroup",
        BrokerMemberGroup,
        dict(
            broker_name="broker-a",
            replicas=3,
            lock_in_strict_mode=True,
            total_replicas=3,
            enable_slave_acting_master=True,
            lock_max_live_time=60000,
        ),
    ),
    (
        "AdminBrokerProcessor",
        lambda member_group, broker_id, lock_in_strict_mode, total_replicas: AdminBrokerProcessor(
            member_group, broker_id, lock_in_strict_mode=lock_in_strict_mode, total_replicas=total_replicas
        ),
        dict(member_group=BrokerMemberGroup("broker-a"), broker_id=0, lock_in_strict_mode=True, total_replicas=2),
    ),
    (
        "AdminBrokerProcessor.lock_batch_mq",
        lambda group, client_id, mqs, now_ms, only_this_broker: (
            BrokerMemberGroup("broker-a", 3, lock_in_strict_mode=True, enable_slave_acting_master=True)
            .replicas[0]
            .lock_batch_mq(group, client_id, mqs, now_ms, only_this_broker)
        ),
        dict(group="G", client_id="c1", mqs=MQS, now_ms=0, only_this_broker=False),
    ),
    (
        "AdminBrokerProcessor.unlock_batch_mq",
        lambda group, client_id, mqs, only_this_broker: (
            BrokerMemberGroup("broker-a", lock_in_strict_mode=True)
            .replicas[0]
            .unlock_batch_mq(group, client_id, mqs, only_this_broker)
        ),
        dict(group="G", client_id="c1", mqs=MQS, only_this_broker=False),
    ),
    (
        "BrokerMemberGroup.stop",
        lambda broker_id: BrokerMemberGroup("broker-a", 3).stop(broker_id),
        dict(broker_id=1),
    ),
    (
        "BrokerMemberGroup.start",
        lambda broker_id: BrokerMemberGroup("broker-a", 3).start(broker_id),
        dict(broker_id=2),
    ),
    ("SlaveSynchronize", SlaveSynchronize, dict(offsets=ConsumerOffsetManager(), started_ms=0)),
    (
        "SlaveSynchronize.set_master_addr",
        lambda master_addr: SlaveSynchronize(ConsumerOffsetManager(), 0).set_master_addr(master_addr),
        dict(master_addr="broker-a:10911"),
    ),
    (
        "SlaveSynchronize.run",
        lambda now_ms, master_offsets: SlaveSynchronize(ConsumerOffsetManager(), 0).run(now_ms, master_offsets),
        dict(now_ms=61_000, master_offsets=ConsumerOffsetManager()),
    ),
    (
        "ConsumerOffsetManager.put_all",
        lambda other: ConsumerOffsetManager().put_all(other),
        dict(other=ConsumerOffsetManager()),
    ),
    (
        "BrokerMemberGroup.lock_batch_mq",
        lambda group, client_id, mqs, now_ms: BrokerMemberGroup("broker-a", 2, lock_in_strict_mode=True).lock_batch_mq(
            group, client_id, mqs, now_ms
        ),
        dict(group="G", client_id="c1", mqs=MQS, now_ms=0),
    ),
    (
        "BrokerMemberGroup.unlock_batch_mq",
        lambda group, client_id, mqs, now_ms: BrokerMemberGroup("broker-a").unlock_batch_mq(
            group, client_id, mqs, now_ms
        ),
        dict(group="G", client_id="c1", mqs=MQS, now_ms=0),
    ),
    (
        "BrokerMemberGroup.lock_owner",
        lambda broker_id, group, mq, now_ms: BrokerMemberGroup("broker-a", 2).lock_owner(broker_id, group, mq, now_ms),
        dict(broker_id=1, group="G", mq=MQ, now_ms=0),
    ),
    (
        "RebalanceLockManager.lock_owner",
        lambda group, mq, now_ms: RebalanceLockManager().lock_owner(group, mq, now_ms),
        dict(group="G", mq=MQ, now_ms=0),
    ),
    (
        "RebalanceLockManager.is_lock_all_expired",
        lambda group, now_ms: RebalanceLockManager().is_lock_all_expired(group, now_ms),
        dict(group="G", now_ms=0),
    ),
    (
        "PullRequestHoldService.held_count",
        lambda topic, queue_id: PullRequestHoldService(store()).held_count(topic, queue_id),
        dict(topic="T", queue_id=0),
    ),
    (
        "PullRequestHoldService.notify_master_online",
        lambda now_ms: PullRequestHoldService(store()).notify_master_online(now_ms),
        dict(now_ms=0),
    ),
    (
        "ConsumerManager.register_consumer_without_sub",
        lambda group, client_channel_info, consume_type, message_model, consume_from_where, is_notify_consumer_ids_changed_enable, now_ms: (  # noqa: E501 (a lambda's parameters cannot wrap)
            consumer_manager().register_consumer_without_sub(
                group,
                client_channel_info,
                consume_type,
                message_model,
                consume_from_where,
                is_notify_consumer_ids_changed_enable,
                now_ms,
            )
        ),
        dict(
            group="G",
            client_channel_info=ClientChannelInfo("ch2", "c2"),
            consume_type="CONSUME_PASSIVELY",
            message_model="CLUSTERING",
            consume_from_where="CONSUME_FROM_LAST_OFFSET",
            is_notify_consumer_ids_changed_enable=True,
            now_ms=0,
        ),
    ),
    (
        "ConsumerManager.find_subscription_data",
        lambda group, topic, from_compensation_table: consumer_manager().find_subscription_data(
            group, topic, from_compensation_table
        ),
        dict(group="G", topic="T", from_compensation_table=True),
    ),
    ("ProcessQueue.contains_message", lambda msg: pq_with().contains_message(msg), dict(msg=msg(1))),
    (
        "AllocateMessageQueueConsistentHash.ring",
        lambda cid_all: strategies.AllocateMessageQueueConsistentHash(3).ring(cid_all),
        dict(cid_all=CIDS),
    ),
    ("OffsetStore.persist", lambda mq: OffsetStore("G", InMemoryClientBrokerAPI()).persist(mq), dict(mq=MQ)),
    (
        "OffsetStore.update_and_freeze_offset",
        lambda mq, offset: OffsetStore("G", None).update_and_freeze_offset(mq, offset),
        dict(mq=MQ, offset=4),
    ),
    (
        "PullMessageService.execute_pull_request_immediately",
        lambda pull_request: PullMessageService().execute_pull_request_immediately(pull_request),
        dict(pull_request=pull_request()),
    ),
    ("RebalanceImpl.compute_pull_from_where", lambda mq: impl().compute_pull_from_where(mq), dict(mq=MQ)),
    (
        "RebalanceImpl.remove_process_queue",
        lambda mq, now_ms: impl().remove_process_queue(mq, now_ms),
        dict(mq=MQ, now_ms=0),
    ),
    ("query_assignment", proxy.query_assignment, dict(route=ROUTE, topic="T", fifo=True)),
    ("receive_queue", proxy.receive_queue, dict(route=ROUTE, topic="T", broker_name="broker-a")),
    (
        "ReceiptHandleManager.add_receipt_handle",
        lambda **kwargs: proxy.ReceiptHandleManager({"broker-a": pop_processor()}).add_receipt_handle(**kwargs),
        dict(channel="ch-1", group="G", handle=handle(), reconsume_times=0),
    ),
    (
        "ReceiptHandleManager.schedule_renew_task",
        lambda now_ms, is_online: proxy.ReceiptHandleManager({}).schedule_renew_task(now_ms, is_online),
        dict(now_ms=0, is_online=lambda channel, group: True),
    ),
    (
        "ReceiptHandleManager.clear_group",
        lambda **kwargs: proxy.ReceiptHandleManager({}).clear_group(**kwargs),
        dict(channel="ch-1", group="G", now_ms=0),
    ),
    (
        "PushConsumerImpl.scan_assignments",
        lambda topic, response: PushConsumerImpl("G", "c1").scan_assignments(topic, response),
        dict(topic="T", response=proxy.query_assignment(ROUTE, "T", False)),
    ),
    (
        "QueryAssignmentProcessor.allocate_for_pop",
        QueryAssignmentProcessor.allocate_for_pop,
        dict(strategy="AVG", consumer_group="G", client_id="c1", mq_all=MQS, cid_all=CIDS, pop_share_queue_num=1),
    ),
]

#: Arguments that take any object by design (an opaque request, a free-form address).
ANY_OBJECT = {("hold.PullRequest", "request_command"), ("ConsumerManager.do_channel_close_event", "remote_addr")}


def _fresh(value):
    """A new copy of mutable fixture objects, so that one example cannot leak state into the next."""
    if isinstance(value, ProcessQueue):
        return pq_with(value.msg_count) if value.msg_count else ProcessQueue()
    if isinstance(value, PullRequest):
        return pull_request()
    if isinstance(value, RebalanceImpl):
        return impl()
    if isinstance(value, MessageStore):
        return store()
    if isinstance(value, PopMessageProcessor):
        return pop_processor()
    if isinstance(value, LocalFileOffsetStore):
        return LocalFileOffsetStore("G")
    if isinstance(value, PullRequestHoldService):
        return PullRequestHoldService(store())
    if isinstance(value, ConsumerManager):
        return ConsumerManager()
    if isinstance(value, list):
        return [msg(m.queue_offset) if isinstance(m, Message) else m for m in value]
    return value


def call_with(label, fn, good, bad: dict):
    kwargs = {name: _fresh(value) for name, value in good.items()}
    kwargs.update(bad)
    with alarm():
        try:
            fn(**kwargs)
        except (ValueError, TypeError) as exc:
            text = str(exc)
            assert any(name in text for name in bad), (
                f"{label}({', '.join(f'{k}={v!r:.60}' for k, v in bad.items())}): {type(exc).__name__} {text!r} "
                f"names none of {sorted(bad)}"
            )


@pytest.mark.parametrize("label, fn, good", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_the_good_arguments_work(label, fn, good):
    """Each entry's good arguments go through (so the bad-argument runs below test the argument, not the setup)."""
    kwargs = {name: _fresh(value) for name, value in good.items()}
    with alarm():
        fn(**kwargs)


@pytest.mark.parametrize("label, fn, good", ENTRIES, ids=[e[0] for e in ENTRIES])
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_one_bad_argument_gets_an_error_naming_it(label, fn, good, data):
    slots = [name for name in good if (label, name) not in ANY_OBJECT]
    name = data.draw(st.sampled_from(slots), label="argument")
    value = data.draw(BAD, label="value")
    call_with(label, fn, good, {name: value})


@pytest.mark.parametrize(
    "label, fn, good", [e for e in ENTRIES if len(e[2]) >= 2], ids=lambda e: e if isinstance(e, str) else None
)
@settings(
    max_examples=max(1, EXAMPLES // 3), deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=st.data())
def test_two_bad_arguments_get_an_error_naming_one_of_them(label, fn, good, data):
    slots = [name for name in good if (label, name) not in ANY_OBJECT]
    names = data.draw(st.lists(st.sampled_from(slots), min_size=2, max_size=2, unique=True), label="arguments")
    call_with(label, fn, good, {name: data.draw(BAD, label=name) for name in names})


# ------------------------------------------------------------------------------------ issue 12 reproducers
def test_put_message_refuses_a_batch_repeating_an_offset_with_another_size():
    pq = ProcessQueue()
    with pytest.raises(ValueError, match="msgs: offset 5 appears twice"):
        pq.put_message([msg(5, body_size=10), msg(5, body_size=20)])
    assert pq.msg_count == 0 and pq.msg_size == 0
    pq._check()
    pq.put_message([msg(5, body_size=10), msg(5, body_size=10)])  # the same message twice: counted once, as in Java
    assert (pq.msg_count, pq.msg_size) == (1, 10)
    pq._check()


@pytest.mark.parametrize("bad, error", [(-2, ValueError), (math.nan, TypeError), (1.0, TypeError), (True, TypeError)])
def test_ack_index_below_minus_one_or_not_an_int_is_refused(bad, error):
    pq = ProcessQueue()
    msgs = [msg(o) for o in range(10)]
    pq.put_message(msgs)
    with pytest.raises(error, match="ack_index"):
        process_consume_result_concurrently(
            pq, MQ, msgs, "CONSUME_SUCCESS", offset_store=LocalFileOffsetStore("G"), ack_index=bad
        )
    assert pq.msg_count == 10  # nothing was acknowledged or sent back


def test_ack_index_minus_one_and_past_the_end_keep_their_java_meaning():
    for ack_index, sent_back in ((-1, 10), (3, 6), (10**12, 0)):
        pq = ProcessQueue()
        msgs = [msg(o) for o in range(10)]
        pq.put_message(msgs)
        out = process_consume_result_concurrently(
            pq, MQ, msgs, "CONSUME_SUCCESS", offset_store=LocalFileOffsetStore("G"), ack_index=ack_index
        )
        assert len(out.sent_back) == sent_back and out.offset == 10


@pytest.mark.parametrize(
    "topic, queue_id, error",
    [
        ("U", 0, "'U'@0"),
        ("T", 7, "'T'@7"),
        ("T", "x", "queue_id"),
        ("T", "", "queue_id"),
        ("", 0, "topic"),
        (None, 0, "topic"),
    ],
)
def test_hold_service_refuses_at_suspend_a_pull_it_could_never_scan(topic, queue_id, error):
    hold = PullRequestHoldService(store())
    with pytest.raises(ValueError, match=error):
        hold.suspend_pull_request(topic, queue_id, held_request())
    assert hold.held_count() == 0


@pytest.mark.parametrize(
    "field, value",
    [
        ("timeout_millis", math.nan),
        ("timeout_millis", math.inf),
        ("suspend_timestamp", math.nan),
        ("timeout_millis", -1),
        ("pull_from_this_offset", -1),
        ("pull_from_this_offset", 1.5),
    ],
)
def test_a_held_pull_has_finite_times(field, value):
    with pytest.raises(ValueError, match=field):
        held_request(**{field: value})


def test_a_store_failure_in_the_scan_is_logged_and_the_other_pulls_still_time_out():
    s = store()
    hold = PullRequestHoldService(s)
    hold.suspend_pull_request("T", 0, held_request(timeout_millis=1000))
    hold.suspend_pull_request("T", 1, held_request(timeout_millis=1000))

    class Failing:
        def get_max_offset(self, topic, queue_id):
            if queue_id == 0:
                raise RuntimeError("disk gone")
            return s.get_max_offset(topic, queue_id)

    hold.store = Failing()
    woken = hold.check_hold_request(5000)
    assert len(woken) == 1 and hold.held_count("T", 0) == 1 and hold.held_count("T", 1) == 0
    assert [(t, key, str(e)) for t, key, e in hold.failure_log] == [(5000, "T@0", "disk gone")]
    hold.store = s
    assert len(hold.check_hold_request(6000)) == 1 and hold.held_count() == 0


def test_periodic_services_catch_up_in_one_step_and_refuse_absurd_times():
    listener = DefaultConsumerIdsChangeListener()
    housekeeping = ClientHousekeepingService(ConsumerManager())
    started = time.perf_counter()
    with alarm():
        listener.run_due(1_700_000_000_000)
        housekeeping.run_due(1_700_000_000_000)
    assert time.perf_counter() - started < 0.5
    assert listener.next_flush_ms == 1_700_000_010_000 and housekeeping.next_scan_ms == 1_700_000_010_000
    for service in (listener, housekeeping, PullRequestHoldService(store()), PopReviveService(pop_processor())):
        with alarm(), pytest.raises(ValueError, match="now_ms"):
            service.run_due(2**64)
        with alarm(), pytest.raises(ValueError, match="now_ms"):
            service.run_due(MAX_TIME_MS + 1)
        with alarm():
            service.run_due(MAX_TIME_MS)


def test_one_step_catch_up_equals_the_period_by_period_loop():
    from rmqlib.broker.consumer_manager import next_period_after

    rng = random.Random(12)
    for _ in range(2000):
        period = rng.choice([1, 7, 10_000, 15_000])
        start = rng.randint(-(10**6), 10**6)
        now = start + rng.randint(-3 * period, 300 * period)
        expected = start
        while expected <= now:
            expected += period
        assert next_period_after(start, now, period) == expected


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: MQ.compare_to(None), "other"),
        (lambda: hashring.md5_hash(3), "key"),
        (lambda: protocol.java_string_hash(None), "s"),
        (lambda: check_pull_gates(None, PushConsumerConfig(), 0, orderly=False), "pq"),
        (
            lambda: RebalanceImpl(
                "G", "c1", InMemoryClientBrokerAPI(), strategies.AllocateMessageQueueAveragely(), config="x"
            ),
            "config",
        ),
        (lambda: PopMessageProcessor(None), "store"),
        (lambda: Message("T", 0, 0, 1, properties=[("MAX_OFFSET", "1")]), "properties"),
        (lambda: query_assignment().set_message_request_mode("T", "G", "POP", math.inf), "pop_share_queue_num"),
        (lambda: BrokerConfig(revive_queue_num=math.nan), "revive_queue_num"),
        (lambda: strategies.AllocateMachineRoomNearby(5, strategies.PrefixMachineRoomResolver()), "strategy"),
        (lambda: consumer_manager().unregister_consumer("G", None, True, 0), "client_channel_info"),
        (lambda: strategies.strategy_from_name("MACHINE_ROOM_NEARBY-" * 10_000 + "AVG"), "name"),
        (lambda: hashring.HashRing.build(["a", "b"], hashring.MAX_RING_POINTS), "virtual_node_cnt"),
        (lambda: send_back.retry_timeline("G", 10**9), "max_reconsume_times"),
        (lambda: MessageStore().create_topic("T", 10**9), "queue_nums"),
    ],
)
def test_issue_12_reproducers_get_an_error_naming_the_argument(call, name):
    with alarm():
        with pytest.raises((ValueError, TypeError), match=name):
            call()


def test_a_message_without_properties_is_cached_like_one_with_none():
    pq = ProcessQueue()
    assert pq.put_message([Message("T", 0, 0, 1, properties=None), Message("T", 0, 1, 1, properties=None)])
    assert pq.msg_acc_cnt == 0 and pq.msg_count == 2
    with pytest.raises(ValueError, match="properties: MAX_OFFSET"):
        Message("T", 0, 2, 1, properties={"MAX_OFFSET": "nine"})

"""Broker-side models: consumer registry, message store, long polling, locks, Pop.

Pure Python, no threads, no wall clock: every time-dependent call takes
``now_ms``; periodic services expose ``next_*_ms`` and ``run_due(now_ms)`` so a
simulator (or a notebook cell) decides when they run. Notifications and
answers to woken requests are records in outboxes, not network sends.

Modules, one idea each: ``client_manage`` (HEART_BEAT, the first way and the second), ``consumer_manager``
(the registry: CHANGE notify, 120 s scan), ``message_store`` (commit
log, consume queues, reput, getMessage, offsets), ``hold_service`` (long polling), ``pull_processor``
(PULL_MESSAGE), ``lock_manager`` (orderly locks), ``replica_locks`` (lock requests across a broker's replicas,
``lockInStrictMode``), ``slave_synchronize`` (a slave's copy of its master's offsets), ``send_check`` (whether a
send is taken), ``pop`` (Pop mode: pop, ack, revive), ``consumer_order_info`` (orderly Pop's batches),
``pop_long_polling`` (held empty pops), ``query_assignment`` (server-side allocation), ``topic_route_info`` (the
broker's copy of routes that allocation reads), ``admin`` (GET_CONSUME_STATS: how far a group is behind),
``stats`` (the counters behind its consume TPS).
"""

from rmqlib.broker.admin import ConsumeStats, OffsetWrapper, get_consume_stats
from rmqlib.broker.client_manage import ClientManageProcessor, HeartbeatAnswer
from rmqlib.broker.config import BrokerConfig, BrokerRole
from rmqlib.broker.consumer_manager import (
    ClientChannelInfo,
    ClientHousekeepingService,
    ConsumerGroupEvent,
    ConsumerGroupInfo,
    ConsumerIdsChangedNotification,
    ConsumerManager,
    DefaultConsumerIdsChangeListener,
    ListenerEvent,
)
from rmqlib.broker.consumer_order_info import ConsumerOrderInfoManager, OrderInfo
from rmqlib.broker.hold_service import (
    ManyPullRequest,
    NotifyMessageArrivingListener,
    PullRequest,
    PullRequestHoldService,
    build_key,
)
from rmqlib.broker.lock_manager import (
    REBALANCE_LOCK_MAX_LIVE_TIME,
    LockEntry,
    RebalanceLockManager,
    UnlockReport,
)
from rmqlib.broker.message_store import (
    ConsumerOffsetManager,
    GetMessageResult,
    GetMessageStatus,
    MessageStore,
    StoredMessage,
)
from rmqlib.broker.pop import (
    POP_ORDER_REVIVE_QUEUE,
    AckHandle,
    ConsumeInitMode,
    PopCheckPoint,
    PopMessageProcessor,
    PoppedMessage,
    PopResult,
    PopReviveService,
)
from rmqlib.broker.pop_long_polling import PopLongPollingService
from rmqlib.broker.protocol import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    MessageRequestMode,
    ResponseCode,
    SubscriptionData,
    build_pop_retry_topic,
    build_retry_topic,
    java_string_hash,
)
from rmqlib.broker.pull_processor import (
    BROKER_SUSPEND_MAX_TIME_MILLIS,
    PullMessageProcessor,
    PullMessageRequest,
    PullResponse,
)
from rmqlib.broker.query_assignment import (
    SERVER_SIDE_STRATEGIES,
    MessageQueueAssignment,
    QueryAssignmentProcessor,
)
from rmqlib.broker.replica_locks import AdminBrokerProcessor, BrokerMemberGroup
from rmqlib.broker.slave_synchronize import SlaveSynchronize
from rmqlib.broker.stats import BrokerStatsManager, StatsItem, StatsItemSet, StatsSnapshot
from rmqlib.broker.topic_route_info import TopicRouteInfoManager

__all__ = [
    "AckHandle",
    "AdminBrokerProcessor",
    "BROKER_SUSPEND_MAX_TIME_MILLIS",
    "BrokerConfig",
    "BrokerRole",
    "BrokerMemberGroup",
    "BrokerStatsManager",
    "ClientChannelInfo",
    "ClientHousekeepingService",
    "ClientManageProcessor",
    "ConsumeFromWhere",
    "ConsumeStats",
    "ConsumeInitMode",
    "ConsumeType",
    "ConsumerGroupEvent",
    "ConsumerGroupInfo",
    "ConsumerIdsChangedNotification",
    "ConsumerManager",
    "ConsumerOrderInfoManager",
    "ConsumerOffsetManager",
    "DefaultConsumerIdsChangeListener",
    "GetMessageResult",
    "GetMessageStatus",
    "HeartbeatAnswer",
    "ListenerEvent",
    "LockEntry",
    "ManyPullRequest",
    "MessageModel",
    "MessageQueueAssignment",
    "MessageRequestMode",
    "MessageStore",
    "NotifyMessageArrivingListener",
    "OffsetWrapper",
    "OrderInfo",
    "POP_ORDER_REVIVE_QUEUE",
    "PopCheckPoint",
    "PopLongPollingService",
    "PopMessageProcessor",
    "PopResult",
    "PopReviveService",
    "PoppedMessage",
    "PullMessageProcessor",
    "PullMessageRequest",
    "PullRequest",
    "PullRequestHoldService",
    "PullResponse",
    "QueryAssignmentProcessor",
    "REBALANCE_LOCK_MAX_LIVE_TIME",
    "RebalanceLockManager",
    "SlaveSynchronize",
    "StatsItem",
    "StatsItemSet",
    "StatsSnapshot",
    "TopicRouteInfoManager",
    "ResponseCode",
    "StoredMessage",
    "SubscriptionData",
    "UnlockReport",
    "SERVER_SIDE_STRATEGIES",
    "build_key",
    "build_pop_retry_topic",
    "build_retry_topic",
    "get_consume_stats",
    "java_string_hash",
]

"""Consumer-side runtime models: ProcessQueue, offsets, the pull path, RebalanceImpl,
RebalanceService. Pure Python, driven by explicit ``now_ms``; see
docs/java-twins-client.md for the Java class each one mirrors.
"""

from rmqlib.client.api import (
    FLOW_CONTROL,
    RETRY_GROUP_TOPIC_PREFIX,
    SUB_ALL,
    SUBSCRIPTION_NOT_LATEST,
    BrokerError,
    ClientBrokerAPI,
    ConsumerData,
    MQClientError,
    OffsetNotFoundError,
    SubscriptionData,
    retry_topic,
)
from rmqlib.client.config import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    PushConsumerConfig,
)
from rmqlib.client.consume import (
    MAX_TIME_CONSUME_CONTINUOUSLY,
    ConcurrentConsumeOutcome,
    ConsumeConcurrentlyStatus,
    ConsumeMessageOrderlyService,
    ConsumeOrderlyStatus,
    OrderlyStep,
    OrderlyConsumeOutcome,
    process_consume_result_concurrently,
    process_consume_result_orderly,
)
from rmqlib.client.fake_api import InMemoryClientBrokerAPI
from rmqlib.client.message import PROPERTY_MAX_OFFSET, Message
from rmqlib.client.offset_store import (
    PERSIST_CONSUMER_OFFSET_INTERVAL,
    ControllableOffset,
    LocalFileOffsetStore,
    OffsetStore,
    ReadOffsetType,
)
from rmqlib.client.pop import PopProcessQueue, PopRequest
from rmqlib.client.process_queue import (
    CLEAN_EXPIRED_MSG_DELAY_LEVEL,
    PULL_MAX_IDLE_TIME,
    REBALANCE_LOCK_INTERVAL,
    REBALANCE_LOCK_MAX_LIVE_TIME,
    ProcessQueue,
)
from rmqlib.client.pull import (
    BROKER_SUSPEND_MAX_TIME_MILLIS,
    CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND,
    PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL,
    PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL,
    PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION,
    PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL,
    PULL_TIME_DELAY_MILLS_WHEN_SUSPEND,
    PullCommand,
    PullDecision,
    PullMessageService,
    PullOutcome,
    PullRequest,
    PullResult,
    PullStatus,
    check_pull_gates,
    process_pull_exception,
    process_pull_result,
    pull_message,
)
from rmqlib.client.rebalance import (
    DISPATCH_POP_REQUEST_DELAY_MILLS,
    DISPATCH_PULL_REQUEST_DELAY_MILLS,
    REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS,
    UNLOCK_DELAY_TIME_MILLS,
    RebalanceImpl,
)
from rmqlib.client.rebalance_service import MIN_INTERVAL, WAIT_INTERVAL, RebalanceService

import types as _types

__all__ = sorted(n for n, v in globals().items()
                 if not n.startswith("_") and not isinstance(v, _types.ModuleType))

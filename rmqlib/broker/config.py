"""Broker and store settings that decide rebalance-related behaviour.

Each field keeps the Java default and names the Java property it models. The
broker models take one of these objects so a notebook can flip a single switch
(``long_polling_enable=False``) and watch the behaviour change.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rmqlib.broker.protocol import coerce_enum
from rmqlib.checks import check_bool, check_int, check_str


class BrokerRole(str, enum.Enum):
    """A broker's place in its replica set (the store's ``brokerRole``).

    Mirrors: store/.../config/BrokerRole.java
    """

    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


# ---- BrokerConfig defaults (common/.../BrokerConfig.java) -------------------
LONG_POLLING_ENABLE = True  # BrokerConfig.longPollingEnable
SHORT_POLLING_TIME_MILLS = 1000  # BrokerConfig.shortPollingTimeMills
NOTIFY_CONSUMER_IDS_CHANGED_ENABLE = True  # BrokerConfig.notifyConsumerIdsChangedEnable
REAL_TIME_NOTIFY_CONSUMER_CHANGE = True  # BrokerConfig.realTimeNotifyConsumerChange
CHANNEL_EXPIRED_TIMEOUT = 120_000  # BrokerConfig.channelExpiredTimeout
SUBSCRIPTION_EXPIRED_TIMEOUT = 600_000  # BrokerConfig.subscriptionExpiredTimeout
POP_FROM_RETRY_PROBABILITY = 20  # BrokerConfig.popFromRetryProbability (percent)
REVIVE_QUEUE_NUM = 8  # BrokerConfig.reviveQueueNum
REVIVE_INTERVAL = 1000  # BrokerConfig.reviveInterval
ENABLE_RETRY_TOPIC_V2 = False  # BrokerConfig.enableRetryTopicV2
INIT_POP_OFFSET_BY_CHECK_MSG_IN_MEM = True  # BrokerConfig.initPopOffsetByCheckMsgInMem
SERVER_LOAD_BALANCER_ENABLE = True  # BrokerConfig.serverLoadBalancerEnable
DEFAULT_MESSAGE_REQUEST_MODE = "PULL"  # BrokerConfig.defaultMessageRequestMode
DEFAULT_POP_SHARE_QUEUE_NUM = -1  # BrokerConfig.defaultPopShareQueueNum
SLAVE_READ_ENABLE = False  # BrokerConfig.slaveReadEnable

# ---- hard-coded service periods ---------------------------------------------
LONG_POLLING_CHECK_INTERVAL_MS = 5000  # PullRequestHoldService#run: waitForRunning(5 * 1000)
CLIENT_HOUSEKEEPING_INTERVAL_MS = 10_000  # ClientHousekeepingService#start: 1000 * 10
NOTIFY_CONSUMER_CHANGE_INITIAL_DELAY_MS = 30_000  # DefaultConsumerIdsChangeListener: scheduleAtFixedRate(.., 30, ..)
NOTIFY_CONSUMER_CHANGE_PERIOD_MS = 15_000  # DefaultConsumerIdsChangeListener: scheduleAtFixedRate(.., .., 15, SECONDS)

# ---- MessageStoreConfig defaults (store/.../config/MessageStoreConfig.java) -
MAX_FILTER_MESSAGE_SIZE = 16_000  # MessageStoreConfig.maxFilterMessageSize
CQ_STORE_UNIT_SIZE = 20  # ConsumeQueue.CQ_STORE_UNIT_SIZE (bytes per consume-queue entry)
MAX_TRANSFER_COUNT_ON_MESSAGE_IN_MEMORY = 32  # MessageStoreConfig.maxTransferCountOnMessageInMemory
MAX_TRANSFER_BYTES_ON_MESSAGE_IN_MEMORY = 256 * 1024  # MessageStoreConfig.maxTransferBytesOnMessageInMemory
MAX_TRANSFER_COUNT_ON_MESSAGE_IN_DISK = 8  # MessageStoreConfig.maxTransferCountOnMessageInDisk
MAX_TRANSFER_BYTES_ON_MESSAGE_IN_DISK = 64 * 1024  # MessageStoreConfig.maxTransferBytesOnMessageInDisk
MAX_PULL_MSG_SIZE = 128 * 1024 * 1024  # DefaultMessageStore.MAX_PULL_MSG_SIZE
BROKER_ROLE = BrokerRole.ASYNC_MASTER  # MessageStoreConfig.brokerRole
OFFSET_CHECK_IN_SLAVE = False  # MessageStoreConfig.offsetCheckInSlave: a slave's getMessage corrects no offset


@dataclass
class BrokerConfig:
    """The BrokerConfig switches the broker models read.

    Mirrors: common/.../BrokerConfig.java
    """

    long_polling_enable: bool = LONG_POLLING_ENABLE
    short_polling_time_mills: int = SHORT_POLLING_TIME_MILLS
    notify_consumer_ids_changed_enable: bool = NOTIFY_CONSUMER_IDS_CHANGED_ENABLE
    real_time_notify_consumer_change: bool = REAL_TIME_NOTIFY_CONSUMER_CHANGE
    channel_expired_timeout: int = CHANNEL_EXPIRED_TIMEOUT
    subscription_expired_timeout: int = SUBSCRIPTION_EXPIRED_TIMEOUT
    pop_from_retry_probability: int = POP_FROM_RETRY_PROBABILITY
    revive_queue_num: int = REVIVE_QUEUE_NUM
    revive_interval: int = REVIVE_INTERVAL
    enable_retry_topic_v2: bool = ENABLE_RETRY_TOPIC_V2
    init_pop_offset_by_check_msg_in_mem: bool = INIT_POP_OFFSET_BY_CHECK_MSG_IN_MEM
    server_load_balancer_enable: bool = SERVER_LOAD_BALANCER_ENABLE
    default_message_request_mode: str = DEFAULT_MESSAGE_REQUEST_MODE
    default_pop_share_queue_num: int = DEFAULT_POP_SHARE_QUEUE_NUM
    broker_name: str = "broker-a"
    slave_read_enable: bool = SLAVE_READ_ENABLE
    broker_role: BrokerRole = BROKER_ROLE  # MessageStoreConfig.brokerRole, kept here: the pull path reads both
    offset_check_in_slave: bool = OFFSET_CHECK_IN_SLAVE  # MessageStoreConfig.offsetCheckInSlave, kept here too

    def __post_init__(self) -> None:
        for name in (
            "long_polling_enable",
            "notify_consumer_ids_changed_enable",
            "real_time_notify_consumer_change",
            "enable_retry_topic_v2",
            "init_pop_offset_by_check_msg_in_mem",
            "server_load_balancer_enable",
            "slave_read_enable",
            "offset_check_in_slave",
        ):
            check_bool(getattr(self, name), name)
        for name in (
            "short_polling_time_mills",
            "channel_expired_timeout",
            "subscription_expired_timeout",
            "revive_interval",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                check_int(value, name)  # a wrong type: the type error
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        check_int(self.pop_from_retry_probability, "pop_from_retry_probability")
        if not 0 <= self.pop_from_retry_probability <= 100:
            raise ValueError(f"pop_from_retry_probability must be in [0, 100], got {self.pop_from_retry_probability!r}")
        check_int(self.revive_queue_num, "revive_queue_num")
        if self.revive_queue_num < 1:
            raise ValueError(f"revive_queue_num must be >= 1, got {self.revive_queue_num!r}")
        if self.default_message_request_mode not in ("PULL", "POP"):
            raise ValueError(
                f"default_message_request_mode must be 'PULL' or 'POP', got {self.default_message_request_mode!r}"
            )
        check_int(self.default_pop_share_queue_num, "default_pop_share_queue_num")
        check_str(self.broker_name, "broker_name")
        self.broker_role = coerce_enum(BrokerRole, self.broker_role, "broker_role")

"""The vocabulary client and broker share on the wire: consume types, message models, retry topics.

In RocketMQ these live in the ``remoting`` and ``common`` modules that both the
client and the broker depend on; here ``rmqlib.client`` and ``rmqlib.broker``
both import them from this one place. Enum values are the Java names, so
``MessageModel("CLUSTERING")`` works.
"""

from __future__ import annotations

from enum import Enum

#: Prefix of a consumer group's retry topic (common/.../MixAll.java#RETRY_GROUP_TOPIC_PREFIX).
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
#: Subscription expression meaning "all tags" (SubscriptionData.java#SUB_ALL).
SUB_ALL = "*"


class MessageModel(str, Enum):
    """Mirrors: remoting/.../protocol/heartbeat/MessageModel.java"""

    BROADCASTING = "BROADCASTING"
    CLUSTERING = "CLUSTERING"


class ConsumeType(str, Enum):
    """Mirrors: remoting/.../protocol/heartbeat/ConsumeType.java"""

    CONSUME_ACTIVELY = "CONSUME_ACTIVELY"  # pull / lite-pull consumers
    CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # push consumers
    CONSUME_POP = "CONSUME_POP"


class ConsumeFromWhere(str, Enum):
    """Where a queue without a stored offset starts. Mirrors: common/.../consumer/ConsumeFromWhere.java"""

    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"  # deprecated
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"  # deprecated
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"  # deprecated
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


def retry_topic(consumer_group: str) -> str:
    """``%RETRY%<group>``, a push consumer group's retry topic (MixAll.java#getRetryTopic)."""
    return RETRY_GROUP_TOPIC_PREFIX + consumer_group

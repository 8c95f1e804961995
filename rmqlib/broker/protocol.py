"""Wire-level vocabulary the broker models share: codes, enums, subscriptions.

Response codes keep their Java integer values so a transcript can be compared
with a real broker's log. Enums use their Java names as values, so
``MessageModel("CLUSTERING")`` works and a string from another module can be
coerced with ``MessageModel(x)``.
"""

from __future__ import annotations

import enum
from typing import TypeVar

# re-exported ("X as X"): the broker modules import these from here
from rmqlib.checks import ArgumentTypeError as ArgumentTypeError
from rmqlib.checks import check_time as check_time
from rmqlib.checks import check_time_ms as check_time_ms
from rmqlib.protocol import RETRY_GROUP_TOPIC_PREFIX as RETRY_GROUP_TOPIC_PREFIX
from rmqlib.protocol import SUB_ALL as SUB_ALL
from rmqlib.protocol import ConsumeFromWhere as ConsumeFromWhere
from rmqlib.protocol import ConsumeType as ConsumeType
from rmqlib.protocol import MessageModel as MessageModel
from rmqlib.protocol import SubscriptionData as SubscriptionData
from rmqlib.protocol import java_string_hash as java_string_hash
from rmqlib.protocol import retry_topic as retry_topic

E = TypeVar("E", bound=enum.Enum)

POP_RETRY_SEPARATOR_V1 = "_"  # KeyBuilder.POP_RETRY_SEPARATOR_V1
POP_RETRY_SEPARATOR_V2 = "+"  # KeyBuilder.POP_RETRY_SEPARATOR_V2


class ResponseCode(enum.IntEnum):
    """The response codes the modelled processors can answer with, those a producer retries a send on, and those
    the admin tool's consume stats fail with.

    Mirrors: remoting/.../protocol/ResponseCode.java (and RemotingSysResponseCode)
    """

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26
    INVALID_PARAMETER = 29
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    CONSUMER_NOT_ONLINE = 206
    NO_MESSAGE = 208
    POLLING_FULL = 209
    POLLING_TIMEOUT = 210
    BROADCAST_CONSUMPTION = 213
    GO_AWAY = 1500


class MessageRequestMode(str, enum.Enum):
    """Mirrors: common/.../message/MessageRequestMode.java"""

    PULL = "PULL"
    POP = "POP"


def tags_code_of(tags: str | None) -> int:
    """The tag code the commit log writes for a message (0 when untagged).

    Mirrors: store/.../CommitLog.java#checkMessageAndReturnSize (tagsString2tagsCode)
    """
    if tags is None or tags == "":
        return 0
    if type(tags) is not str:
        raise ArgumentTypeError(f"tags must be a str or None, got {type(tags).__name__}")
    return java_string_hash(tags)


def build_pop_retry_topic(topic: str, group: str, enable_retry_v2: bool = False) -> str:
    """``%RETRY%<group>_<topic>`` (or ``+`` with enableRetryTopicV2).

    Mirrors: common/.../KeyBuilder.java#buildPopRetryTopic
    """
    for name, value in (("topic", topic), ("group", group)):
        if not isinstance(value, str):
            raise ArgumentTypeError(f"{name} must be a str, got {type(value).__name__}")
    if enable_retry_v2 is not True and enable_retry_v2 is not False:
        raise ArgumentTypeError(f"enable_retry_v2 must be True or False, got {enable_retry_v2!r}")
    sep = POP_RETRY_SEPARATOR_V2 if enable_retry_v2 else POP_RETRY_SEPARATOR_V1
    return RETRY_GROUP_TOPIC_PREFIX + group + sep + topic


build_retry_topic = retry_topic  # MixAll.java#getRetryTopic


def coerce_enum(enum_cls: type[E], value: object, argname: str) -> E:
    """Accept an enum member or its Java name; anything else is a ValueError."""
    if not (isinstance(enum_cls, type) and issubclass(enum_cls, enum.Enum)):
        raise ArgumentTypeError(f"enum_cls must be an Enum class, got {enum_cls!r}")
    if isinstance(value, enum_cls):
        return value
    try:
        return enum_cls(value)
    except (ValueError, TypeError):
        names = ", ".join(m.value for m in enum_cls)
        raise ValueError(f"{argname} must be one of {names}, got {value!r}") from None


def check_non_negative_int(value: object, argname: str) -> int:
    if type(value) is int and value >= 0:  # the common case, without the full checks below
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{argname} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{argname} must be >= 0, got {value}")
    return value


def check_schedule_time(now_ms: object, argname: str = "now_ms") -> int:
    """:func:`~rmqlib.checks.check_time` for the periodic services (``run_due``), which also refuse
    ``|now_ms| > MAX_TIME_MS`` (2**53 ms, some 285,000 years): their schedules add periods to it."""
    return check_time_ms(now_ms, argname)

"""Wire-level vocabulary the broker models share: codes, enums, subscriptions.

Response codes keep their Java integer values so a transcript can be compared
with a real broker's log. Enums use their Java names as values, so
``MessageModel("CLUSTERING")`` works and a string from another module can be
coerced with ``MessageModel(x)``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rmqlib.protocol import (RETRY_GROUP_TOPIC_PREFIX, SUB_ALL, ConsumeFromWhere, ConsumeType,  # noqa: F401
                             MessageModel, retry_topic)

POP_RETRY_SEPARATOR_V1 = "_"  # KeyBuilder.POP_RETRY_SEPARATOR_V1
POP_RETRY_SEPARATOR_V2 = "+"  # KeyBuilder.POP_RETRY_SEPARATOR_V2


class ResponseCode(enum.IntEnum):
    """The response codes the modelled processors can answer with.

    Mirrors: remoting/.../protocol/ResponseCode.java (and RemotingSysResponseCode)
    """

    SUCCESS = 0
    SYSTEM_ERROR = 1
    MESSAGE_ILLEGAL = 13
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
    NO_MESSAGE = 208
    POLLING_FULL = 209
    POLLING_TIMEOUT = 210


class MessageRequestMode(str, enum.Enum):
    """Mirrors: common/.../message/MessageRequestMode.java"""

    PULL = "PULL"
    POP = "POP"


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode()``: 31-polynomial over UTF-16 code units, int32.

    The broker stores a message's tag as this code in the consume queue and a
    tag subscription matches by comparing codes, so two tags with the same
    hash match each other exactly as on a real broker.
    """
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def tags_code_of(tags: str | None) -> int:
    """The tag code the commit log writes for a message (0 when untagged).

    Mirrors: store/.../CommitLog.java#checkMessageAndReturnSize (tagsString2tagsCode)
    """
    if tags is None or tags == "":
        return 0
    return java_string_hash(tags)


@dataclass(frozen=True)
class SubscriptionData:
    """One topic subscription of a consumer group, as sent in a heartbeat.

    ``sub_version`` is the client's timestamp of the subscription (Java stamps
    it with ``System.currentTimeMillis()``; here the caller passes it).

    Mirrors: remoting/.../protocol/heartbeat/SubscriptionData.java
    (parsing: remoting/.../protocol/filter/FilterAPI.java#buildSubscriptionData)
    """

    topic: str
    sub_string: str = SUB_ALL
    sub_version: int = 0
    tags_set: frozenset = field(default=frozenset(), compare=False)
    code_set: frozenset = field(default=frozenset(), compare=False)

    def __post_init__(self):
        if not isinstance(self.topic, str) or not self.topic:
            raise ValueError(f"topic must be a non-empty str, got {self.topic!r}")
        if isinstance(self.sub_version, bool) or not isinstance(self.sub_version, int):
            raise ValueError(f"sub_version must be an int, got {self.sub_version!r}")
        sub = self.sub_string
        if sub is None or sub == "" or sub == SUB_ALL:
            object.__setattr__(self, "sub_string", SUB_ALL)
            object.__setattr__(self, "tags_set", frozenset())
            object.__setattr__(self, "code_set", frozenset())
            return
        tags = [t.strip() for t in sub.split("||")]
        tags = [t for t in tags if t]
        if not tags:
            # FilterAPI throws "subString split error" when no tag survives.
            raise ValueError(f"sub_string has no tag after splitting on '||': {sub!r}")
        object.__setattr__(self, "tags_set", frozenset(tags))
        object.__setattr__(self, "code_set", frozenset(java_string_hash(t) for t in tags))

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        """Tag filter on a consume-queue entry.

        ``None`` means "no tag code known" and matches, which is why the hold
        service's periodic scan (it passes no tag code) wakes every held pull.

        Mirrors: broker/.../filter/ExpressionMessageFilter.java#isMatchedByConsumeQueue
        """
        if tags_code is None:
            return True
        if self.sub_string == SUB_ALL:
            return True
        return tags_code in self.code_set


def build_pop_retry_topic(topic: str, group: str, enable_retry_v2: bool = False) -> str:
    """``%RETRY%<group>_<topic>`` (or ``+`` with enableRetryTopicV2).

    Mirrors: common/.../KeyBuilder.java#buildPopRetryTopic
    """
    sep = POP_RETRY_SEPARATOR_V2 if enable_retry_v2 else POP_RETRY_SEPARATOR_V1
    return RETRY_GROUP_TOPIC_PREFIX + group + sep + topic


build_retry_topic = retry_topic  # MixAll.java#getRetryTopic


def coerce_enum(enum_cls, value, argname: str):
    """Accept an enum member or its Java name; anything else is a ValueError."""
    if isinstance(value, enum_cls):
        return value
    try:
        return enum_cls(value)
    except ValueError:
        names = ", ".join(m.value for m in enum_cls)
        raise ValueError(f"{argname} must be one of {names}, got {value!r}") from None


def check_non_negative_int(value, argname: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{argname} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{argname} must be >= 0, got {value}")
    return value


def check_time(now_ms, argname: str = "now_ms"):
    """A time in milliseconds: an int (or a finite float, as simpy's clock may give)."""
    if isinstance(now_ms, bool) or not isinstance(now_ms, (int, float)) or now_ms != now_ms \
            or now_ms in (float("inf"), float("-inf")):
        raise ValueError(f"{argname} must be a finite number of milliseconds, got {now_ms!r}")
    return now_ms

"""The vocabulary client and broker share on the wire: consume types, message models, retry topics.

In RocketMQ these live in the ``remoting`` and ``common`` modules that both the
client and the broker depend on; here ``rmqlib.client`` and ``rmqlib.broker``
both import them from this one place. Enum values are the Java names, so
``MessageModel("CLUSTERING")`` works.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from rmqlib.checks import ArgumentTypeError, check_int, check_str, check_time

#: Prefix of a consumer group's retry topic (common/.../MixAll.java#RETRY_GROUP_TOPIC_PREFIX).
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
#: Subscription expression meaning "all tags" (SubscriptionData.java#SUB_ALL).
SUB_ALL = "*"
#: The broker id of a broker name's master; its slaves have 1, 2, ... (common/.../MixAll.java#MASTER_ID).
MASTER_ID = 0


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
    # deprecated
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"  # deprecated
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"  # deprecated
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"


def retry_topic(consumer_group: str) -> str:
    """``%RETRY%<group>``, a push consumer group's retry topic (MixAll.java#getRetryTopic)."""
    check_str(consumer_group, "consumer_group", empty=True)
    return RETRY_GROUP_TOPIC_PREFIX + consumer_group


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode()``: 31-polynomial over UTF-16 code units, int32.

    The broker stores a message's tag as this code in the consume queue and a
    tag subscription matches by comparing codes, so two tags with the same
    hash match each other exactly as on a real broker.
    """
    check_str(s, "s", empty=True)
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def java_hash_map_keys(keys: Iterable[str], capacity: int | None = None) -> list[str]:
    """The order a ``java.util.HashMap`` of the distinct strings ``keys`` (put in the order given) iterates them: by
    bucket, ``(h ^ (h >>> 16)) & (capacity - 1)`` of each key's ``hashCode`` ``h``, a bucket's keys in the order put.
    ``capacity`` None: the table ``new HashMap<>(map)`` sizes for them (the power of two at or above
    ``int(n / 0.75 + 1)``), which never resizes while they are put. Buckets turned into trees (eight keys or more in
    one bucket of a table of 64 or more) are not modelled. Checked against OpenJDK 17's own answers
    (tests/data/java_hash_map_order.json). Mirrors: java.util.HashMap (``hash``, ``putMapEntries``, ``tableSizeFor``,
    its key iterator)"""
    names = [check_str(key, "keys: a key", empty=True) for key in keys]
    if len(set(names)) != len(names):
        raise ValueError("keys: every key must be distinct")
    if capacity is None:
        capacity = 1 << max(0, int(len(names) / 0.75 + 1.0) - 1).bit_length()
    elif isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1 or capacity & (capacity - 1):
        raise ValueError(f"capacity must be a power of two, got {capacity!r}")

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(names, key=bucket)  # stable: a bucket keeps the order its keys were put


@dataclass
class SubscriptionData:
    """One topic a consumer subscribes to, as the client keeps it and sends it in heartbeats.

    Mirrors: remoting/.../protocol/heartbeat/SubscriptionData.java
    (parsing: remoting/.../protocol/filter/FilterAPI.java#buildSubscriptionData)

    ``tags_set`` and ``code_set`` are parsed from ``sub_string`` (``"a || b"``;
    empty, blank or ``*`` means every tag). ``sub_version`` is the client's
    timestamp of the subscription; ``messageQueueChanged`` bumps it, and a
    broker that has not yet seen the newer version answers pulls with
    SUBSCRIPTION_NOT_LATEST. Equality ignores the parsed sets.
    """

    topic: str
    sub_string: str = SUB_ALL
    sub_version: int = 0
    tags_set: frozenset[str] = field(default=frozenset(), compare=False)
    code_set: frozenset[int] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.topic, str) or not self.topic:
            raise (ValueError if isinstance(self.topic, str) else ArgumentTypeError)(
                f"topic must be a non-empty str, got {self.topic!r}"
            )
        check_int(self.sub_version, "sub_version")
        sub = self.sub_string
        if sub is not None and not isinstance(sub, str):
            raise ArgumentTypeError(f"sub_string must be a str or None, got {type(sub).__name__}")
        if sub is None or sub == SUB_ALL or not sub.strip():
            self.sub_string, self.tags_set, self.code_set = SUB_ALL, frozenset(), frozenset()
            return
        tags = [t.strip() for t in sub.split("||")]
        tags = [t for t in tags if t]
        if not tags:
            # FilterAPI throws "subString split error" when no tag survives.
            raise ValueError(f"sub_string has no tag after splitting on '||': {sub!r}")
        self.tags_set = frozenset(tags)
        self.code_set = frozenset(java_string_hash(t) for t in tags)

    @classmethod
    def build(cls, topic: str, sub_string: str | None = SUB_ALL, now_ms: int = 0) -> SubscriptionData:
        """FilterAPI.buildSubscriptionData: parse ``sub_string``, version it ``now_ms``."""
        check_time(now_ms)
        return cls(topic, SUB_ALL if sub_string is None else sub_string, now_ms)

    def matches(self, tags: str | None) -> bool:
        """Client-side re-check of a pulled message's tag (PullAPIWrapper.java#processPullResult)."""
        if tags is not None:
            check_str(tags, "tags", empty=True)
        if not self.tags_set:
            return True
        return tags is not None and tags in self.tags_set

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        """Broker-side tag filter on a consume-queue entry.

        ``None`` means "no tag code known" and matches, which is why the hold
        service's periodic scan (it passes no tag code) wakes every held pull.

        Mirrors: broker/.../filter/ExpressionMessageFilter.java#isMatchedByConsumeQueue
        """
        if tags_code is None or self.sub_string == SUB_ALL:
            return True
        check_int(tags_code, "tags_code")
        return tags_code in self.code_set

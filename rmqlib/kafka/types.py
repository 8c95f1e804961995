"""The two values every Kafka assignor speaks in: a ``TopicPartition`` and a member's ``Subscription``.

Mirrors: clients/src/main/java/org/apache/kafka/common/TopicPartition.java and the nested class
``ConsumerPartitionAssignor.Subscription`` (clients/.../consumer/ConsumerPartitionAssignor.java).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from rmqlib.checks import ArgumentTypeError, check_int, check_mapping, check_str_or_none
from rmqlib.kafka._java import topic_partition_hash

#: Kafka's legal topic name: ASCII letters, digits, '.', '_' and '-', at most 249 characters, not "." or "..".
#: Mirrors: clients/.../common/internals/Topic.java (LEGAL_CHARS, MAX_NAME_LENGTH). Being ASCII, such names order
#: the same way in Python and in Java.
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+\Z")

#: Bounds that keep every model call small enough to finish in well under a second or two: a topic of more
#: partitions, a group of more members or a call over more partitions in all is refused with a ValueError.
MAX_PARTITIONS_PER_TOPIC = 100_000
MAX_TOTAL_PARTITIONS = 100_000
MAX_MEMBERS = 10_000
MAX_TOPICS = 10_000
MAX_ID_LENGTH = 1_000


def check_topic(value: object, name: str = "topic") -> str:
    """A legal Kafka topic name (Topic.validate's rules)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a topic name (a string), got {value!r}")
    if not value or value in (".", "..") or len(value) > MAX_TOPIC_NAME_LENGTH or not _LEGAL_TOPIC.match(value):
        raise ValueError(
            f"{name} must be a legal Kafka topic name (1-{MAX_TOPIC_NAME_LENGTH} of "
            f"[a-zA-Z0-9._-], not '.' or '..'), got {value[:80]!r}"
        )
    return value


def check_member_id(value: object, name: str = "member id") -> str:
    """A member id: a non-empty string of at most MAX_ID_LENGTH characters."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a string, got {value!r}")
    if not value or len(value) > MAX_ID_LENGTH:
        raise ValueError(f"{name} must be a non-empty string of at most {MAX_ID_LENGTH} characters, got {value[:80]!r}")
    return value


_VALID_TOPICS: set[str] = set()  # names already checked (bounded: cleared when it grows past MAX_TOPICS)


@dataclass(frozen=True, eq=False, slots=True)
class TopicPartition:
    """One partition of a topic; orders by topic, then partition number; prints as ``topic-partition`` like Java.

    Mirrors: clients/src/main/java/org/apache/kafka/common/TopicPartition.java. Like Kafka's, it caches its hash:
    assignors hash and compare partitions millions of times.
    """

    topic: str
    partition: int
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        topic, partition = self.topic, self.partition
        if topic not in _VALID_TOPICS:
            check_topic(topic, "topic")
            if len(_VALID_TOPICS) >= MAX_TOPICS:
                _VALID_TOPICS.clear()
            _VALID_TOPICS.add(topic)
        if type(partition) is not int or not 0 <= partition < MAX_PARTITIONS_PER_TOPIC:
            object.__setattr__(self, "partition", check_int(partition, "partition", 0, MAX_PARTITIONS_PER_TOPIC - 1))
        object.__setattr__(self, "_hash", hash((topic, self.partition)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if type(other) is not TopicPartition:
            return NotImplemented
        return self._hash == other._hash and self.partition == other.partition and self.topic == other.topic

    def __lt__(self, other: object) -> bool:
        if type(other) is not TopicPartition:
            return NotImplemented
        if self.topic != other.topic:
            return self.topic < other.topic
        return self.partition < other.partition

    def __le__(self, other: object) -> bool:
        return self == other or self < other

    def __gt__(self, other: object) -> bool:
        if type(other) is not TopicPartition:
            return NotImplemented
        return other < self

    def __ge__(self, other: object) -> bool:
        return self == other or self > other

    def __reduce__(self) -> tuple[type[TopicPartition], tuple[str, int]]:
        return (TopicPartition, (self.topic, self.partition))  # the hash is recomputed in the receiving process

    def java_hash(self) -> int:
        """``TopicPartition.hashCode()``."""
        return topic_partition_hash(self.topic, self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def tp_hash(tp: TopicPartition) -> int:
    return tp.java_hash()


@dataclass(frozen=True)
class Subscription:
    """What a member sends when it joins: its topics, the partitions it owns now, its generation and rack.

    Mirrors: ``ConsumerPartitionAssignor.Subscription`` (clients/.../consumer/ConsumerPartitionAssignor.java).
    ``generation`` is the generation of the assignment the member owns (``-1``/``None``: none known);
    ``group_instance_id`` is static membership's ``group.instance.id``, which orders members before their member ids
    do (``AbstractPartitionAssignor.MemberInfo.compareTo``). ``rack_id`` is kept but, as in Kafka's
    ``assign(Map<String, Integer>, ...)`` entry point, which knows no replica racks, it changes no assignment.
    For the eager ``StickyAssignor`` Kafka carries the owned partitions and generation in the subscription's user
    data instead of these fields; this model reads both from here.
    """

    topics: tuple[str, ...]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    rack_id: str | None = None
    group_instance_id: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        topics = self.topics
        if isinstance(topics, (str, bytes)) or not hasattr(topics, "__iter__"):
            raise ArgumentTypeError(f"topics must be a sequence of topic names, got {topics!r}")
        topics = tuple(topics)
        if len(topics) > MAX_TOPICS:
            raise ValueError(f"topics must hold at most {MAX_TOPICS} topic names, got {len(topics)}")
        for i, topic in enumerate(topics):
            check_topic(topic, f"topics[{i}]")
        if len(set(topics)) != len(topics):
            raise ValueError(f"topics must not repeat a topic, got {list(topics)[:10]!r}")
        owned = self.owned_partitions
        if isinstance(owned, (str, bytes, TopicPartition)) or not hasattr(owned, "__iter__"):
            raise ArgumentTypeError(f"owned_partitions must be a sequence of TopicPartition, got {owned!r}")
        owned = tuple(owned)
        if len(owned) > MAX_TOTAL_PARTITIONS:
            raise ValueError(f"owned_partitions must hold at most {MAX_TOTAL_PARTITIONS} partitions, got {len(owned)}")
        for i, tp in enumerate(owned):
            if not isinstance(tp, TopicPartition):
                raise ArgumentTypeError(f"owned_partitions[{i}] must be a TopicPartition, got {tp!r}")
        if len(set(owned)) != len(owned):
            raise ValueError("owned_partitions must not repeat a partition")
        if self.generation is not None:
            check_int(self.generation, "generation", -1, 2**31 - 1)
        check_str_or_none(self.rack_id, "rack_id")
        if self.group_instance_id is not None:
            check_member_id(self.group_instance_id, "group_instance_id")
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "owned_partitions", owned)


def check_partitions_per_topic(value: Mapping[str, object], name: str = "partitions_per_topic") -> dict[str, int]:
    """A mapping topic -> number of partitions (>= 0), within the size bounds."""
    check_mapping(value, name)
    out: dict[str, int] = {}
    total = 0
    for topic, count in value.items():
        check_topic(topic, f"{name} key")
        out[topic] = check_int(count, f"{name}[{topic!r}]", 0, MAX_PARTITIONS_PER_TOPIC)
        total += out[topic]
        if len(out) > MAX_TOPICS:
            raise ValueError(f"{name} must hold at most {MAX_TOPICS} topics")
    if total > MAX_TOTAL_PARTITIONS:
        raise ValueError(f"{name} must hold at most {MAX_TOTAL_PARTITIONS} partitions in all, got {total}")
    return out


def check_subscriptions(value: Mapping[str, object], name: str = "subscriptions") -> dict[str, Subscription]:
    """A mapping member id -> Subscription, within the size bounds."""
    check_mapping(value, name)
    if len(value) > MAX_MEMBERS:
        raise ValueError(f"{name} must hold at most {MAX_MEMBERS} members, got {len(value)}")
    out: dict[str, Subscription] = {}
    for member, sub in value.items():
        check_member_id(member, f"{name} key")
        if not isinstance(sub, Subscription):
            raise ArgumentTypeError(f"{name}[{member!r}] must be a Subscription, got {sub!r}")
        out[member] = sub
    return out


def check_assignment(value: Mapping[str, object], name: str) -> dict[str, list[TopicPartition]]:
    """A mapping member id -> sequence of TopicPartition in which no partition appears twice."""
    check_mapping(value, name)
    out: dict[str, list[TopicPartition]] = {}
    seen: dict[TopicPartition, str] = {}
    for member, tps in value.items():
        check_member_id(member, f"{name} key")
        if isinstance(tps, (str, bytes, TopicPartition)) or not hasattr(tps, "__iter__"):
            raise ArgumentTypeError(f"{name}[{member!r}] must be a sequence of TopicPartition, got {tps!r}")
        items = list(tps)
        if len(items) > MAX_TOTAL_PARTITIONS:
            raise ValueError(f"{name}[{member!r}] must hold at most {MAX_TOTAL_PARTITIONS} partitions")
        for tp in items:
            if not isinstance(tp, TopicPartition):
                raise ArgumentTypeError(f"{name}[{member!r}] must hold TopicPartition, got {tp!r}")
            if tp in seen:
                raise ValueError(f"{name}: {tp} is assigned to both {seen[tp]!r} and {member!r}")
            seen[tp] = member
        out[member] = items
    return out


def check_in_range(
    tps_by_member: Mapping[str, list[TopicPartition]], partitions_per_topic: Mapping[str, int], name: str
) -> None:
    """Every partition of an existing topic is below that topic's partition count (Kafka never shrinks a topic)."""
    for member, tps in tps_by_member.items():
        for tp in tps:
            count = partitions_per_topic.get(tp.topic)
            if count is not None and tp.partition >= count:
                raise ValueError(f"{name}[{member!r}] holds {tp}, but topic {tp.topic!r} has {count} partitions")

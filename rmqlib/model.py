"""MessageQueue and the Java orderings that every strategy depends on.

Java compares strings by UTF-16 code units, Python by code points; the two
disagree as soon as a character outside the Basic Multilingual Plane meets one
in U+E000..U+FFFF. Java's ``MessageQueue.compareTo`` subtracts queue ids in
32-bit arithmetic, so far-apart ids compare the wrong way round. Both quirks
decide who gets which queue, so both are mirrored here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import total_ordering

from rmqlib.checks import ArgumentTypeError, check_items, check_str

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


def java_string_compare(a: str, b: str) -> int:
    """Sign of Java ``a.compareTo(b)``: UTF-16 code-unit order.

    Mirrors: java/lang/String.java#compareTo
    """
    ka, kb = utf16_key(check_str(a, "a", empty=True)), utf16_key(check_str(b, "b", empty=True))
    return (ka > kb) - (ka < kb)


def utf16_key(s: str) -> bytes:
    """A sort key that orders strings the way Java ``String.compareTo`` does."""
    # Big-endian UTF-16 bytes compare exactly like the code-unit sequence.
    if type(s) is not str:
        check_str(s, "s", empty=True)
    return s.encode("utf-16-be", "surrogatepass")


def java_sorted_cids(cids: Iterable[str]) -> list[str]:
    """Client ids sorted like Java ``Collections.sort(cidAll)`` in RebalanceImpl."""
    return sorted(check_items(cids, "cids (cid_all)", str), key=utf16_key)


def java_split(s: str, sep: str) -> list[str]:
    """Java ``String.split`` for a literal, non-regex separator.

    Like Java it drops trailing empty strings, and a string without the
    separator comes back whole (so ``""`` gives ``[""]`` but ``"@"`` gives ``[]``).
    """
    if type(s) is not str or type(sep) is not str or not sep:
        check_str(s, "s", empty=True)
        check_str(sep, "sep")
    parts = s.split(sep)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _int32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


@total_ordering
class MessageQueue:
    """One queue of a topic on one broker, with Java's equality, order and text.

    Mirrors: common/.../message/MessageQueue.java
    """

    __slots__ = ("topic", "broker_name", "queue_id", "_hash", "_names_key")
    # the slots' types (set once in __init__, through object.__setattr__: the instance is immutable); the three
    # fields are read straight from their slots, the cheapest attribute Python has
    topic: str
    broker_name: str
    queue_id: int
    _hash: int
    _names_key: tuple[bytes, bytes]  # utf16_key(topic), utf16_key(broker_name)

    def __init__(self, topic: str, broker_name: str, queue_id: int) -> None:
        if not isinstance(topic, str):
            raise ArgumentTypeError(f"topic must be str, got {type(topic).__name__}")
        if not isinstance(broker_name, str):
            raise ArgumentTypeError(f"broker_name must be str, got {type(broker_name).__name__}")
        if isinstance(queue_id, bool) or not isinstance(queue_id, int):
            raise ArgumentTypeError(f"queue_id must be int, got {type(queue_id).__name__}")
        if not INT_MIN <= queue_id <= INT_MAX:
            raise ValueError(f"queue_id must fit a Java int, got {queue_id}")
        object.__setattr__(self, "topic", topic)
        object.__setattr__(self, "broker_name", broker_name)
        object.__setattr__(self, "queue_id", queue_id)
        object.__setattr__(self, "_hash", hash((topic, broker_name, queue_id)))
        object.__setattr__(self, "_names_key", (utf16_key(topic), utf16_key(broker_name)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("MessageQueue is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("MessageQueue is immutable")

    def __reduce__(self) -> tuple[type[MessageQueue], tuple[str, str, int]]:
        return (MessageQueue, (self.topic, self.broker_name, self.queue_id))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageQueue):
            return NotImplemented
        return self.queue_id == other.queue_id and self.topic == other.topic and self.broker_name == other.broker_name

    def compare_to(self, other: MessageQueue) -> int:
        """Java ``compareTo``, including the 32-bit overflow of ``queueId - other.queueId``."""
        if not isinstance(other, MessageQueue):
            raise ArgumentTypeError(f"other must be a MessageQueue, got {type(other).__name__}")
        a, b = self._names_key, other._names_key
        if a != b:
            return -1 if a < b else 1
        return _int32(self.queue_id - other.queue_id)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, MessageQueue):
            return NotImplemented
        a, b = self._names_key, other._names_key
        if a != b:
            return a < b
        return _int32(self.queue_id - other.queue_id) < 0

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"

    def __repr__(self) -> str:
        return f"MessageQueue({self.topic!r}, {self.broker_name!r}, {self.queue_id})"


def java_sorted_mqs(mqs: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Queues sorted like Java ``Collections.sort(mqAll)`` in RebalanceImpl.

    Python's list sort is the same TimSort as Java's ``ComparableTimSort`` and
    asks only ``a < b``, which here is Java's ``compareTo(a, b) < 0``.
    """
    mqs = list(check_items(mqs, "mqs (mq_all)", MessageQueue))
    ids = [mq.queue_id for mq in mqs]
    if ids and max(ids) - min(ids) <= INT_MAX:
        # No two ids overflow a 32-bit subtraction, so compareTo is the plain order of (names, queue id): sorting
        # by that key gives the very list TimSort gives with compareTo (both are stable), without a Python call
        # per comparison (a group sorting 1,000 queues on every round spends most of its time there otherwise).
        return sorted(mqs, key=_sort_key)
    return sorted(mqs)


def _sort_key(mq: MessageQueue) -> tuple[tuple[bytes, bytes], int]:
    return mq._names_key, mq.queue_id

"""The few Java behaviours Kafka's assignors lean on without saying so: ``String.hashCode``, ``TopicPartition.hashCode``
and the iteration order of ``java.util.HashMap`` / ``HashSet``.

Several of Kafka's assignors walk a ``HashMap`` (the sticky assignor keeps owned partitions member by member in the
order its ``consumerToOwnedPartitions`` map iterates; the group coordinator's uniform assignor hands out extra quota in
the order ``GroupSpec.memberIds()`` iterates). That order is a fixed function of the keys' hash codes and the
table's capacity, so a model that wants the same answer as Kafka has to reproduce it. This module does, for tables
that only grow (no removal) and whose bins never turn into trees (a bin becomes a tree only when eight keys share it
in a table of 64 or more buckets; below that Java doubles the table, which is modelled).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

from rmqlib.model import utf16_key

_MASK32 = 0xFFFFFFFF
_TREEIFY_THRESHOLD = 8  # java.util.HashMap.TREEIFY_THRESHOLD
_MIN_TREEIFY_CAPACITY = 64  # java.util.HashMap.MIN_TREEIFY_CAPACITY
DEFAULT_CAPACITY = 16  # java.util.HashMap.DEFAULT_INITIAL_CAPACITY
_LOAD_FACTOR = 0.75  # java.util.HashMap.DEFAULT_LOAD_FACTOR


def int32(x: int) -> int:
    """``x`` wrapped to Java's 32-bit ``int``."""
    return ((x + 2**31) & _MASK32) - 2**31


def string_hash(s: str) -> int:
    """Java ``String.hashCode()``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, as a signed ``int``."""
    h = 0
    data = utf16_key(s)
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """Kafka ``TopicPartition.hashCode()``: ``31 * (31 + partition) + topic.hashCode()``."""
    return int32(31 * (31 + partition) + string_hash(topic))


def _spread(h: int) -> int:
    """``HashMap.hash``: the hash code with its high half folded into the low half (as an unsigned value)."""
    h &= _MASK32
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``capacity`` (at least 1)."""
    n = 1
    while n < capacity:
        n <<= 1
    return n


K = TypeVar("K", bound=Hashable)


class JavaHashSet(Generic[K]):
    """A set that iterates in ``java.util.HashSet`` order (growing table, insertion order within a bin).

    Supports what the sticky assignor's ``PartitionMovements`` does with its sets: add, remove, membership, first.
    """

    __slots__ = ("_hash", "_cap", "_bins", "_size")

    def __init__(self, hash_fn: Callable[[K], int], capacity: int = DEFAULT_CAPACITY) -> None:
        self._hash = hash_fn
        self._cap = table_size_for(capacity)
        self._bins: dict[int, list[K]] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, item: K) -> bool:
        return item in self._bins.get(_spread(self._hash(item)) & (self._cap - 1), ())

    def _resize(self) -> None:
        old = self._bins
        self._cap <<= 1
        self._bins = {}
        for index in sorted(old):
            for item in old[index]:
                self._bins.setdefault(_spread(self._hash(item)) & (self._cap - 1), []).append(item)

    def add(self, item: K) -> bool:
        index = _spread(self._hash(item)) & (self._cap - 1)
        chain = self._bins.setdefault(index, [])
        if item in chain:
            return False
        chain.append(item)
        if len(chain) > _TREEIFY_THRESHOLD and self._cap < _MIN_TREEIFY_CAPACITY:
            self._resize()  # HashMap.treeifyBin resizes a small table instead of making a tree
        self._size += 1
        if self._size > self._cap * _LOAD_FACTOR:
            self._resize()
        return True

    def remove(self, item: K) -> None:
        index = _spread(self._hash(item)) & (self._cap - 1)
        chain = self._bins[index]
        chain.remove(item)
        if not chain:
            del self._bins[index]
        self._size -= 1

    def __iter__(self) -> Iterator[K]:
        for index in sorted(self._bins):
            yield from self._bins[index]

    def first(self) -> K:
        """``set.iterator().next()``."""
        return next(iter(self))


def hash_order(keys: Iterable[K], hash_fn: Callable[[K], int], capacity: int = DEFAULT_CAPACITY) -> list[K]:
    """The order a ``HashMap``/``HashSet`` that received ``keys`` (in this order, duplicates ignored) iterates them."""
    table = JavaHashSet(hash_fn, capacity)
    for key in keys:
        table.add(key)
    return list(table)


def string_hash_order(keys: Iterable[str]) -> list[str]:
    """:func:`hash_order` for strings, inserted in Java ``String`` order (our stand-in for an unknown insertion order:
    it only decides the order of keys that share a bin)."""
    return hash_order(sorted(keys, key=utf16_key), string_hash)

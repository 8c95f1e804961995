"""Consumer offsets: the client's in-memory table and what has reached durable storage.

A consumer commits progress in two steps. The consume services write the
offset to an in-memory table (:meth:`OffsetStore.update_offset`); a timer
(``persistConsumerOffsetInterval``, 5 s) and the rebalance push it out
(:meth:`OffsetStore.persist`). For CLUSTERING the durable copy lives on the
broker (``RemoteBrokerOffsetStore``), for BROADCASTING in a local file
(``LocalFileOffsetStore``). A crash loses whatever was only in memory, so the
next owner re-reads the older durable offset and consumes some messages again.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from rmqlib.checks import ArgumentTypeError, check_bool, check_items, check_mapping, check_methods, check_str_or_none
from rmqlib.client.api import ClientBrokerAPI, OffsetNotFoundError
from rmqlib.model import MessageQueue

#: Default period of ``MQClientInstance#persistAllConsumerOffset`` (ClientConfig.persistConsumerOffsetInterval).
PERSIST_CONSUMER_OFFSET_INTERVAL = 5000


class ReadOffsetType(str, Enum):
    """Mirrors: client/.../consumer/store/ReadOffsetType.java"""

    READ_FROM_MEMORY = "READ_FROM_MEMORY"
    READ_FROM_STORE = "READ_FROM_STORE"
    MEMORY_FIRST_THEN_STORE = "MEMORY_FIRST_THEN_STORE"


_READ_FROM_MEMORY = ReadOffsetType.READ_FROM_MEMORY  # ``EnumClass.MEMBER`` is a slow lookup (hot path)


class ControllableOffset:
    """An offset that can be frozen so that later updates are ignored.

    Mirrors: client/.../consumer/store/ControllableOffset.java
    """

    __slots__ = ("offset", "allow_to_update")

    def __init__(self, offset: int):
        _check_offset(offset)
        self.offset = offset
        self.allow_to_update = True

    def update(self, target: int, increase_only: bool = False) -> None:
        _check_offset(target, "target")
        check_bool(increase_only, "increase_only")
        self._update_trusted(target, increase_only)

    def _update_trusted(self, target: int, increase_only: bool) -> None:
        """:meth:`update` for a caller that has checked both arguments (the offset stores)."""
        if self.allow_to_update:
            self.offset = max(target, self.offset) if increase_only else target

    def update_and_freeze(self, target: int) -> None:
        _check_offset(target, "target")
        self.allow_to_update = False
        self.offset = target

    def __repr__(self) -> str:
        return f"ControllableOffset({self.offset}{'' if self.allow_to_update else ', frozen'})"


def _check_mq(mq: object) -> None:
    if not isinstance(mq, MessageQueue):
        raise ArgumentTypeError(f"mq must be MessageQueue, got {type(mq).__name__}")


def _check_offset(offset: object, name: str = "offset") -> None:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ArgumentTypeError(f"{name} must be int, got {type(offset).__name__}")
    if offset < 0:
        raise ValueError(f"{name} must be >= 0, got {offset}")


def _check_mqs(mqs: Iterable[MessageQueue]) -> set[MessageQueue]:
    checked: set[MessageQueue] = check_items(mqs, "mqs", MessageQueue, into=set)
    return checked


class _OffsetStoreBase:
    """The in-memory half shared by both stores."""

    def __init__(self, consumer_group: str):
        if not isinstance(consumer_group, str) or not consumer_group:
            raise (ValueError if isinstance(consumer_group, str) else ArgumentTypeError)(
                f"consumer_group must be a non-empty str, got {consumer_group!r}"
            )
        self.consumer_group = consumer_group
        self.offset_table: dict[MessageQueue, ControllableOffset] = {}

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        """Record progress in memory only.

        ``increase_only=True`` (concurrent service, empty-queue correction) never
        moves the offset back; ``False`` (orderly service) overwrites it. A frozen
        offset (see :meth:`update_and_freeze_offset`) is not changed.
        """
        _check_mq(mq)
        _check_offset(offset)
        check_bool(increase_only, "increase_only")
        self._update_offset_trusted(mq, offset, increase_only)

    def _update_offset_trusted(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        """:meth:`update_offset` for a caller that has checked its arguments (the consume services)."""
        cur = self.offset_table.get(mq)
        if cur is None:
            self.offset_table[mq] = ControllableOffset(offset)
        else:
            cur._update_trusted(offset, increase_only)  # Java: offsetOld.update(offset, increaseOnly)

    def update_and_freeze_offset(self, mq: MessageQueue, offset: int) -> None:
        """Set the offset and ignore later updates until :meth:`remove_offset` (OFFSET_ILLEGAL fix)."""
        _check_mq(mq)
        _check_offset(offset)
        self.offset_table.setdefault(mq, ControllableOffset(offset)).update_and_freeze(offset)

    def remove_offset(self, mq: MessageQueue) -> None:
        """Forget the in-memory offset (after persisting, when a queue is given away)."""
        _check_mq(mq)
        self.offset_table.pop(mq, None)

    def clone_offset_table(self, topic: str | None = None) -> dict[MessageQueue, int]:
        check_str_or_none(topic, "topic")
        return {mq: o.offset for mq, o in self.offset_table.items() if not topic or mq.topic == topic}

    def _read_memory(self, mq: MessageQueue) -> int | None:
        cur = self.offset_table.get(mq)
        return None if cur is None else cur.offset

    def read_offset(self, mq: MessageQueue, type: ReadOffsetType) -> int:
        """Read an offset: >= 0, or -1 when none is known (Java return codes)."""
        _check_mq(mq)
        if type is _READ_FROM_MEMORY:  # the pull path's read, once per pull
            cur = self.offset_table.get(mq)
            return -1 if cur is None else cur.offset
        try:
            type = ReadOffsetType(type)
        except (ValueError, TypeError):
            names = ", ".join(m.value for m in ReadOffsetType)
            raise ValueError(f"type: {type!r} is not a valid ReadOffsetType (one of {names})") from None
        if type in (ReadOffsetType.READ_FROM_MEMORY, ReadOffsetType.MEMORY_FIRST_THEN_STORE):
            mem = self._read_memory(mq)
            if mem is not None:
                return mem
            if type is ReadOffsetType.READ_FROM_MEMORY:
                return -1
        return self._read_store(mq)

    def _read_store(self, mq: MessageQueue) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def persist_all(self, mqs: Iterable[MessageQueue]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def persist(self, mq: MessageQueue) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class OffsetStore(_OffsetStoreBase):
    """A CLUSTERING consumer's offsets: memory table plus the broker's durable copy.

    Mirrors: client/.../consumer/store/RemoteBrokerOffsetStore.java

    ``read_offset(..., READ_FROM_STORE)`` asks the broker and caches the answer
    in memory; it returns -1 when the broker has no offset and -2 when the RPC
    fails. :meth:`persist` sends the in-memory offset oneway: failures are
    swallowed, as in Java.
    """

    def __init__(self, consumer_group: str, api: ClientBrokerAPI):
        super().__init__(consumer_group)
        if api is not None:  # None: no broker reachable (every read fails with -2, every persist is lost)
            check_methods(api, "api", "query_consumer_offset", "update_consumer_offset")
        self.api = api

    def _read_store(self, mq: MessageQueue) -> int:
        try:
            broker_offset = self.api.query_consumer_offset(self.consumer_group, mq)
        except OffsetNotFoundError:
            return -1
        except Exception:
            return -2
        self.update_offset(mq, broker_offset, False)
        return broker_offset

    def _send(self, mq: MessageQueue, offset: int) -> None:
        try:
            self.api.update_consumer_offset(self.consumer_group, mq, offset)
        except Exception:
            pass  # oneway: Java logs and moves on

    def persist(self, mq: MessageQueue) -> None:
        """Push one queue's in-memory offset to the broker (no-op if none is held)."""
        _check_mq(mq)
        cur = self.offset_table.get(mq)
        if cur is not None:
            self._send(mq, cur.offset)

    def persist_all(self, mqs: Iterable[MessageQueue]) -> None:
        """Persist the offsets of ``mqs`` and forget every other in-memory offset.

        Mirrors: RemoteBrokerOffsetStore.java#persistAll (called every 5 s with the
        queues the consumer currently holds). An empty ``mqs`` does nothing.
        """
        mqs = _check_mqs(mqs)
        if not mqs:
            return
        unused = []
        for mq, cur in list(self.offset_table.items()):
            if mq in mqs:
                self._send(mq, cur.offset)
            else:
                unused.append(mq)
        for mq in unused:
            del self.offset_table[mq]


class LocalFileOffsetStore(_OffsetStoreBase):
    """A BROADCASTING consumer's offsets: memory table plus a local file.

    Mirrors: client/.../consumer/store/LocalFileOffsetStore.java

    The "file" is a dict passed in (or created); hand the same dict to a new store
    to model a restart on the same machine. Reads that find nothing return -1
    (never -2, as in Java).
    """

    def __init__(self, consumer_group: str, file: dict[MessageQueue, int] | None = None):
        super().__init__(consumer_group)
        if file is not None:
            check_mapping(file, "file")
        self.file: dict[MessageQueue, int] = {} if file is None else file

    def load(self) -> None:
        """Read the file into memory (LocalFileOffsetStore.java#load, at consumer start)."""
        for mq, off in self.file.items():
            if not isinstance(mq, MessageQueue):
                raise ArgumentTypeError(f"file: keys must be MessageQueue, got {type(mq).__name__}")
            _check_offset(off, f"file[{mq}]")
        for mq, off in self.file.items():
            self.offset_table[mq] = ControllableOffset(off)

    def _read_store(self, mq: MessageQueue) -> int:
        off = self.file.get(mq)
        if off is None:
            return -1
        self.update_offset(mq, off, False)
        return off

    def persist(self, mq: MessageQueue) -> None:
        _check_mq(mq)
        cur = self.offset_table.get(mq)
        if cur is not None:
            self.file[mq] = cur.offset

    def persist_all(self, mqs: Iterable[MessageQueue]) -> None:
        mqs = _check_mqs(mqs)
        if not mqs:
            return
        for mq, cur in self.offset_table.items():
            if mq in mqs:
                self.file[mq] = cur.offset

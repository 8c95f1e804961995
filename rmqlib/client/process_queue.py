"""ProcessQueue: the consumer's local cache of pulled, not yet acknowledged messages.

One ProcessQueue exists per owned MessageQueue. The pull path puts messages in,
the consume services take them out, and what is left decides the offset that
may be committed: the lowest offset still held. That one rule is why a
concurrent consumer re-delivers after a crash or a rebalance, and why a slow
message pins the committed offset while faster ones overtake it.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator

from rmqlib.checks import ArgumentTypeError, check_bool, check_int, check_items, check_time
from rmqlib.client.message import PROPERTY_MAX_OFFSET, Message

__all__ = [
    "CLEAN_EXPIRED_MSG_DELAY_LEVEL",
    "CLEAN_EXPIRED_MSG_MAX_CHECKS",
    "PULL_MAX_IDLE_TIME",
    "REBALANCE_LOCK_INTERVAL",
    "REBALANCE_LOCK_MAX_LIVE_TIME",
    "ProcessQueue",
    "check_time",
]

# Constants of client/.../impl/consumer/ProcessQueue.java (JVM system properties there).
REBALANCE_LOCK_MAX_LIVE_TIME = 30_000  # rocketmq.client.rebalance.lockMaxLiveTime
REBALANCE_LOCK_INTERVAL = 20_000  # rocketmq.client.rebalance.lockInterval
PULL_MAX_IDLE_TIME = 120_000  # rocketmq.client.pull.pullMaxIdleTime

#: How many head messages one ``cleanExpiredMsg`` pass looks at (ProcessQueue.java#cleanExpiredMsg).
CLEAN_EXPIRED_MSG_MAX_CHECKS = 16
#: Delay level an expired message is sent back with (ProcessQueue.java#cleanExpiredMsg).
CLEAN_EXPIRED_MSG_DELAY_LEVEL = 3


class _OffsetMap:
    """A small sorted map offset -> Message (the role of Java's ``TreeMap<Long, MessageExt>``).

    A dict for lookups plus a key list kept sorted with ``bisect``.
    """

    __slots__ = ("_d", "_keys")

    def __init__(self) -> None:
        self._d: dict[int, Message] = {}
        self._keys: list[int] = []

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, offset: int) -> bool:
        return offset in self._d

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._keys))

    def get(self, offset: int) -> Message | None:
        return self._d.get(offset)

    def put(self, offset: int, msg: Message) -> Message | None:
        """Insert or overwrite; return the previous value like ``TreeMap.put``."""
        d = self._d
        old = d.get(offset)
        if old is None:
            keys = self._keys
            if not keys or offset > keys[-1]:
                keys.append(offset)  # the usual case: pulled offsets arrive in order
            else:
                insort(keys, offset)
        d[offset] = msg
        return old

    def put_many(self, msgs: list[Message]) -> list[Message | None]:
        """``put(m.queue_offset, m)`` for each message in turn; the previous values, in the same order."""
        d, keys = self._d, self._keys
        olds: list[Message | None] = []
        for msg in msgs:
            offset = msg.queue_offset
            old = d.get(offset)
            if old is None:
                if not keys or offset > keys[-1]:
                    keys.append(offset)
                else:
                    insort(keys, offset)
            d[offset] = msg
            olds.append(old)
        return olds

    def remove(self, offset: int) -> Message | None:
        msg = self._d.pop(offset, None)
        if msg is not None:
            keys = self._keys
            del keys[bisect_left(keys, offset)]
        return msg

    def remove_many(self, offsets: Iterable[int]) -> list[Message | None]:
        """``remove(offset)`` for each offset in turn; the removed values (None where nothing was held)."""
        d, keys = self._d, self._keys
        removed: list[Message | None] = []
        for offset in offsets:
            msg = d.pop(offset, None)
            if msg is not None:
                if keys[0] == offset:  # the usual case: the oldest offset goes first
                    del keys[0]
                else:
                    del keys[bisect_left(keys, offset)]
            removed.append(msg)
        return removed

    def span(self) -> int:
        """Last key minus first key (0 when empty)."""
        keys = self._keys
        return keys[-1] - keys[0] if keys else 0

    def first_key(self) -> int:
        return self._keys[0]

    def first_key_or(self, default: int) -> int:
        """The first key, or ``default`` when the map is empty."""
        keys = self._keys
        return keys[0] if keys else default

    def last_key(self) -> int:
        return self._keys[-1]

    def poll_first(self) -> tuple[int, Message] | None:
        if not self._keys:
            return None
        k = self._keys.pop(0)
        return k, self._d.pop(k)

    def values(self) -> list[Message]:
        return [self._d[k] for k in self._keys]

    def keys(self) -> list[int]:
        return list(self._keys)

    def clear(self) -> None:
        self._d.clear()
        self._keys.clear()

    def _check(self, name: str) -> None:
        """The map's invariants: keys sorted and unique, the same as the dict's, each holding its own offset."""
        keys = self._keys
        assert keys == sorted(set(keys)), f"{name} keys not sorted/unique"
        assert set(keys) == set(self._d), f"{name} key list and dict disagree"
        for k in keys:
            assert self._d[k].queue_offset == k, f"{name}: key {k} holds another offset"


def _require_messages(msgs: object, arg: str = "msgs") -> list[Message]:
    """``msgs`` as a list of Message (a list is checked and returned as is: callers only read it)."""
    checked: list[Message] = check_items(msgs, arg, Message)
    return checked


class ProcessQueue:
    """The messages pulled from one queue and not yet acknowledged, plus their bookkeeping.

    Mirrors: client/.../impl/consumer/ProcessQueue.java

    ``msg_tree`` holds messages waiting for (or, in concurrent mode, under)
    consumption; orderly consumption moves a batch into ``consuming_msg_orderly``
    with :meth:`take_messages` and settles it with :meth:`commit`,
    :meth:`rollback` or :meth:`make_message_to_consume_again`. ``msg_count`` and
    ``msg_size`` count both maps, as in Java.

    Java's ``consumeLock`` (held for reading while a listener runs, tried for
    writing by the rebalance before it gives an orderly queue away) is modelled
    by a reader count: :meth:`acquire_consume_lock` / :meth:`release_consume_lock`
    around a listener call, and :meth:`try_consume_write_lock` succeeding only
    when no listener call is in progress.
    """

    def __init__(self, now_ms: int = 0):
        now_ms = check_time(now_ms)
        self.msg_tree = _OffsetMap()
        self.consuming_msg_orderly = _OffsetMap()
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0
        self.dropped = False
        self.locked = False
        self.last_pull_timestamp = now_ms
        self.last_consume_timestamp = now_ms
        self.last_lock_timestamp = now_ms
        self.consuming = False
        self.try_unlock_times = 0
        self.msg_acc_cnt = 0
        self._consume_lock_readers = 0

    # ----------------------------------------------------------------- timing
    def is_lock_expired(self, now_ms: int) -> bool:
        """Local view of the broker lock is stale (> 30 s since the last lock)."""
        check_time(now_ms)
        return now_ms - self.last_lock_timestamp > REBALANCE_LOCK_MAX_LIVE_TIME

    def is_pull_expired(self, now_ms: int) -> bool:
        """No pull for more than 120 s: the rebalance treats the queue as stuck."""
        check_time(now_ms)
        return now_ms - self.last_pull_timestamp > PULL_MAX_IDLE_TIME

    # ------------------------------------------------------------ put/remove
    def put_message(self, msgs: Iterable[Message]) -> bool:
        """Cache pulled messages; return True if a consume request should be dispatched.

        Mirrors: ProcessQueue.java#putMessage

        Only new offsets are counted. Re-putting a held offset replaces the stored
        message without counting it (Java's ``TreeMap.put``); a re-put with a
        different body size, or of an offset that is in flight in orderly
        consumption, would corrupt the counters in Java and is a ValueError here; so is one batch
        holding the same offset twice with different body sizes (Java would count the first
        size and keep the second message).
        """
        return self._put_message_trusted(_require_messages(msgs))

    def _put_message_trusted(self, msgs: list[Message]) -> bool:
        """:meth:`put_message` for a list the caller knows holds only Messages (the pull path, from a checked
        PullResult): the same counting and the same refusals of conflicting offsets."""
        tree = self.msg_tree
        in_flight = self.consuming_msg_orderly if self.consuming_msg_orderly else None  # orderly: a batch taken
        previous = -1
        ascending = True  # a pulled batch has strictly ascending offsets, so it cannot repeat one
        for m in msgs:
            offset = m.queue_offset
            held = tree.get(offset)
            if held is not None and held.body_size != m.body_size:
                raise ValueError(
                    f"msgs: offset {offset} is already held with body_size {held.body_size}, got {m.body_size}"
                )
            if in_flight is not None and offset in in_flight:
                raise ValueError(f"msgs: offset {offset} is in flight (taken for orderly consumption)")
            if offset <= previous:
                ascending = False
            previous = offset
        if not ascending:
            sizes: dict[int, int] = {}
            for m in msgs:
                size = sizes.setdefault(m.queue_offset, m.body_size)
                if size != m.body_size:
                    raise ValueError(
                        f"msgs: offset {m.queue_offset} appears twice in the batch with body_size "
                        f"{size} and {m.body_size}"
                    )
        valid = size = 0
        for m, old in zip(msgs, tree.put_many(msgs)):
            if old is None:  # a new offset
                valid += 1
                self.queue_offset_max = m.queue_offset
                size += m.body_size
        self.msg_count += valid
        self.msg_size += size

        dispatch = False
        if not self.consuming and tree:
            dispatch = True
            self.consuming = True

        if msgs:
            last = msgs[-1]
            props = last.properties
            prop = props.get(PROPERTY_MAX_OFFSET) if props else None
            if prop is not None:
                acc = int(prop) - last.queue_offset
                if acc > 0:
                    self.msg_acc_cnt = acc
        return dispatch

    def remove_message(self, msgs: Iterable[Message], now_ms: int | None = None) -> int:
        """Acknowledge consumed messages; return the offset that may now be committed.

        Mirrors: ProcessQueue.java#removeMessage

        Returns the lowest offset still held, or ``queue_offset_max + 1`` when
        nothing is left, or ``-1`` if nothing was held before the call. Offsets
        that are not held are ignored (as in Java). ``now_ms`` stamps
        ``last_consume_timestamp`` (left alone when None).
        """
        return self._remove_message_trusted(_require_messages(msgs), None if now_ms is None else check_time(now_ms))

    def _remove_message_trusted(self, msgs: list[Message], now_ms: int | None) -> int:
        """:meth:`remove_message` for a caller that has checked its arguments (a list of Message, an int time)."""
        if now_ms is not None:
            self.last_consume_timestamp = now_ms
        tree = self.msg_tree
        if not tree:
            return -1
        removed = size = 0
        for prev in tree.remove_many([m.queue_offset for m in msgs]):
            if prev is not None:
                removed += 1
                # Java subtracts the size of the message passed in; we subtract the
                # held one so that a caller's stale copy cannot skew the counter.
                size += prev.body_size
        self.msg_size -= size
        self.msg_count -= removed
        if self.msg_count == 0:
            self.msg_size = 0
        return tree.first_key_or(self.queue_offset_max + 1)

    def get_max_span(self) -> int:
        """Distance between the highest and the lowest cached offset (0 when empty)."""
        return self.msg_tree.span()

    def contains_message(self, msg: Message | None) -> bool:
        """True if a message with this queue offset is cached (not counting in-flight)."""
        if msg is None:
            return False
        if not isinstance(msg, Message):
            raise ArgumentTypeError(f"msg must be a Message or None, got {type(msg).__name__}")
        return msg.queue_offset in self.msg_tree

    def has_temp_message(self) -> bool:
        return len(self.msg_tree) > 0

    def clear(self) -> None:
        """Forget every message and reset the counters (ProcessQueue.java#clear)."""
        self.msg_tree.clear()
        self.consuming_msg_orderly.clear()
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0

    # ------------------------------------------------------------- orderly
    def take_messages(self, batch_size: int, now_ms: int | None = None) -> list[Message]:
        """Move up to ``batch_size`` head messages into the in-flight map and return them.

        Mirrors: ProcessQueue.java#takeMessages

        Nothing to take sets ``consuming`` to False, which lets the next
        :meth:`put_message` dispatch a new consume request.
        """
        batch_size = check_int(batch_size, "batch_size", 1)
        if now_ms is not None:
            self.last_consume_timestamp = check_time(now_ms)
        result: list[Message] = []
        for _ in range(batch_size):
            entry = self.msg_tree.poll_first()
            if entry is None:
                break
            self.consuming_msg_orderly.put(entry[0], entry[1])
            result.append(entry[1])
        if not result:
            self.consuming = False
        return result

    def commit(self) -> int:
        """Acknowledge every in-flight message; return the next offset to consume.

        Mirrors: ProcessQueue.java#commit

        Returns the highest in-flight offset + 1, or -1 when nothing is in flight
        (Java would throw ``NoSuchElementException`` from ``lastKey()`` there, but
        the orderly service never commits an empty batch).
        """
        if not len(self.consuming_msg_orderly):
            return -1
        offset = self.consuming_msg_orderly.last_key()
        self.msg_count -= len(self.consuming_msg_orderly)
        if self.msg_count == 0:
            self.msg_size = 0
        else:
            for m in self.consuming_msg_orderly.values():
                self.msg_size -= m.body_size
        self.consuming_msg_orderly.clear()
        return offset + 1

    def rollback(self) -> None:
        """Put every in-flight message back to be consumed again (ProcessQueue.java#rollback)."""
        self.msg_tree.put_many(self.consuming_msg_orderly.values())  # Java: msgTreeMap.putAll
        self.consuming_msg_orderly.clear()

    def make_message_to_consume_again(self, msgs: Iterable[Message]) -> None:
        """Return the given in-flight messages to the cache (ProcessQueue.java#makeMessageToConsumeAgain).

        A message that is neither in flight nor cached would be counted nowhere in
        Java; here it is a ValueError.
        """
        msgs = _require_messages(msgs)
        for m in msgs:
            if m.queue_offset not in self.consuming_msg_orderly and m.queue_offset not in self.msg_tree:
                raise ValueError(f"msgs: offset {m.queue_offset} is not held by this process queue")
        for m in msgs:
            held = self.consuming_msg_orderly.remove(m.queue_offset)
            if held is not None:
                self.msg_tree.put(m.queue_offset, held)

    # -------------------------------------------------------- expiry clean-up
    def clean_expired_msg(self, now_ms: int, consume_timeout: int = 15, orderly: bool = False) -> list[Message]:
        """Remove head messages whose consumption started too long ago; return them.

        Mirrors: ProcessQueue.java#cleanExpiredMsg

        ``consume_timeout`` is in minutes, like ``DefaultMQPushConsumer.consumeTimeout``.
        Looks at no more than 16 head messages; stops at the first head that is not
        expired. The caller must send each returned message back with delay level
        ``CLEAN_EXPIRED_MSG_DELAY_LEVEL`` (3); the send is assumed to succeed.
        The offset ``removeMessage`` returns is discarded, as in Java: the
        committed offset moves on with the next acknowledgement. Orderly
        consumers never clean.
        """
        check_time(now_ms)
        check_bool(orderly, "orderly")
        check_int(consume_timeout, "consume_timeout (minutes)", 0)
        if orderly:
            return []
        expired: list[Message] = []
        for _ in range(min(len(self.msg_tree), CLEAN_EXPIRED_MSG_MAX_CHECKS)):
            if not len(self.msg_tree):
                break
            head = self.msg_tree.get(self.msg_tree.first_key())
            assert head is not None  # the tree holds its first key
            start = head.consume_start_timestamp
            if start is None or now_ms - start <= consume_timeout * 60 * 1000:
                break
            expired.append(head)
            self.remove_message([head], now_ms=now_ms)
        return expired

    # ------------------------------------------------------ consume lock
    def acquire_consume_lock(self) -> None:
        """A listener call starts (Java: ``consumeLock.readLock().lock()``)."""
        self._consume_lock_readers += 1

    def release_consume_lock(self) -> None:
        """A listener call ends (Java: ``consumeLock.readLock().unlock()``)."""
        if self._consume_lock_readers == 0:
            raise ValueError("release_consume_lock: the consume lock is not held")
        self._consume_lock_readers -= 1

    @property
    def consume_in_progress(self) -> bool:
        """True while a listener call holds the consume lock."""
        return self._consume_lock_readers > 0

    def try_consume_write_lock(self) -> bool:
        """The rebalance's ``tryLock`` on the write lock, now: it succeeds exactly when no listener call is in
        progress (a round that finds one waits for it up to 500 ms: ``RebalanceImpl.consume_lock_released``)."""
        return self._consume_lock_readers == 0

    def inc_try_unlock_times(self) -> None:
        self.try_unlock_times += 1

    # ------------------------------------------------------------ invariants
    def _check(self) -> None:
        """Assert the invariants that every public method preserves."""
        self.msg_tree._check("msg_tree")
        self.consuming_msg_orderly._check("consuming_msg_orderly")
        both = set(self.msg_tree.keys()) & set(self.consuming_msg_orderly.keys())
        assert not both, f"offsets both cached and in flight: {sorted(both)}"
        held = self.msg_tree.values() + self.consuming_msg_orderly.values()
        assert self.msg_count == len(held), (self.msg_count, len(held))
        assert self.msg_size == sum(m.body_size for m in held), (self.msg_size, held)
        assert self.msg_count >= 0 and self.msg_size >= 0
        assert self.queue_offset_max >= 0
        assert self.try_unlock_times >= 0
        assert self._consume_lock_readers >= 0

    def __repr__(self) -> str:
        return (
            f"ProcessQueue(count={self.msg_count}, size={self.msg_size}, "
            f"span={self.get_max_span()}, in_flight={len(self.consuming_msg_orderly)}, "
            f"dropped={self.dropped}, locked={self.locked})"
        )

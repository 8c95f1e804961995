"""Orderly Pop's bookkeeping: which batch of a queue is out, and whether the next pop of that queue must wait.

A Pop consumer of a FIFO group owns no queue. The broker keeps order instead: an orderly pop commits the group's
offset at the *first* message it lent, records the batch here, and every later orderly pop of that queue (by any
member) is refused the queue while a message of the batch is neither acked nor past its invisible time. An ack
moves the offset past the acked prefix; a batch that times out is read again from the offset left behind, and each
message read again counts one more consumption.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3): broker/.../offset/ConsumerOrderInfoManager.java and its
``OrderInfo``, and broker/.../offset/ConsumerOrderInfoLockManager.java (when a block ends, held pops are woken).
Times are milliseconds passed in by the caller (Java reads ``System.currentTimeMillis()``). Not modelled:
persistence and ``autoClean``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rmqlib.checks import check_each, check_int, check_str, check_str_or_none, check_time

ORDER_INFO_NO_COMMIT = -2  # commitAndNext: the ack belongs to an older batch of the queue (pop time differs)
ORDER_INFO_ILLEGAL = -1  # commitAndNext: the offset is not in the recorded batch (or that batch is empty)
MAX_BATCH = 64  # commitOffsetBit is a Java long: one bit per message of a batch
TIMER_TICK_MS = 100  # ConsumerOrderInfoLockManager.TIMER_TICK_MS: its HashedWheelTimer ticks every 100 ms


def _check_offset(offset: object, name: str) -> int:
    return check_int(offset, name, 0)


def _check_queue(topic: object, group: object, queue_id: object) -> None:
    check_str(topic, "topic")
    check_str(group, "group")
    check_int(queue_id, "queue_id", 0)


def _queue_offsets(offset_list: list[int]) -> list[int]:
    """The queue offsets an OrderInfo's compact list stands for (first offset, then distances from it)."""
    first = offset_list[0]
    return [first] + [first + d for d in offset_list[1:]]


@dataclass
class OrderInfo:
    """One queue's batch in flight for a group. ``offset_list`` is Java's compact form: the first message's queue
    offset, then each later message's distance from it; bit ``i`` of ``commit_offset_bit`` is set once message
    ``i`` is acked. ``offset_consumed_count`` holds, for messages read more than once, how many times they were
    read before this batch. Mirrors: ConsumerOrderInfoManager.OrderInfo"""

    attempt_id: str | None
    pop_time: int
    invisible_time: int | None
    offset_list: list[int]
    last_consume_timestamp: int
    commit_offset_bit: int = 0
    offset_next_visible_time: dict[int, int] | None = None
    offset_consumed_count: dict[int, int] | None = None

    @staticmethod
    def build_offset_list(queue_offsets: list[int]) -> list[int]:
        """Mirrors: OrderInfo#buildOffsetList"""
        if len(queue_offsets) == 1:
            return list(queue_offsets)
        first = queue_offsets[0]
        return [first] + [o - first for o in queue_offsets[1:]]

    def queue_offset(self, index: int) -> int:
        """Mirrors: OrderInfo#getQueueOffset"""
        return self.offset_list[0] if index == 0 else self.offset_list[0] + self.offset_list[index]

    def is_not_ack(self, index: int) -> bool:
        return not (self.commit_offset_bit >> index) & 1

    def _next_visible_time(self, index: int) -> int:
        assert self.invisible_time is not None
        changed = (self.offset_next_visible_time or {}).get(self.queue_offset(index))
        return self.pop_time + self.invisible_time if changed is None else changed

    def need_block(self, attempt_id: str | None, current_invisible_time: int, now_ms: int) -> bool:
        """Whether a pop with ``attempt_id`` must skip this queue: some message of the batch is unacked and still
        invisible. The same attempt (a client retrying its own request) is never blocked. Mirrors: #needBlock"""
        if not self.offset_list:
            return False
        if self.attempt_id is not None and self.attempt_id == attempt_id:
            return False
        if self.invisible_time is None or self.invisible_time <= 0:
            self.invisible_time = current_invisible_time
        return any(self.is_not_ack(i) and now_ms < self._next_visible_time(i) for i in range(len(self.offset_list)))

    def lock_free_timestamp(self, now_ms: int) -> int | None:
        """When the queue stops blocking: the first unacked message's visible time if still ahead, ``now_ms`` if
        none blocks, None without an invisible time. Mirrors: #getLockFreeTimestamp"""
        if not self.offset_list:
            return None
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                if self.invisible_time is None or self.invisible_time <= 0:
                    return None
                visible = self._next_visible_time(i)
                if now_ms < visible:
                    return visible
        return now_ms

    def next_offset(self) -> int:
        """The offset to commit: the first unacked message's, or past the last when all are acked. Mirrors:
        #getNextOffset"""
        if not self.offset_list:
            return ORDER_INFO_NO_COMMIT
        for i in range(len(self.offset_list)):
            if self.is_not_ack(i):
                return self.queue_offset(i)
        return self.queue_offset(len(self.offset_list) - 1) + 1

    def merge_offset_consumed_count(
        self, pre_attempt_id: str | None, pre_offset_list: list[int], prev_counts: dict[int, int] | None
    ) -> None:
        """Count, for each message of this batch that the previous batch also held, one more consumption.
        Mirrors: #mergeOffsetConsumedCount"""
        prev_counts = prev_counts if prev_counts is not None else {}
        if pre_attempt_id is not None and pre_attempt_id == self.attempt_id:
            self.offset_consumed_count = prev_counts
            return
        before = set(_queue_offsets(pre_offset_list))
        counts: dict[int, int] = {}
        for i in range(len(self.offset_list)):
            offset = self.queue_offset(i)
            if offset in before:
                counts[offset] = prev_counts.get(offset, 0) + 1
        self.offset_consumed_count = counts


@dataclass
class ConsumerOrderInfoLockManager:
    """When each blocked queue is due to be free: every change of a batch sets (or moves) one timer per queue, and a
    timer that fires wakes a held pop (:meth:`rmqlib.broker.pop.PopMessageProcessor.notify_lock_free`). ``enabled``
    is BrokerConfig.enableNotifyAfterPopOrderLockRelease (on by default).

    The timers run on a wheel (Netty's HashedWheelTimer) that starts with its first timer and ticks every 100 ms: a
    timer fires at the first tick after its lock-free time, or after now if that has passed, so a queue that is free
    at once is noticed up to 100 ms later. Mirrors: ConsumerOrderInfoLockManager.java"""

    enabled: bool = True
    due: dict[tuple[str, str, int], int] = field(default_factory=dict)  # (topic, group, queue id) -> the firing tick
    wheel_start_ms: int | None = None  # when the wheel started: its ticks fall 100 ms apart from there

    def update_lock_free_timestamp(self, topic: str, group: str, queue_id: int, info: OrderInfo, now_ms: int) -> None:
        """Set the queue's timer to the batch's lock-free time, replacing the one set before; a batch with no
        invisible time leaves the old timer as it is. Mirrors: #updateLockFreeTimestamp"""
        self.set_timer(topic, group, queue_id, info.lock_free_timestamp(now_ms), now_ms)

    def set_timer(self, topic: str, group: str, queue_id: int, free_at: int | None, now_ms: int) -> None:
        """The timer of a queue free at ``free_at`` (None: leave it), set at ``now_ms``: it fires on the tick after.
        Mirrors: #updateLockFreeTimestamp(topic, group, queueId, lockFreeTimestamp), HashedWheelTimer#newTimeout"""
        if not self.enabled or free_at is None:
            return
        if self.wheel_start_ms is None:
            self.wheel_start_ms = now_ms
        start = self.wheel_start_ms
        self.due[(topic, group, queue_id)] = (
            start + ((max(free_at, now_ms) - start) // TIMER_TICK_MS + 1) * TIMER_TICK_MS
        )

    def next_due_ms(self) -> int | None:
        """When the next timer fires, or None."""
        return min(self.due.values(), default=None)

    def take_due(self, now_ms: int) -> list[tuple[str, str, int]]:
        """The queues whose timer has fired by ``now_ms``, earliest first; their timers are gone.
        Mirrors: NotifyLockFreeTimerTask#run"""
        check_time(now_ms)
        fired = sorted((when, key) for key, when in self.due.items() if when <= now_ms)
        for _, key in fired:
            del self.due[key]
        return [key for _, key in fired]


@dataclass
class ConsumerOrderInfoManager:
    """The broker's table of orderly batches: (topic, group) -> queue id -> :class:`OrderInfo`, and the lock-free
    timers of its :class:`ConsumerOrderInfoLockManager`. Mirrors: ConsumerOrderInfoManager.java"""

    table: dict[tuple[str, str], dict[int, OrderInfo]] = field(default_factory=dict)
    lock_manager: ConsumerOrderInfoLockManager = field(default_factory=ConsumerOrderInfoLockManager)

    def recover(self, now_ms: int) -> None:
        """A restarted broker loads the table it persisted and starts a new timer wheel, setting a timer for each
        queue whose lock-free time is still ahead (those already free get none). Mirrors: #load, #recover"""
        check_time(now_ms)
        self.lock_manager = ConsumerOrderInfoLockManager(enabled=self.lock_manager.enabled)
        for (topic, group), queues in self.table.items():
            for queue_id, info in queues.items():
                free_at = info.lock_free_timestamp(now_ms)
                if free_at is not None and free_at > now_ms:
                    self.lock_manager.set_timer(topic, group, queue_id, free_at, now_ms)

    def update(
        self,
        attempt_id: str | None,
        topic: str,
        group: str,
        queue_id: int,
        pop_time: int,
        invisible_time: int,
        queue_offsets: list[int],
        now_ms: int,
    ) -> dict[int, int]:
        """Record the batch an orderly pop just lent. Returns how many times each message was read before
        (queue offset -> count, 0 for a first reading): what the broker reports in ``orderCountInfo`` and the
        client turns into each message's reconsume times. Mirrors: #update"""
        check_str_or_none(attempt_id, "attempt_id")
        _check_queue(topic, group, queue_id)
        check_time(pop_time, "pop_time")
        check_int(invisible_time, "invisible_time", 0)
        check_time(now_ms)
        queue_offsets = check_each(queue_offsets, "queue_offsets", _check_offset, max_len=MAX_BATCH)
        if not queue_offsets:
            raise ValueError("queue_offsets must name at least one message, got []")
        queues = self.table.setdefault((topic, group), {})
        old = queues.get(queue_id)
        info = OrderInfo(attempt_id, pop_time, invisible_time, OrderInfo.build_offset_list(queue_offsets), now_ms)
        if old is not None:
            info.merge_offset_consumed_count(old.attempt_id, old.offset_list, old.offset_consumed_count)
        queues[queue_id] = info
        self.lock_manager.update_lock_free_timestamp(topic, group, queue_id, info, now_ms)
        counts = info.offset_consumed_count or {}
        return {offset: counts.get(offset, 0) for offset in queue_offsets}

    def check_block(
        self, attempt_id: str | None, topic: str, group: str, queue_id: int, invisible_time: int, now_ms: int
    ) -> bool:
        """Whether an orderly pop with ``attempt_id`` must skip the queue. Mirrors: #checkBlock"""
        _check_queue(topic, group, queue_id)
        check_time(now_ms)
        info = self.table.get((topic, group), {}).get(queue_id)
        return info is not None and info.need_block(attempt_id, invisible_time, now_ms)

    def clear_block(self, topic: str, group: str, queue_id: int) -> None:
        """Forget the queue's batch (an offset reset). Mirrors: #clearBlock"""
        _check_queue(topic, group, queue_id)
        queues = self.table.get((topic, group))
        if queues is not None:
            queues.pop(queue_id, None)

    def commit_and_next(
        self, topic: str, group: str, queue_id: int, queue_offset: int, pop_time: int, now_ms: int
    ) -> int:
        """Mark one message of the batch acked; return the offset to commit, :data:`ORDER_INFO_ILLEGAL` (-1) for
        an offset the batch does not hold, or :data:`ORDER_INFO_NO_COMMIT` (-2) for an ack of an older batch.
        With no batch recorded, the offset just past the acked one. Mirrors: #commitAndNext"""
        _check_queue(topic, group, queue_id)
        check_int(queue_offset, "queue_offset")
        check_time(pop_time, "pop_time")
        check_time(now_ms)
        info = self.table.get((topic, group), {}).get(queue_id)
        if info is None:
            return queue_offset + 1
        if not info.offset_list:
            return ORDER_INFO_ILLEGAL
        if pop_time != info.pop_time:
            return ORDER_INFO_NO_COMMIT
        offsets = _queue_offsets(info.offset_list)
        if queue_offset not in offsets:
            return ORDER_INFO_ILLEGAL
        info.commit_offset_bit |= 1 << offsets.index(queue_offset)
        self.lock_manager.update_lock_free_timestamp(topic, group, queue_id, info, now_ms)
        return info.next_offset()

    def update_next_visible_time(
        self,
        topic: str,
        group: str,
        queue_id: int,
        queue_offset: int,
        pop_time: int,
        next_visible_time: int,
        now_ms: int,
    ) -> None:
        """A change of invisible time for one message of the current batch (ignored for an older batch).
        Mirrors: #updateNextVisibleTime"""
        _check_queue(topic, group, queue_id)
        check_int(queue_offset, "queue_offset")
        check_time(pop_time, "pop_time")
        check_time(next_visible_time, "next_visible_time")
        check_time(now_ms)
        info = self.table.get((topic, group), {}).get(queue_id)
        if info is None or pop_time != info.pop_time:
            return
        if info.offset_next_visible_time is None:
            info.offset_next_visible_time = {}
        info.offset_next_visible_time[queue_offset] = next_visible_time
        self.lock_manager.update_lock_free_timestamp(topic, group, queue_id, info, now_ms)


__all__ = [
    "ORDER_INFO_ILLEGAL",
    "ORDER_INFO_NO_COMMIT",
    "ConsumerOrderInfoLockManager",
    "ConsumerOrderInfoManager",
    "OrderInfo",
]

"""Broker-side queue locks for orderly consumption.

An orderly consumer must hold the broker's lock on a queue before it
consumes from it. A lock belongs to one client id and lives 60 s from its
last refresh; the client re-locks every 20 s. A lock is granted when the queue
is free, already ours (refresh) or expired (taken over); otherwise denied.
Only the owner can unlock; anyone else's unlock does nothing (Java logs a
warning; here it is reported in the returned :class:`UnlockReport`).

So after a ``kill -9`` the dead client's queues stay locked until the 60 s
run out (apache/rocketmq#1282).

Mirrors: broker/.../client/rebalance/RebalanceLockManager.java
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rmqlib.broker.protocol import check_time
from rmqlib.checks import ArgumentTypeError, check_int, check_items, check_str
from rmqlib.model import MessageQueue

REBALANCE_LOCK_MAX_LIVE_TIME = 60_000  # -Drocketmq.broker.rebalance.lockMaxLiveTime (pass lock_max_live_time to change)


@dataclass
class LockEntry:
    """Owner and last refresh of one queue lock. Mirrors: RebalanceLockManager.LockEntry"""

    client_id: str
    last_update_timestamp: int

    def __post_init__(self):
        _check_id(self.client_id, "client_id")
        check_time(self.last_update_timestamp, "last_update_timestamp")

    def is_expired(self, now_ms, max_live_time: int = REBALANCE_LOCK_MAX_LIVE_TIME) -> bool:
        """Strictly more than ``max_live_time`` since the last refresh."""
        check_time(now_ms)
        check_int(max_live_time, "max_live_time")
        return (now_ms - self.last_update_timestamp) > max_live_time

    def is_locked(self, client_id: str, now_ms, max_live_time: int = REBALANCE_LOCK_MAX_LIVE_TIME) -> bool:
        check_str(client_id, "client_id")
        return self.client_id == client_id and not self.is_expired(now_ms, max_live_time)


@dataclass
class UnlockReport:
    """What ``unlock_batch`` did to each queue (Java only logs it).

    Mirrors: broker/.../client/rebalance/RebalanceLockManager.java#unlockBatch (its log lines)
    """

    unlocked: set = field(default_factory=set)
    held_by_other: dict = field(default_factory=dict)  # mq -> owner client id (left locked)
    not_locked: set = field(default_factory=set)  # no entry (or unknown group)


def _check_mqs(mqs) -> list[MessageQueue]:
    return list(check_items(mqs, "mqs", MessageQueue))


def _check_mq(mq) -> None:
    if not isinstance(mq, MessageQueue):
        raise ArgumentTypeError(f"mq must be a MessageQueue, got {mq!r}")


def _check_id(value, argname: str) -> str:
    if not isinstance(value, str) or not value:
        raise (ValueError if isinstance(value, str) else ArgumentTypeError)(
            f"{argname} must be a non-empty str, got {value!r}"
        )
    return value


class RebalanceLockManager:
    """The lock table: group → (MessageQueue → LockEntry).

    Mirrors: broker/.../client/rebalance/RebalanceLockManager.java
    """

    def __init__(self, lock_max_live_time: int = REBALANCE_LOCK_MAX_LIVE_TIME):
        if isinstance(lock_max_live_time, bool) or not isinstance(lock_max_live_time, int) or lock_max_live_time < 0:
            raise ValueError(f"lock_max_live_time must be an int >= 0, got {lock_max_live_time!r}")
        self.lock_max_live_time = lock_max_live_time
        self.mq_lock_table: dict[str, dict[MessageQueue, LockEntry]] = {}

    def is_lock_all_expired(self, group: str, now_ms) -> bool:
        """True if the group has no live lock. Mirrors: #isLockAllExpired"""
        check_time(now_ms)
        _check_id(group, "group")
        entries = self.mq_lock_table.get(group)
        if entries is None:
            return True
        return all(e.is_expired(now_ms, self.lock_max_live_time) for e in entries.values())

    def is_locked(self, group: str, mq: MessageQueue, client_id: str, now_ms) -> bool:
        """Does ``client_id`` hold a live lock on ``mq``? A hit refreshes the lock, as in Java.

        Mirrors: RebalanceLockManager.java#isLocked (private there)
        """
        check_time(now_ms)
        _check_id(group, "group")
        _check_mq(mq)
        _check_id(client_id, "client_id")
        entry = self.mq_lock_table.get(group, {}).get(mq)
        if entry is None:
            return False
        locked = entry.is_locked(client_id, now_ms, self.lock_max_live_time)
        if locked:
            entry.last_update_timestamp = now_ms
        return locked

    def lock_owner(self, group: str, mq: MessageQueue, now_ms=None) -> str | None:
        """Who holds ``mq`` (no refresh). With ``now_ms``, an expired lock counts as free."""
        _check_id(group, "group")
        _check_mq(mq)
        entry = self.mq_lock_table.get(group, {}).get(mq)
        if entry is None:
            return None
        if now_ms is not None and entry.is_expired(check_time(now_ms), self.lock_max_live_time):
            return None
        return entry.client_id

    def try_lock(self, group: str, mq: MessageQueue, client_id: str, now_ms) -> bool:
        """Mirrors: RebalanceLockManager.java#tryLock"""
        _check_mq(mq)
        return mq in self.try_lock_batch(group, [mq], client_id, now_ms)

    def try_lock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str, now_ms) -> set:
        """Lock what can be locked; return the set of queues ``client_id`` now holds.

        Mirrors: RebalanceLockManager.java#tryLockBatch
        """
        check_time(now_ms)
        _check_id(group, "group")
        _check_id(client_id, "client_id")
        mqs = _check_mqs(mqs)
        locked, not_locked = set(), []
        for mq in mqs:
            if self.is_locked(group, mq, client_id, now_ms):
                locked.add(mq)
            elif mq not in not_locked:
                not_locked.append(mq)
        if not_locked:
            table = self.mq_lock_table.setdefault(group, {})
            for mq in not_locked:
                entry = table.get(mq)
                if entry is None:
                    entry = table[mq] = LockEntry(client_id, now_ms)
                if entry.is_locked(client_id, now_ms, self.lock_max_live_time):
                    entry.last_update_timestamp = now_ms
                    locked.add(mq)
                    continue
                if entry.is_expired(now_ms, self.lock_max_live_time):
                    entry.client_id = client_id
                    entry.last_update_timestamp = now_ms
                    locked.add(mq)
                    continue
                # held by another live client: denied
        return locked

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> UnlockReport:
        """Release the queues ``client_id`` owns (even if expired); leave the others.

        Mirrors: RebalanceLockManager.java#unlockBatch
        """
        _check_id(group, "group")
        _check_id(client_id, "client_id")
        mqs = _check_mqs(mqs)
        report = UnlockReport()
        table = self.mq_lock_table.get(group)
        for mq in mqs:
            entry = None if table is None else table.get(mq)
            if entry is None:
                report.not_locked.add(mq)
            elif entry.client_id == client_id:
                del table[mq]
                report.unlocked.add(mq)
            else:
                report.held_by_other[mq] = entry.client_id
        return report

    def _check(self) -> None:
        for group, table in self.mq_lock_table.items():
            for mq, entry in table.items():
                assert isinstance(mq, MessageQueue), mq
                assert isinstance(entry, LockEntry)
                assert isinstance(entry.client_id, str) and entry.client_id, (group, mq, entry)

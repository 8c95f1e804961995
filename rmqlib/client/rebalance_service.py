"""RebalanceService: when a client instance runs its consumers' rebalance.

Java runs one thread per client instance: wait (``waitInterval`` 20 s, or
``minInterval`` 1 s after an unbalanced round, cut short by ``wakeup()``),
refuse to run again sooner than ``minInterval`` after the previous round,
then rebalance every consumer of the instance. Here the loop is a schedule a
driver steps: ask :attr:`RebalanceService.next_run_ms`, call
:meth:`RebalanceService.run_due` at that time.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Protocol

from rmqlib.checks import ArgumentTypeError, check_int
from rmqlib.client.process_queue import check_time

WAIT_INTERVAL = 20_000  # rocketmq.client.rebalance.waitInterval (RebalanceService.java)
MIN_INTERVAL = 1_000  # rocketmq.client.rebalance.minInterval (RebalanceService.java, 5.2+)
#: How many of the latest rounds ``RebalanceService.runs`` keeps (the model's log; Java keeps none).
RUNS_KEPT = 1_024


class RebalanceConsumer(Protocol):
    """What the service asks of a consumer: one rebalance round, True when it came out balanced."""

    def try_rebalance(self, now_ms: int) -> bool: ...


class RebalanceService:
    """The rebalance schedule of one client instance (MQClientInstance).

    Mirrors: client/.../impl/consumer/RebalanceService.java (with
    MQClientInstance.java#doRebalance, #rebalanceLater, #rebalanceImmediately)

    ``wakeup`` is a coalescing flag (ServiceThread's ``hasNotified``): any number
    of wake-ups before the next run cause one run. ``rebalance_later`` schedules
    a wake-up. Consumers are objects with ``try_rebalance(now_ms) -> bool``
    (e.g. :class:`~rmqlib.client.rebalance.RebalanceImpl`); an exception from one
    is swallowed and, as in Java, does not make the round unbalanced.
    """

    def __init__(self, now_ms: int = 0, *, wait_interval: int = WAIT_INTERVAL, min_interval: int = MIN_INTERVAL):
        check_time(now_ms)
        for name, v in (("wait_interval", wait_interval), ("min_interval", min_interval)):
            check_int(v, name, 0)
        self.wait_interval = wait_interval
        self.min_interval = min_interval
        self.consumers: list[RebalanceConsumer] = []
        self.last_rebalance_timestamp = now_ms
        self._wait_from = now_ms
        self._wait_ms = wait_interval
        self._notified_at: int | None = None
        self._scheduled: list[int] = []
        self.last_balanced: bool | None = None
        self.runs: deque[tuple[int, bool]] = deque(maxlen=RUNS_KEPT)  # (time, balanced) of the latest rounds

    def register(self, consumer: RebalanceConsumer) -> None:
        """Add a consumer (MQClientInstance#registerConsumer); it gets this service as its
        ``rebalance_service`` if it has none."""
        if not callable(getattr(consumer, "try_rebalance", None)):
            raise ArgumentTypeError(f"consumer must have try_rebalance(now_ms), got {type(consumer).__name__}")
        if consumer in self.consumers:
            raise ValueError("consumer is already registered")
        self.consumers.append(consumer)
        if getattr(consumer, "rebalance_service", False) is None:
            setattr(consumer, "rebalance_service", self)  # noqa: B010 (an optional attribute the protocol does not name)

    def unregister(self, consumer: RebalanceConsumer) -> None:
        if consumer not in self.consumers:
            raise ValueError("consumer is not registered")
        self.consumers.remove(consumer)

    def wakeup(self, now_ms: int) -> None:
        """Wake the loop now; repeated wake-ups before the next run coalesce."""
        check_time(now_ms)
        if self._notified_at is None:
            self._notified_at = now_ms

    def rebalance_later(self, delay_ms: int, now_ms: int) -> None:
        """Wake the loop after ``delay_ms`` (at once if ``delay_ms <= 0``)."""
        check_int(delay_ms, "delay_ms")
        check_time(now_ms)
        if delay_ms <= 0:
            self.wakeup(now_ms)
        else:
            heapq.heappush(self._scheduled, now_ms + delay_ms)

    @property
    def notified(self) -> bool:
        return self._notified_at is not None

    @property
    def next_run_ms(self) -> int:
        """When the loop wakes next: end of its wait, a pending wake-up, or a scheduled one."""
        t = self._wait_from + self._wait_ms
        if self._notified_at is not None:
            t = min(t, self._notified_at)
        if self._scheduled:
            t = min(t, self._scheduled[0])
        return t

    def run_due(self, now_ms: int) -> bool | None:
        """Do what the loop does at ``now_ms``; return the round's "balanced", or None.

        Fires scheduled wake-ups that are due. If the loop is not awake yet, nothing
        happens (None). Awake but less than ``min_interval`` after the last round:
        wait the remainder (None). Otherwise rebalance every consumer and wait
        ``wait_interval`` if all were balanced, else ``min_interval``.
        """
        check_time(now_ms)
        while self._scheduled and self._scheduled[0] <= now_ms:
            heapq.heappop(self._scheduled)
            self.wakeup(now_ms)
        if now_ms < self.next_run_ms:
            return None
        self._notified_at = None  # waitForRunning consumed the notification
        interval = now_ms - self.last_rebalance_timestamp
        if interval < self.min_interval:
            self._wait_from, self._wait_ms = now_ms, self.min_interval - interval
            return None
        balanced = True
        for consumer in list(self.consumers):
            try:
                if not consumer.try_rebalance(now_ms):
                    balanced = False
            except Exception:
                pass
        self.last_rebalance_timestamp = now_ms
        self._wait_from = now_ms
        self._wait_ms = self.wait_interval if balanced else self.min_interval
        self.last_balanced = balanced
        self.runs.append((now_ms, balanced))
        return balanced

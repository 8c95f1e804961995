"""Simulated time: a simpy Environment in milliseconds, with the calls due at one instant batched into one event.

Every node gets the :class:`Clock`: ``now``, ``timeout``, ``process`` (simpy's), ``later(delay_ms, action,
*args)``, which runs a plain call at a later instant without a process, and ``call(delay_ms, action)``, a bare event
numbered as simpy numbers its own (see :meth:`Clock.call`).
"""

from __future__ import annotations

from heapq import heappush

import simpy


class Clock(simpy.Environment):
    """simpy's Environment, noting when an event is scheduled so the engine knows its open batch is closed."""

    def __init__(self):
        super().__init__()
        self.open_batch: _Calls | None = None

    def schedule(self, event, priority=simpy.core.NORMAL, delay=0):
        self.open_batch = None
        super().schedule(event, priority, delay)

    def later(self, delay_ms, action, *args) -> None:
        """Run ``action(*args)`` after ``delay_ms`` of simulated time (no process; see :class:`_Calls`)."""
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms}")
        at = self.now + delay_ms
        batch = self.open_batch
        if batch is not None and batch.at == at:
            batch.calls.append((action, args))
        else:
            _Calls(self, at, delay_ms, (action, args))

    def call(self, delay_ms, action, priority=simpy.core.NORMAL) -> Call:
        """Schedule ``action(event)`` as one event of its own after ``delay_ms``: the same place in simpy's queue
        (time, priority, sequence number) as a Timeout or a triggered Event scheduled now, without the Event,
        Condition and Process objects around it. :meth:`Call.cancel` leaves the event in the queue, doing nothing.

        A driver that used to wait on simpy events can wait on calls instead and keep every outcome: events are
        processed in the same order and numbered alike (the run's ``simpy_events`` counter is simpy's number).
        """
        self.open_batch = None  # as schedule() does: a later() after this goes into a new batch
        event = Call(action)
        heappush(self._queue, (self._now + delay_ms, priority, next(self._eid), event))
        return event

    def later_all(self, delay_ms, actions) -> None:
        """``later(delay_ms, action)`` for each of ``actions``, in order (they share one batch, as back-to-back
        ``later`` calls for one instant do)."""
        if not actions:
            return
        first, rest = actions[0], actions[1:]
        self.later(delay_ms, first)
        if rest:
            self.open_batch.calls.extend((action, ()) for action in rest)


class Call:
    """A bare event in simpy's queue: ``callbacks`` (one call, given the event) and ``_ok``, all ``step`` reads."""

    __slots__ = ("callbacks", "_ok")

    def __init__(self, action):
        self.callbacks = [action]
        self._ok = True

    def cancel(self) -> None:
        """Do nothing when processed (the event keeps its place and number in the queue)."""
        if self.callbacks:
            self.callbacks = []


class _Calls(simpy.Event):
    """One simpy event that runs a list of calls ``(action, args)``, in order, when the clock reaches ``at``.

    :meth:`Clock.later` appends to the batch scheduled last while nothing else has
    been scheduled since and the time is the same. simpy orders events by (time,
    priority, sequence number), so calls scheduled back to back for one instant would
    run back to back anyway, in the same order: batching them changes no outcome, it
    saves the events (a woken pull's answer, the next pull, a finished consume call:
    thousands per simulated second).
    """

    def __init__(self, env: Clock, at, delay, call):
        self.env = env
        self.callbacks = [_run_calls]
        self._ok, self._value = True, None  # triggered, as a Timeout is
        self.at = at
        self.calls = [call]
        simpy.Environment.schedule(env, self, simpy.core.NORMAL, delay)
        env.open_batch = self


def _run_calls(batch: _Calls) -> None:
    env = batch.env
    if env.open_batch is batch:  # calls made now for this same instant go after it, in a new batch
        env.open_batch = None
    for action, args in batch.calls:
        action(*args)

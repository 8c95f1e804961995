"""Simulated time: a simpy Environment in milliseconds, with the calls due at one instant batched into one event.

Every node gets the :class:`Clock`: ``now``, ``timeout``, ``process`` (simpy's), ``later(delay_ms, action,
*args)``, which runs a plain call at a later instant without a process, and ``call(delay_ms, action)``, a bare event
numbered as simpy numbers its own (see :meth:`Clock.call`).
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappush
from operator import attrgetter
from typing import Any

import simpy
from simpy.core import SimTime
from simpy.events import NORMAL, Event, EventPriority

#: what :meth:`Clock.call` runs: a callable given the event it belongs to
CallAction = Callable[[Any], None]


class Clock(simpy.Environment):
    """simpy's Environment, noting when an event is scheduled so the engine knows its open batch is closed."""

    #: simpy's ``now`` (the current simulated time) read by a C-level getter: nodes ask it about ten times per message
    now = property(attrgetter("_now"))

    def __init__(self) -> None:
        super().__init__()
        self.open_batch: _Calls | None = None
        self.open_run: _Run | None = None  # the run of calls that a call() numbered next may join

    def schedule(self, event: Event, priority: EventPriority = NORMAL, delay: SimTime = 0) -> None:
        self.open_batch = None
        super().schedule(event, priority, delay)

    def later(self, delay_ms: SimTime, action: Callable[..., object], *args: Any) -> None:
        """Run ``action(*args)`` after ``delay_ms`` of simulated time (no process; see :class:`_Calls`)."""
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms}")
        at = self.now + delay_ms
        batch = self.open_batch
        if batch is not None and batch.at == at:
            batch.calls.append((action, args))
        else:
            _Calls(self, at, delay_ms, (action, args))

    def call(self, delay_ms: SimTime, action: CallAction, priority: EventPriority = NORMAL) -> None:
        """Schedule ``action(event)`` as one event of its own after ``delay_ms``: the same place in simpy's queue
        (time, priority, sequence number) as a Timeout or a triggered Event scheduled now would take, without the
        Event, Condition and Process objects around it.

        A driver that used to wait on simpy events can wait on calls instead and keep every outcome: events are
        processed in the same order and numbered alike (the run's ``simpy_events`` counter is simpy's number).
        Calls numbered one after another for one instant and priority share one queue entry (see :class:`_Run`).
        """
        self.open_batch = None  # as schedule() does: a later() after this goes into a new batch
        eid = next(self._eid)
        at = self._now + delay_ms
        run = self.open_run
        if run is not None and run.last_eid == eid - 1 and run.at == at and run.priority == priority:
            run.actions.append(action)
            run.last_eid = eid
        else:
            run = self.open_run = _Run(self, at, priority, eid, [action])
            heappush(self._queue, (at, priority, eid, run))  # type: ignore[misc]  # simpy reads it as an event


class _Run:
    """Calls scheduled by :meth:`Clock.call` with consecutive sequence numbers for one instant and priority, in one
    queue entry (keyed by the first number), processed in order as their own events would be.

    Before each call after the first, the run gives way if the queue now holds an event that simpy would process
    before that call's own (an urgent event scheduled by a call just run, say): the rest goes back into the queue,
    keyed by the next call's number. So every call runs exactly when its own event would have, and a wakeup that
    reaches hundreds of consumers at one instant costs one queue entry instead of hundreds.
    """

    __slots__ = ("clock", "at", "priority", "first_eid", "last_eid", "actions", "callbacks", "_ok")

    def __init__(self, clock: Clock, at: SimTime, priority: EventPriority, first_eid: int, actions: list[CallAction]):
        self.clock, self.at, self.priority = clock, at, priority
        self.first_eid = first_eid
        self.last_eid = first_eid + len(actions) - 1
        self.actions = actions
        self.callbacks: list[Callable[[Any], None]] | None = [self._process]  # what simpy's step reads (and _ok)
        self._ok = True

    def _process(self, event: object) -> None:
        clock = self.clock
        if clock.open_run is self:  # calls made from now on for this instant start a run of their own
            clock.open_run = None
        queue, at, priority, eid = clock._queue, self.at, self.priority, self.first_eid
        actions = self.actions
        for i, action in enumerate(actions):
            if i and queue and queue[0] < (at, priority, eid):
                rest = _Run(clock, at, priority, eid, actions[i:])
                heappush(queue, (at, priority, eid, rest))  # type: ignore[misc]  # simpy reads it as an event
                return
            action(self)
            eid += 1


class _Calls(simpy.Event):
    """One simpy event that runs a list of calls ``(action, args)``, in order, when the clock reaches ``at``.

    :meth:`Clock.later` appends to the batch scheduled last while nothing else has
    been scheduled since and the time is the same. simpy orders events by (time,
    priority, sequence number), so calls scheduled back to back for one instant would
    run back to back anyway, in the same order: batching them changes no outcome, it
    saves the events (a woken pull's answer, the next pull, a finished consume call:
    thousands per simulated second).
    """

    def __init__(self, env: Clock, at: SimTime, delay: SimTime, call: tuple[Callable[..., object], tuple[Any, ...]]):
        self.env: Clock = env
        self.callbacks = [_run_calls]  # simpy calls it with this batch
        self._ok, self._value = True, None  # triggered, as a Timeout is
        self.at = at
        self.calls = [call]
        simpy.Environment.schedule(env, self, NORMAL, delay)
        env.open_batch = self


def _run_calls(batch: _Calls) -> None:
    env = batch.env
    if env.open_batch is batch:  # calls made now for this same instant go after it, in a new batch
        env.open_batch = None
    for action, args in batch.calls:
        action(*args)

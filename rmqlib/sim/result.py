"""What a simulation run measured, and the numbers the book derives from it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from rmqlib.broker.admin import ConsumeStats
from rmqlib.checks import check_each, check_int, check_str
from rmqlib.protocol import MessageModel
from rmqlib.sim.scenario import Scenario

#: The shortest wait :meth:`SimResult.stalls` counts by default: every message waits a little for its listener.
STALL_MIN_MS = 1_000


def stall_spans(waits: np.ndarray, end_ms: int, min_ms: int) -> list[tuple[int, int]]:
    """The stalls of one queue (see :meth:`SimResult.stalls`) from its ``waits``: one row per message, its store
    time and the end of its first listener call (inf: never, so it waits until ``end_ms``)."""
    if not len(waits):
        return []
    order = np.argsort(waits[:, 1], kind="stable")
    stored, consumed = waits[order, 0], np.minimum(waits[order, 1], end_ms)
    # While a queue waits for its next consumption the messages waiting can only grow: the stall before the
    # consumption at consumed[j] began at the earliest store time among the messages consumed from then on.
    earliest = np.minimum.accumulate(stored[::-1])[::-1]
    firsts = np.flatnonzero(np.r_[True, consumed[1:] != consumed[:-1]])  # each distinct consumption time
    start = np.maximum(earliest[firsts], np.where(firsts > 0, consumed[firsts - 1], -np.inf))
    stop = consumed[firsts]
    kept = (stop > start) & (stop - start >= min_ms)
    return list(zip(np.round(start[kept]).astype(int).tolist(), np.round(stop[kept]).astype(int).tolist()))


class Event(NamedTuple):
    """One line of the run's log. ``kind`` is one of :data:`EVENT_KINDS`; ``who`` a client id or broker."""

    time_ms: int
    kind: str
    who: str
    detail: str = ""


EVENT_KINDS = (
    "join",
    "leave",
    "heartbeat",
    "notify",
    "rebalance",
    "lock",
    "unlock",
    "drop",
    "take",
    "pull held",
    "pull woken",
    "pull refused",
    "channel closed",
    "channel expired",
    "pop",
    "pop failed",
    "revive",
    "subscription",
    # a gRPC group's proxy
    "proxy unregistered",
    "proxy cleared",
    "receive failed",
    "ack refused",
    "change refused",
    # routes that change
    "topic change",
    "route",
    "route removed",
    "route reduced",
    "broker down",
    "broker up",
    "slave sync",
    # only with simulate(..., trace=True)
    "find consumer ids",
    "step",
    "pull",
    "pull answered",
    "reput",
)


class SubscriptionChange(NamedTuple):
    """A broker's registry changed the group's tag expression for a topic (an event of kind ``subscription``)."""

    time_ms: int
    broker: str
    topic: str
    expression: str  # "none": the sender's heartbeat left the topic out, so the registry dropped it
    sender: str  # the client whose heartbeat made the change


def subscription_detail(topic: str, expression: str, sender: str) -> str:
    """The detail of a ``subscription`` event, as :meth:`SimResult.subscription_changes` reads it back."""
    return f"{topic}: {expression} (from {sender})"


_SUBSCRIPTION_DETAIL = re.compile(r"(?P<topic>[^:]+): (?P<expression>.*) \(from (?P<sender>[^()]+)\)")
_QUEUE_FIELDS = re.compile(r"MessageQueue \[topic=(?P<topic>.*), brokerName=(?P<broker>.*), queueId=\d+\]")


class Interval(NamedTuple):
    """``holder`` held ``queue`` from ``start_ms`` to ``end_ms``."""

    queue: str
    holder: str
    start_ms: int
    end_ms: int

    @property
    def length_ms(self) -> int:
        return self.end_ms - self.start_ms


class ConsumeBatch(NamedTuple):
    """One listener call: ``consumer`` consumed ``offsets`` of ``queue`` from ``start_ms`` to ``end_ms``."""

    queue: str
    consumer: str
    start_ms: int
    end_ms: int
    offsets: tuple[int, ...]


class _Columns:
    """Records kept as columns: one list per field (named in ``__slots__``, the first one per record)."""

    __slots__ = ()
    unit = "records"

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, [])

    def __len__(self) -> int:
        return len(getattr(self, self.__slots__[0]))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self.unit})"

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __getstate__(self):
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state):
        for name, column in zip(self.__slots__, state):
            setattr(self, name, column)


class EventLog(_Columns):
    """The run's log, kept as columns while the run appends to it.

    One list per field instead of one record per line: appending is cheap and the
    garbage collector tracks four lists, not a hundred thousand tuples.
    :meth:`events` builds the :class:`Event` records, in time order.
    """

    __slots__ = ("time_ms", "kind", "who", "detail")
    unit = "lines"

    def append(self, time_ms: int, kind: str, who: str, detail: str = "") -> None:
        self.time_ms.append(time_ms)
        self.kind.append(kind)
        self.who.append(who)
        self.detail.append(detail)

    def extend(self, times_ms: list[int], kind: str, whos: list[str], detail: str = "") -> None:
        """One line per item of ``whos`` (at the matching time of ``times_ms``), all of one kind and detail:
        what ``append`` for each would record."""
        if len(times_ms) != len(whos):
            raise ValueError(f"times_ms and whos must be as long, got {len(times_ms)} and {len(whos)}")
        n = len(whos)
        self.time_ms.extend(times_ms)
        self.kind.extend([kind] * n)
        self.who.extend(whos)
        self.detail.extend([detail] * n)

    def events(self) -> list[Event]:
        """Every line as an :class:`Event`, sorted by time (stable: same-time lines keep their order)."""
        order = sorted(range(len(self.time_ms)), key=self.time_ms.__getitem__)
        return [Event(self.time_ms[i], self.kind[i], self.who[i], self.detail[i]) for i in order]


class ConsumptionLog(_Columns):
    """Every listener call of a run, kept as columns (see :class:`EventLog`); the offsets are one flat list:
    call i's are ``offsets[offsets_end[i-1]:offsets_end[i]]``."""

    __slots__ = ("queue", "consumer", "start_ms", "end_ms", "offsets", "offsets_end")
    unit = "listener calls"

    def append(self, queue: str, consumer: str, start_ms: int, end_ms: int, offsets) -> None:
        self.queue.append(queue)
        self.consumer.append(consumer)
        self.start_ms.append(start_ms)
        self.end_ms.append(end_ms)
        self.offsets.extend(offsets)
        self.offsets_end.append(len(self.offsets))

    def by_queue(self) -> dict[str, list[ConsumeBatch]]:
        """The calls per queue as :class:`ConsumeBatch` records, in the order they were made."""
        result: dict[str, list[ConsumeBatch]] = {}
        begin = 0
        for i, end in enumerate(self.offsets_end):
            queue = self.queue[i]
            result.setdefault(queue, []).append(
                ConsumeBatch(queue, self.consumer[i], self.start_ms[i], self.end_ms[i], tuple(self.offsets[begin:end]))
            )
            begin = end
        return result


@dataclass
class SimResult:
    """Everything one run measured. Times in simulated milliseconds.

    ``delivered`` maps every produced message id to how many times a listener
    consumed it (0 means lost); ``duplicates`` counts the deliveries beyond a
    message's first (in BROADCASTING: beyond each consumer's first); ``ownership`` holds, per queue, the intervals
    each consumer believed it owned the queue; ``lock_ownership`` what the
    broker lock tables said (orderly mode); ``load`` messages consumed per
    consumer per ``load_bucket_ms``.
    """

    scenario: Scenario
    seed: int
    produced: int
    delivered: dict[int, int]
    duplicates: int  # deliveries beyond each message's first (beyond each consumer's first when broadcasting)
    ownership: dict[str, list[Interval]]
    lock_ownership: dict[str, list[Interval]]
    consumption_log: ConsumptionLog
    latencies_ms: np.ndarray
    load: dict[str, list[int]]
    load_bucket_ms: int
    event_log: EventLog
    offset_violations: list[str] = field(default_factory=list)
    queues: list[str] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    stored: dict[str, int] = field(default_factory=dict)  # per queue of the scenario's topics: messages it holds
    routed: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # per queue: when a route listed it
    never_delivered: dict[str, int] | None = None  # Pop mode: per queue, stored messages no listener got
    message_tags: list[str | None] | None = None  # by message id, when the scenario tags its messages
    # Ids of the messages no consumer subscribes to (to their topic, with an expression that takes their tag): the
    # group is not meant to consume them, so they are not ``lost``. Then per queue, how many it stores.
    unsubscribed: frozenset[int] = frozenset()
    unsubscribed_stored: dict[str, int] = field(default_factory=dict)
    # Per queue of the scenario's topics, one row per message the group subscribes to: its store time and when its
    # first listener call ended (inf: none did; when broadcasting, the first member's). What ``stalls`` reads.
    waits: dict[str, np.ndarray] = field(default_factory=dict)
    # BROADCASTING only ({} otherwise): per member, ``waits`` as that member saw them (the end of its own first
    # listener call on each message). What ``stalls(consumer=...)`` and ``backlog(consumer=...)`` read.
    member_waits: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    # With Scenario.consume_stats_interval_ms: each GET_CONSUME_STATS answer of the polls a dashboard made, as
    # (when, replica, answer) in time order; a replica is the broker's name, or "<name>/slave" for a slave asked
    # while its master is out of the route. What ``diff_total`` and ``consume_tps`` read.
    consume_stats: list[tuple[int, str, ConsumeStats]] = field(default_factory=list)
    # The polls that failed, as (when, why): a routed replica did not answer, or the table was empty and the group
    # had no member online or broadcasts. They left no answers above.
    consume_stats_errors: list[tuple[int, str]] = field(default_factory=list)
    # With Scenario.order_keys: per order id, its messages in the order they were sent, each as its id and when its
    # first listener call ended (inf: none did). What ``out_of_order`` reads.
    orders: dict[int, list[tuple[int, float]]] | None = None

    @cached_property
    def events(self) -> list[Event]:
        """The run's log (:class:`Event` records in time order), built on first use."""
        return self.event_log.events()

    @cached_property
    def consumption(self) -> dict[str, list[ConsumeBatch]]:
        """Per queue, every listener call (:class:`ConsumeBatch`) in the order made; built on first use."""
        return self.consumption_log.by_queue()

    @property
    def lost(self) -> list[int]:
        """Ids of produced messages that no listener ever consumed (by the end of the run), leaving out those
        the group never subscribed to (:attr:`unsubscribed`)."""
        never = [mid for mid, count in self.delivered.items() if count == 0]
        unsubscribed = self.unsubscribed
        return [mid for mid in never if mid not in unsubscribed] if unsubscribed else never

    def out_of_order(self) -> dict[int, list[int]]:
        """Per order id (``Scenario.order_keys``), the ids of its messages that a listener finished before an
        earlier-sent message of the same order had been consumed once (or that was never consumed): what a
        business that relies on the order sees out of order. Only order ids with any; {} when the run sent no
        ordered messages."""
        broken: dict[int, list[int]] = {}
        for order_id, messages in (self.orders or {}).items():
            latest = -math.inf  # the latest first consumption among the messages sent before
            for message_id, consumed_ms in messages:
                if consumed_ms < latest:
                    broken.setdefault(order_id, []).append(message_id)
                latest = max(latest, consumed_ms)
        return broken

    def tag_of(self, message_id: int) -> str | None:
        """The tag the producer gave message ``message_id`` (None: untagged)."""
        check_int(message_id, "message_id", 0, self.produced - 1)
        return None if self.message_tags is None else self.message_tags[message_id]

    def subscription_changes(self, broker: str | None = None) -> list[SubscriptionChange]:
        """Each change of the group's expression for a topic in a broker's registry (only ``broker``'s, if given),
        in time order. Logged only when the scenario narrows subscriptions (``Scenario.narrows_subscriptions``)."""
        if broker is not None:
            check_str(broker, "broker")
        changes = []
        for event in self.events_of("subscription"):
            if broker in (None, event.who):
                fields = _SUBSCRIPTION_DETAIL.fullmatch(event.detail)
                assert fields is not None, event  # the recorder writes it with subscription_detail
                changes.append(
                    SubscriptionChange(event.time_ms, event.who, *fields.group("topic", "expression", "sender"))
                )
        return changes

    def first_owned_ms(self, queue: str) -> int | None:
        """When a consumer first believed it owned ``queue`` (its ``str``), or None if none ever did."""
        return min((i.start_ms for i in self.ownership.get(queue, ())), default=None)

    def owned_at(self, at_ms: int) -> dict[str, list[str]]:
        """Per member (every consumer of the scenario, in its order), the queues it believed it owned at ``at_ms``."""
        check_int(at_ms, "at_ms", 0)
        owned: dict[str, list[str]] = {spec.client_id: [] for spec in self.scenario.consumers}
        for queue, spans in sorted(self.ownership.items()):
            for i in spans:
                if i.start_ms <= at_ms < i.end_ms:
                    owned[i.holder].append(queue)
        return owned

    def waits_for_owner(self, since_ms: int) -> dict[str, int | None]:
        """For each queue of the run that no consumer owned at ``since_ms``: how long after ``since_ms`` its
        next owner took it (None: nobody did before the end). After a topic change, these are the new queues."""
        waits: dict[str, int | None] = {}
        for queue in self.queues:
            spans = self.ownership.get(queue, ())
            if any(i.start_ms <= since_ms < i.end_ms for i in spans):
                continue
            later = [i.start_ms for i in spans if i.start_ms >= since_ms]
            waits[queue] = min(later) - since_ms if later else None
        return waits

    def unconsumed(self) -> dict[str, int]:
        """Per queue (only those with any), how many stored messages nobody consumed by the end of the run:
        messages on a queue no consumer reads (more write queues than read queues), on a broker that did not
        come back, or simply not reached yet; messages none subscribes to (:attr:`unsubscribed`) are left out.
        Their sum is ``len(lost)``."""
        skip = self.unsubscribed_stored
        if self.never_delivered is not None:  # Pop mode: counted from the stores at the end of the run
            left = {queue: n - skip.get(queue, 0) for queue, n in self.never_delivered.items()}
            return {queue: n for queue, n in left.items() if n}
        consumed: dict[str, set] = {}
        for queue, batches in self.consumption.items():
            consumed[queue] = {offset for batch in batches for offset in batch.offsets}
        left = {queue: n - len(consumed.get(queue, ())) - skip.get(queue, 0) for queue, n in self.stored.items()}
        return {queue: n for queue, n in left.items() if n}

    def pauses(self, min_ms: int = 0) -> dict[str, list[tuple[int, int]]]:
        """Per queue, the stretches with no live consumer believing it owns the queue.

        Counted while the name server's route lists the queue (``routed``; a queue it dropped has nothing
        to wait for) and producers have started, from the queue's first owner (a group that is starting up
        is not paused) or, for a queue that joined the route during the run, from when it joined; to the
        end of the run. A queue no consumer ever owned is paused for as long as it is routed after producers
        start. Stretches shorter than ``min_ms`` are left out.
        """
        end, since = self.scenario.end_ms, self.scenario.produce_start_ms
        result = {}
        for queue in self.queues:
            spans = sorted((i.start_ms, i.end_ms) for i in self.ownership.get(queue, ()))
            routed = self.routed.get(queue) or [(0, end)]
            joined = routed[0][0]
            gaps = []
            if spans:
                covered_to = spans[0][1]
                if joined > 0 and spans[0][0] > joined:
                    gaps.append((joined, spans[0][0]))
                for start, stop in spans[1:]:
                    if start > covered_to:
                        gaps.append((covered_to, start))
                    covered_to = max(covered_to, stop)
                if covered_to < end:
                    gaps.append((covered_to, end))
            else:  # no consumer ever owned it: paused for as long as it is routed
                gaps.append((joined, end))
            gaps = [(max(a, lo, since), min(b, hi)) for a, b in gaps for lo, hi in routed]
            result[queue] = [(a, b) for a, b in gaps if b > a and b - a >= min_ms]
        return result

    def _waits_of(self, consumer: str | None) -> dict[str, np.ndarray]:
        """:attr:`waits`, or with ``consumer`` (a member of a BROADCASTING run) :attr:`member_waits` of it."""
        if consumer is None:
            return self.waits
        check_str(consumer, "consumer")
        if self.scenario.message_model is not MessageModel.BROADCASTING:
            raise ValueError(
                f"consumer: only a BROADCASTING run keeps each member's own waits (this one is "
                f"{self.scenario.message_model.name}, where a message is the group's); got {consumer!r}"
            )
        if consumer not in self.member_waits:
            raise ValueError(f"consumer: one of {', '.join(self.member_waits)}, got {consumer!r}")
        return self.member_waits[consumer]

    def stalls(self, min_ms: int = STALL_MIN_MS, consumer: str | None = None) -> dict[str, list[tuple[int, int]]]:
        """Per queue, the stretches of at least ``min_ms`` in which a message waited on the queue and none of the
        queue's messages was consumed for the first time: the queue stood still with work on it, whatever the
        cause (no owner, a dead member's batch or lock still held, a broker away, a listener stuck).

        Where :meth:`pauses` asks who believes it owns a queue, this asks whether its messages move, so it sees
        stalls that ownership cannot show: a Pop or gRPC group, where every member may receive from every queue,
        has no pauses, but a FIFO queue whose batch a crashed member holds stands still (chapter 11). A message
        waits from its store time to the end of its first listener call (in BROADCASTING, the first member's; with
        ``consumer``, that member's own), so every message waits a little: ``min_ms`` (default one second) keeps
        those ordinary waits out. A message never consumed waits to the end of the run.
        """
        check_int(min_ms, "min_ms", 0)
        end = self.scenario.end_ms
        return {queue: stall_spans(waits, end, min_ms) for queue, waits in self._waits_of(consumer).items()}

    def backlog(self, step_ms: int = 1_000, consumer: str | None = None) -> dict[str, np.ndarray]:
        """Per queue, how many of its messages waited at each instant ``0, step_ms, 2*step_ms, ...`` up to the end
        of the run: stored by then, and their first listener call not yet ended (in BROADCASTING, the first
        member's; with ``consumer``, that member's own); messages the group does not subscribe to are left out.
        Close to the "diff" of ``mqadmin consumerProgress``, which subtracts the committed offset instead (it lags
        a little behind)."""
        check_int(step_ms, "step_ms", 1, self.scenario.end_ms)
        instants = np.arange(0, self.scenario.end_ms + 1, step_ms)
        result = {}
        for queue, waits in self._waits_of(consumer).items():
            stored = np.sort(waits[:, 0])
            consumed = np.sort(waits[:, 1])  # inf: never, so it waits to the end
            result[queue] = np.searchsorted(stored, instants, "right") - np.searchsorted(consumed, instants, "right")
        return result

    def consume_rate(self, step_ms: int = 1_000, window_ms: int = 60_000) -> np.ndarray:
        """The group's messages consumed per second over the ``window_ms`` before each instant ``0, step_ms,
        2*step_ms, ...`` up to the end of the run: messages whose first listener call (in BROADCASTING, the first
        member's) ended in that window, divided by its length; for an instant less than ``window_ms`` into the run,
        the part of the window before the start counts as nothing consumed. What to set beside :meth:`consume_tps`,
        which counts messages handed out instead."""
        check_int(step_ms, "step_ms", 1, self.scenario.end_ms)
        check_int(window_ms, "window_ms", 1, self.scenario.end_ms)
        instants = np.arange(0, self.scenario.end_ms + 1, step_ms)
        ends = np.sort(np.concatenate([w[:, 1] for w in self.waits.values()] or [np.empty(0)]))
        consumed = np.searchsorted(ends, instants, "right") - np.searchsorted(ends, instants - window_ms, "right")
        return consumed * 1000.0 / window_ms

    def diff_total(self) -> list[tuple[int, int]]:
        """What a dashboard shows as the group's backlog at each of its polls (``Scenario.consume_stats_interval_ms``):
        ``(when, diff)``, the diff (max offset minus committed offset) summed over every queue of the brokers that
        answered then; a broker out of the route is not asked, and a poll that failed shows nothing
        (:attr:`consume_stats_errors`). Unlike :meth:`backlog` it counts from the committed
        offset, which lags the consumption: it trails a queue's lowest message still in a listener, and reaches the
        broker with the next pull or offset persist. [] when nobody polled."""
        return self._per_poll(ConsumeStats.compute_total_diff)

    def consume_tps(self) -> list[tuple[int, float]]:
        """What a dashboard shows as the group's consume TPS at each of its polls: ``(when, tps)``, summed over the
        brokers that answered then, as ``mqadmin consumerProgress`` sums them. Each broker counts the messages its
        pull and pop answers handed the group, and reports their rate over its latest minute of 10-second samples
        (:mod:`rmqlib.broker.stats`): messages handed out, not consumed, and a minute's average. [] when nobody
        polled."""
        return self._per_poll(attrgetter("consume_tps"))

    def _per_poll(self, value: Callable[[ConsumeStats], Any]) -> list:
        """``(when, total)`` per dashboard poll: ``value`` of each answer, summed over the poll's answers."""
        totals: dict[int, Any] = {}
        for when, _broker, stats in self.consume_stats:
            totals[when] = totals.get(when, 0) + value(stats)
        return list(totals.items())

    def total_stall_ms(self, min_ms: int = STALL_MIN_MS) -> int:
        return sum(b - a for spans in self.stalls(min_ms).values() for a, b in spans)

    def longest_stall_ms(self, min_ms: int = STALL_MIN_MS) -> int:
        return max((b - a for spans in self.stalls(min_ms).values() for a, b in spans), default=0)

    def total_pause_ms(self, min_ms: int = 0) -> int:
        return sum(b - a for gaps in self.pauses(min_ms).values() for a, b in gaps)

    def longest_pause_ms(self) -> int:
        return max((b - a for gaps in self.pauses().values() for a, b in gaps), default=0)

    def latency_percentile(self, q: float) -> float:
        """End-to-end latency (store to consume) percentile, ``q`` in [0, 100]; NaN without samples."""
        return float(np.percentile(self.latencies_ms, q)) if len(self.latencies_ms) else float("nan")

    def overlaps(self) -> dict[str, list[tuple[str, str, int, int]]]:
        """Per queue, times two consumers believed they owned it at once: (a, b, start, end)."""
        result = {}
        for queue, spans in self.ownership.items():
            found = []
            spans = sorted(spans, key=lambda i: i.start_ms)
            for i, a in enumerate(spans):
                for b in spans[i + 1 :]:
                    if b.start_ms >= a.end_ms:
                        break
                    if a.holder != b.holder:
                        found.append((a.holder, b.holder, b.start_ms, min(a.end_ms, b.end_ms)))
            if found:
                result[queue] = found
        return result

    def overlapping_calls(self) -> dict[str, list[tuple[ConsumeBatch, ConsumeBatch]]]:
        """Per queue (only those with any), pairs of listener calls by two different consumers that ran at the same
        time: ``(a, b)`` with ``a`` started first and ``b`` started before ``a`` ended. Orderly mode promises none
        while the brokers keep their lock tables."""
        result = {}
        for queue, batches in self.consumption.items():
            ordered = sorted(batches, key=lambda b: b.start_ms)
            found = []
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    if b.start_ms >= a.end_ms:
                        break
                    if b.consumer != a.consumer:
                        found.append((a, b))
            if found:
                result[queue] = found
        return result

    def queues_on(self, broker: str, topic: str | None = None) -> list[str]:
        """The queues (their ``str``) on ``broker`` that the run's topics have or a consumer owned (its retry
        topic's too), only those of ``topic`` if given."""
        check_str(broker, "broker")
        if topic is not None:
            check_str(topic, "topic")
        return [
            queue
            for queue in self._every_queue
            if (m := _QUEUE_FIELDS.fullmatch(queue)) and m["broker"] == broker and topic in (None, m["topic"])
        ]

    def listener_calls(
        self, queues: Iterable[str] | None = None, since_ms: int = 0, until_ms: int | None = None
    ) -> list[ConsumeBatch]:
        """The listener calls that started from ``since_ms`` up to, not including, ``until_ms`` (default: the
        end), on ``queues`` (default: every queue, the retry topic's too), queue by queue."""
        chosen, since_ms, until_ms = self._window(queues, since_ms, until_ms)
        consumption = self.consumption
        return [b for q in chosen for b in consumption.get(q, ()) if since_ms <= b.start_ms < until_ms]

    def released(
        self, queues: Iterable[str] | None = None, since_ms: int = 0, until_ms: int | None = None
    ) -> list[Interval]:
        """The ownership intervals that ended from ``since_ms`` up to, not including, ``until_ms``: each one a
        consumer letting a queue go (one still held at the end of the run ends at the end)."""
        chosen, since_ms, until_ms = self._window(queues, since_ms, until_ms)
        return [i for q in chosen for i in self.ownership.get(q, ()) if since_ms <= i.end_ms < until_ms]

    def taken(
        self, queues: Iterable[str] | None = None, since_ms: int = 0, until_ms: int | None = None
    ) -> list[Interval]:
        """The ownership intervals that began from ``since_ms`` up to, not including, ``until_ms``: each one a
        consumer taking a queue."""
        chosen, since_ms, until_ms = self._window(queues, since_ms, until_ms)
        return [i for q in chosen for i in self.ownership.get(q, ()) if since_ms <= i.start_ms < until_ms]

    @cached_property
    def _every_queue(self) -> list[str]:
        """The run's topics' queues, then any other queue a consumer owned or read (its retry topic's)."""
        return list(dict.fromkeys([*self.queues, *self.ownership, *self.consumption]))

    def _window(self, queues, since_ms, until_ms) -> tuple[list[str], int, int]:
        """Checked arguments of the window methods: the queues (the run's, or these of them) and the window."""
        end = self.scenario.end_ms
        since_ms = check_int(since_ms, "since_ms", 0)
        until_ms = end + 1 if until_ms is None else check_int(until_ms, "until_ms", 0)
        if queues is None:
            return self._every_queue, since_ms, until_ms
        every = self._every_queue
        chosen = check_each(queues, "queues", lambda v, label: check_str(v, label), max_len=len(every))
        known = set(every)
        unknown = [q for q in chosen if q not in known]
        if unknown:
            raise ValueError(f"queues must be queues of this run, got {unknown[0]!r}"[:200])
        return list(chosen), since_ms, until_ms

    def handovers(self, after_ms: int = 0) -> int:
        """Times some queue passed from one consumer to another (its ownership intervals in time order),
        counting only hand-overs whose new owner took the queue at or after ``after_ms`` (to skip start-up)."""
        count = 0
        for intervals in self.ownership.values():
            spans = sorted(intervals, key=lambda i: (i.start_ms, i.end_ms))
            count += sum(1 for a, b in zip(spans, spans[1:]) if a.holder != b.holder and b.start_ms >= after_ms)
        return count

    def redelivered_offsets(self) -> dict[str, list[int]]:
        """Per queue (only those with any), the offsets consumed more than once, in order.

        When broadcasting, "more than once" means by the same consumer (each consumer gets every message).
        """
        broadcasting = self.scenario.message_model is MessageModel.BROADCASTING
        result = {}
        for queue, batches in self.consumption.items():
            seen: set = set()
            again: set[int] = set()
            for batch in batches:
                for offset in batch.offsets:
                    key = (batch.consumer, offset) if broadcasting else offset
                    if key in seen:
                        again.add(offset)
                    seen.add(key)
            if again:
                result[queue] = sorted(again)
        return result

    def consumed_by(self) -> dict[str, int]:
        """Messages consumed (deliveries) per consumer over the whole run."""
        return {cid: sum(series) for cid, series in self.load.items()}

    def load_imbalance(self) -> int:
        """Most minus fewest deliveries among consumers that were alive for the whole production period."""
        full = [
            s.client_id
            for s in self.scenario.consumers
            if s.join_ms == 0 and (s.leave_ms is None or s.leave_ms >= self.scenario.duration_ms)
        ]
        totals = [self.consumed_by().get(cid, 0) for cid in full]
        return max(totals) - min(totals) if totals else 0

    def idle_consumers(self) -> list[str]:
        """Consumers that consumed nothing during the whole run."""
        return [s.client_id for s in self.scenario.consumers if self.consumed_by().get(s.client_id, 0) == 0]

    def events_of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    def summary(self) -> dict:
        """One tidy row of the headline numbers (what a sweep collects)."""
        return {
            "scenario": self.scenario.name,
            "seed": self.seed,
            "produced": self.produced,
            "lost": len(self.lost),
            "duplicates": self.duplicates,
            "pause_ms": self.total_pause_ms(),
            "longest_pause_ms": self.longest_pause_ms(),
            "stall_ms": self.total_stall_ms(),
            "longest_stall_ms": self.longest_stall_ms(),
            "latency_p50_ms": self.latency_percentile(50),
            "latency_p99_ms": self.latency_percentile(99),
            "load_imbalance": self.load_imbalance(),
            "idle_consumers": len(self.idle_consumers()),
            "rebalances": self.counters.get("rebalances", 0),
            "notifications": self.counters.get("notifications", 0),
            "pulls": self.counters.get("pulls", 0),
        }

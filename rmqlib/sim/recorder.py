"""What happened in a run: events, deliveries, ownership, locks, offsets, load; and the SimResult built from them.

The nodes tell the :class:`Recorder` what they did; it decides nothing. Message ids are handed out here
(``new_message_id``), because a message's id indexes its delivery count.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from rmqlib.broker.admin import ConsumeStats
from rmqlib.model import MessageQueue
from rmqlib.sim.result import ConsumptionLog, EventLog, Interval, SimResult
from rmqlib.sim.scenario import BROADCASTING, Scenario

LOAD_BUCKET_MS = 1_000


class _OffsetTally:
    """Per queue: the offsets consumed so far and the lowest one never consumed (``low_water``)."""

    __slots__ = ("low_water", "name", "pending")

    def __init__(self, name: str):
        self.name = name
        self.pending: set[int] = set()  # consumed offsets above low_water
        self.low_water = 0

    def consumed(self, offsets: list[int]) -> None:
        """One listener call's offsets (ascending, as a batch is taken from its queue)."""
        low = self.low_water
        pending = self.pending
        if offsets[0] >= low:
            pending.update(offsets)
        else:  # a redelivered offset below low_water changes nothing
            pending.update(o for o in offsets if o >= low)
        while low in pending:
            pending.discard(low)
            low += 1
        self.low_water = low


class Recorder:
    """The run's bookkeeping. ``trace``: also log what a sequence diagram needs (consumer lists, steps, pulls)."""

    def __init__(self, scenario: Scenario, trace: bool = False):
        self.scenario, self.trace = scenario, trace
        self.broadcasting = scenario.message_model == BROADCASTING
        self.pop_mode = scenario.pops
        self.event_log = EventLog()
        self.counters: defaultdict[str, int] = defaultdict(int)
        self.pulls = self.held = 0  # pull requests sent (pops in Pop mode); pulls the broker held
        self.next_id = 0
        self.delivered: list[int] = []
        self.first_delivered_ms: list[float] = []  # by message id: when its first listener call on it ended
        self.message_tags: list[str | None] | None = [] if scenario.message_tags else None  # by message id
        self.duplicates = 0
        # BROADCASTING: per member, when its first listener call on each message it consumed ended (by message id)
        self.first_by: defaultdict[str, dict[int, float]] = defaultdict(dict)
        self.latencies: list[float] = []
        self.consumption_log = ConsumptionLog()
        self.offset_tallies: dict[tuple[str, str, int], _OffsetTally] = {}  # by (broker, topic, queue id)
        self.queue_tallies: dict[MessageQueue, _OffsetTally] = {}  # the same, by MessageQueue
        self.offset_violations: list[str] = []
        self.consume_stats: list[tuple[int, str, ConsumeStats]] = []  # (when, replica, its GET_CONSUME_STATS answer)
        self.consume_stats_errors: list[tuple[int, str]] = []  # (when, why) of a dashboard poll that failed
        self.load: dict[str, defaultdict[int, int]] = defaultdict(lambda: defaultdict(int))  # cid -> bucket -> count
        self.open_ownership: dict[str, dict[MessageQueue, int]] = {}  # cid -> queue -> since when
        self.ownership: defaultdict[str, list[Interval]] = defaultdict(list)
        self.lock_state: dict[MessageQueue, tuple[str, int, int]] = {}
        self.lock_ownership: defaultdict[str, list[Interval]] = defaultdict(list)
        self.route_queues: defaultdict[str, dict[MessageQueue, None]] = defaultdict(dict)  # every queue a route held
        self.routed: defaultdict[str, list[list]] = defaultdict(list)  # queue -> [start, end or None] in the route
        self.orders: dict[int, list[int]] = {}  # order id -> its messages' ids, in the order they were sent

    def log(self, time_ms, kind, who, detail="") -> None:
        self.event_log.append(int(time_ms), kind, who, detail)

    def new_message_id(self, tag: str | None = None) -> int:
        """The next message's id; ``tag`` is kept when the scenario tags its messages."""
        self.next_id += 1
        self.delivered.append(0)
        self.first_delivered_ms.append(math.inf)
        if self.message_tags is not None:
            self.message_tags.append(tag)
        return self.next_id - 1

    def new_ordered_message_id(self, order_id: int, tag: str | None = None) -> int:
        """:meth:`new_message_id` for a message sent with ``order_id``; kept in the order's send order."""
        message_id = self.new_message_id(tag)
        self.orders.setdefault(order_id, []).append(message_id)
        return message_id

    def _tally(self, mq: MessageQueue) -> _OffsetTally:
        tally = self.queue_tallies.get(mq)
        if tally is None:
            tally = self.offset_tallies.setdefault((mq.broker_name, mq.topic, mq.queue_id), _OffsetTally(str(mq)))
            self.queue_tallies[mq] = tally
        return tally

    # --- consumption -----------------------------------------------------------
    def record_batch(self, cid: str, died_at: int | None, mq: MessageQueue, msgs, start_ms, now) -> None:
        """Count deliveries; a consumer that died mid-batch delivered only what finished before."""
        step = (now - start_ms) / len(msgs)
        end = int(now)
        if died_at is not None:
            msgs = [m for k, m in enumerate(msgs) if start_ms + (k + 1) * step <= died_at]
            if not msgs:
                return
            end = min(end, died_at)
        load, latencies, deliver = self.load[cid], self.latencies, self.deliver
        offsets = []
        for k, m in enumerate(msgs):
            t = start_ms + (k + 1) * step
            deliver(cid, int(m.msg_id), t)
            latencies.append(t - m.store_timestamp)
            load[int(t) // LOAD_BUCKET_MS] += 1
            offsets.append(m.queue_offset)
        tally = self._tally(mq)
        tally.consumed(offsets)
        self.consumption_log.append(tally.name, cid, start_ms, end, offsets)

    def filtered(self, mq: MessageQueue, offsets: list[int], by: str) -> None:
        """Offsets of ``mq`` (ascending) that a tag filter passed over, ``by`` the broker or the client: no
        listener gets them, and the queue's offset may pass them (so may a commit)."""
        if offsets:
            self.counters[f"filtered by {by}"] += len(offsets)
            self._tally(mq).consumed(offsets)

    def deliver(self, cid: str, message_id: int, at_ms: float) -> None:
        """Count one listener call on a message, ending ``at_ms``; a repeat is a duplicate (per consumer when
        broadcasting, where every consumer is meant to get every message)."""
        count = self.delivered[message_id]
        if self.broadcasting:
            firsts = self.first_by[cid]
            if message_id in firsts:
                self.duplicates += 1
            else:
                firsts[message_id] = at_ms
        elif count:
            self.duplicates += 1
        if not count:
            self.first_delivered_ms[message_id] = at_ms
        self.delivered[message_id] = count + 1

    def record_pop_batch(self, cid: str, died_at: int | None, popped, start_ms, now) -> None:
        step = (now - start_ms) / len(popped)
        for k, item in enumerate(popped):
            t = start_ms + (k + 1) * step
            if died_at is not None and t > died_at:
                break
            m = item.message
            self.deliver(cid, int(m.uniq_key), t)
            self.latencies.append(t - m.born_timestamp)
            self.load[cid][int(t) // LOAD_BUCKET_MS] += 1

    def record_popped(self, cid: str, died_at: int | None, item, start_ms: int, now: int) -> None:
        """One popped message a gRPC member consumed from ``start_ms`` to ``now``: a delivery (unless the member
        died first) and a line of the consumption log under the queue the message is stored in."""
        if died_at is not None and now > died_at:
            return
        self.record_pop_batch(cid, died_at, [item], start_ms, now)
        handle = item.handle
        queue = str(MessageQueue(handle.topic, handle.broker_name, handle.queue_id))
        self.consumption_log.append(queue, cid, start_ms, now, [handle.queue_offset])

    def on_commit(self, broker_name, topic, queue_id, offset, now_ms) -> None:
        """A broker stored an offset: it must not pass a message nobody consumed."""
        if self.pop_mode or topic not in self.scenario.topics:
            return
        tally = self.offset_tallies.get((broker_name, topic, queue_id))
        low = tally.low_water if tally is not None else 0
        if offset > low:
            self.offset_violations.append(
                f"{topic}@{broker_name}:{queue_id} committed {offset} at "
                f"{int(now_ms)} but offset {low} was never consumed"
            )

    # --- ownership and locks ---------------------------------------------------
    def own(self, cid: str, held: set[MessageQueue], now_ms) -> None:
        """Open and close the intervals in which consumer ``cid`` believes it owns each queue: now ``held``."""
        mine = self.open_ownership.get(cid)
        if mine is None:
            mine = self.open_ownership[cid] = {}
        for mq in [mq for mq in mine if mq not in held]:
            start = mine.pop(mq)
            self.ownership[str(mq)].append(Interval(str(mq), cid, start, now_ms))
            self.log(now_ms, "drop", cid, str(mq))
        for mq in sorted(held):
            if mq not in mine:
                mine[mq] = now_ms
                self.log(now_ms, "take", cid, str(mq))

    def close_ownership(self, cid: str, now_ms) -> None:
        for mq, start in self.open_ownership.pop(cid, {}).items():
            self.ownership[str(mq)].append(Interval(str(mq), cid, start, now_ms))

    def on_locks(self, table, mqs, now_ms) -> None:
        """Follow a broker's lock table for ``mqs`` (read, never changed): owners, renewals, releases. ``mqs`` may
        be a set (Java's is a HashSet), whose order Python's string hashing varies from process to process: the
        queues are logged in their sorted order, so that one seed gives one log."""
        expiry = self.scenario.broker_lock_expiry_ms
        for mq in sorted(mqs):
            entry = table.get(mq)
            live = entry is not None and not entry.is_expired(now_ms, expiry)
            owner = entry.client_id if live else None
            current = self.lock_state.get(mq)
            if current is not None and owner != current[0]:
                holder, start, renewed = current
                self.lock_ownership[str(mq)].append(Interval(str(mq), holder, start, min(now_ms, renewed + expiry)))
                del self.lock_state[mq]
                current = None
            if owner is not None:
                if current is None:
                    self.log(now_ms, "lock", owner, str(mq))
                    self.lock_state[mq] = (owner, now_ms, entry.last_update_timestamp)
                else:
                    self.lock_state[mq] = (owner, current[1], entry.last_update_timestamp)

    def close_locks(self, broker_name: str, now_ms: int) -> None:
        """A broker's lock table is gone with it: close the lock intervals it held."""
        for mq in [mq for mq in self.lock_state if mq.broker_name == broker_name]:
            holder, start, _ = self.lock_state.pop(mq)
            self.lock_ownership[str(mq)].append(Interval(str(mq), holder, start, now_ms))

    # --- routes ------------------------------------------------------------------
    def routes_now(self, topic: str, current: list[MessageQueue], now_ms: int) -> None:
        """The name server now routes ``current`` for ``topic``: remember every queue, and when it was routed."""
        current_set = set(current)
        for mq in current:
            self.route_queues[topic].setdefault(mq)
        for mq in self.route_queues[topic]:
            spans = self.routed[str(mq)]
            open_now = bool(spans) and spans[-1][1] is None
            if mq in current_set and not open_now:
                spans.append([now_ms, None])
            elif mq not in current_set and open_now:
                spans[-1][1] = now_ms

    # --- the result ----------------------------------------------------------------
    def result(
        self,
        seed: int,
        live_cids,
        stored: dict[str, int],
        arrivals: dict[str, tuple[np.ndarray, np.ndarray]],
        wall_seconds: float,
        simpy_events: int,
        never_delivered: dict[str, int] | None = None,
        unsubscribed: tuple[frozenset[int], dict[str, int]] | None = None,
    ) -> SimResult:
        """Close what is still open at the end of the run and build the :class:`SimResult`. ``stored``: per queue
        of the scenario's topics, how many messages it holds; ``arrivals``: per such queue, its messages' store
        times and ids."""
        sc = self.scenario
        end = sc.end_ms
        excluded = frozenset() if unsubscribed is None else unsubscribed[0]
        unsubscribed_ids = np.fromiter(excluded, dtype=np.int64, count=len(excluded))
        for cid in live_cids:
            self.close_ownership(cid, end)
        for mq, (holder, start, renewed) in self.lock_state.items():
            self.lock_ownership[str(mq)].append(
                Interval(str(mq), holder, start, min(end, renewed + sc.broker_lock_expiry_ms))
            )
        self.counters["pulls"], self.counters["held"] = self.pulls, self.held
        self.counters["events"] = len(self.event_log)
        self.counters["simpy_events"] = simpy_events
        return SimResult(
            scenario=sc,
            seed=seed,
            produced=self.next_id,
            delivered=dict(enumerate(self.delivered)),
            duplicates=self.duplicates,
            ownership=dict(self.ownership),
            lock_ownership=dict(self.lock_ownership),
            consumption_log=self.consumption_log,
            latencies_ms=np.asarray(self.latencies, dtype=float),
            load={spec.client_id: _series(self.load.get(spec.client_id, {})) for spec in sc.consumers},
            load_bucket_ms=LOAD_BUCKET_MS,
            event_log=self.event_log,
            offset_violations=self.offset_violations,
            consume_stats=self.consume_stats,
            consume_stats_errors=self.consume_stats_errors,
            queues=[str(mq) for topic in sc.topics for mq in self.route_queues[topic]],
            counters=dict(self.counters),
            wall_seconds=wall_seconds,
            routed={
                queue: [(start, stop if stop is not None else end) for start, stop in spans]
                for queue, spans in self.routed.items()
            },
            stored=stored,
            never_delivered=never_delivered,
            message_tags=self.message_tags,
            orders={
                order_id: [(i, self.first_delivered_ms[i]) for i in ids]
                for order_id, ids in sorted(self.orders.items())
            }
            if sc.order_keys
            else None,
            unsubscribed=excluded,
            unsubscribed_stored={} if unsubscribed is None else unsubscribed[1],
            waits=self._waits(arrivals, unsubscribed_ids, np.asarray(self.first_delivered_ms, dtype=float)),
            member_waits={
                spec.client_id: self._waits(arrivals, unsubscribed_ids, self._firsts_of(spec.client_id))
                for spec in sc.consumers
            }
            if self.broadcasting
            else {},
        )

    def _firsts_of(self, cid: str) -> np.ndarray:
        """By message id, when member ``cid``'s first listener call on it ended (inf: it never consumed it)."""
        firsts = np.full(self.next_id, math.inf)
        mine = self.first_by.get(cid, {})
        firsts[np.fromiter(mine.keys(), dtype=np.int64, count=len(mine))] = np.fromiter(
            mine.values(), dtype=float, count=len(mine)
        )
        return firsts

    @staticmethod
    def _waits(arrivals: dict[str, tuple[np.ndarray, np.ndarray]], unsubscribed_ids: np.ndarray, first: np.ndarray):
        """Per queue: each message's store time and ``first[its id]``, the end of its first listener call (inf:
        none), as :attr:`SimResult.waits` keeps them; messages the group does not subscribe to are left out."""
        waits = {}
        for queue, (stored_ms, ids) in arrivals.items():
            kept = ~np.isin(ids, unsubscribed_ids)
            waits[queue] = np.column_stack((stored_ms[kept], first[ids[kept]]))
        return waits


def _series(buckets: dict[int, int]) -> list[int]:
    """A load series from bucket -> count: every bucket up to the last one with a message (none after)."""
    return [buckets.get(i, 0) for i in range(max(buckets) + 1)] if buckets else []

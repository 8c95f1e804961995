"""Pop long polling: an empty POP_MESSAGE waits on the broker until a message for it arrives or its poll time ends.

Mirrors: broker/.../longpolling/PopLongPollingService.java and PopRequest.java. Held pops are kept per key
``topic@group@queueId`` (``queueId`` -1 for a pop that lets the broker choose the queue), each key's in order of
expiry (the client's born time plus its poll time), then of arrival. A message arriving on queue ``q`` of a topic
wakes, for every group that holds pops of the topic, at most ONE held pop of key ``-1`` and at most one of key ``q``:
the first of each. A first held pop whose tag filter does not take the message is put back and nobody of that key is
woken (unless the message's offset is a multiple of ``popLongPollingForceNotifyInterval``, 800, which wakes it
anyway). A scan every 20 ms wakes the held pops within 50 ms of their expiry.

Waking a pop means running it again on the broker: the driver does that with each request this service hands back,
and holds it again (:meth:`PopLongPollingService.polling`, with its first born time) if it still finds nothing.
Here the driver owns time and the requests: a request is whatever it holds (a simulated event, a callback), with a
``channel_active`` test for the connection it came on. Not modelled: ``notifyLast`` (false by default), the
cleaning of unused keys every 5 minutes, and the retry-topic v2 name (a pop retry topic's arrivals are notified under
their own name, as with ``enableRetryTopicV2`` off, the default: no held pop is keyed by it).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from enum import Enum
from typing import Protocol

from rmqlib.checks import check_callable, check_int, check_str, check_time

#: What a push consumer sends as ``pollTime`` (DefaultMQPushConsumerImpl: BROKER_SUSPEND_MAX_TIME_MILLIS).
POP_POLL_TIME_MILLIS = 15_000
#: BrokerConfig.popPollingSize: held pops per key; BrokerConfig.maxPopPollingSize: held pops in all.
POP_POLLING_SIZE, MAX_POP_POLLING_SIZE = 1024, 100_000
#: BrokerConfig.popLongPollingForceNotifyInterval: an arrival at an offset that is a multiple of it wakes the first
#: held pop whatever its filter.
POP_LONG_POLLING_FORCE_NOTIFY_INTERVAL = 800
#: PopLongPollingService#run: the service looks for expired pops every 20 ms.
POLLING_SCAN_INTERVAL_MS = 20
#: PopRequest#isTimeout: a held pop counts as expired 50 ms before its expiry.
TIMEOUT_MARGIN_MS = 50


class PollingResult(str, Enum):
    """What :meth:`PopLongPollingService.polling` did with an empty pop. Mirrors: PollingResult.java"""

    POLLING_SUC = "POLLING_SUC"  # held
    POLLING_FULL = "POLLING_FULL"  # too many held: the pop is answered POLLING_FULL
    POLLING_TIMEOUT = "POLLING_TIMEOUT"  # already expired: answered POLLING_TIMEOUT
    NOT_POLLING = "NOT_POLLING"  # no poll time (or the service stopped)


class MessageFilter(Protocol):
    """What decides whether an arriving message may wake a held pop (a SubscriptionData will do)."""

    def is_matched_by_consume_queue(self, tags_code: int) -> bool: ...


def _always_active() -> bool:
    return True


class HeldPop:
    """One held pop: the driver's request, when it expires, its filter and its connection.

    Mirrors: broker/.../longpolling/PopRequest.java (``op`` numbers the pops in the order they were held; a pop
    is woken at most once, ``complete``)
    """

    __slots__ = ("request", "expired", "op", "message_filter", "channel_active", "completed")

    def __init__(
        self,
        request: object,
        expired: int,
        op: int,
        message_filter: MessageFilter | None,
        channel_active: Callable[[], bool],
    ):
        self.request, self.expired, self.op = request, expired, op
        self.message_filter, self.channel_active = message_filter, channel_active
        self.completed = False

    def is_timeout(self, now_ms: int) -> bool:
        return now_ms > self.expired - TIMEOUT_MARGIN_MS

    def complete(self) -> bool:
        """True the first time only (Java's compareAndSet on ``complete``)."""
        if self.completed:
            return False
        self.completed = True
        return True

    def sort_key(self) -> tuple[int, int]:
        """PopRequest.COMPARATOR: expiry first, then the order held."""
        return self.expired, self.op

    def __repr__(self) -> str:
        return f"HeldPop(expired={self.expired}, op={self.op}, request={self.request!r})"


def polling_key(topic: str, group: str, queue_id: int) -> str:
    """KeyBuilder#buildPollingKey."""
    return f"{topic}@{group}@{queue_id}"


class PopLongPollingService:
    """The pops a broker holds until a message for them arrives. Mirrors: PopLongPollingService.java"""

    def __init__(
        self,
        pop_polling_size: int = POP_POLLING_SIZE,
        max_pop_polling_size: int = MAX_POP_POLLING_SIZE,
        force_notify_interval: int = POP_LONG_POLLING_FORCE_NOTIFY_INTERVAL,
    ) -> None:
        self.pop_polling_size = check_int(pop_polling_size, "pop_polling_size", 0)
        self.max_pop_polling_size = check_int(max_pop_polling_size, "max_pop_polling_size", 0)
        self.force_notify_interval = check_int(force_notify_interval, "force_notify_interval")
        self.polling_map: dict[str, list[HeldPop]] = {}  # key -> held pops in PopRequest.COMPARATOR order
        self.topic_cid_map: dict[str, dict[str, None]] = {}  # topic -> the groups that ever held a pop of it
        self.total_polling_num = 0
        self._ops = 0

    @property
    def held(self) -> list[object]:
        """Every held request, key by key in the order they were first used, each key's in wake order."""
        return [pop.request for pops in self.polling_map.values() for pop in pops]

    def polling(
        self,
        request: object,
        topic: str,
        group: str,
        queue_id: int,
        born_ms: int,
        now_ms: int,
        poll_time_ms: int = POP_POLL_TIME_MILLIS,
        message_filter: MessageFilter | None = None,
        channel_active: Callable[[], bool] | None = None,
    ) -> PollingResult:
        """Hold ``request``, an empty pop of ``topic`` for ``group`` (``queue_id`` -1: any queue) sent at
        ``born_ms``, until ``born_ms + poll_time_ms``; ``message_filter`` (anything with
        ``is_matched_by_consume_queue(tags_code)``, or None) decides which arrivals may wake it.

        Mirrors: PopLongPollingService.java#polling
        """
        check_str(topic, "topic")
        check_str(group, "group")
        check_int(queue_id, "queue_id", -1)
        check_time(born_ms, "born_ms")
        now_ms = check_time(now_ms)
        check_int(poll_time_ms, "poll_time_ms")
        channel_active = _always_active if channel_active is None else check_callable(channel_active, "channel_active")
        if poll_time_ms <= 0:
            return PollingResult.NOT_POLLING
        self.topic_cid_map.setdefault(topic, {}).setdefault(group, None)
        self._ops += 1
        pop = HeldPop(request, born_ms + poll_time_ms, self._ops, message_filter, channel_active)
        if self.total_polling_num >= self.max_pop_polling_size:
            return PollingResult.POLLING_FULL
        if pop.is_timeout(now_ms):
            return PollingResult.POLLING_TIMEOUT
        pops = self.polling_map.setdefault(polling_key(topic, group, queue_id), [])
        if len(pops) > self.pop_polling_size:
            return PollingResult.POLLING_FULL
        bisect.insort(pops, pop, key=HeldPop.sort_key)
        self.total_polling_num += 1
        return PollingResult.POLLING_SUC

    def notify_message_arriving(
        self, topic: str, queue_id: int, offset: int = -1, tags_code: int | None = None
    ) -> list[object]:
        """A message arrived at ``offset`` of ``topic``'s queue ``queue_id`` (``tags_code``: its tag's hash, None
        when unknown): for every group holding pops of the topic, the first held pop of key -1, then of key
        ``queue_id``, if its filter takes the message. Returns the requests to run again, in that order.

        Mirrors: PopLongPollingService.java#notifyMessageArriving(topic, queueId, offset, tagsCode, ...)
        """
        check_str(topic, "topic", empty=True)
        check_int(queue_id, "queue_id", -1)
        check_int(offset, "offset", -1)
        groups = self.topic_cid_map.get(topic)
        if not groups:
            return []
        force = self.force_notify_interval > 0 and offset % self.force_notify_interval == 0
        woken = []
        for group in groups:
            keys = (-1, queue_id) if queue_id >= 0 else (queue_id,)
            for key in keys:
                request = self.notify_queue(topic, key, group, force, tags_code)
                if request is not None:
                    woken.append(request)
        return woken

    def notify_queue(
        self, topic: str, queue_id: int, group: str, force: bool = False, tags_code: int | None = None
    ) -> object | None:
        """Wake the first held pop of key ``topic@group@queue_id``: its request, or None when the key holds none
        (pops whose connection closed are dropped on the way) or the first one's filter does not take
        ``tags_code`` (it stays held, and ``force`` skips that test). A pop answered with messages left behind
        (``restNum`` > 0) calls this for its own key, with no tag.

        Mirrors: PopLongPollingService.java#notifyMessageArriving(topic, queueId, cid, force, tagsCode, ...)
        """
        pops = self.polling_map.get(polling_key(topic, group, queue_id))
        pop = self._poll_first(pops) if pops else None
        if pops is None or pop is None:
            return None
        if not force and tags_code is not None and pop.message_filter is not None:
            if not pop.message_filter.is_matched_by_consume_queue(tags_code):
                bisect.insort(pops, pop, key=HeldPop.sort_key)
                self.total_polling_num += 1
                return None
        return pop.request if self._wake_up(pop) else None

    def scan(self, now_ms: int) -> list[object]:
        """The service thread's pass: every held pop within 50 ms of its expiry is woken (to be answered
        POLLING_TIMEOUT, or with what it finds now). Returns their requests, key by key.

        Mirrors: PopLongPollingService.java#run
        """
        now_ms = check_time(now_ms)
        woken = []
        for pops in self.polling_map.values():
            while pops and pops[0].is_timeout(now_ms):
                pop = pops.pop(0)
                self.total_polling_num -= 1
                if self._wake_up(pop):
                    woken.append(pop.request)
        return woken

    def next_scan_ms(self, now_ms: int, started_ms: int = 0) -> int | None:
        """When the scan (every 20 ms from ``started_ms``) next finds an expired pop, or None when none is held."""
        check_time(now_ms)
        firsts = [pops[0].expired - TIMEOUT_MARGIN_MS for pops in self.polling_map.values() if pops]
        if not firsts:
            return None
        due = max(now_ms, min(firsts) + 1)  # a pop expires strictly after expired - 50
        ticks = -(-(due - started_ms) // POLLING_SCAN_INTERVAL_MS)
        return started_ms + ticks * POLLING_SCAN_INTERVAL_MS

    def _poll_first(self, pops: list[HeldPop]) -> HeldPop | None:
        """PopLongPollingService#pollRemotingCommands: the first held pop whose connection is still open."""
        while pops:
            pop = pops.pop(0)
            self.total_polling_num -= 1
            if pop.channel_active():
                return pop
        return None

    def _wake_up(self, pop: HeldPop) -> bool:
        """PopLongPollingService#wakeUp: once per pop, and only over an open connection."""
        return pop.complete() and pop.channel_active()

"""Long polling: the broker holds a pull that found nothing until data or timeout.

A pull that finds no new message (PULL_NOT_FOUND) and carries the suspend
flag is not answered; it is parked here under the key ``topic@queueId``.
It is woken when

* a new message for that queue is dispatched (reput calls
  :meth:`PullRequestHoldService.notify_message_arriving`, long polling only)
  and the newest offset is past the request's offset and the tag matches, or
* a periodic scan (:meth:`PullRequestHoldService.check_hold_request`, every
  5000 ms with long polling, every ``shortPollingTimeMills`` = 1000 ms
  without) sees either new data or that the hold time is over.

A woken request is processed again with ``broker_allow_suspend=False`` so it
always gets an answer (messages or PULL_NOT_FOUND) and never re-suspends.

Mirrors: broker/.../longpolling/PullRequestHoldService.java
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rmqlib.broker.config import LONG_POLLING_CHECK_INTERVAL_MS, BrokerConfig
from rmqlib.broker.protocol import check_schedule_time
from rmqlib.checks import check_callable, check_instance, check_int, check_methods, check_str, check_time
from rmqlib.model import INT_MAX, java_split

TOPIC_QUEUEID_SEPARATOR = "@"  # PullRequestHoldService.TOPIC_QUEUEID_SEPARATOR
WOKEN_LOG_SIZE = 1_000  # how many recent wake-ups PullRequestHoldService.woken_log keeps (ours, not Java's)
FAILURE_LOG_SIZE = 1_000  # how many recent store failures PullRequestHoldService.failure_log keeps (Java logs them)


@dataclass(eq=False, slots=True)
class PullRequest:
    """A held pull: the original request plus when and for how long it waits.

    ``request_command`` is whatever the driver needs to re-run the pull (here
    a :class:`~rmqlib.broker.pull_processor.PullMessageRequest`), ``channel``
    and ``client_id`` say where the answer goes. ``message_filter`` needs
    ``is_matched_by_consume_queue(tags_code)``.

    Mirrors: broker/.../longpolling/PullRequest.java
    """

    request_command: Any
    channel: str
    client_id: str
    timeout_millis: int
    suspend_timestamp: int
    pull_from_this_offset: int
    subscription_data: Any = None
    message_filter: Any = None

    def __post_init__(self):
        """The checks: times are int milliseconds (the hold time >= 0), the offset an int >= 0, and a filter
        has ``is_matched_by_consume_queue``."""
        check_int(self.timeout_millis, "timeout_millis", 0)
        check_time(self.suspend_timestamp, "suspend_timestamp")
        check_int(self.pull_from_this_offset, "pull_from_this_offset", 0)
        if self.message_filter is not None:
            check_methods(self.message_filter, "message_filter", "is_matched_by_consume_queue")

    @classmethod
    def _trusted(
        cls,
        request_command: Any,
        channel: str,
        client_id: str,
        timeout_millis: int,
        suspend_timestamp: int,
        pull_from_this_offset: int,
        subscription_data: Any,
        message_filter: Any,
    ) -> PullRequest:
        """A held pull built by code that has checked every field (the pull processor, from a request it has
        just answered): every field, in order, no checks."""
        r = object.__new__(cls)
        r.request_command = request_command
        r.channel = channel
        r.client_id = client_id
        r.timeout_millis = timeout_millis
        r.suspend_timestamp = suspend_timestamp
        r.pull_from_this_offset = pull_from_this_offset
        r.subscription_data = subscription_data
        r.message_filter = message_filter
        return r

    @property
    def deadline_ms(self) -> int:
        return self.suspend_timestamp + self.timeout_millis


@dataclass(slots=True)
class ManyPullRequest:
    """The held pulls of one ``topic@queueId`` key, in arrival order.

    Mirrors: broker/.../longpolling/ManyPullRequest.java
    """

    pull_request_list: list = field(default_factory=list)

    def add_pull_request(self, pull_request) -> None:
        if isinstance(pull_request, list):
            self.pull_request_list.extend(pull_request)
        else:
            self.pull_request_list.append(pull_request)

    def clone_list_and_clear(self) -> list | None:
        """Take every held request (None if there were none)."""
        if not self.pull_request_list:
            return None
        out, self.pull_request_list = self.pull_request_list, []
        return out

    def is_empty(self) -> bool:
        return not self.pull_request_list


def build_key(topic: str, queue_id: int) -> str:
    """``topic@queueId``. Mirrors: PullRequestHoldService.java#buildKey"""
    return f"{topic}{TOPIC_QUEUEID_SEPARATOR}{queue_id}"


class PullRequestHoldService:
    """The table of held pulls, the arrival check and the periodic scan.

    ``store`` needs ``get_max_offset(topic, queue_id)``. Each woken request
    is handed to ``wakeup_handler(request, now_ms)`` if one is set (the
    :class:`~rmqlib.broker.pull_processor.PullMessageProcessor` sets itself)
    and is also returned, so a driver can re-run it by hand.

    Timing API: the service's loop sleeps :attr:`wait_interval_ms` and then
    scans; :attr:`next_check_ms` is when the next scan is due and
    :meth:`run_due` performs it. (Java's ``waitForRunning`` can also be woken
    early by ``wakeup()``, which nothing on the pull path calls.)

    Bad input and failures: :meth:`suspend_pull_request` refuses (ValueError/TypeError
    naming the argument) a topic or queue id the store does not know and times that are
    not int milliseconds, so every parked pull can be scanned and times out. A store failure during a
    scan is handled as Java handles it: recorded in :attr:`failure_log` (Java logs it)
    and the scan goes on with the other keys; a failed re-read in
    :meth:`notify_message_arriving` drops that one request, as Java's ``continue`` does.

    Mirrors: broker/.../longpolling/PullRequestHoldService.java
    """

    def __init__(
        self,
        store,
        broker_config: BrokerConfig | None = None,
        wakeup_handler: Callable[[PullRequest, int], object] | None = None,
        start_ms=0,
    ):
        check_methods(store, "store", "get_max_offset")
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        check_callable(wakeup_handler, "wakeup_handler", none=True)
        self.store = store
        self.broker_config = broker_config or BrokerConfig()
        self.wakeup_handler = wakeup_handler
        self.pull_request_table: dict[str, ManyPullRequest] = {}
        self.next_check_ms = check_schedule_time(start_ms, "start_ms") + self.wait_interval_ms
        # The latest wake-ups, (time, request, "arrival"|"timeout"); bounded so a long run does not keep every pull.
        self.woken_log: deque[tuple[int, PullRequest, str]] = deque(maxlen=WOKEN_LOG_SIZE)
        # The latest store failures, (time, "topic@queueId", error), where Java writes log.error and carries on.
        self.failure_log: deque[tuple[int, str, Exception]] = deque(maxlen=FAILURE_LOG_SIZE)

    @property
    def wait_interval_ms(self) -> int:
        """5000 with long polling, else shortPollingTimeMills. Mirrors: #run"""
        if self.broker_config.long_polling_enable:
            return LONG_POLLING_CHECK_INTERVAL_MS
        return self.broker_config.short_polling_time_mills

    def suspend_pull_request(self, topic: str, queue_id: int, pull_request: PullRequest) -> None:
        """Park ``pull_request`` under ``topic@queue_id``. Mirrors: #suspendPullRequest

        Checked here, not in Java: ``topic`` is a non-empty str, ``queue_id`` an int 0..2**31-1,
        the request's times int milliseconds, and the store must know the queue (its
        ``get_max_offset(topic, queue_id)`` is asked once). So every held key can be scanned;
        a pull that could never be answered is refused instead of parked.
        """
        check_instance(pull_request, "pull_request", PullRequest)
        check_str(topic, "topic")
        check_int(queue_id, "queue_id", 0, INT_MAX)
        # checked again (its fields may have changed since it was built): a held pull must be able to time out
        check_int(pull_request.timeout_millis, "pull_request.timeout_millis", 0)
        check_time(pull_request.suspend_timestamp, "pull_request.suspend_timestamp")
        check_int(pull_request.pull_from_this_offset, "pull_request.pull_from_this_offset", 0)
        try:
            self.store.get_max_offset(topic, queue_id)
        except Exception as exc:
            raise ValueError(f"topic/queue_id: the store has no queue {topic[:80]!r}@{queue_id} ({exc})") from None
        self._suspend_pull_request_trusted(topic, queue_id, pull_request)

    def _suspend_pull_request_trusted(self, topic: str, queue_id: int, pull_request: PullRequest) -> None:
        """:meth:`suspend_pull_request` without its checks, for a caller that has made them (the pull
        processor suspends only a request whose queue the store has just read)."""
        key = build_key(topic, queue_id)
        mpr = self.pull_request_table.get(key)
        if mpr is None:
            mpr = self.pull_request_table[key] = ManyPullRequest()
        mpr.add_pull_request(pull_request)

    def held_count(self, topic: str | None = None, queue_id: int | None = None) -> int:
        """Requests held for ``topic@queue_id``, or over every key when ``topic`` is None."""
        if topic is None:
            return sum(len(m.pull_request_list) for m in self.pull_request_table.values())
        check_str(topic, "topic")
        check_int(queue_id, "queue_id")
        mpr = self.pull_request_table.get(build_key(topic, queue_id))
        return 0 if mpr is None else len(mpr.pull_request_list)

    def check_hold_request(self, now_ms) -> list[PullRequest]:
        """Scan every key: notify with the store's max offset and no tag code.

        A key is used only if it splits on '@' into exactly two parts (Java
        ``String.split``), so a topic containing '@' is never scanned.

        A key whose store read fails (or whose queue id does not parse) is
        skipped, its requests stay held, and the failure is recorded in
        :attr:`failure_log`; the scan carries on with the other keys. That is
        what Java does (it catches the failure per key, logs it and goes on),
        and it means one bad key cannot stop every other held pull from
        timing out.

        Mirrors: PullRequestHoldService.java#checkHoldRequest
        """
        check_time(now_ms)
        woken = []
        for key in list(self.pull_request_table):
            parts = java_split(key, TOPIC_QUEUEID_SEPARATOR)
            if len(parts) != 2:
                continue
            try:
                topic, queue_id = parts[0], int(parts[1])
                offset = self.store.get_max_offset(topic, queue_id)
            except Exception as exc:  # Java: catch (Throwable e) { log.error(...) } and the next key
                self.failure_log.append((now_ms, key, exc))
                continue
            woken.extend(self._notify_message_arriving_trusted(topic, queue_id, offset, now_ms, None))
        return woken

    def run_due(self, now_ms) -> list[PullRequest]:
        """Run the periodic scan if it is due, then schedule the next one (``|now_ms| <= 2**53``)."""
        check_schedule_time(now_ms)
        woken = []
        if now_ms >= self.next_check_ms:
            woken = self.check_hold_request(now_ms)
            self.next_check_ms = now_ms + self.wait_interval_ms
        return woken

    def notify_message_arriving(
        self,
        topic: str,
        queue_id: int,
        max_offset: int,
        now_ms,
        tags_code: int | None = None,
        msg_store_time=0,
        filter_bit_map=None,
        properties=None,
    ) -> list[PullRequest]:
        """Wake what can be woken on ``topic@queue_id``; re-hold the rest.

        For each held request: newest = ``max_offset`` (re-read from the store
        if it is not past the request's offset). If newest > offset and the
        filter matches ``tags_code`` → wake. Else if
        ``now_ms >= suspend_timestamp + timeout_millis`` → wake. Else hold.

        If re-reading the store fails, the request is dropped and the failure
        recorded in :attr:`failure_log`: Java catches that failure, logs it and
        goes on to the next request without holding this one again (its client
        then re-pulls after its own 30 s timeout).

        Mirrors: PullRequestHoldService.java#notifyMessageArriving
        """
        check_time(now_ms)
        check_int(max_offset, "max_offset")
        check_str(topic, "topic", empty=True)
        if tags_code is not None:
            check_int(tags_code, "tags_code")
        return self._notify_message_arriving_trusted(topic, queue_id, max_offset, now_ms, tags_code)

    def _notify_message_arriving_trusted(
        self, topic: str, queue_id: int, max_offset: int, now_ms: int, tags_code: int | None
    ) -> list[PullRequest]:
        """:meth:`notify_message_arriving` for a caller that has checked its arguments (the store's reput, through
        the simulator's listener): the same wake-ups, no checks."""
        mpr = self.pull_request_table.get(build_key(topic, queue_id))
        if mpr is None:
            return []
        request_list = mpr.clone_list_and_clear()
        if request_list is None:
            return []
        woken, replay = [], []
        for request in request_list:
            newest = max_offset
            if newest <= request.pull_from_this_offset:
                try:
                    newest = self.store.get_max_offset(topic, queue_id)
                except Exception as exc:  # Java: catch, log.error, continue (the request is not re-held)
                    self.failure_log.append((now_ms, build_key(topic, queue_id), exc))
                    continue
            if newest > request.pull_from_this_offset:
                flt = request.message_filter
                match = flt is None or flt.is_matched_by_consume_queue(tags_code)
                # Properties-based (SQL92) filtering is not modelled: tags only.
                if match:
                    self._wake(request, now_ms, "arrival")
                    woken.append(request)
                    continue
            if now_ms >= request.suspend_timestamp + request.timeout_millis:
                self._wake(request, now_ms, "timeout")
                woken.append(request)
                continue
            replay.append(request)
        if replay:
            mpr.add_pull_request(replay)
        return woken

    def notify_master_online(self, now_ms) -> list[PullRequest]:
        """Wake every held request. Mirrors: #notifyMasterOnline"""
        check_time(now_ms)
        woken = []
        for mpr in self.pull_request_table.values():
            for request in mpr.clone_list_and_clear() or []:
                self._wake(request, now_ms, "master-online")
                woken.append(request)
        return woken

    def _wake(self, request: PullRequest, now_ms, reason: str) -> None:
        """Hand a woken request to ``wakeup_handler``; if that fails, record it and go on with the others, as
        Java catches a failed ``executeRequestWhenWakeup`` per request (the request is not held again)."""
        self.woken_log.append((now_ms, request, reason))
        if self.wakeup_handler is not None:
            try:
                self.wakeup_handler(request, now_ms)
            except Exception as exc:
                self.failure_log.append((now_ms, f"wakeup of {request.client_id}", exc))

    def _check(self) -> None:
        seen = set()
        for mpr in self.pull_request_table.values():
            assert isinstance(mpr, ManyPullRequest)
            for request in mpr.pull_request_list:
                assert isinstance(request, PullRequest)
                assert id(request) not in seen, "a request is held twice"
                seen.add(id(request))
                assert request.timeout_millis >= 0 and request.pull_from_this_offset >= 0


class NotifyMessageArrivingListener:
    """The store's message-arriving listener: forwards each arrival to the hold services.

    Call it (or pass it to :class:`~rmqlib.broker.message_store.MessageStore`)
    as ``listener(topic, queue_id, logic_offset, tags_code, msg_store_time,
    properties, now_ms)``. The Pop processor is told too when given (the
    model's Pop has no long polling, so it only records the arrival).

    Mirrors: broker/.../longpolling/NotifyMessageArrivingListener.java
    """

    def __init__(self, pull_request_hold_service: PullRequestHoldService, pop_message_processor=None):
        check_instance(pull_request_hold_service, "pull_request_hold_service", PullRequestHoldService)
        if pop_message_processor is not None:
            check_methods(pop_message_processor, "pop_message_processor", "notify_message_arriving")
        self.pull_request_hold_service = pull_request_hold_service
        self.pop_message_processor = pop_message_processor
        self.last_woken: list[PullRequest] = []

    def arriving(
        self, topic: str, queue_id: int, logic_offset: int, tags_code, msg_store_time, properties, now_ms
    ) -> list[PullRequest]:
        woken = self.pull_request_hold_service.notify_message_arriving(
            topic,
            queue_id,
            logic_offset,
            now_ms,
            tags_code=tags_code,
            msg_store_time=msg_store_time,
            properties=properties,
        )
        if self.pop_message_processor is not None:
            self.pop_message_processor.notify_message_arriving(topic, queue_id, logic_offset, now_ms)
        self.last_woken = woken
        return woken

    __call__ = arriving

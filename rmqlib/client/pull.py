"""The push consumer's pull path: PullRequest, PullMessageService, the pull gates
and what happens to each pull result.

Exactly one PullRequest circulates per owned queue. The PullMessageService
takes it from a FIFO, the consumer checks its gates (flow control, orderly
lock), sends the pull, and the result handler puts the request back, at once
or after a delay. Dropping the ProcessQueue is the only way to stop the loop:
the next time the request comes round, the first gate throws it away.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from rmqlib.checks import ArgumentTypeError, check_bool, check_instance, check_int, check_list_of
from rmqlib.client.api import FLOW_CONTROL, BrokerError
from rmqlib.client.config import MessageModel, PushConsumerConfig
from rmqlib.client.message import _FACTORY, Message
from rmqlib.client.offset_store import ReadOffsetType
from rmqlib.client.process_queue import ProcessQueue, check_time
from rmqlib.model import MessageQueue

if TYPE_CHECKING:  # pragma: no cover
    from rmqlib.client.rebalance import RebalanceImpl

# Constants of client/.../impl/consumer/DefaultMQPushConsumerImpl.java
PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL = 50  # local cache over a threshold
PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL = 20  # broker answered FLOW_CONTROL
PULL_TIME_DELAY_MILLS_WHEN_SUSPEND = 1000  # consumer paused
BROKER_SUSPEND_MAX_TIME_MILLIS = 15_000  # long-poll hold time asked of the broker
CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND = 30_000  # RPC timeout of a long-polling pull
#: ClientConfig.pullTimeDelayMillsWhenException (the effective value; see PushConsumerConfig).
PULL_TIME_DELAY_MILLS_WHEN_EXCEPTION = 1000
#: The issue's name for the cache flow-control delay; same value as the Java constant.
PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL = PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL

_MIB = 1024 * 1024
# Enum members as module constants: ``EnumClass.MEMBER`` is a slow attribute lookup (hot path).
_READ_FROM_MEMORY = ReadOffsetType.READ_FROM_MEMORY
_CLUSTERING = MessageModel.CLUSTERING


class PullRequest:
    """The token that keeps one queue's pull loop going.

    Mirrors: client/.../impl/consumer/PullRequest.java

    Equality and hash use ``consumer_group`` and ``message_queue`` only, as in Java.
    """

    __slots__ = ("consumer_group", "message_queue", "process_queue", "next_offset",
                 "previously_locked")

    def __init__(self, consumer_group: str, message_queue: MessageQueue,
                 process_queue: ProcessQueue, next_offset: int, previously_locked: bool = False):
        if not isinstance(consumer_group, str) or not consumer_group:
            raise (ValueError if isinstance(consumer_group, str) else ArgumentTypeError)(
                f"consumer_group must be a non-empty str, got {consumer_group!r}")
        if not isinstance(message_queue, MessageQueue):
            raise ArgumentTypeError(f"message_queue must be MessageQueue, got {type(message_queue).__name__}")
        if not isinstance(process_queue, ProcessQueue):
            raise ArgumentTypeError(f"process_queue must be ProcessQueue, got {type(process_queue).__name__}")
        if isinstance(next_offset, bool) or not isinstance(next_offset, int) or next_offset < 0:
            raise (ValueError if type(next_offset) is int else ArgumentTypeError)(
                f"next_offset must be an int >= 0, got {next_offset!r}")
        if previously_locked is not False and previously_locked is not True:
            check_bool(previously_locked, "previously_locked")
        self.consumer_group = consumer_group
        self.message_queue = message_queue
        self.process_queue = process_queue
        self.next_offset = next_offset
        self.previously_locked = previously_locked

    def __eq__(self, other) -> bool:
        if not isinstance(other, PullRequest):
            return NotImplemented
        return (self.consumer_group == other.consumer_group
                and self.message_queue == other.message_queue)

    def __hash__(self) -> int:
        return hash((self.consumer_group, self.message_queue))

    def __repr__(self) -> str:
        return (f"PullRequest [consumerGroup={self.consumer_group}, "
                f"messageQueue={self.message_queue}, nextOffset={self.next_offset}]")


class PullMessageService:
    """A FIFO of pull requests plus a time-ordered list of delayed ones.

    Mirrors: client/.../impl/consumer/PullMessageService.java

    Java runs one thread taking from a blocking queue and one scheduler thread
    for delayed re-queues. Here a driver steps it: :meth:`due` moves delayed
    requests whose time has come into the FIFO (in due-time order, ties in
    scheduling order), :meth:`take` hands out the FIFO head, and
    :meth:`next_due_ms` says when to come back.
    """

    def __init__(self) -> None:
        self.queue: deque[PullRequest] = deque()
        self._pending: list[tuple[int, int, PullRequest]] = []
        self._seq = 0
        self.stopped = False

    def execute_pull_request_immediately(self, pull_request: PullRequest) -> None:
        """Append to the FIFO (Java ``messageRequestQueue.put``)."""
        if not isinstance(pull_request, PullRequest):
            raise ArgumentTypeError(f"pull_request must be PullRequest, got {type(pull_request).__name__}")
        self.queue.append(pull_request)

    def execute_pull_request_later(self, pull_request: PullRequest, delay_ms: int, now_ms: int) -> None:
        """Append to the FIFO at ``now_ms + delay_ms``; ignored once shut down (as in Java)."""
        if not isinstance(pull_request, PullRequest):
            raise ArgumentTypeError(f"pull_request must be PullRequest, got {type(pull_request).__name__}")
        if isinstance(delay_ms, bool) or not isinstance(delay_ms, int) or delay_ms < 0:
            raise (ValueError if type(delay_ms) is int else ArgumentTypeError)(
                f"delay_ms must be an int >= 0, got {delay_ms!r}")
        if type(now_ms) is not int:
            check_time(now_ms)
        if self.stopped:
            return
        heapq.heappush(self._pending, (now_ms + delay_ms, self._seq, pull_request))
        self._seq += 1

    def due(self, now_ms: int) -> list[PullRequest]:
        """Move every delayed request due at or before ``now_ms`` into the FIFO; return them."""
        if type(now_ms) is not int:
            check_time(now_ms)
        pending = self._pending
        moved = []
        while pending and pending[0][0] <= now_ms:
            _, _, req = heapq.heappop(pending)
            self.queue.append(req)
            moved.append(req)
        return moved

    def next_due_ms(self) -> int | None:
        """When the earliest delayed request becomes due (None if none is pending)."""
        return self._pending[0][0] if self._pending else None

    def take(self) -> PullRequest | None:
        """Pop the FIFO head (None if empty)."""
        return self.queue.popleft() if self.queue else None

    @property
    def pending(self) -> list[tuple[int, PullRequest]]:
        """Delayed requests as (due_ms, request), earliest first."""
        return [(t, r) for t, _, r in sorted(self._pending)]

    def shutdown(self) -> None:
        self.stopped = True

    def __len__(self) -> int:
        return len(self.queue)


# ------------------------------------------------------------------ pull gates
DROPPED = "dropped"
PAUSED = "paused"
CACHE_COUNT_FLOW_CONTROL = "cache_count_flow_control"
CACHE_SIZE_FLOW_CONTROL = "cache_size_flow_control"
MAX_SPAN_FLOW_CONTROL = "max_span_flow_control"
NOT_LOCKED = "not_locked"
OFFSET_FIX_FAILED = "offset_fix_failed"
NO_SUBSCRIPTION = "no_subscription"
OK = "ok"


@dataclass(frozen=True)
class PullCommand:
    """The PULL_MESSAGE request the consumer would send (PullAPIWrapper#pullKernelImpl arguments)."""

    message_queue: MessageQueue
    queue_offset: int
    max_msg_nums: int
    max_msg_bytes: int
    sub_expression: str | None
    sub_version: int
    commit_offset_enable: bool
    commit_offset: int
    suspend: bool = True
    suspend_timeout_ms: int = BROKER_SUSPEND_MAX_TIME_MILLIS
    timeout_ms: int = CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND

    def __init__(self, message_queue: MessageQueue, queue_offset: int, max_msg_nums: int, max_msg_bytes: int,
                 sub_expression: str | None, sub_version: int, commit_offset_enable: bool, commit_offset: int,
                 suspend: bool = True, suspend_timeout_ms: int = BROKER_SUSPEND_MAX_TIME_MILLIS,
                 timeout_ms: int = CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND):
        # The generated __init__ of a frozen dataclass pays one object.__setattr__ per
        # field; one PullCommand is built per pull, so fill the instance dict directly.
        # Same fields and defaults; the class stays a frozen dataclass (eq, hash, repr).
        d = self.__dict__
        d["message_queue"] = message_queue
        d["queue_offset"] = queue_offset
        d["max_msg_nums"] = max_msg_nums
        d["max_msg_bytes"] = max_msg_bytes
        d["sub_expression"] = sub_expression
        d["sub_version"] = sub_version
        d["commit_offset_enable"] = commit_offset_enable
        d["commit_offset"] = commit_offset
        d["suspend"] = suspend
        d["suspend_timeout_ms"] = suspend_timeout_ms
        d["timeout_ms"] = timeout_ms


@dataclass(frozen=True)
class PullDecision:
    """Outcome of the gates: pull now, retry after ``delay_ms``, or stop (``delay_ms`` None)."""

    allowed: bool
    delay_ms: int | None
    reason: str
    command: PullCommand | None = None

    def __init__(self, allowed: bool, delay_ms: int | None, reason: str, command: PullCommand | None = None):
        # One per pull: fill the frozen instance dict directly (see PullCommand.__init__).
        d = self.__dict__
        d["allowed"] = allowed
        d["delay_ms"] = delay_ms
        d["reason"] = reason
        d["command"] = command


def check_pull_gates(pq: ProcessQueue, config: PushConsumerConfig, now_ms: int, *,
                     orderly: bool, paused: bool = False) -> PullDecision:
    """The local checks at the top of a push consumer's pull, in Java's order.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage (first half)

    Dropped stops the loop; otherwise ``last_pull_timestamp`` is stamped (so a
    flow-controlled queue is not "pull expired"), then: paused -> 1000 ms; more
    cached messages than ``pull_threshold_for_queue`` or more whole MiB than
    ``pull_threshold_size_for_queue`` -> 50 ms; concurrent and span over
    ``consume_concurrently_max_span`` -> 50 ms; orderly and not locked ->
    ``pull_time_delay_mills_when_exception``.
    """
    if type(pq) is not ProcessQueue:  # exact types pass at once (hot path); the rest get the full checks
        check_instance(pq, "pq", ProcessQueue)
    if type(config) is not PushConsumerConfig:
        check_instance(config, "config", PushConsumerConfig)
    if type(now_ms) is not int:
        check_time(now_ms)
    if orderly is not False and orderly is not True:
        check_bool(orderly, "orderly")
    if paused is not False and paused is not True:
        check_bool(paused, "paused")
    if pq.dropped:
        return PullDecision(False, None, DROPPED)
    pq.last_pull_timestamp = now_ms
    if paused:
        return PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND, PAUSED)
    if pq.msg_count > config.pull_threshold_for_queue:
        return PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, CACHE_COUNT_FLOW_CONTROL)
    if pq.msg_size // _MIB > config.pull_threshold_size_for_queue:
        return PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, CACHE_SIZE_FLOW_CONTROL)
    if not orderly:
        if pq.get_max_span() > config.consume_concurrently_max_span:
            return PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, MAX_SPAN_FLOW_CONTROL)
    elif not pq.locked:
        return PullDecision(False, config.pull_time_delay_mills_when_exception, NOT_LOCKED)
    return _GATES_PASSED


#: What :func:`check_pull_gates` returns when every gate passes (immutable, so shared).
_GATES_PASSED = PullDecision(True, None, OK)


#: rmqlib.client.rebalance.RebalanceImpl, set by that module when it loads (importing it here would be circular).
_RebalanceImpl: type | None = None


def _check_req_impl(req, impl) -> None:
    """The full checks of ``req`` and ``impl``; callers first test the exact types inline (hot path)."""
    check_instance(req, "req", PullRequest)
    from rmqlib.client.rebalance import RebalanceImpl
    check_instance(impl, "impl", RebalanceImpl)


def pull_message(req: PullRequest, impl: RebalanceImpl, now_ms: int) -> PullDecision:
    """Run a taken pull request through the gates and build the pull to send.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage

    ``impl`` stands for the consumer (its config, offset store, pull service,
    subscriptions, orderly flag and pause flag live on the RebalanceImpl).
    A refused pull is re-queued on ``impl.pull_service`` after the decision's
    delay; an allowed one returns a :class:`PullCommand` for the driver to send
    to the broker, whose answer goes to :func:`process_pull_result` or
    :func:`process_pull_exception`. The first pull of an orderly queue after it
    was locked re-reads the broker offset (the local one may be stale).
    """
    if type(req) is not PullRequest or type(impl) is not _RebalanceImpl:
        _check_req_impl(req, impl)
    config = impl.config
    orderly = impl.consume_orderly
    decision = check_pull_gates(req.process_queue, config, now_ms, orderly=orderly, paused=impl.paused)
    if not decision.allowed:
        if decision.delay_ms is not None:
            impl.pull_service.execute_pull_request_later(req, decision.delay_ms, now_ms)
        return decision
    exc_delay = config.pull_time_delay_mills_when_exception
    mq = req.message_queue
    if orderly and not req.previously_locked:
        try:
            offset = impl.compute_pull_from_where_with_exception(mq)
        except Exception:
            offset = -1
        if offset < 0:
            impl.pull_service.execute_pull_request_later(req, exc_delay, now_ms)
            return PullDecision(False, exc_delay, OFFSET_FIX_FAILED)
        req.previously_locked = True
        req.next_offset = offset
    sub = impl.subscription_inner.get(mq.topic)
    if sub is None:
        impl.pull_service.execute_pull_request_later(req, exc_delay, now_ms)
        return PullDecision(False, exc_delay, NO_SUBSCRIPTION)
    commit_offset = 0
    commit_enable = False
    if config.message_model is _CLUSTERING:
        commit_offset = impl.offset_store.read_offset(mq, _READ_FROM_MEMORY)
        commit_enable = commit_offset > 0
    sub_expression = sub.sub_string if config.post_subscription_when_pull else None
    # Positional (in field order): keyword matching costs more than the rest of the call.
    command = PullCommand(mq, req.next_offset, config.pull_batch_size, config.pull_batch_size_in_bytes,
                          sub_expression, sub.sub_version, commit_enable, commit_offset)
    return PullDecision(True, None, OK, command)


# --------------------------------------------------------------- pull results
class PullStatus(str, Enum):
    """Mirrors: client/.../consumer/PullStatus.java"""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


def _coerce_pull_status(value) -> PullStatus:
    try:
        return PullStatus(value)
    except (ValueError, TypeError):
        names = ", ".join(m.value for m in PullStatus)
        raise ValueError(f"pull_status: {value!r} is not a valid PullStatus (one of {names})") from None


_FOUND = PullStatus.FOUND  # module constant: ``PullStatus.FOUND`` is a slow lookup (hot path)


@dataclass
class PullResult:
    """Mirrors: client/.../consumer/PullResult.java"""

    pull_status: PullStatus
    next_begin_offset: int
    min_offset: int = 0
    max_offset: int = 0
    msg_found_list: list[Message] = field(default_factory=list)

    def __init__(self, pull_status: PullStatus, next_begin_offset: int, min_offset: int = 0, max_offset: int = 0,
                 msg_found_list: list[Message] = _FACTORY) -> None:
        # The generated __init__, written out (one PullResult per pull), with __post_init__
        # inlined unless a subclass may have extended it.
        self.pull_status = pull_status
        self.next_begin_offset = next_begin_offset
        self.min_offset = min_offset
        self.max_offset = max_offset
        self.msg_found_list = [] if msg_found_list is _FACTORY else msg_found_list
        if type(self) is not PullResult:
            self.__post_init__()
            return
        if type(pull_status) is not PullStatus:  # Enum(value) is slow; members pass as they are
            self.pull_status = _coerce_pull_status(pull_status)
        if (type(next_begin_offset) is not int or next_begin_offset < 0 or type(min_offset) is not int
                or type(max_offset) is not int or type(self.msg_found_list) is not list):
            self._check_fields()

    def __post_init__(self) -> None:
        if type(self.pull_status) is not PullStatus:
            self.pull_status = _coerce_pull_status(self.pull_status)
        self._check_fields()

    def _check_fields(self) -> None:
        check_int(self.next_begin_offset, "next_begin_offset")
        if self.next_begin_offset < 0:
            raise ValueError(f"next_begin_offset must be >= 0, got {self.next_begin_offset}")
        check_int(self.min_offset, "min_offset")
        check_int(self.max_offset, "max_offset")
        check_list_of(self.msg_found_list, "msg_found_list", Message)


@dataclass
class PullOutcome:
    """What handling a pull result did, for the driver.

    ``msgs`` were put into the ProcessQueue; when ``dispatch_to_consume`` the
    driver must hand them to the consume service (Java always calls
    ``submitConsumeRequest``; the orderly service only acts when the flag is set).
    """

    status: PullStatus
    msgs: list[Message] = field(default_factory=list)
    dispatch_to_consume: bool = False
    rebalance_immediately: bool = False

    def __init__(self, status: PullStatus, msgs: list[Message] = _FACTORY, dispatch_to_consume: bool = False,
                 rebalance_immediately: bool = False) -> None:
        # The generated __init__, written out (one PullOutcome per pull; no default_factory call).
        self.status = status
        self.msgs = [] if msgs is _FACTORY else msgs
        self.dispatch_to_consume = dispatch_to_consume
        self.rebalance_immediately = rebalance_immediately


def process_pull_result(req: PullRequest, result: PullResult, impl: RebalanceImpl,
                        now_ms: int) -> PullOutcome:
    """Handle a pull answer and put the request back in circulation.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage (PullCallback#onSuccess)

    FOUND: advance, drop messages whose tag the subscription does not take
    (client-side re-check), cache the rest, pull again (after ``pull_interval``
    if set). NO_NEW_MSG / NO_MATCHED_MSG: advance; if nothing is cached, record
    the new offset (increase-only) so an idle queue's offset moves too; pull
    again. OFFSET_ILLEGAL: drop the ProcessQueue, freeze and persist the offset
    the broker suggested, remove the queue and rebalance at once (Java does this
    in a task on the scheduler thread; here it happens immediately).
    """
    if type(req) is not PullRequest or type(impl) is not _RebalanceImpl:
        _check_req_impl(req, impl)
    if type(result) is not PullResult:
        check_instance(result, "result", PullResult)
    if type(now_ms) is not int:
        check_time(now_ms)
    status = result.pull_status
    pq = req.process_queue
    mq = req.message_queue
    ps = impl.pull_service
    if status is _FOUND:
        req.next_offset = result.next_begin_offset
        sub = impl.subscription_inner.get(mq.topic)
        if sub is None or not sub.tags_set:  # no tag filter: every message matches (SubscriptionData.matches)
            msgs = list(result.msg_found_list)
        else:
            matches = sub.matches
            msgs = [m for m in result.msg_found_list if matches(m.tags)]
        if not msgs:
            ps.execute_pull_request_immediately(req)
            return PullOutcome(status)
        dispatch = pq.put_message(msgs)
        pull_interval = impl.config.pull_interval
        if pull_interval > 0:
            ps.execute_pull_request_later(req, pull_interval, now_ms)
        else:
            ps.execute_pull_request_immediately(req)
        return PullOutcome(status, msgs, dispatch)
    out = PullOutcome(status)
    if status in (PullStatus.NO_NEW_MSG, PullStatus.NO_MATCHED_MSG):
        req.next_offset = result.next_begin_offset
        if pq.msg_count == 0:  # correctTagsOffset
            impl.offset_store.update_offset(mq, req.next_offset, True)
        ps.execute_pull_request_immediately(req)
    elif status is PullStatus.OFFSET_ILLEGAL:
        req.next_offset = result.next_begin_offset
        pq.dropped = True
        impl.offset_store.update_and_freeze_offset(mq, req.next_offset)
        impl.offset_store.persist(mq)
        impl.remove_process_queue(mq, now_ms)
        impl.rebalance_immediately(now_ms)
        out.rebalance_immediately = True
    return out


def process_pull_exception(req: PullRequest, error: BaseException, impl: RebalanceImpl,
                           now_ms: int) -> int:
    """A pull failed: retry after 20 ms on broker FLOW_CONTROL, else after the exception delay.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage (PullCallback#onException)

    Returns the delay used.
    """
    if type(req) is not PullRequest or type(impl) is not _RebalanceImpl:
        _check_req_impl(req, impl)
    if not isinstance(error, BaseException):
        raise ArgumentTypeError(f"error must be an exception, got {type(error).__name__}")
    if isinstance(error, BrokerError) and error.code == FLOW_CONTROL:
        delay = PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL
    else:
        delay = impl.config.pull_time_delay_mills_when_exception
    impl.pull_service.execute_pull_request_later(req, delay, now_ms)
    return delay

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
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, NamedTuple

from rmqlib.checks import ArgumentTypeError, check_bool, check_instance, check_int, check_list_of, check_str, check_time
from rmqlib.client.api import FLOW_CONTROL, BrokerError
from rmqlib.client.config import MessageModel, PushConsumerConfig
from rmqlib.client.message import Message
from rmqlib.client.offset_store import ReadOffsetType
from rmqlib.client.process_queue import ProcessQueue
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

    __slots__ = ("consumer_group", "message_queue", "process_queue", "next_offset", "previously_locked")

    def __init__(
        self,
        consumer_group: str,
        message_queue: MessageQueue,
        process_queue: ProcessQueue,
        next_offset: int,
        previously_locked: bool = False,
    ):
        check_str(consumer_group, "consumer_group")
        check_instance(message_queue, "message_queue", MessageQueue)
        check_instance(process_queue, "process_queue", ProcessQueue)
        next_offset = check_int(next_offset, "next_offset", 0)
        check_bool(previously_locked, "previously_locked")
        self.consumer_group = consumer_group
        self.message_queue = message_queue
        self.process_queue = process_queue
        self.next_offset = next_offset
        self.previously_locked = previously_locked

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PullRequest):
            return NotImplemented
        return self.consumer_group == other.consumer_group and self.message_queue == other.message_queue

    def __hash__(self) -> int:
        return hash((self.consumer_group, self.message_queue))

    def __repr__(self) -> str:
        return (
            f"PullRequest [consumerGroup={self.consumer_group}, "
            f"messageQueue={self.message_queue}, nextOffset={self.next_offset}]"
        )


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
        check_instance(pull_request, "pull_request", PullRequest)
        self.queue.append(pull_request)

    def execute_pull_request_later(self, pull_request: PullRequest, delay_ms: int, now_ms: int) -> None:
        """Append to the FIFO at ``now_ms + delay_ms``; ignored once shut down (as in Java)."""
        check_instance(pull_request, "pull_request", PullRequest)
        check_int(delay_ms, "delay_ms", 0)
        check_time(now_ms)
        if self.stopped:
            return
        heapq.heappush(self._pending, (now_ms + delay_ms, self._seq, pull_request))
        self._seq += 1

    def due(self, now_ms: int) -> list[PullRequest]:
        """Move every delayed request due at or before ``now_ms`` into the FIFO; return them."""
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
class PullGateReason(StrEnum):
    """Why :func:`check_pull_gates` / :func:`pull_message` let a pull go or held it back.

    Java has no such enum: each value names one early ``return`` of
    DefaultMQPushConsumerImpl.java#pullMessage (and the log line or counter it leaves).
    A ``StrEnum``: a member prints as, and equals, its lower-case name.
    """

    DROPPED = "dropped"  # the ProcessQueue was dropped: the request leaves the loop
    PAUSED = "paused"  # the consumer is suspended (PULL_TIME_DELAY_MILLS_WHEN_SUSPEND)
    CACHE_COUNT_FLOW_CONTROL = "cache_count_flow_control"  # more cached messages than pullThresholdForQueue
    CACHE_SIZE_FLOW_CONTROL = "cache_size_flow_control"  # more cached MiB than pullThresholdSizeForQueue
    MAX_SPAN_FLOW_CONTROL = "max_span_flow_control"  # concurrent: span over consumeConcurrentlyMaxSpan
    NOT_LOCKED = "not_locked"  # orderly: the queue is not locked on the broker
    OFFSET_FIX_FAILED = "offset_fix_failed"  # orderly: the first pull after locking could not read an offset
    NO_SUBSCRIPTION = "no_subscription"  # no subscription for the queue's topic
    OK = "ok"  # every gate passed: pull now


# The members as module names (``P.DROPPED``), as before the enum.
DROPPED = PullGateReason.DROPPED
PAUSED = PullGateReason.PAUSED
CACHE_COUNT_FLOW_CONTROL = PullGateReason.CACHE_COUNT_FLOW_CONTROL
CACHE_SIZE_FLOW_CONTROL = PullGateReason.CACHE_SIZE_FLOW_CONTROL
MAX_SPAN_FLOW_CONTROL = PullGateReason.MAX_SPAN_FLOW_CONTROL
NOT_LOCKED = PullGateReason.NOT_LOCKED
OFFSET_FIX_FAILED = PullGateReason.OFFSET_FIX_FAILED
NO_SUBSCRIPTION = PullGateReason.NO_SUBSCRIPTION
OK = PullGateReason.OK


class PullCommand(NamedTuple):
    """The PULL_MESSAGE request the consumer would send (PullAPIWrapper#pullKernelImpl arguments).

    Immutable, with nothing to check (the pull path computes every field), so a ``NamedTuple``:
    one is built per pull.
    """

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


class PullDecision(NamedTuple):
    """Outcome of the gates: pull now, retry after ``delay_ms``, or stop (``delay_ms`` None).

    Immutable, with nothing to check, so a ``NamedTuple`` (one per pull).
    """

    allowed: bool
    delay_ms: int | None
    reason: PullGateReason
    command: PullCommand | None = None


def check_pull_gates(
    pq: ProcessQueue, config: PushConsumerConfig, now_ms: int, *, orderly: bool, paused: bool = False
) -> PullDecision:
    """The local checks at the top of a push consumer's pull, in Java's order.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage (first half)

    Dropped stops the loop; otherwise ``last_pull_timestamp`` is stamped (so a
    flow-controlled queue is not "pull expired"), then: paused -> 1000 ms; more
    cached messages than ``pull_threshold_for_queue`` or more whole MiB than
    ``pull_threshold_size_for_queue`` -> 50 ms; concurrent and span over
    ``consume_concurrently_max_span`` -> 50 ms; orderly and not locked ->
    ``pull_time_delay_mills_when_exception``. The reason is a :class:`PullGateReason`.
    """
    check_instance(pq, "pq", ProcessQueue)
    check_instance(config, "config", PushConsumerConfig)
    now_ms = check_time(now_ms)
    check_bool(orderly, "orderly")
    check_bool(paused, "paused")
    return _pull_gates(pq, config, now_ms, orderly, paused)


def _pull_gates(pq: ProcessQueue, config: PushConsumerConfig, now_ms: int, orderly: bool, paused: bool) -> PullDecision:
    """:func:`check_pull_gates` for a caller whose arguments are known good (:func:`pull_message`)."""
    if pq.dropped:
        return _STOP_DROPPED
    pq.last_pull_timestamp = now_ms
    if paused:
        return _HOLD_PAUSED
    if pq.msg_count > config.pull_threshold_for_queue:
        return _HOLD_CACHE_COUNT
    if pq.msg_size // _MIB > config.pull_threshold_size_for_queue:
        return _HOLD_CACHE_SIZE
    if not orderly:
        if pq.get_max_span() > config.consume_concurrently_max_span:
            return _HOLD_MAX_SPAN
    elif not pq.locked:
        return PullDecision(False, config.pull_time_delay_mills_when_exception, NOT_LOCKED)
    return _GATES_PASSED


# The decisions that do not depend on the config (immutable, so shared).
_GATES_PASSED = PullDecision(True, None, OK)
_STOP_DROPPED = PullDecision(False, None, DROPPED)
_HOLD_PAUSED = PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_SUSPEND, PAUSED)
_HOLD_CACHE_COUNT = PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, CACHE_COUNT_FLOW_CONTROL)
_HOLD_CACHE_SIZE = PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, CACHE_SIZE_FLOW_CONTROL)
_HOLD_MAX_SPAN = PullDecision(False, PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL, MAX_SPAN_FLOW_CONTROL)


#: rmqlib.client.rebalance.RebalanceImpl, set by that module when it loads (importing it here would be circular).
_RebalanceImpl: type | None = None


def _check_req_impl(req: object, impl: object) -> None:
    """``req`` is a :class:`PullRequest` and ``impl`` a RebalanceImpl."""
    if not isinstance(req, PullRequest):
        raise ArgumentTypeError(f"req must be a PullRequest, got {type(req).__name__}")
    if not isinstance(impl, _RebalanceImpl or _load_rebalance_impl()):
        raise ArgumentTypeError(f"impl must be a RebalanceImpl, got {type(impl).__name__}")


def _load_rebalance_impl() -> type:
    """RebalanceImpl, before rebalance.py has loaded (when no RebalanceImpl can exist yet)."""
    from rmqlib.client.rebalance import RebalanceImpl

    return RebalanceImpl


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
    _check_req_impl(req, impl)
    return _pull_message_trusted(req, impl, check_time(now_ms))


def _pull_message_trusted(req: PullRequest, impl: RebalanceImpl, now_ms: int) -> PullDecision:
    """:func:`pull_message` for a caller whose arguments are known good (the simulator's consumer)."""
    config = impl.config
    orderly = impl.consume_orderly
    decision = _pull_gates(req.process_queue, config, now_ms, orderly, impl.paused)
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
    command = PullCommand(
        mq,
        req.next_offset,
        config.pull_batch_size,
        config.pull_batch_size_in_bytes,
        sub_expression,
        sub.sub_version,
        commit_enable,
        commit_offset,
    )
    return PullDecision(True, None, OK, command)


# --------------------------------------------------------------- pull results
class PullStatus(str, Enum):
    """Mirrors: client/.../consumer/PullStatus.java"""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


def _coerce_pull_status(value: object) -> PullStatus:
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

    def __post_init__(self) -> None:
        """The checks (a status may be given by its name)."""
        if not isinstance(self.pull_status, PullStatus):
            self.pull_status = _coerce_pull_status(self.pull_status)
        check_int(self.next_begin_offset, "next_begin_offset")
        if self.next_begin_offset < 0:
            raise ValueError(f"next_begin_offset must be >= 0, got {self.next_begin_offset}")
        check_int(self.min_offset, "min_offset")
        check_int(self.max_offset, "max_offset")
        check_list_of(self.msg_found_list, "msg_found_list", Message)

    @classmethod
    def _trusted(
        cls,
        pull_status: PullStatus,
        next_begin_offset: int,
        min_offset: int,
        max_offset: int,
        msg_found_list: list[Message],
    ) -> PullResult:
        """What PullAPIWrapper builds from a broker's answer, for code that took every field from that answer
        (the simulator): the constructor's fields in order, no checks."""
        r = object.__new__(cls)
        r.pull_status = pull_status
        r.next_begin_offset = next_begin_offset
        r.min_offset = min_offset
        r.max_offset = max_offset
        r.msg_found_list = msg_found_list
        return r


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


def process_pull_result(req: PullRequest, result: PullResult, impl: RebalanceImpl, now_ms: int) -> PullOutcome:
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
    _check_req_impl(req, impl)
    check_instance(result, "result", PullResult)
    return _process_pull_result_trusted(req, result, impl, check_time(now_ms))


def _process_pull_result_trusted(req: PullRequest, result: PullResult, impl: RebalanceImpl, now_ms: int) -> PullOutcome:
    """:func:`process_pull_result` for a caller whose arguments are known good (the simulator's consumer,
    with a PullResult it built with ``PullResult._trusted``)."""
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
        dispatch = pq._put_message_trusted(msgs)  # Messages from a checked PullResult
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


def process_pull_exception(req: PullRequest, error: BaseException, impl: RebalanceImpl, now_ms: int) -> int:
    """A pull failed: retry after 20 ms on broker FLOW_CONTROL, else after the exception delay.

    Mirrors: client/.../impl/consumer/DefaultMQPushConsumerImpl.java#pullMessage (PullCallback#onException)

    Returns the delay used.
    """
    _check_req_impl(req, impl)
    if not isinstance(error, BaseException):
        raise ArgumentTypeError(f"error must be an exception, got {type(error).__name__}")
    if isinstance(error, BrokerError) and error.code == FLOW_CONTROL:
        delay = PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL
    else:
        delay = impl.config.pull_time_delay_mills_when_exception
    impl.pull_service.execute_pull_request_later(req, delay, now_ms)
    return delay

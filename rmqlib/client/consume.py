"""What the consume services do with a listener's answer: acknowledge, send back, commit.

Only the bookkeeping is modelled (ProcessQueue, offsets, retries); thread
pools and listener calls belong to the driver, which calls these functions
when a simulated listener call returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from rmqlib.checks import (
    check_bool,
    check_callable,
    check_instance,
    check_int,
    check_methods,
)
from rmqlib.client.config import MessageModel
from rmqlib.client.message import _FACTORY, Message, _DefaultFactory
from rmqlib.client.offset_store import LocalFileOffsetStore, OffsetStore
from rmqlib.client.process_queue import ProcessQueue, _require_messages, check_time
from rmqlib.model import INT_MAX, MessageQueue

if TYPE_CHECKING:
    from rmqlib.client.rebalance import RebalanceImpl

#: ConsumeMessageOrderlyService.java; rocketmq.client.maxTimeConsumeContinuously
MAX_TIME_CONSUME_CONTINUOUSLY = 60_000
#: Delay before re-submitting messages whose send-back failed
#: (ConsumeMessageConcurrentlyService#submitConsumeRequestLater).
SUBMIT_CONSUME_REQUEST_LATER_MILLS = 5000
#: Default ``maxReconsumeTimes`` when the setting is -1
#: (ConsumeMessageConcurrentlyService / DefaultMQPushConsumerImpl#getMaxReconsumeTimes).
DEFAULT_MAX_RECONSUME_TIMES_CONCURRENTLY = 16
#: Suspend time clamp of the orderly service (ConsumeMessageOrderlyService#submitConsumeRequestLater).
MIN_SUSPEND_MILLIS, MAX_SUSPEND_MILLIS = 10, 30_000

SendBack = Callable[[Message], bool]


class ConsumeConcurrentlyStatus(str, Enum):
    """Mirrors: client/.../consumer/listener/ConsumeConcurrentlyStatus.java"""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class ConsumeOrderlyStatus(str, Enum):
    """Mirrors: client/.../consumer/listener/ConsumeOrderlyStatus.java"""

    SUCCESS = "SUCCESS"
    ROLLBACK = "ROLLBACK"  # deprecated
    COMMIT = "COMMIT"  # deprecated
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"


# Enum members as module constants: ``EnumClass.MEMBER`` is a slow attribute lookup (hot path).
_CONSUME_SUCCESS = ConsumeConcurrentlyStatus.CONSUME_SUCCESS
_CLUSTERING = MessageModel.CLUSTERING
_BROADCASTING = MessageModel.BROADCASTING


_KNOWN_STORES = (OffsetStore, LocalFileOffsetStore)
S = TypeVar("S", "ConsumeConcurrentlyStatus", "ConsumeOrderlyStatus")


def _coerce_status(status: object, enum_cls: type[S]) -> S:
    try:
        return enum_cls(status)
    except (ValueError, TypeError):
        names = ", ".join(m.value for m in enum_cls)
        raise ValueError(f"status: {status!r} is not a valid {enum_cls.__name__} (one of {names})") from None


def _check_common(pq: object, mq: object, msgs: object, offset_store: object, send_back: object) -> list[Message]:
    """The argument checks both settle functions share; returns ``msgs`` as a list of Message."""
    if type(pq) is not ProcessQueue:
        check_instance(pq, "pq", ProcessQueue)
    if type(mq) is not MessageQueue:
        check_instance(mq, "mq", MessageQueue)
    if send_back is not None:
        check_callable(send_back, "send_back", none=True)
    if type(offset_store) not in _KNOWN_STORES and not callable(getattr(offset_store, "update_offset", None)):
        check_methods(offset_store, "offset_store", "update_offset")
    return _require_messages(msgs)


@dataclass
class ConcurrentConsumeOutcome:
    """``offset`` is what was written to the offset store (-1: nothing); ``resubmit`` are
    messages whose send-back failed, to be consumed again after ``resubmit_delay_ms``."""

    processed: bool
    offset: int = -1
    sent_back: list[Message] = field(default_factory=list)
    resubmit: list[Message] = field(default_factory=list)
    resubmit_delay_ms: int = SUBMIT_CONSUME_REQUEST_LATER_MILLS

    def __init__(
        self,
        processed: bool,
        offset: int = -1,
        sent_back: list[Message] | _DefaultFactory = _FACTORY,
        resubmit: list[Message] | _DefaultFactory = _FACTORY,
        resubmit_delay_ms: int = SUBMIT_CONSUME_REQUEST_LATER_MILLS,
    ) -> None:
        # The generated __init__, written out (one outcome per consumed batch; no default_factory calls).
        self.processed = processed
        self.offset = offset
        self.sent_back = [] if isinstance(sent_back, _DefaultFactory) else sent_back
        self.resubmit = [] if isinstance(resubmit, _DefaultFactory) else resubmit
        self.resubmit_delay_ms = resubmit_delay_ms


def process_consume_result_concurrently(
    pq: ProcessQueue,
    mq: MessageQueue,
    msgs: list[Message],
    status: ConsumeConcurrentlyStatus,
    *,
    offset_store: OffsetStore | LocalFileOffsetStore,
    message_model: MessageModel = MessageModel.CLUSTERING,
    send_back: SendBack | None = None,
    ack_index: int = INT_MAX,
    now_ms: int | None = None,
) -> ConcurrentConsumeOutcome:
    """Settle one concurrent consume request.

    Mirrors: client/.../impl/consumer/ConsumeMessageConcurrentlyService.java#processConsumeResult
    (and the dropped check at the end of ConsumeRequest#run)

    A dropped ProcessQueue discards the result (the new owner consumes again).
    Success acknowledges messages up to ``ack_index``; RECONSUME_LATER none.
    In CLUSTERING every unacknowledged message still cached is sent back
    (``send_back(msg) -> bool``; None means "always succeeds"); failed sends get
    ``reconsume_times + 1`` and are re-consumed later instead of acknowledged.
    In BROADCASTING failures are just dropped. Then the messages are removed from
    the ProcessQueue and the returned offset is stored increase-only.

    ``ack_index`` is an int >= -1 (-1: nothing acknowledged); one past the last message
    means "all", as in Java. Below -1 Java's loop would index before the list and throw,
    so it is a ValueError here (Python's negative indexing would silently count from the end).
    """
    if type(status) is not ConsumeConcurrentlyStatus:  # Enum(value) is slow; members pass as they are
        status = _coerce_status(status, ConsumeConcurrentlyStatus)
    if type(ack_index) is not int or ack_index < -1:
        ack_index = check_int(ack_index, "ack_index", -1)
    if message_model is not _CLUSTERING and message_model is not _BROADCASTING:
        try:
            message_model = MessageModel(message_model)
        except (ValueError, TypeError):
            raise ValueError(f"message_model must be CLUSTERING or BROADCASTING, got {message_model!r}") from None
    if now_ms is not None:
        now_ms = check_time(now_ms)
    msgs = _check_common(pq, mq, msgs, offset_store, send_back)
    return _process_consume_result_concurrently_trusted(
        pq, mq, msgs, status, offset_store, message_model, send_back, ack_index, now_ms
    )


def _process_consume_result_concurrently_trusted(
    pq: ProcessQueue,
    mq: MessageQueue,
    msgs: list[Message],
    status: ConsumeConcurrentlyStatus,
    offset_store: OffsetStore | LocalFileOffsetStore,
    message_model: MessageModel,
    send_back: SendBack | None,
    ack_index: int,
    now_ms: int | None,
) -> ConcurrentConsumeOutcome:
    """:func:`process_consume_result_concurrently` for a caller whose arguments are checked already (the
    simulator's consume pool settles the batch it took from a checked pull result, at its clock's time)."""
    if pq.dropped:
        return ConcurrentConsumeOutcome(processed=False)
    out = ConcurrentConsumeOutcome(True)  # processed
    if not msgs:
        return out
    # The caller's list is only read, so it is copied only when it is not a list or a
    # send_back call (caller code) runs while we work (saves a copy per batch).
    if type(msgs) is not list or send_back is not None:
        msgs = list(msgs)
    last = len(msgs) - 1
    if status is _CONSUME_SUCCESS:
        if ack_index > last:  # min(ack_index, last) without the builtin call
            ack_index = last
    else:
        ack_index = -1
    if message_model is _CLUSTERING and ack_index < last:  # some message not acknowledged
        failed = []
        for msg in msgs[ack_index + 1 :]:
            if not pq.contains_message(msg):
                continue  # already cleaned as expired
            ok = True if send_back is None else bool(send_back(msg))
            if ok:
                out.sent_back.append(msg)
            else:
                msg.reconsume_times += 1
                failed.append(msg)
        if failed:
            ids = {id(m) for m in failed}
            msgs = [m for m in msgs if id(m) not in ids]
            out.resubmit = failed
    offset = pq._remove_message_trusted(msgs, now_ms)
    if offset >= 0 and not pq.dropped:
        if type(offset_store) in _KNOWN_STORES:  # the library's own stores; mq and the offset are checked here
            offset_store._update_offset_trusted(mq, offset, True)
        else:
            offset_store.update_offset(mq, offset, True)
        out.offset = offset
    return out


@dataclass
class OrderlyConsumeOutcome:
    """``continue_consume`` False means the request stops and is re-submitted after
    ``resubmit_delay_ms``; ``commit_offset`` is what was stored (-1: nothing)."""

    continue_consume: bool
    commit_offset: int = -1
    resubmit_delay_ms: int | None = None
    sent_back: list[Message] = field(default_factory=list)


def process_consume_result_orderly(
    pq: ProcessQueue,
    mq: MessageQueue,
    msgs: list[Message],
    status: ConsumeOrderlyStatus,
    *,
    offset_store: OffsetStore | LocalFileOffsetStore,
    auto_commit: bool = True,
    max_reconsume_times: int = -1,
    suspend_current_queue_time_millis: int = 1000,
    context_suspend_current_queue_time_millis: int = -1,
    send_back: SendBack | None = None,
) -> OrderlyConsumeOutcome:
    """Settle one orderly batch taken with ``pq.take_messages``.

    Mirrors: client/.../impl/consumer/ConsumeMessageOrderlyService.java#processConsumeResult
    (with #checkReconsumeTimes)

    With auto-commit, SUCCESS (and the deprecated COMMIT/ROLLBACK) commit the
    batch. SUSPEND_CURRENT_QUEUE_A_MOMENT puts the batch back and suspends the
    queue while any message still has retries left (``max_reconsume_times``;
    -1 = Integer.MAX_VALUE); messages out of retries are sent back (to the
    retry/DLQ path) and, if every send succeeds and none has retries left, the
    batch is committed. The commit offset is stored with a plain (not
    increase-only) update unless the queue was dropped.

    The suspension lasts ``context_suspend_current_queue_time_millis``, what the listener set on its
    ``ConsumeOrderlyContext`` for this batch; its default, -1, means the consumer's
    ``suspend_current_queue_time_millis`` (#submitConsumeRequestLater). Either way it is held to 10 ms..30 s.
    """
    if type(status) is not ConsumeOrderlyStatus:
        status = _coerce_status(status, ConsumeOrderlyStatus)
    msgs = _check_common(pq, mq, msgs, offset_store, send_back)
    check_bool(auto_commit, "auto_commit")
    max_reconsume_times = check_int(max_reconsume_times, "max_reconsume_times", -1)
    suspend_current_queue_time_millis = check_int(
        suspend_current_queue_time_millis, "suspend_current_queue_time_millis"
    )
    suspend = check_int(context_suspend_current_queue_time_millis, "context_suspend_current_queue_time_millis")
    if suspend == -1:
        suspend = suspend_current_queue_time_millis
    max_times = INT_MAX if max_reconsume_times == -1 else max_reconsume_times
    delay = min(max(suspend, MIN_SUSPEND_MILLIS), MAX_SUSPEND_MILLIS)
    out = OrderlyConsumeOutcome(continue_consume=True)

    def check_reconsume_times() -> bool:
        suspend = False
        for msg in msgs:
            if msg.reconsume_times >= max_times:
                ok = True if send_back is None else bool(send_back(msg))
                if ok:
                    out.sent_back.append(msg)
                else:
                    suspend = True
                    msg.reconsume_times += 1
            else:
                suspend = True
                msg.reconsume_times += 1
        return suspend

    commit_offset = -1
    S = ConsumeOrderlyStatus
    if auto_commit:
        if status in (S.SUCCESS, S.COMMIT, S.ROLLBACK):
            commit_offset = pq.commit()
        elif status is S.SUSPEND_CURRENT_QUEUE_A_MOMENT:
            if check_reconsume_times():
                pq.make_message_to_consume_again(msgs)
                out.continue_consume, out.resubmit_delay_ms = False, delay
            else:
                commit_offset = pq.commit()
    else:
        if status is S.COMMIT:
            commit_offset = pq.commit()
        elif status is S.ROLLBACK:
            pq.rollback()
            out.continue_consume, out.resubmit_delay_ms = False, delay
        elif status is S.SUSPEND_CURRENT_QUEUE_A_MOMENT:
            if check_reconsume_times():
                pq.make_message_to_consume_again(msgs)
                out.continue_consume, out.resubmit_delay_ms = False, delay
    if commit_offset >= 0 and not pq.dropped:
        offset_store.update_offset(mq, commit_offset, False)
        out.commit_offset = commit_offset
    return out


#: ConsumeMessageOrderlyService#ConsumeRequest.run: a request that finds its queue neither locked nor fresh
#: before its first batch tries to lock it this much later (tryLockLaterAndReconsume(..., 100)) ...
TRY_LOCK_LATER_MILLS = 100
#: ... and after a batch, this much later (tryLockLaterAndReconsume(..., 10)).
TRY_LOCK_LATER_IN_LOOP_MILLS = 10
#: tryLockLaterAndReconsume: once the lock is tried, a new request is submitted this much later if it was
#: granted, and this much later if it was refused (submitConsumeRequestLater(..., 10 or 3000)).
RECONSUME_AFTER_LOCK_MILLS = 10
RECONSUME_AFTER_LOCK_REFUSED_MILLS = 3_000
#: A request that has consumed for more than MAX_TIME_CONSUME_CONTINUOUSLY gives its thread up and is
#: submitted again this much later (submitConsumeRequestLater(..., 10)).
CONSUME_LATER_MILLS = 10


class OrderlyStep(NamedTuple):
    """What one turn of an orderly ConsumeRequest does next (see :class:`ConsumeMessageOrderlyService`).

    ``action`` is ``"stop"`` (the request ends), ``"lock later"`` (the request ends; ``delay_ms`` later the
    driver calls :meth:`ConsumeMessageOrderlyService.try_lock_later_and_reconsume`), ``"consume later"`` (the
    request ends and a new one is submitted ``delay_ms`` later) or ``"consume"`` (run the listener on ``msgs``,
    then call ``finish``).
    """

    action: str
    msgs: list[Message] | tuple[Message, ...] = ()
    delay_ms: int = 0


ORDERLY_STOP = OrderlyStep("stop")
ORDERLY_LOCK_LATER = OrderlyStep("lock later", (), TRY_LOCK_LATER_MILLS)
ORDERLY_LOCK_LATER_IN_LOOP = OrderlyStep("lock later", (), TRY_LOCK_LATER_IN_LOOP_MILLS)
ORDERLY_CONSUME_LATER = OrderlyStep("consume later", (), CONSUME_LATER_MILLS)


class ConsumeMessageOrderlyService:
    """The orderly consume service of one push consumer: one ConsumeRequest per queue at a time, each
    consuming its queue in order and only while the consumer holds the queue's broker lock.

    Mirrors: client/.../impl/consumer/ConsumeMessageOrderlyService.java (ConsumeRequest#run,
    #tryLockLaterAndReconsume, #processConsumeResult)

    A driver that owns time runs a request as a loop: :meth:`start` (False: a request for this queue
    is already running), then :meth:`next_step` until it says ``stop``; a ``consume`` step is
    followed, once the listener is done, by :meth:`finish` (and :meth:`process_consume_result` for
    the listener's status), a ``lock later`` step, after its delay, by :meth:`try_lock_later_and_reconsume`,
    which says when to submit a new request; :meth:`done` ends it.

    Simplified, and said so: the batch size is the driver's (``consume_batch_size``); the listener's
    SUSPEND status is not exercised by the driver.
    """

    def __init__(
        self,
        rebalance: RebalanceImpl,
        *,
        consume_batch_size: int,
        lock_max_live_time_ms: int = 30_000,
        max_reconsume_times: int = -1,
        suspend_current_queue_time_millis: int = 1000,
    ) -> None:
        check_methods(rebalance, "rebalance", "lock", "consume_lock_released")
        self.rebalance = rebalance
        self.consume_batch_size = check_int(consume_batch_size, "consume_batch_size", 1)
        self.lock_max_live_time_ms = check_int(lock_max_live_time_ms, "lock_max_live_time_ms", 0)
        self.max_reconsume_times = check_int(max_reconsume_times, "max_reconsume_times", -1)
        self.suspend_current_queue_time_millis = check_int(
            suspend_current_queue_time_millis, "suspend_current_queue_time_millis", 0
        )
        self.broadcasting = rebalance.message_model is _BROADCASTING
        self.running: set[MessageQueue] = set()  # Java: messageQueueLock, one request per queue at a time

    def start(self, mq: MessageQueue) -> bool:
        """Take the queue's consume slot; False when a request for ``mq`` already runs."""
        if mq in self.running:
            return False
        self.running.add(mq)
        return True

    def done(self, mq: MessageQueue) -> None:
        """Give the queue's consume slot back."""
        self.running.discard(mq)

    def next_step(
        self,
        mq: MessageQueue,
        pq: ProcessQueue,
        now_ms: int,
        consuming_since_ms: int | None = None,
        after_batch: bool = False,
    ) -> OrderlyStep:
        """One turn of ConsumeRequest#run: stop (dropped, or nothing to take), lock later (the queue is not
        locked, or its lock is older than 30 s: 100 ms later before the request's first batch, 10 ms after a
        batch), consume later (the request has run since ``consuming_since_ms`` for more than
        MAX_TIME_CONSUME_CONTINUOUSLY), or take a batch and hold the consume lock while the listener runs. A
        dropped queue stops the request, and a round waiting for its consume lock
        (RebalanceImpl.consume_lock_released) gets it now."""
        if pq.dropped:
            self.rebalance.consume_lock_released(mq, pq, now_ms)
            return ORDERLY_STOP
        if not self.broadcasting and not (pq.locked and now_ms - pq.last_lock_timestamp <= self.lock_max_live_time_ms):
            return ORDERLY_LOCK_LATER_IN_LOOP if after_batch else ORDERLY_LOCK_LATER
        if consuming_since_ms is not None and now_ms - consuming_since_ms > MAX_TIME_CONSUME_CONTINUOUSLY:
            return ORDERLY_CONSUME_LATER
        msgs = pq.take_messages(self.consume_batch_size, now_ms)
        if not msgs:
            return ORDERLY_STOP
        pq.acquire_consume_lock()
        return OrderlyStep("consume", msgs)

    def try_lock_later_and_reconsume(self, mq: MessageQueue, now_ms: int) -> int:
        """The task a ``lock later`` step schedules: lock the queue on its broker (lockOneMQ, RebalanceImpl#lock)
        and say when to submit a new request for it: 10 ms later if the lock was granted, 3 s if refused.

        Mirrors: ConsumeMessageOrderlyService.java#tryLockLaterAndReconsume
        """
        if self.rebalance.lock(mq, now_ms):
            return RECONSUME_AFTER_LOCK_MILLS
        return RECONSUME_AFTER_LOCK_REFUSED_MILLS

    @staticmethod
    def finish(pq: ProcessQueue) -> None:
        """The listener returned: release the consume lock taken by :meth:`next_step`."""
        pq.release_consume_lock()

    def process_consume_result(
        self,
        mq: MessageQueue,
        pq: ProcessQueue,
        msgs: list[Message],
        status: ConsumeOrderlyStatus = ConsumeOrderlyStatus.SUCCESS,
        context_suspend_current_queue_time_millis: int = -1,
    ) -> OrderlyConsumeOutcome:
        """Settle the batch (auto-commit): :func:`process_consume_result_orderly` with this consumer's offset store,
        retry limit and suspend time (which the listener's context time, unless -1, overrides)."""
        return process_consume_result_orderly(
            pq,
            mq,
            msgs,
            status,
            offset_store=self.rebalance.offset_store,
            max_reconsume_times=self.max_reconsume_times,
            suspend_current_queue_time_millis=self.suspend_current_queue_time_millis,
            context_suspend_current_queue_time_millis=context_suspend_current_queue_time_millis,
        )

"""Pop mode (RIP-19, 5.x): the broker allocates, lends messages, and takes them back.

In Pop mode a consumer owns no queue and keeps no offset. It asks the broker
to *pop* up to 32 messages; the broker advances the group's offset at once
and writes a checkpoint "these messages were lent at popTime for
invisibleTime". The consumer acks each message it handled. A revive step
re-puts every message whose checkpoint expired without an ack into the
retry topic ``%RETRY%<group>_<topic>``, where a later pop finds it again.

This module holds pop/ack/change-invisible-time (:class:`PopMessageProcessor`) and the
revive step (:class:`PopReviveService`). The server-side allocation is in
:mod:`rmqlib.broker.query_assignment`, Pop long polling in :mod:`rmqlib.broker.pop_long_polling`,
and the client's PopProcessQueue in :mod:`rmqlib.client.pop`.

Simplified, and said so where it matters: the revive log is an in-memory
table of checkpoints with acks applied at once (Java writes ck and ack
messages to ``rmq_sys_REVIVE_LOG_<cluster>`` and merges them when it scans);
the consumer offset is committed at pop time (Java keeps it in
PopBufferMergeService first); :meth:`PopMessageProcessor.pop` answers an empty pop
at once, and :meth:`PopMessageProcessor.process_request` holds it in a
PopLongPollingService instead; one retry-topic version (V1 ``_`` unless ``enable_retry_topic_v2``).

Orderly Pop (``order=True``, what a FIFO group's 5.x consumers send): no checkpoint and no retry topic; the
group's offset stays at the first message lent, and :class:`~rmqlib.broker.consumer_order_info.ConsumerOrderInfoManager`
keeps every other orderly pop off that queue until the batch is acked or its invisible time runs out, when the
same messages are lent again.
"""

from __future__ import annotations

import random
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, replace

from rmqlib.broker.config import BrokerConfig
from rmqlib.broker.consumer_order_info import ORDER_INFO_ILLEGAL, ConsumerOrderInfoManager
from rmqlib.broker.message_store import GetMessageStatus, MessageStore, StoredMessage
from rmqlib.broker.pop_long_polling import POP_POLL_TIME_MILLIS, PollingResult, PopLongPollingService
from rmqlib.broker.protocol import (
    POP_RETRY_SEPARATOR_V1,
    POP_RETRY_SEPARATOR_V2,
    RETRY_GROUP_TOPIC_PREFIX,
    SUB_ALL,
    ResponseCode,
    SubscriptionData,
    build_pop_retry_topic,
    check_schedule_time,
    check_time,
)
from rmqlib.broker.stats import BrokerStatsManager
from rmqlib.checks import (
    ArgumentTypeError,
    check_bool,
    check_instance,
    check_int,
    check_mapping,
    check_str,
    check_str_or_none,
)

POP_MAX_MSG_NUMS = 32  # PopMessageProcessor#processRequest: "pop message's num is greater than 32"
RETRY_QUEUE_NUM = 1  # PopAckConstants.retryQueueNum
ACK_TIME_INTERVAL = 1000  # PopAckConstants.ackTimeInterval
SECOND = 1000  # PopAckConstants.SECOND
PROPERTY_FIRST_POP_TIME = "1ST_POP_TIME"  # MessageConst.PROPERTY_FIRST_POP_TIME
PROPERTY_POP_CK = "POP_CK"  # MessageConst.PROPERTY_POP_CK
POP_ORDER_REVIVE_QUEUE = 999  # KeyBuilder.POP_ORDER_REVIVE_QUEUE: the revive queue id that marks an orderly handle


class ConsumeInitMode:
    """Where a group with no offset starts popping. Mirrors: common/.../constant/ConsumeInitMode.java"""

    MIN = 0
    MAX = 1


def _check_init_mode(init_mode) -> None:
    if init_mode is not ConsumeInitMode.MIN and init_mode is not ConsumeInitMode.MAX:
        check_int(init_mode, "init_mode")
        if init_mode not in (ConsumeInitMode.MIN, ConsumeInitMode.MAX):
            raise ValueError(f"init_mode must be ConsumeInitMode.MIN (0) or MAX (1), got {init_mode!r}")


# ---------------------------------------------------------------------------
# Pop / ack / change invisible time / revive
# ---------------------------------------------------------------------------


@dataclass
class PopCheckPoint:
    """One pop's loan record: where it started, when, for how long, and what is acked.

    ``queue_offset_diff[j]`` is message j's offset minus ``start_offset``;
    bit j of ``bit_map`` is set once message j is acked.

    Mirrors: store/.../pop/PopCheckPoint.java
    """

    topic: str
    cid: str
    queue_id: int
    start_offset: int
    pop_time: float
    invisible_time: int
    revive_qid: int
    broker_name: str
    queue_offset_diff: list = field(default_factory=list)
    bit_map: int = 0

    @property
    def num(self) -> int:
        return len(self.queue_offset_diff)

    @property
    def revive_time(self) -> float:
        return self.pop_time + self.invisible_time

    def key(self) -> tuple:
        return (self.topic, self.cid, self.queue_id, self.start_offset, self.pop_time, self.broker_name)

    def offset_of(self, j: int) -> int:
        return self.start_offset + self.queue_offset_diff[j]

    def index_of_ack(self, ack_offset: int) -> int:
        diff = ack_offset - self.start_offset
        try:
            return self.queue_offset_diff.index(diff)
        except ValueError:
            return -1

    def is_acked(self, j: int) -> bool:
        return bool(self.bit_map >> j & 1)

    def all_acked(self) -> bool:
        return self.bit_map == (1 << self.num) - 1


@dataclass(frozen=True)
class AckHandle:
    """What the client must send back to ack a popped message (Java's ExtraInfo string).

    ``topic`` is the topic actually read (the retry topic for a retried
    message); ``start_offset``/``pop_time`` identify the checkpoint.

    Mirrors: remoting/.../protocol/header/ExtraInfoUtil.java#buildExtraInfo
    """

    group: str
    topic: str
    queue_id: int
    queue_offset: int
    start_offset: int
    pop_time: int
    invisible_time: int
    revive_qid: int
    broker_name: str

    def __post_init__(self):
        if (
            type(self.group) is str
            and type(self.topic) is str
            and type(self.broker_name) is str
            and type(self.queue_id) is int
            and type(self.queue_offset) is int
            and type(self.start_offset) is int
            and type(self.invisible_time) is int
            and type(self.revive_qid) is int
            and type(self.pop_time) is int
        ):
            return  # the common case: plain values (one handle per popped message)
        for name in ("group", "topic", "broker_name"):
            check_str(getattr(self, name), name, empty=True)
        for name in ("queue_id", "queue_offset", "start_offset", "invisible_time", "revive_qid"):
            check_int(getattr(self, name), name)
        check_time(self.pop_time, "pop_time")

    @property
    def revive_time(self) -> int:
        return self.pop_time + self.invisible_time

    @property
    def is_order(self) -> bool:
        """Lent by an orderly pop. Mirrors: ExtraInfoUtil#isOrder"""
        return self.revive_qid == POP_ORDER_REVIVE_QUEUE


@dataclass(frozen=True)
class PoppedMessage:
    """A message as a pop returns it: the stored record, the request topic and the ack handle.

    Mirrors: broker/.../processor/PopMessageProcessor.java#popMsgFromQueue (retry messages
    are reported under the request topic, popResponseReturnActualRetryTopic=false)
    """

    message: StoredMessage
    topic: str
    handle: AckHandle

    @property
    def is_retry(self) -> bool:
        return self.message.topic != self.topic


@dataclass
class PopResult:
    """A POP_MESSAGE answer. ``code`` SUCCESS with messages, or POLLING_TIMEOUT when empty.

    Mirrors: remoting/.../header/PopMessageResponseHeader.java
    """

    code: ResponseCode
    time_ms: float
    messages: list = field(default_factory=list)
    pop_time: float = 0
    invisible_time: int = 0
    revive_qid: int = 0
    rest_num: int = 0
    remark: str = ""
    order_count_info: dict[tuple[str, int, int], int] = field(default_factory=dict)
    """Orderly pops only: (topic read, queue id, queue offset) -> how many times that message was lent before."""


def _normal_topic(topic: str, cid: str) -> str:
    """The topic a checkpoint's messages were popped for: ``topic`` itself, or the one a pop retry topic of group
    ``cid`` names. Mirrors: common/.../KeyBuilder.java#parseNormalTopic(String, String)"""
    if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return topic
    prefix = RETRY_GROUP_TOPIC_PREFIX + cid
    separator = POP_RETRY_SEPARATOR_V2 if topic.startswith(prefix + POP_RETRY_SEPARATOR_V2) else POP_RETRY_SEPARATOR_V1
    return topic[len(prefix + separator) :]


class PopMessageProcessor:
    """POP_MESSAGE, ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME on one broker.

    ``rng`` is the broker's ``java.util.Random``: one ``randrange(100)`` per
    pop decides both "retry topic first?" (below popFromRetryProbability,
    20) and the first queue scanned when ``queue_id`` is negative.

    Mirrors: broker/.../processor/PopMessageProcessor.java,
    broker/.../processor/AckMessageProcessor.java,
    broker/.../processor/ChangeInvisibleTimeProcessor.java
    """

    def __init__(
        self,
        store: MessageStore,
        broker_config: BrokerConfig | None = None,
        rng: random.Random | None = None,
        topic_config: MutableMapping[str, tuple[int, int]] | None = None,
        broker_stats_manager: BrokerStatsManager | None = None,
    ):
        """``topic_config``: what the broker's TopicConfigManager holds, topic -> (read queues, write queues), read
        live at every pop, ack and change of invisible time (a broker whose read count shrinks stops serving the
        queues past it; one that drops the topic answers TOPIC_NOT_EXIST); a revived message's retry topic is added
        to it. None: the store's queue counts serve as the config. ``broker_stats_manager``: where a pop counts the
        messages it hands out (a restarted broker's new one replaces it); None: nothing counts them."""
        check_instance(store, "store", MessageStore)
        if broker_stats_manager is not None:
            check_instance(broker_stats_manager, "broker_stats_manager", BrokerStatsManager)
        self.broker_stats_manager = broker_stats_manager
        if topic_config is not None:
            check_mapping(topic_config, "topic_config")
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        self.store = store
        self.broker_config = broker_config or store.broker_config
        if rng is None:
            rng = random.Random(0)
        if not isinstance(rng, random.Random):
            raise ValueError(f"rng must be a random.Random, got {rng!r}")
        self.rng = rng
        self.topic_config = topic_config
        self.ck_message_number = 0
        self.checkpoints: dict[tuple, PopCheckPoint] = {}  # the revive log, acks applied
        self.consumer_order_info = ConsumerOrderInfoManager()  # orderly pops' batches (BrokerController's)
        self.ack_log: list[tuple[float, AckHandle, bool]] = []  # (time, handle, matched a live ck)
        self.arrivals: list[tuple[str, int, int, float]] = []

    # ---- pop ----------------------------------------------------------------
    def pop(
        self,
        group: str,
        topic: str,
        queue_id: int,
        max_msg_nums: int,
        invisible_time: int,
        now_ms,
        init_mode: int = ConsumeInitMode.MAX,
        sub_expression: str = SUB_ALL,
        order: bool = False,
        attempt_id: str | None = None,
    ) -> PopResult:
        """Pop up to ``max_msg_nums`` messages of ``topic`` for ``group``.

        ``queue_id`` < 0 reads every queue, starting from a random one.
        Retry topic first with probability 20 %; otherwise read the retry
        topic only if the batch is not full. ``order``: an orderly pop (no
        retry topic; a queue whose batch is out is skipped unless
        ``attempt_id`` is the one that batch was lent to).

        Mirrors: PopMessageProcessor.java#processRequest
        """
        check_time(now_ms)
        if isinstance(max_msg_nums, bool) or not isinstance(max_msg_nums, int) or max_msg_nums < 1:
            raise ValueError(f"max_msg_nums must be an int >= 1, got {max_msg_nums!r}")
        if isinstance(invisible_time, bool) or not isinstance(invisible_time, int) or invisible_time < 0:
            raise ValueError(f"invisible_time must be an int >= 0, got {invisible_time!r}")
        if isinstance(queue_id, bool) or not isinstance(queue_id, int):
            raise ArgumentTypeError(f"queue_id must be an int, got {queue_id!r}")
        if not (
            type(group) is str
            and group
            and type(topic) is str
            and type(sub_expression) is str
            and type(init_mode) is int
            and (init_mode == 0 or init_mode == 1)
        ):
            check_str(group, "group")
            check_str(topic, "topic", empty=True)
            _check_init_mode(init_mode)
            check_str_or_none(sub_expression, "sub_expression")
        if order is not False or attempt_id is not None:
            check_bool(order, "order")
            check_str_or_none(attempt_id, "attempt_id")
        if max_msg_nums > POP_MAX_MSG_NUMS:
            return PopResult(ResponseCode.INVALID_PARAMETER, now_ms, remark="pop message's num is greater than 32")
        read_queue_nums = self._read_queue_nums(topic)
        if read_queue_nums is None:
            return PopResult(ResponseCode.TOPIC_NOT_EXIST, now_ms, remark=f"topic[{topic}] not exist")
        if queue_id >= read_queue_nums:
            return PopResult(ResponseCode.INVALID_PARAMETER, now_ms, remark=f"queueId[{queue_id}] is illegal")
        try:
            message_filter = SubscriptionData(topic, sub_expression)
        except ValueError as exc:
            raise ValueError(f"sub_expression: {exc}") from None

        random_q = self.rng.randrange(100)  # Java: random.nextInt(100)
        if order:
            revive_qid = POP_ORDER_REVIVE_QUEUE
        else:
            revive_qid = self.ck_message_number % self.broker_config.revive_queue_num
            self.ck_message_number += 1
        need_retry = random_q < self.broker_config.pop_from_retry_probability
        retry_topic = build_pop_retry_topic(topic, group, self.broker_config.enable_retry_topic_v2)
        pop_time = now_ms
        out: list[PoppedMessage] = []
        order_counts: dict[tuple[str, int, int], int] | None = {} if order else None
        rest = 0
        args = (
            group, topic, max_msg_nums, invisible_time, pop_time, revive_qid, init_mode, message_filter, out,
            attempt_id, order_counts,
        )  # fmt: skip
        if need_retry and not order:
            rest = self._pop_from_topic(retry_topic, True, random_q, rest, *args)
        if queue_id < 0:
            rest = self._pop_from_topic(topic, False, random_q, rest, *args)
        else:
            rest = self._pop_from_queue(topic, False, queue_id, rest, *args)
        if not need_retry and len(out) < max_msg_nums and not order:
            rest = self._pop_from_topic(retry_topic, True, random_q, rest, *args)

        code = ResponseCode.SUCCESS if out else ResponseCode.POLLING_TIMEOUT
        status = GetMessageStatus.FOUND if out else GetMessageStatus.NO_MESSAGE_IN_QUEUE
        counts = order_counts or {}
        return PopResult(code, now_ms, out, pop_time, invisible_time, revive_qid, rest, status.value, counts)

    def process_request(
        self,
        request: object,
        long_polling: PopLongPollingService,
        group: str,
        topic: str,
        queue_id: int,
        max_msg_nums: int,
        invisible_time: int,
        born_ms: int,
        now_ms: int,
        sub_expression: str = SUB_ALL,
        poll_time_ms: int = POP_POLL_TIME_MILLIS,
        channel_active: Callable[[], bool] | None = None,
        order: bool = False,
        attempt_id: str | None = None,
    ) -> tuple[PopResult | None, list[object]]:
        """POP_MESSAGE ``request``, sent at ``born_ms``, as the broker answers it: :meth:`pop`; a pop that finds
        nothing is held in ``long_polling`` until ``born_ms + poll_time_ms`` (the answer is then None: it comes when
        the pop is woken and run again), or answered POLLING_FULL or POLLING_TIMEOUT; a pop that leaves messages
        behind (``rest_num`` > 0) wakes the next pop held under its own key. Returns the answer and the requests
        that wake-up woke, for the caller to run again.

        Mirrors: PopMessageProcessor.java#processRequest (what follows the pop: polling, and the restNum notify)
        """
        result = self.pop(
            group, topic, queue_id, max_msg_nums, invisible_time, now_ms, sub_expression=sub_expression, order=order,
            attempt_id=attempt_id,
        )  # fmt: skip
        status = None
        if result.code is ResponseCode.POLLING_TIMEOUT:  # found nothing
            filter_data = SubscriptionData(topic, sub_expression)
            status = long_polling.polling(
                request, topic, group, queue_id, born_ms, now_ms, poll_time_ms, filter_data, channel_active
            )
        woken: list[object] = []
        if result.rest_num > 0 and (result.messages or status is PollingResult.POLLING_SUC):
            again = long_polling.notify_queue(topic, queue_id, group)
            if again is not None:
                woken.append(again)
        if status is PollingResult.POLLING_SUC:
            return None, woken
        if status is PollingResult.POLLING_FULL:
            return PopResult(ResponseCode.POLLING_FULL, now_ms, remark="polling full"), woken
        return result, woken

    def _read_queue_nums(self, topic: str) -> int | None:
        """The topic's read queue count in the broker's topic config, or None if the broker has no such topic
        (TopicConfigManager#selectTopicConfig, then getReadQueueNums)."""
        if self.topic_config is None:
            return self.store.topic_queue_nums.get(topic)
        nums = self.topic_config.get(topic)
        return None if nums is None else nums[0]

    def _pop_from_topic(self, read_topic, is_retry, random_q, rest, *args) -> int:
        n = self._read_queue_nums(read_topic)
        if n is None:
            return rest
        for i in range(n):
            rest = self._pop_from_queue(read_topic, is_retry, (random_q + i) % n, rest, *args)
        return rest

    def _pop_from_queue(
        self,
        read_topic,
        is_retry,
        queue_id,
        rest,
        group,
        request_topic,
        max_msg_nums,
        invisible_time,
        pop_time,
        revive_qid,
        init_mode,
        message_filter,
        out,
        attempt_id,
        order_counts,
    ) -> int:
        """Mirrors: PopMessageProcessor.java#popMsgFromQueue (the queue lock always succeeds here).
        ``order_counts`` is None for a pop that is not orderly."""
        store = self.store
        offset = self.get_pop_offset(read_topic, group, queue_id, init_mode, init=True)
        if order_counts is not None and self.consumer_order_info.check_block(
            attempt_id, read_topic, group, queue_id, invisible_time, pop_time
        ):
            return rest  # a blocked queue adds nothing to the rest
        if len(out) >= max_msg_nums:
            return store.get_max_offset(read_topic, queue_id) - offset + rest
        final_offset = offset
        result = store.get_message(group, read_topic, queue_id, offset, max_msg_nums - len(out), message_filter)
        if result.status in (
            GetMessageStatus.OFFSET_TOO_SMALL,
            GetMessageStatus.OFFSET_OVERFLOW_BADLY,
            GetMessageStatus.OFFSET_FOUND_NULL,
        ):
            store.commit_offset(group, read_topic, queue_id, result.next_begin_offset)
            offset = result.next_begin_offset
            result = store.get_message(group, read_topic, queue_id, offset, max_msg_nums - len(out), message_filter)
        if result.messages:
            if self.broker_stats_manager is not None:
                self.broker_stats_manager.inc_group_get_nums(group, read_topic, len(result.messages))
            if order_counts is not None:
                offsets = [m.queue_offset for m in result.messages]
                counts = self.consumer_order_info.update(
                    attempt_id, read_topic, group, queue_id, pop_time, invisible_time, offsets, pop_time
                )
                order_counts.update({(read_topic, queue_id, o): count for o, count in counts.items()})
                store.commit_offset(group, read_topic, queue_id, final_offset)  # stays at the batch's first message
            else:
                ck = PopCheckPoint(
                    read_topic,
                    group,
                    queue_id,
                    final_offset,
                    pop_time,
                    invisible_time,
                    revive_qid,
                    self.broker_config.broker_name,
                    [m.queue_offset - final_offset for m in result.messages],
                )
                self.checkpoints[ck.key()] = ck
                store.commit_offset(group, read_topic, queue_id, result.next_begin_offset)
            for m in result.messages:
                handle = AckHandle(
                    group,
                    read_topic,
                    queue_id,
                    m.queue_offset,
                    final_offset,
                    pop_time,
                    invisible_time,
                    revive_qid,
                    self.broker_config.broker_name,
                )
                out.append(PoppedMessage(m, request_topic, handle))
        elif (
            result.status
            in (
                GetMessageStatus.NO_MATCHED_MESSAGE,
                GetMessageStatus.OFFSET_FOUND_NULL,
                GetMessageStatus.MESSAGE_WAS_REMOVING,
                GetMessageStatus.NO_MATCHED_LOGIC_QUEUE,
            )
            and result.next_begin_offset > -1
        ):
            # Java: popBufferMergeService.addCkMock moves the pop offset past the filtered entries.
            store.commit_offset(group, read_topic, queue_id, result.next_begin_offset)
        return result.max_offset - result.next_begin_offset + rest

    def get_pop_offset(self, topic: str, group: str, queue_id: int, init_mode: int, init: bool) -> int:
        """Stored offset, else the init offset (committed when ``init``). Mirrors: #getPopOffset"""
        if (
            type(init_mode) is not int
            or (init_mode != 0 and init_mode != 1)
            or (init is not True and init is not False)
        ):
            _check_init_mode(init_mode)
            check_bool(init, "init")
        offset = self.store.query_offset(group, topic, queue_id)
        if offset < 0:
            offset = self.get_init_offset(topic, group, queue_id, init_mode, init)
        return offset

    def get_init_offset(self, topic: str, group: str, queue_id: int, init_mode: int, init: bool) -> int:
        """MIN (or a retry topic) → min offset. MAX → 0 if the queue is young and in memory,
        else ``max - 1`` (the newest message is popped too), never below 0.

        Mirrors: PopMessageProcessor.java#getInitOffset
        """
        _check_init_mode(init_mode)
        check_bool(init, "init")
        check_str(topic, "topic", empty=True)
        store = self.store
        if init_mode == ConsumeInitMode.MIN or topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            offset = store.get_min_offset(topic, queue_id)
        elif (
            self.broker_config.init_pop_offset_by_check_msg_in_mem
            and store.get_min_offset(topic, queue_id) <= 0
            and store.check_in_mem_by_consume_offset(topic, queue_id, 0)
        ):
            offset = 0
        else:
            offset = max(store.get_max_offset(topic, queue_id) - 1, 0)
        if init:
            store.commit_offset(group, topic, queue_id, offset)
        return offset

    def notify_message_arriving(self, topic: str, queue_id: int, max_offset: int, now_ms) -> None:
        """Record an arrival. The held pops it wakes are those of
        :class:`~rmqlib.broker.pop_long_polling.PopLongPollingService`, which its owner notifies itself (as the
        simulator's broker does)."""
        check_str(topic, "topic", empty=True)
        check_int(queue_id, "queue_id")
        check_int(max_offset, "max_offset")
        check_time(now_ms)
        self.arrivals.append((topic, queue_id, max_offset, now_ms))

    # ---- ack / change invisible time ----------------------------------------
    def _validate_handle(self, handle: AckHandle, upper_inclusive: bool) -> ResponseCode | None:
        if not isinstance(handle, AckHandle):
            raise ArgumentTypeError(f"handle must be an AckHandle, got {handle!r}")
        read_queue_nums = self._read_queue_nums(handle.topic)
        if read_queue_nums is None:
            return ResponseCode.TOPIC_NOT_EXIST
        if handle.queue_id < 0 or handle.queue_id >= read_queue_nums:
            return ResponseCode.MESSAGE_ILLEGAL
        lo = self.store.get_min_offset(handle.topic, handle.queue_id)
        hi = self.store.get_max_offset(handle.topic, handle.queue_id)
        off = handle.queue_offset
        if off < lo or (off > hi if upper_inclusive else off >= hi):
            return ResponseCode.NO_MESSAGE
        return None

    def _apply_ack(self, handle: AckHandle, now_ms) -> bool:
        key = (handle.topic, handle.group, handle.queue_id, handle.start_offset, handle.pop_time, handle.broker_name)
        ck = self.checkpoints.get(key)
        matched = False
        if ck is not None:
            j = ck.index_of_ack(handle.queue_offset)
            if j >= 0:
                matched = not ck.is_acked(j)
                ck.bit_map |= 1 << j
                if ck.all_acked():
                    del self.checkpoints[key]
        self.ack_log.append((now_ms, handle, matched))
        return matched

    def ack(self, handle: AckHandle, now_ms) -> ResponseCode:
        """Ack one popped message. SUCCESS even if its checkpoint already revived
        (the message was then re-delivered: a duplicate).

        Mirrors: broker/.../processor/AckMessageProcessor.java#processRequest, #appendAck
        """
        check_time(now_ms)
        if isinstance(handle, AckHandle) and handle.is_order:
            return self.ack_orderly(handle, now_ms)[0]
        error = self._validate_handle(handle, upper_inclusive=True)
        if error is not None:
            return error
        self._apply_ack(handle, now_ms)
        return ResponseCode.SUCCESS

    def ack_orderly(
        self, handle: AckHandle, now_ms: int, long_polling: PopLongPollingService | None = None
    ) -> tuple[ResponseCode, list[object]]:
        """Ack one message an orderly pop lent: the group's offset moves to the batch's first unacked message (past
        the batch once all are acked); an ack behind the committed offset, or of an older batch, changes nothing.
        When the queue stops blocking, the ack wakes the first pop held under this queue's own key in
        ``long_polling``; a pop held for any queue (-1) waits for the queue's lock-free timer, which the ack moves to
        the wheel's next tick (:meth:`notify_lock_free`). Returns the woken requests, for the caller to run again.

        Mirrors: AckMessageProcessor.java#ackOrderly (offset resets not modelled)
        """
        check_time(now_ms)
        error = self._validate_handle(handle, upper_inclusive=True)
        if error is not None:
            return error, []
        if not handle.is_order:
            raise ValueError(f"handle was not lent by an orderly pop (revive queue {handle.revive_qid}, not 999)")
        topic, group, queue_id = handle.topic, handle.group, handle.queue_id
        if handle.queue_offset < self.store.query_offset(group, topic, queue_id):
            return ResponseCode.SUCCESS, []
        orders = self.consumer_order_info
        next_offset = orders.commit_and_next(topic, group, queue_id, handle.queue_offset, handle.pop_time, now_ms)
        self.ack_log.append((now_ms, handle, next_offset > ORDER_INFO_ILLEGAL))
        if next_offset == ORDER_INFO_ILLEGAL:
            return ResponseCode.MESSAGE_ILLEGAL, []
        woken: list[object] = []
        if next_offset > ORDER_INFO_ILLEGAL:
            self.store.commit_offset(group, topic, queue_id, next_offset)
            if long_polling is not None:
                if not orders.check_block(None, topic, group, queue_id, handle.invisible_time, now_ms):
                    request = long_polling.notify_queue(topic, queue_id, group)
                    woken += [] if request is None else [request]
        return ResponseCode.SUCCESS, woken

    def notify_lock_free(self, now_ms: int, long_polling: PopLongPollingService) -> list[object]:
        """Fire every lock-free timer due by ``now_ms`` (ConsumerOrderInfoLockManager's): for each queue that still
        has messages past the group's offset, wake the first pop held for any queue (-1), or else one held for that
        queue. A driver calls it at :meth:`next_lock_free_ms`. Returns the woken requests.

        Mirrors: ConsumerOrderInfoLockManager#notifyLockIsFree, PopMessageProcessor.java#notifyLongPollingRequestIfNeed
        """
        check_time(now_ms)
        check_instance(long_polling, "long_polling", PopLongPollingService)
        woken: list[object] = []
        for topic, group, queue_id in self.consumer_order_info.lock_manager.take_due(now_ms):
            if self.store.get_max_offset(topic, queue_id) > self.store.query_offset(group, topic, queue_id):
                request = long_polling.notify_queue(topic, -1, group)
                if request is None:
                    request = long_polling.notify_queue(topic, queue_id, group)
                woken += [] if request is None else [request]
        return woken

    def next_lock_free_ms(self) -> int | None:
        """When the next lock-free timer fires, or None."""
        return self.consumer_order_info.lock_manager.next_due_ms()

    def change_invisible_time(
        self, handle: AckHandle, invisible_time: int, now_ms
    ) -> tuple[ResponseCode, AckHandle | None]:
        """Extend (or shorten) a loan: new checkpoint from ``now_ms``, then ack the old one.

        Returns the new handle the client must use from now on.

        Mirrors: broker/.../processor/ChangeInvisibleTimeProcessor.java#appendCheckPointThenAckOrigin
        """
        check_time(now_ms)
        if isinstance(invisible_time, bool) or not isinstance(invisible_time, int) or invisible_time < 0:
            raise ValueError(f"invisible_time must be an int >= 0, got {invisible_time!r}")
        error = self._validate_handle(handle, upper_inclusive=False)
        if error is not None:
            return error, None
        if handle.is_order:
            return self._change_invisible_time_for_order(handle, invisible_time, now_ms)
        ck = PopCheckPoint(
            handle.topic,
            handle.group,
            handle.queue_id,
            handle.queue_offset,
            now_ms,
            invisible_time,
            handle.revive_qid,
            handle.broker_name,
            [0],
        )
        self.checkpoints[ck.key()] = ck
        self._apply_ack(handle, now_ms)
        new_handle = AckHandle(
            handle.group,
            handle.topic,
            handle.queue_id,
            handle.queue_offset,
            handle.queue_offset,
            now_ms,
            invisible_time,
            handle.revive_qid,
            handle.broker_name,
        )
        return ResponseCode.SUCCESS, new_handle

    def _change_invisible_time_for_order(
        self, handle: AckHandle, invisible_time: int, now_ms: int
    ) -> tuple[ResponseCode, AckHandle | None]:
        """The message stays in its batch, visible again at ``now_ms + invisible_time``; the new handle keeps the
        pop time and starts at the message's own offset, as the client builds it from the request
        (MQClientAPIImpl#changeInvisibleTimeAsync). An offset the group has already committed past: SUCCESS and no
        new handle (Java answers with an empty header).
        Mirrors: ChangeInvisibleTimeProcessor.java#processChangeInvisibleTimeForOrder"""
        if handle.queue_offset < self.store.query_offset(handle.group, handle.topic, handle.queue_id):
            return ResponseCode.SUCCESS, None
        next_visible_time = now_ms + invisible_time
        self.consumer_order_info.update_next_visible_time(
            handle.topic, handle.group, handle.queue_id, handle.queue_offset, handle.pop_time, next_visible_time, now_ms
        )
        return ResponseCode.SUCCESS, replace(
            handle, start_offset=handle.queue_offset, invisible_time=next_visible_time - handle.pop_time
        )

    def in_flight(self) -> int:
        """Messages lent by pops that are not orderly and neither acked nor revived."""
        return sum(ck.num - bin(ck.bit_map).count("1") for ck in self.checkpoints.values())

    def _check(self) -> None:
        for key, ck in self.checkpoints.items():
            assert ck.key() == key
            assert ck.num >= 1 and len(set(ck.queue_offset_diff)) == ck.num, ck
            assert 0 <= ck.bit_map < (1 << ck.num), ck
            assert not ck.all_acked(), "fully acked checkpoint left in the revive log"
            assert 0 <= ck.revive_qid < self.broker_config.revive_queue_num


class PopReviveService:
    """Re-puts unacked messages of expired checkpoints into the pop retry topic.

    A checkpoint is revived when ``now_ms - revive_time > revive_margin_ms``
    (``revive_time = pop_time + invisible_time``). Java only trusts
    checkpoints older than the newest revive-log entry it has read by
    ``ackTimeInterval + SECOND`` (2000 ms), and the newest entry is at most
    "now", so revival comes at the earliest 2 s after the invisible time
    ends; the margin models that. The retried copy goes to queue 0 of
    ``%RETRY%<group>_<topic>`` (created with 1 queue if missing) with
    ``reconsume_times + 1``, the same ``uniq_key`` and 1ST_POP_TIME set;
    it becomes poppable after the store's next :meth:`~MessageStore.reput`.
    A due checkpoint whose topic the broker's config no longer has is passed
    over for good (``skipped``), its unacked messages never revived.

    Mirrors: broker/.../processor/PopReviveService.java#mergeAndRevive,
    #reviveMsgFromCk, #reviveRetry
    """

    def __init__(
        self, pop_message_processor: PopMessageProcessor, revive_margin_ms: int = ACK_TIME_INTERVAL + SECOND, start_ms=0
    ):
        check_instance(pop_message_processor, "pop_message_processor", PopMessageProcessor)
        check_int(revive_margin_ms, "revive_margin_ms", 0)
        self.processor = pop_message_processor
        self.store = pop_message_processor.store
        self.revive_margin_ms = revive_margin_ms
        self.next_revive_ms = (
            check_schedule_time(start_ms, "start_ms") + pop_message_processor.broker_config.revive_interval
        )
        self.revived: list[tuple[float, PopCheckPoint, StoredMessage]] = []
        self.skipped: list[tuple[float, PopCheckPoint]] = []  # due checkpoints of a topic the broker no longer has

    def revive(self, now_ms) -> list[StoredMessage]:
        check_time(now_ms)
        config = self.processor.broker_config
        due = sorted(
            (ck for ck in self.processor.checkpoints.values() if now_ms - ck.revive_time > self.revive_margin_ms),
            key=lambda ck: (ck.revive_time, ck.key()),
        )
        out = []
        for ck in due:
            if self.processor._read_queue_nums(_normal_topic(ck.topic, ck.cid)) is None:
                # mergeAndRevive: the topic is gone from the broker's config, so the checkpoint is passed over
                self.skipped.append((now_ms, ck))
                del self.processor.checkpoints[ck.key()]
                continue
            for j in range(ck.num):
                if ck.is_acked(j):
                    continue
                msg = self.store.look_message_by_offset(ck.topic, ck.queue_id, ck.offset_of(j))
                if msg is None:
                    continue  # deleted by retention: Java logs and moves on
                if ck.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                    retry_topic = ck.topic
                else:
                    retry_topic = build_pop_retry_topic(ck.topic, ck.cid, config.enable_retry_topic_v2)
                self._add_retry_topic_if_not_exist(retry_topic)
                props = dict(msg.properties)
                if msg.reconsume_times == 0 or PROPERTY_FIRST_POP_TIME not in props:
                    props[PROPERTY_FIRST_POP_TIME] = str(ck.pop_time)
                new = self.store.put_message(
                    retry_topic,
                    0,
                    now_ms,
                    body_size=msg.body_size,
                    tags=msg.tags,
                    uniq_key=msg.uniq_key,
                    born_timestamp=msg.born_timestamp,
                    reconsume_times=msg.reconsume_times + 1,
                    properties=props,
                )
                self.revived.append((now_ms, ck, new))
                out.append(new)
            del self.processor.checkpoints[ck.key()]
        return out

    def _add_retry_topic_if_not_exist(self, retry_topic: str) -> None:
        """Mirrors: PopReviveService.java#addRetryTopicIfNotExist (a topic config of RETRY_QUEUE_NUM queues)."""
        topic_config = self.processor.topic_config
        if topic_config is not None and retry_topic not in topic_config:
            topic_config[retry_topic] = (RETRY_QUEUE_NUM, RETRY_QUEUE_NUM)
        if not self.store.has_topic(retry_topic):
            self.store.create_topic(retry_topic, RETRY_QUEUE_NUM)

    def run_due(self, now_ms) -> list[StoredMessage]:
        """Revive every ``reviveInterval`` (1000 ms); ``|now_ms| <= 2**53``."""
        check_schedule_time(now_ms)
        if now_ms < self.next_revive_ms:
            return []
        out = self.revive(now_ms)
        self.next_revive_ms = now_ms + self.processor.broker_config.revive_interval
        return out

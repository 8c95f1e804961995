"""A small message store: commit log, consume queues, reput, getMessage, offsets.

A put appends to the commit log and gets its queue offset at once, but a
consumer cannot see the message until the reput step has dispatched it into
its consume queue. Reput is also where the broker learns that a message
arrived: with long polling on, it calls the message-arriving listener once
per message with ``consume queue offset + 1``. The gap between put and reput
is real (Java's ReputMessageService loops every 1 ms); the driver decides it.

Simplifications, all named: every message counts as "in memory" unless a
memory budget is given (with one, a pull that reaches a message beyond it takes
at most 8 messages and 64 KiB, as a read from disk); one consume-queue "file" per queue, so
OFFSET_FOUND_NULL (a consume-queue file missing under a valid offset) cannot
happen; message bodies are sizes. A slave (``BrokerConfig.broker_role``) corrects no
offset unless ``offset_check_in_slave`` is on: a read that finds no message there
answers the request's own offset as the next one (DefaultMessageStore#nextOffsetCorrection).

The consumer offset table lives in :class:`ConsumerOffsetManager`; the store
holds one (``store.offsets``) and forwards ``commit_offset``/``query_offset``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from rmqlib.broker.config import (
    CQ_STORE_UNIT_SIZE,
    MAX_FILTER_MESSAGE_SIZE,
    MAX_PULL_MSG_SIZE,
    MAX_TRANSFER_BYTES_ON_MESSAGE_IN_DISK,
    MAX_TRANSFER_BYTES_ON_MESSAGE_IN_MEMORY,
    MAX_TRANSFER_COUNT_ON_MESSAGE_IN_DISK,
    MAX_TRANSFER_COUNT_ON_MESSAGE_IN_MEMORY,
    BrokerConfig,
    BrokerRole,
)
from rmqlib.broker.protocol import (
    SUB_ALL,
    ResponseCode,
    SubscriptionData,
    check_non_negative_int,
    tags_code_of,
)
from rmqlib.checks import (
    ArgumentTypeError,
    check_bool,
    check_callable,
    check_instance,
    check_int,
    check_methods,
    check_str,
    check_time,
)

DEFAULT_MAX_TOTAL_MSG_SIZE = 256 * 1024  # DefaultMQPushConsumer.pullBatchSizeInBytes, sent as maxTotalMsgSize
#: The most queues one topic may have here (a consume queue object is built per queue, so this bounds
#: create_topic's memory); Java caps writeQueueNums/readQueueNums in the admin tools far lower.
MAX_QUEUE_NUMS = 65_536


class GetMessageStatus(str, enum.Enum):
    """Mirrors: store/.../GetMessageStatus.java"""

    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"
    OFFSET_RESET = "OFFSET_RESET"


# The statuses get_message answers with, read once: on Python 3.11 every Enum.MEMBER read costs ~40 ns
# (EnumType has __getattr__), more than the rest of a one-message read's bookkeeping.
_FOUND = GetMessageStatus.FOUND
_NO_MATCHED_MESSAGE = GetMessageStatus.NO_MATCHED_MESSAGE
_NO_MESSAGE_IN_QUEUE = GetMessageStatus.NO_MESSAGE_IN_QUEUE
_OFFSET_TOO_SMALL = GetMessageStatus.OFFSET_TOO_SMALL
_OFFSET_OVERFLOW_ONE = GetMessageStatus.OFFSET_OVERFLOW_ONE
_OFFSET_OVERFLOW_BADLY = GetMessageStatus.OFFSET_OVERFLOW_BADLY


class StoredMessage(NamedTuple):
    """A message as the broker stores it (the broker's own record, not the client's Message); immutable.

    ``uniq_key`` is the client-side unique id (PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
    a message re-put by Pop revive keeps it, so a simulator can count
    duplicates. ``properties`` is a tuple of ``(name, value)`` pairs.

    Mirrors: common/.../message/MessageExt.java (the fields the models need)
    """

    topic: str
    queue_id: int
    queue_offset: int
    commit_log_offset: int
    body_size: int
    store_timestamp: int
    born_timestamp: int
    uniq_key: str
    tags: str | None = None
    tags_code: int = 0
    reconsume_times: int = 0
    properties: tuple = ()

    def get_property(self, name: str, default=None):
        for key, value in self.properties:
            if key == name:
                return value
        return default


@dataclass(slots=True)
class GetMessageResult:
    """Mirrors: store/.../GetMessageResult.java"""

    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: list = field(default_factory=list)
    buffer_total_size: int = 0
    filter_message_count: int = 0

    @property
    def message_count(self) -> int:
        return len(self.messages)

    @property
    def message_queue_offsets(self) -> list[int]:
        return [m.queue_offset for m in self.messages]


class ConsumerOffsetManager:
    """The broker's committed consumer offsets: (group, topic, queue) → offset.

    ``commit_offset`` overwrites (the broker does not enforce increase-only);
    ``query_offset`` answers -1 when nothing is stored. ``pull_offset_table`` holds the next offset each group's
    latest pull of a queue was answered with: in memory only (Java serializes no getter for it), so neither a
    restart nor a slave's copy keeps it.

    Mirrors: broker/.../offset/ConsumerOffsetManager.java
    """

    def __init__(self):
        self.offset_table: dict[tuple[str, str, int], int] = {}
        self.pull_offset_table: dict[tuple[str, str, int], int] = {}

    def commit_offset(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        check_non_negative_int(offset, "offset")
        check_non_negative_int(queue_id, "queue_id")
        check_str(group, "group", empty=True)
        check_str(topic, "topic", empty=True)
        self._commit_offset_trusted(group, topic, queue_id, offset)

    def _commit_offset_trusted(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """:meth:`commit_offset` for a caller that has checked every argument (the message store)."""
        self.offset_table[(group, topic, queue_id)] = offset

    def put_all(self, other: ConsumerOffsetManager) -> None:
        """Take ``other``'s offsets as Java's ``offsetTable.putAll`` does: Java keys the table by ``topic@group``, each
        entry a map of queue offsets, so every topic and group ``other`` has replaces this table's whole entry (a
        queue only this table has for it is dropped); a topic and group only this table has stays."""
        check_instance(other, "other", ConsumerOffsetManager)
        replaced = {(group, topic) for group, topic, _ in other.offset_table}
        for key in [key for key in self.offset_table if key[:2] in replaced]:
            del self.offset_table[key]
        self.offset_table.update(other.offset_table)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        check_str(group, "group", empty=True)
        check_str(topic, "topic", empty=True)
        check_int(queue_id, "queue_id")
        return self.offset_table.get((group, topic, queue_id), -1)

    def _commit_pull_offset_trusted(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """Note the next offset a pull of the queue was answered with, for a caller that checked its arguments (the
        pull processor). Mirrors: #commitPullOffset"""
        self.pull_offset_table[(group, topic, queue_id)] = offset

    def query_pull_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The group's latest pull offset of the queue, else its committed offset (-1: neither).
        Mirrors: #queryPullOffset"""
        found = self.pull_offset_table.get((group, topic, queue_id))
        return self.query_offset(group, topic, queue_id) if found is None else found

    def which_topic_by_consumer(self, group: str) -> set[str]:
        """The topics ``group`` has an offset of. Java keys its table ``topic@group`` and keeps a key only when it
        splits into exactly two parts, so a topic or group with ``@`` in its name is never found (``G@broadcast``'s
        offsets are not ``G``'s). Mirrors: #whichTopicByConsumer"""
        check_str(group, "group", empty=True)
        keys = {f"{topic}@{owner}" for owner, topic, _ in self.offset_table}
        return {parts[0] for parts in (key.split("@") for key in keys) if len(parts) == 2 and parts[1] == group}

    def _check(self) -> None:
        for key, offset in self.offset_table.items():
            assert isinstance(offset, int) and offset >= 0, (key, offset)


def _property_pairs(properties) -> tuple:
    """A message's properties (a mapping or ``(name, value)`` pairs of strings) as the tuple of pairs
    :class:`StoredMessage` keeps, in first-seen order; a later pair with a name already seen wins, as in a map."""
    if type(properties) is tuple and not properties:  # no properties: nothing to convert
        return ()
    if isinstance(properties, (str, bytes)):
        raise ArgumentTypeError(f"properties must be a mapping or (name, value) pairs, got {properties!r:.80}")
    try:
        pairs = dict(properties)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            f"properties must be a mapping or (name, value) pairs, got {properties!r:.80}"
        ) from None
    for key, value in pairs.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ArgumentTypeError(f"properties must map str to str, got {key!r}: {value!r}")
    return tuple(pairs.items())


class _ConsumeQueue:
    """One topic/queue's consume queue: a list of dispatched messages from ``min_offset``.

    Mirrors: store/.../ConsumeQueue.java (one mapped file, entries as objects)
    """

    __slots__ = ("topic", "queue_id", "min_offset", "max_offset", "entries", "next_put_offset")

    def __init__(self, topic: str, queue_id: int):
        self.topic = topic
        self.queue_id = queue_id
        self.min_offset = 0  # logical offset of entries[0]
        self.max_offset = 0  # one past the last dispatched entry (min_offset + len(entries))
        self.entries: list[StoredMessage] = []
        self.next_put_offset = 0  # queue offset the next put gets (CommitLog topicQueueTable)

    def put(self, msg: StoredMessage) -> None:
        """Dispatch one message: it must carry the next offset (ConsumeQueue.java#putMessagePositionInfo)."""
        if msg.queue_offset != self.max_offset:
            raise AssertionError(
                f"consume queue {self.topic}@{self.queue_id} out of order: {msg.queue_offset} != {self.max_offset}"
            )
        self.entries.append(msg)
        self.max_offset += 1

    def get(self, offset: int) -> StoredMessage | None:
        i = offset - self.min_offset
        if 0 <= i < len(self.entries):
            return self.entries[i]
        return None


# The message-arriving listener: (topic, queue_id, logic_offset, tags_code,
# msg_store_time, properties, now_ms) -> anything.
MessageArrivingListener = Callable[..., object]


class MessageStore:
    """Commit log + consume queues of one broker, stepped by the caller.

    Mirrors: store/.../DefaultMessageStore.java (putMessage, getMessage,
    getMaxOffsetInQueue, getMinOffsetInQueue, checkInMemByConsumeOffset,
    ReputMessageService#doReput, notifyMessageArriveIfNecessary)
    """

    def __init__(
        self,
        broker_config: BrokerConfig | None = None,
        message_arriving_listener: MessageArrivingListener | None = None,
        access_message_in_memory_max_bytes: int | None = None,
    ):
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        check_callable(message_arriving_listener, "message_arriving_listener", none=True)
        if access_message_in_memory_max_bytes is not None:
            check_int(access_message_in_memory_max_bytes, "access_message_in_memory_max_bytes", 0)
        self.broker_config = broker_config or BrokerConfig()
        self.message_arriving_listener = message_arriving_listener
        # None = every message counts as in memory (Java: 40% of physical RAM,
        # MessageStoreConfig.accessMessageInMemoryMaxRatio).
        self.access_message_in_memory_max_bytes = access_message_in_memory_max_bytes
        self.topic_queue_nums: dict[str, int] = {}
        self._queues: dict[tuple[str, int], _ConsumeQueue] = {}
        self.commit_log: list[StoredMessage] = []
        self.commit_log_max_offset = 0  # physical bytes written
        self.reput_from_index = 0  # commit-log entries already dispatched
        self.offsets = ConsumerOffsetManager()

    # ---- topics -----------------------------------------------------------
    def create_topic(self, topic: str, queue_nums: int) -> None:
        """Create ``topic`` with ``queue_nums`` read/write queues, or grow it.

        Shrinking is refused: Java keeps the consume queues of removed queue
        ids on disk, and a model that silently dropped data would mislead.
        """
        if not isinstance(topic, str) or not topic or "@" in topic:
            raise (ValueError if isinstance(topic, str) else ArgumentTypeError)(
                f"topic must be a non-empty str without '@', got {topic!r}"
            )
        if (
            isinstance(queue_nums, bool)
            or not isinstance(queue_nums, int)
            or queue_nums < 1
            or queue_nums > MAX_QUEUE_NUMS
        ):
            raise (ValueError if type(queue_nums) is int else ArgumentTypeError)(
                f"queue_nums must be an int in 1..{MAX_QUEUE_NUMS}, got {queue_nums!r}"
            )
        old = self.topic_queue_nums.get(topic, 0)
        if queue_nums < old:
            raise ValueError(f"queue_nums cannot shrink topic {topic!r} from {old} to {queue_nums}")
        for q in range(old, queue_nums):
            self._queues[(topic, q)] = _ConsumeQueue(topic, q)
        self.topic_queue_nums[topic] = queue_nums

    def has_topic(self, topic: str) -> bool:
        check_str(topic, "topic", empty=True)
        return topic in self.topic_queue_nums

    def read_queue_nums(self, topic: str) -> int:
        self._require_topic(topic)
        return self.topic_queue_nums[topic]

    def _require_topic(self, topic: str) -> None:
        check_str(topic, "topic", empty=True)
        if topic not in self.topic_queue_nums:
            raise ValueError(f"topic: unknown topic {topic!r} (create_topic first)")

    def _queue(self, topic: str, queue_id: int) -> _ConsumeQueue:
        """The consume queue of ``topic``/``queue_id``, or a ValueError saying which of the two is wrong."""
        if type(queue_id) is int and type(topic) is str:  # a bool hashes like 0 or 1, a list not at all
            cq = self._queues.get((topic, queue_id))
            if cq is not None:  # a queue that exists proves a known topic and a valid id
                return cq
        self._require_topic(topic)
        if isinstance(queue_id, bool) or not isinstance(queue_id, int):
            raise ValueError(f"queue_id must be an int, got {queue_id!r}")
        cq = self._queues.get((topic, queue_id))
        if cq is None:
            raise ValueError(
                f"queue_id: topic {topic!r} has queues 0..{self.topic_queue_nums[topic] - 1}, got {queue_id}"
            )
        return cq

    # ---- offsets of a queue -------------------------------------------------
    def get_max_offset(self, topic: str, queue_id: int) -> int:
        """One past the last dispatched offset. Mirrors: #getMaxOffsetInQueue"""
        return self._queue(topic, queue_id).max_offset

    def get_min_offset(self, topic: str, queue_id: int) -> int:
        """Mirrors: #getMinOffsetInQueue"""
        return self._queue(topic, queue_id).min_offset

    def delete_expired(self, topic: str, queue_id: int, new_min_offset: int) -> int:
        """Retention: drop consume-queue entries below ``new_min_offset``; returns how many.

        Java deletes whole files by age; this lets a notebook make the min
        offset jump and see OFFSET_TOO_SMALL.
        """
        cq = self._queue(topic, queue_id)
        check_non_negative_int(new_min_offset, "new_min_offset")
        if new_min_offset > cq.max_offset:
            raise ValueError(
                f"new_min_offset {new_min_offset} is past max offset {cq.max_offset} "
                f"of topic {topic!r} queue_id {queue_id}"
            )
        drop = max(0, new_min_offset - cq.min_offset)
        if drop:
            del cq.entries[:drop]
            cq.min_offset = new_min_offset
        return drop

    def check_in_mem_by_consume_offset(self, topic: str, queue_id: int, consume_offset: int) -> bool:
        """Is the message at ``consume_offset`` present and still in memory?

        Mirrors: DefaultMessageStore.java#checkInMemByConsumeOffset (batchSize 1)
        """
        check_int(consume_offset, "consume_offset")
        msg = self._queue(topic, queue_id).get(consume_offset)
        if msg is None:
            return False
        if self.access_message_in_memory_max_bytes is None:
            return True
        return (self.commit_log_max_offset - msg.commit_log_offset) <= self.access_message_in_memory_max_bytes

    # ---- put / reput --------------------------------------------------------
    def put_message(
        self,
        topic: str,
        queue_id: int,
        now_ms,
        body_size: int = 1,
        tags: str | None = None,
        uniq_key: str | None = None,
        born_timestamp=None,
        reconsume_times: int = 0,
        properties=(),
    ) -> StoredMessage:
        """Append a message to the commit log; it is visible to consumers after :meth:`reput`.

        The queue offset is fixed now (CommitLog's topicQueueTable), the
        consume-queue entry is written by reput.

        Mirrors: DefaultMessageStore.java#putMessage → CommitLog.java#asyncPutMessage
        """
        now_ms = check_time(now_ms)
        self._queue(topic, queue_id)
        check_int(body_size, "body_size", 0)
        check_non_negative_int(reconsume_times, "reconsume_times")
        if tags is not None:
            check_str(tags, "tags", empty=True)
        if uniq_key is not None:
            check_str(uniq_key, "uniq_key", empty=True)
        born_timestamp = now_ms if born_timestamp is None else check_time(born_timestamp, "born_timestamp")
        return self._put_message_trusted(
            topic,
            queue_id,
            now_ms,
            body_size,
            tags,
            uniq_key,
            born_timestamp,
            reconsume_times,
            _property_pairs(properties),
        )

    def _put_message_trusted(
        self,
        topic: str,
        queue_id: int,
        now_ms: int,
        body_size: int,
        tags: str | None,
        uniq_key: str | None,
        born_timestamp: int,
        reconsume_times: int,
        pairs: tuple,
    ) -> StoredMessage:
        """:meth:`put_message` for a caller that has checked every argument (an existing queue, int times, the
        properties already as ``(name, value)`` pairs): the same append, no checks."""
        cq = self._queues[(topic, queue_id)]
        phy = self.commit_log_max_offset
        queue_offset = cq.next_put_offset
        if uniq_key is None:
            uniq_key = f"{topic}#{queue_id}#{queue_offset}@{phy}"
        msg = StoredMessage(
            topic,
            queue_id,
            queue_offset,
            phy,
            body_size,
            now_ms,
            born_timestamp,
            uniq_key,
            tags,
            tags_code_of(tags),
            reconsume_times,
            pairs,
        )
        cq.next_put_offset = queue_offset + 1
        self.commit_log.append(msg)
        self.commit_log_max_offset = phy + max(body_size, 1)  # a body of 0 bytes still takes a commit-log entry
        return msg

    def behind(self) -> int:
        """How many commit-log messages reput has not dispatched yet."""
        return len(self.commit_log) - self.reput_from_index

    def reput(self, now_ms) -> list[StoredMessage]:
        """Dispatch every new commit-log message into its consume queue.

        After each message, with long polling on, the listener is told
        ``(topic, queue_id, queue_offset + 1, tags_code, store_timestamp,
        properties, now_ms)``. With long polling off nobody is told, and held
        pulls wait for the hold service's periodic scan. Returns the
        dispatched messages.

        Mirrors: DefaultMessageStore.java#ReputMessageService#doReput,
        #notifyMessageArriveIfNecessary
        """
        check_time(now_ms)
        dispatched = []
        commit_log, queues = self.commit_log, self._queues
        while self.reput_from_index < len(commit_log):
            msg = commit_log[self.reput_from_index]
            self.reput_from_index += 1
            queues[(msg.topic, msg.queue_id)].put(msg)
            dispatched.append(msg)
            if self.broker_config.long_polling_enable and self.message_arriving_listener is not None:
                self.message_arriving_listener(
                    msg.topic,
                    msg.queue_id,
                    msg.queue_offset + 1,
                    msg.tags_code,
                    msg.store_timestamp,
                    dict(msg.properties) if msg.properties else {},
                    now_ms,
                )
        return dispatched

    # ---- read ---------------------------------------------------------------
    def get_message(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int,
        message_filter=None,
        max_total_msg_size: int = DEFAULT_MAX_TOTAL_MSG_SIZE,
    ) -> GetMessageResult:
        """Read up to ``max_msg_nums`` messages of one queue from ``offset``.

        Status by position: empty queue → NO_MESSAGE_IN_QUEUE (next = 0);
        offset < min → OFFSET_TOO_SMALL (next = min); offset == max →
        OFFSET_OVERFLOW_ONE (next = offset); offset > max →
        OFFSET_OVERFLOW_BADLY (next = max). Otherwise entries are scanned
        (at most ``max(16000, max_msg_nums*20) / 20`` of them): FOUND with
        the matching ones, or NO_MATCHED_MESSAGE when the tag filter
        rejected everything scanned; next = one past the last scanned entry.
        ``message_filter`` is anything with ``is_matched_by_consume_queue(tags_code)``
        (a :class:`SubscriptionData` will do), or None.

        Mirrors: DefaultMessageStore.java#getMessage (+ #isTheBatchFull, #estimateInMemByCommitOffset)
        """
        self._queue(topic, queue_id)
        check_int(offset, "offset")
        check_int(max_msg_nums, "max_msg_nums", 1)
        check_int(max_total_msg_size, "max_total_msg_size")
        check_str(group, "group", empty=True)
        if message_filter is not None:
            check_methods(message_filter, "message_filter", "is_matched_by_consume_queue")
        return self._get_message_trusted(
            group, topic, queue_id, offset, max_msg_nums, message_filter, max_total_msg_size
        )

    def _get_message_trusted(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int,
        message_filter,
        max_total_msg_size: int,
    ) -> GetMessageResult:
        """:meth:`get_message` for a caller that has checked every argument and knows the queue exists (the pull
        processor, for a request whose topic and queue id it has just looked up): the same read, no checks."""
        cq = self._queues[(topic, queue_id)]
        entries, min_offset, max_offset = cq.entries, cq.min_offset, cq.max_offset
        messages = []
        total = 0
        if max_offset == 0:
            status, next_begin = _NO_MESSAGE_IN_QUEUE, self._next_offset_correction(offset, 0)
        elif offset < min_offset:
            status, next_begin = _OFFSET_TOO_SMALL, self._next_offset_correction(offset, min_offset)
        elif offset == max_offset:
            status, next_begin = _OFFSET_OVERFLOW_ONE, offset  # corrected to itself
        elif offset > max_offset:
            status, next_begin = _OFFSET_OVERFLOW_BADLY, self._next_offset_correction(offset, max_offset)
        else:
            max_filter_message_size = max(MAX_FILTER_MESSAGE_SIZE, max_msg_nums * CQ_STORE_UNIT_SIZE)
            max_pull_size = min(max(max_total_msg_size, 100), MAX_PULL_MSG_SIZE)
            if type(message_filter) is SubscriptionData and message_filter.sub_string == SUB_ALL:
                message_filter = None  # it matches every tag code: no per-entry call
            status = _NO_MATCHED_MESSAGE
            next_begin = offset
            budget, max_offset_py = self.access_message_in_memory_max_bytes, self.commit_log_max_offset
            while next_begin < max_offset:
                msg = entries[next_begin - min_offset]  # cq.get(next_begin); always there below max_offset
                if (msg.queue_offset - offset) * CQ_STORE_UNIT_SIZE >= max_filter_message_size:
                    break
                in_mem = budget is None or max_offset_py - msg.commit_log_offset <= budget
                if self._is_the_batch_full(msg.body_size, max_msg_nums, max_pull_size, total, len(messages), in_mem):
                    break
                if total >= max_pull_size:
                    break
                next_begin = msg.queue_offset + 1
                if message_filter is not None and not message_filter.is_matched_by_consume_queue(msg.tags_code):
                    if total == 0:
                        status = _NO_MATCHED_MESSAGE
                    continue
                messages.append(msg)
                total += msg.body_size
                status = _FOUND
        return GetMessageResult(status, next_begin, min_offset, max_offset, messages, total)

    def _next_offset_correction(self, old_offset: int, new_offset: int) -> int:
        """The next offset a read that found no message answers: ``new_offset``, or on a slave without
        ``offset_check_in_slave`` the request's own. Mirrors: DefaultMessageStore.java#nextOffsetCorrection"""
        config = self.broker_config
        if config.broker_role is BrokerRole.SLAVE and not config.offset_check_in_slave:
            return old_offset
        return new_offset

    @staticmethod
    def _is_the_batch_full(
        size_py: int, max_msg_nums: int, max_msg_size: int, buffer_total: int, message_total: int, in_mem: bool
    ) -> bool:
        if buffer_total == 0 or message_total == 0:
            return False
        if message_total + 1 > max_msg_nums:
            return True
        if buffer_total + size_py > max_msg_size:
            return True
        if in_mem:
            if buffer_total + size_py > MAX_TRANSFER_BYTES_ON_MESSAGE_IN_MEMORY:
                return True
            return message_total > MAX_TRANSFER_COUNT_ON_MESSAGE_IN_MEMORY - 1
        if buffer_total + size_py > MAX_TRANSFER_BYTES_ON_MESSAGE_IN_DISK:
            return True
        return message_total > MAX_TRANSFER_COUNT_ON_MESSAGE_IN_DISK - 1

    def queue_messages(self, topic: str, queue_id: int) -> list[StoredMessage]:
        """Every dispatched message its consume queue still holds, in offset order (a copy of the list)."""
        return list(self._queue(topic, queue_id).entries)

    def look_message_by_offset(self, topic: str, queue_id: int, offset: int) -> StoredMessage | None:
        """The dispatched message at ``offset``, or None if deleted/not yet there."""
        check_int(offset, "offset")
        return self._queue(topic, queue_id).get(offset)

    # ---- consumer offsets -------------------------------------------------------
    def commit_offset(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """Store ``group``'s consume offset (UPDATE_CONSUMER_OFFSET / piggy-backed commit)."""
        self._queue(topic, queue_id)
        check_non_negative_int(offset, "offset")
        check_str(group, "group", empty=True)
        self._commit_offset_trusted(group, topic, queue_id, offset)

    def _commit_offset_trusted(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        """:meth:`commit_offset` for a caller that has checked every argument (an existing queue, an offset >= 0)."""
        self.offsets._commit_offset_trusted(group, topic, queue_id, offset)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """Stored offset or -1. Mirrors: ConsumerOffsetManager.java#queryOffset"""
        self._queue(topic, queue_id)
        return self.offsets.query_offset(group, topic, queue_id)

    def query_consumer_offset(
        self, group: str, topic: str, queue_id: int, set_zero_if_not_found: bool | None = None
    ) -> tuple[ResponseCode, int | None]:
        """What QUERY_CONSUMER_OFFSET answers: ``(code, offset)``.

        With nothing stored, the broker answers 0 (not "not found") when the
        queue still starts at offset ≤ 0 and its first message is in memory —
        so a brand-new group on a young topic starts from the beginning even
        with CONSUME_FROM_LAST_OFFSET. Otherwise QUERY_NOT_FOUND, and the
        client falls back to its ConsumeFromWhere.

        Mirrors: broker/.../processor/ConsumerManageProcessor.java#queryConsumerOffset
        """
        if set_zero_if_not_found is not None:
            check_bool(set_zero_if_not_found, "set_zero_if_not_found")
        offset = self.query_offset(group, topic, queue_id)
        if offset >= 0:
            return ResponseCode.SUCCESS, offset
        if set_zero_if_not_found is False:
            return ResponseCode.QUERY_NOT_FOUND, None
        if self.get_min_offset(topic, queue_id) <= 0 and self.check_in_mem_by_consume_offset(topic, queue_id, 0):
            return ResponseCode.SUCCESS, 0
        return ResponseCode.QUERY_NOT_FOUND, None

    def _check(self) -> None:
        assert 0 <= self.reput_from_index <= len(self.commit_log)
        phy = 0
        for msg in self.commit_log:
            assert msg.commit_log_offset == phy, msg
            phy += max(msg.body_size, 1)
        assert phy == self.commit_log_max_offset
        for (topic, qid), cq in self._queues.items():
            assert 0 <= qid < self.topic_queue_nums[topic]
            assert cq.min_offset <= cq.max_offset <= cq.next_put_offset
            assert cq.max_offset == cq.min_offset + len(cq.entries), (topic, qid, cq.max_offset)
            for i, msg in enumerate(cq.entries):
                assert msg.topic == topic and msg.queue_id == qid
                assert msg.queue_offset == cq.min_offset + i, (msg, cq.min_offset, i)
        self.offsets._check()

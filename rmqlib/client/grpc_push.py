"""A 5.x gRPC push consumer's assignment loop: no rebalance of its own, only the proxy's answer, taken as it comes.

Every 5 s (the first time 1 s after start) the consumer asks the proxy, topic by topic, for its assignment
(:func:`rmqlib.proxy.query_assignment`) and makes its process queues match it: a queue no longer assigned is
dropped, a newly assigned one starts receiving. An answer that is not OK changes nothing: the consumer keeps what it
had, and one that never had an assignment keeps none.

Mirrors: ``apache/rocketmq-clients`` java/client/.../impl/consumer/PushConsumerImpl.java (``startUp``'s schedule,
``scanAssignments``, ``syncProcessQueue``) and ProcessQueueImpl.java (its cache and the size of each receive, for
:mod:`rmqlib.sim.grpc_consumer_node`, which runs the receiving and the consumption). Not modelled: a process queue
dropped because it stopped receiving (``ProcessQueue#expired``; a queue that keeps long-polling never is).
"""

from __future__ import annotations

import enum

from rmqlib.checks import check_instance, check_int, check_str
from rmqlib.model import MessageQueue
from rmqlib.proxy import Code, QueryAssignmentResponse

SCAN_ASSIGNMENTS_INITIAL_DELAY_MS = 1_000  # PushConsumerImpl#startUp: scheduleWithFixedDelay(..., 1, 5, SECONDS)
SCAN_ASSIGNMENTS_PERIOD_MS = 5_000
MAX_CACHE_MESSAGE_COUNT = 4_096  # PushConsumerBuilderImpl.maxCacheMessageCount
RECEIVE_BATCH_SIZE = 32  # PushSubscriptionSettings.receiveBatchSize, as the proxy sets it (LongPollingBatchSize)
# PushSubscriptionSettings.longPollingTimeout as the proxy sets it: the settings it sends at start-up carry its
# grpcClientConsumerMaxLongPollingTimeoutMillis (GrpcClientSettingsManager#mergeSubscriptionData) and #sync takes
# them, before the first receive; the client's own default, 30 s, never reaches a receive
LONG_POLLING_TIMEOUT_MS = 20_000
RECEIVING_BACKOFF_DELAY_WHEN_CACHE_IS_FULL_MS = 1_000  # ProcessQueueImpl
RECEIVING_FAILURE_BACKOFF_DELAY_MS = 1_000  # ProcessQueueImpl: a receive answered with an error goes out again then
RECEIVING_FLOW_CONTROL_BACKOFF_DELAY_MS = 20  # ProcessQueueImpl: ... but one answered TOO_MANY_REQUESTS after 20 ms
ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS = 1_000  # ProcessQueueImpl: a failed ack is sent again then
HEART_BEAT_INITIAL_DELAY_MS = 1_000  # ClientManagerImpl.HEART_BEAT_INITIAL_DELAY
HEART_BEAT_PERIOD_MS = 10_000  # ClientManagerImpl.HEART_BEAT_PERIOD
REQUEST_TIMEOUT_MS = 3_000  # ClientConfiguration's default requestTimeout
SHUTDOWN_ACK_WAIT_MS = 1_000  # PushConsumerImpl#shutDown sleeps 1 s for the acks before it terminates the client


class ScanOutcome(enum.Enum):
    """What one topic's scan did."""

    FAILED = "failed"  # the answer was an error: nothing changes
    STILL_EMPTY = "still empty"  # an empty answer and nothing held before: nothing changes
    CHANGED = "changed"  # a new assignment, process queues synced to it
    SAME = "same"  # the same assignment, process queues synced again


class ProcessQueueImpl:
    """What a gRPC push consumer keeps for one assigned queue: whether it was dropped, and how many received messages
    it caches (taken in, not yet acked). Mirrors: ProcessQueueImpl.java (``dropped``, ``cachedMessages``)"""

    def __init__(self, mq: MessageQueue) -> None:
        self.mq = check_instance(mq, "mq", MessageQueue)
        self.dropped = False
        self.cached = 0

    def drop(self) -> None:
        """No more receives for this queue. Mirrors: #drop"""
        self.dropped = True

    def is_cache_full(self, threshold: int) -> bool:
        """Mirrors: #isCacheFull (by count; bodies are not modelled)"""
        return threshold <= self.cached

    @staticmethod
    def receive_backoff_ms(code: Code) -> int:
        """How long a receive answered with the error status ``code`` waits to go out again: 20 ms for
        TOO_MANY_REQUESTS (the broker held too many pops), else 1 s. Mirrors: #onReceiveMessageException"""
        check_instance(code, "code", Code)
        if code is Code.TOO_MANY_REQUESTS:
            return RECEIVING_FLOW_CONTROL_BACKOFF_DELAY_MS
        return RECEIVING_FAILURE_BACKOFF_DELAY_MS

    def reception_batch_size(self, threshold: int) -> int:
        """How many messages the next receive asks for: what the cache has room for, at least 1, at most 32.
        Mirrors: #getReceptionBatchSize"""
        return min(max(threshold - self.cached, 1), RECEIVE_BATCH_SIZE)


class PushConsumerImpl:
    """One gRPC push consumer's assignments and process queues.

    ``cache_assignments``: topic -> the last assignment taken (its queues, in the answer's order);
    ``process_queue_table``: the queues it receives from now, each with its :class:`ProcessQueueImpl`.
    """

    def __init__(self, group: str, client_id: str, max_cache_message_count: int = MAX_CACHE_MESSAGE_COUNT) -> None:
        self.group = check_str(group, "group")
        self.client_id = check_str(client_id, "client_id")
        # PushConsumerBuilderImpl#setMaxCacheMessageCount refuses anything but a positive count
        self.max_cache_message_count = check_int(max_cache_message_count, "max_cache_message_count", 1)
        self.cache_assignments: dict[str, tuple[MessageQueue, ...]] = {}
        self.process_queue_table: dict[MessageQueue, ProcessQueueImpl] = {}

    def cache_message_count_threshold_per_queue(self) -> int:
        """The consumer's cache (``max_cache_message_count``, 4,096 messages by default) shared among its queues, at
        least 1 each (0 with none). Mirrors: #cacheMessageCountThresholdPerQueue"""
        size = len(self.process_queue_table)
        return 0 if size <= 0 else max(1, self.max_cache_message_count // size)

    def scan_assignments(self, topic: str, response: QueryAssignmentResponse) -> ScanOutcome:
        """Take the proxy's answer for ``topic``. Mirrors: PushConsumerImpl#scanAssignments (one topic's callback)"""
        check_str(topic, "topic")
        check_instance(response, "response", QueryAssignmentResponse)
        if response.code is not Code.OK:
            return ScanOutcome.FAILED  # StatusChecker.check throws; onFailure only logs
        latest = tuple(a.message_queue for a in response.assignments)
        existed = self.cache_assignments.get(topic)
        if not latest and not existed:
            return ScanOutcome.STILL_EMPTY
        self.sync_process_queue(topic, latest)
        if latest != existed:
            self.cache_assignments[topic] = latest
            return ScanOutcome.CHANGED
        return ScanOutcome.SAME

    def sync_process_queue(self, topic: str, latest: tuple[MessageQueue, ...]) -> None:
        """Drop the topic's process queues not in ``latest``; create one for each new queue.
        Mirrors: PushConsumerImpl#syncProcessQueue"""
        wanted = set(latest)
        for mq in [mq for mq in self.process_queue_table if mq.topic == topic and mq not in wanted]:
            self.process_queue_table.pop(mq).drop()
        for mq in latest:
            if mq not in self.process_queue_table:
                self.process_queue_table[mq] = ProcessQueueImpl(mq)

    def assigned(self, topic: str) -> list[MessageQueue]:
        """The queues of ``topic`` this consumer receives from now."""
        check_str(topic, "topic")
        return [mq for mq in self.process_queue_table if mq.topic == topic]


__all__ = [
    "ProcessQueueImpl",
    "SCAN_ASSIGNMENTS_INITIAL_DELAY_MS",
    "SCAN_ASSIGNMENTS_PERIOD_MS",
    "PushConsumerImpl",
    "ScanOutcome",
]

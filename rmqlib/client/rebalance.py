"""RebalanceImpl (push flavour): which queues this consumer owns, and the
ProcessQueues and PullRequests that follow from that.

Each client decides alone. It sorts the queues it knows from its route cache
and the client ids one broker reports, runs the allocation strategy for
itself, and reconciles its ``process_queue_table`` with the result: queues no
longer assigned are dropped (offset persisted, orderly lock released), new
ones get a fresh ProcessQueue and a PullRequest. Nothing coordinates the
clients, so two of them may briefly hold the same queue; only orderly
consumers are fenced, by broker locks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Container, Iterable, Sequence
from collections.abc import Set as AbstractSet
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from rmqlib.broker.protocol import build_pop_retry_topic
from rmqlib.checks import (
    ArgumentTypeError,
    check_bool,
    check_callable,
    check_instance,
    check_int,
    check_methods,
    check_str,
)
from rmqlib.client import pull as _pull
from rmqlib.client.api import (
    RETRY_GROUP_TOPIC_PREFIX,
    SUB_ALL,
    ClientBrokerAPI,
    ConsumerData,
    MQClientError,
    SubscriptionData,
    retry_topic,
)
from rmqlib.client.config import (
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    PushConsumerConfig,
)
from rmqlib.client.offset_store import LocalFileOffsetStore, OffsetStore, ReadOffsetType
from rmqlib.client.pop import (
    CONSUME_INIT_MODE_MAX,
    CONSUME_INIT_MODE_MIN,
    PopProcessQueue,
    PopRequest,
)
from rmqlib.client.process_queue import ProcessQueue, check_time
from rmqlib.client.pull import PullMessageService, PullRequest
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs

if TYPE_CHECKING:
    from rmqlib.broker.query_assignment import MessageQueueAssignment

#: Push consumers wait this long after the last lock before force-unlocking a dropped orderly
#: queue (RebalancePushImpl.java; rocketmq.client.unlockDelayTimeMills).
UNLOCK_DELAY_TIME_MILLS = 20_000
#: ``tryLock`` timeout on the ProcessQueue's consume write lock (RebalancePushImpl.java#tryRemoveOrderMessageQueue):
#: a round that finds a listener call in progress waits this long for it (see RebalanceImpl.consume_lock_released).
CONSUME_LOCK_TRY_TIMEOUT_MILLS = 500
#: Delay of the extra rebalance scheduled when an orderly lock fails, and of the first pull
#: of a newly assigned queue (RebalanceImpl.java#updateProcessQueueTableInRebalance).
REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS = 500
DISPATCH_PULL_REQUEST_DELAY_MILLS = 500
#: Delay of the first pop of a new POP assignment (RebalanceImpl.java#updateMessageQueueAssignment).
DISPATCH_POP_REQUEST_DELAY_MILLS = 500
#: How many of the latest requests ``RebalanceImpl.rebalance_requests`` keeps (the model's log; Java keeps none).
REBALANCE_REQUESTS_KEPT = 64
#: How far back CONSUME_FROM_TIMESTAMP starts by default (DefaultMQPushConsumer#consumeTimestamp).
DEFAULT_CONSUME_TIMESTAMP_LOOKBACK_MILLS = 30 * 60 * 1000

MessageQueueListener = Callable[[str, set[MessageQueue], set[MessageQueue]], None]


class AllocateStrategy(Protocol):
    """What a rebalance asks of its strategy (:class:`~rmqlib.strategies.AllocateMessageQueueStrategy` or any
    object with these two); a None answer is an empty assignment."""

    @property
    def name(self) -> str: ...

    def allocate(
        self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> list[MessageQueue] | None: ...


class RebalanceScheduler(Protocol):
    """The ``rebalance_service`` a RebalanceImpl asks for a later or an immediate round
    (:class:`~rmqlib.client.rebalance_service.RebalanceService`)."""

    def rebalance_later(self, delay_ms: int, now_ms: int) -> None: ...

    def wakeup(self, now_ms: int) -> None: ...


class PopService(Protocol):
    """The ``pop_service`` that runs PopRequests (PullMessageService#executePopPullRequestLater / Immediately)."""

    def execute_pop_pull_request_later(self, request: PopRequest, delay_ms: int, now_ms: int) -> None: ...

    def execute_pop_pull_request_immediately(self, request: PopRequest) -> None: ...


class AllocationCache(Protocol):
    """The ``allocation_cache`` (not Java's): answers exactly what java_sorted_mqs, java_sorted_cids and
    ``strategy.allocate`` answer, shared between clients that see the same view."""

    def sorted_mqs(self, mq_set: Iterable[MessageQueue]) -> list[MessageQueue]: ...

    def sorted_cids(self, cid_all: Iterable[str]) -> list[str]: ...

    def allocate(
        self,
        strategy: AllocateStrategy,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue] | None: ...


class AssignmentQueryAPI(Protocol):
    """A broker API that also answers QUERY_ASSIGNMENT (MQClientInstance#queryAssignment); only
    :meth:`RebalanceImpl.get_rebalance_result_from_broker` asks it."""

    def query_assignment(
        self, topic: str, group: str, client_id: str, strategy_name: str, message_model: MessageModel
    ) -> set[MessageQueueAssignment] | None: ...


#: The broker RPCs a RebalanceImpl may make (:class:`~rmqlib.client.api.ClientBrokerAPI`), checked at construction.
_API_METHODS = (
    "find_consumer_id_list",
    "lock_batch_mq",
    "unlock_batch_mq",
    "query_consumer_offset",
    "update_consumer_offset",
    "get_max_offset",
    "search_offset",
    "send_heartbeat",
)


_ONLY_MQ = {MessageQueue}
_TOPIC_OF = attrgetter("topic")


def _check_mq(mq: object) -> None:
    if type(mq) is not MessageQueue:
        check_instance(mq, "mq", MessageQueue)


def _check_mq_set(mqs: object, name: str) -> AbstractSet[MessageQueue]:
    """A collection of MessageQueue (returned as it is when it is already a set or a frozenset)."""
    if isinstance(mqs, (str, bytes, MessageQueue)) or not isinstance(mqs, Iterable):
        raise ArgumentTypeError(f"{name} must be a set of MessageQueue, got {type(mqs).__name__}")
    if not isinstance(mqs, (set, frozenset)):
        mqs = set(mqs)
    if mqs and set(map(type, mqs)) != _ONLY_MQ:  # one pass at C speed; the loop below names the culprit
        for mq in mqs:
            if type(mq) is not MessageQueue:
                check_instance(mq, f"{name}[...]", MessageQueue)
    return mqs


class RebalanceStep(NamedTuple):
    """One thing a rebalance did to one queue, reported to ``RebalanceImpl.step_listener``.

    Not a Java type: Java writes these moments to its log (``doRebalance, ... remove unnecessary
    mq``, ``add a new mq``); the book replays them (:mod:`rmqlib.client.handover`). ``action`` is
    one of :data:`STEP_ACTIONS`; ``detail`` says the why or the number in words.
    """

    client_id: str
    action: str
    mq: MessageQueue | None
    detail: str = ""
    offset: int | None = None  # the offset persisted, or the one the new queue starts from


#: What :class:`RebalanceStep` can report, in the order a round does them.
DROP, PERSIST_OFFSET, REMOVE_OFFSET, UNLOCK, KEEP_DROPPED, REMOVE_FROM_TABLE = (
    "drop",
    "persist offset",
    "remove offset",
    "unlock",
    "keep dropped",
    "remove from table",
)
LOCK_REFUSED, REMOVE_DIRTY_OFFSET, START_OFFSET, NO_START_OFFSET, NEW_PULL_REQUEST, REBALANCE_LATER = (
    "lock refused",
    "remove dirty offset",
    "start offset",
    "no start offset",
    "new pull request",
    "rebalance later",
)
NEW_POP_REQUEST = "new pop request"
STEP_ACTIONS = (
    DROP,
    PERSIST_OFFSET,
    REMOVE_OFFSET,
    UNLOCK,
    KEEP_DROPPED,
    REMOVE_FROM_TABLE,
    LOCK_REFUSED,
    REMOVE_DIRTY_OFFSET,
    START_OFFSET,
    NO_START_OFFSET,
    NEW_PULL_REQUEST,
    REBALANCE_LATER,
    NEW_POP_REQUEST,
)


class RebalanceImpl:
    """One push consumer's rebalance state and logic.

    Mirrors: client/.../impl/consumer/RebalanceImpl.java and RebalancePushImpl.java

    Also carries the few fields of ``DefaultMQPushConsumerImpl`` that the
    rebalance and pull path read (``config``, ``offset_store``, ``pull_service``,
    ``consume_orderly``, ``paused``), so that one object models one consumer.

    ``strategy`` is any object with ``name`` and
    ``allocate(consumer_group, current_cid, mq_all, cid_all)``; a None result is
    an empty assignment. Broker calls go through ``api`` (:class:`ClientBrokerAPI`).
    ``rebalance_service`` (optional) receives ``rebalance_later`` /
    ``rebalance_immediately``; the latest :data:`REBALANCE_REQUESTS_KEPT` such requests are also kept in
    ``rebalance_requests`` (a deque) as ``(now_ms, delay_ms)`` for inspection: a member of a big group is
    asked hundreds of times as the group forms.
    With ``config.client_rebalance`` off (a concurrent clustering consumer, 5.x), a topic's
    queues come from a broker (:meth:`get_rebalance_result_from_broker`, which needs
    ``api.query_assignment``); POP assignments get a :class:`~rmqlib.client.pop.PopProcessQueue`
    in ``pop_process_queue_table`` and a :class:`~rmqlib.client.pop.PopRequest`, handed to
    ``pop_service`` (anything with ``execute_pop_pull_request_later(request, delay_ms, now_ms)``
    and ``execute_pop_pull_request_immediately(request)``; without one they wait in ``pop_requests``).
    ``step_listener`` (optional) is called with a :class:`RebalanceStep` for each thing the
    queue-table update does to a queue (what Java logs), in order.
    ``unlock_delay_time_mills`` is RebalancePushImpl's ``UNLOCK_DELAY_TIME_MILLS`` (the JVM's
    ``-Drocketmq.client.unlockDelayTimeMills``, default 20 s): how long after a dropped orderly queue's last lock
    a round unlocks it even while a listener call runs.
    ``allocation_cache`` (optional, not Java's: for a simulator that runs many clients in one process)
    stands in for the sort and allocate steps of a round: ``sorted_mqs(mq_set)``,
    ``sorted_cids(cid_all)`` and ``allocate(strategy, group, client_id, mq_all, cid_all)`` must return
    exactly what :func:`~rmqlib.model.java_sorted_mqs`, :func:`~rmqlib.model.java_sorted_cids` and
    ``strategy.allocate`` return (and raise what they raise), so that clients seeing the same view
    can share one computation; the lists it returns are read, never changed.
    """

    def __init__(
        self,
        consumer_group: str,
        client_id: str,
        api: ClientBrokerAPI,
        strategy: AllocateStrategy,
        *,
        config: PushConsumerConfig | None = None,
        consume_orderly: bool = False,
        offset_store: OffsetStore | LocalFileOffsetStore | None = None,
        pull_service: PullMessageService | None = None,
        rebalance_service: RebalanceScheduler | None = None,
        pop_service: PopService | None = None,
        allocation_cache: AllocationCache | None = None,
        message_queue_listener: MessageQueueListener | None = None,
        now_ms: int = 0,
        step_listener: Callable[[RebalanceStep], None] | None = None,
        unlock_delay_time_mills: int = UNLOCK_DELAY_TIME_MILLS,
    ):
        check_str(consumer_group, "consumer_group")
        check_str(client_id, "client_id")
        if not callable(getattr(strategy, "allocate", None)) or not hasattr(strategy, "name"):
            raise ArgumentTypeError(
                "strategy must have .allocate(consumer_group, current_cid, mq_all, cid_all) and .name"
            )
        check_methods(api, "api", *_API_METHODS)
        if config is not None:
            check_instance(config, "config", PushConsumerConfig)
        check_bool(consume_orderly, "consume_orderly")
        if offset_store is not None:
            check_instance(offset_store, "offset_store", (OffsetStore, LocalFileOffsetStore))
        if pull_service is not None:
            check_instance(pull_service, "pull_service", PullMessageService)
        if rebalance_service is not None:
            check_methods(rebalance_service, "rebalance_service", "rebalance_later", "wakeup")
        if pop_service is not None:
            check_methods(
                pop_service, "pop_service", "execute_pop_pull_request_later", "execute_pop_pull_request_immediately"
            )
        if allocation_cache is not None:
            check_methods(allocation_cache, "allocation_cache", "sorted_mqs", "sorted_cids", "allocate")
        check_callable(message_queue_listener, "message_queue_listener", none=True)
        check_callable(step_listener, "step_listener", none=True)
        check_int(now_ms, "now_ms")  # also the retry topic subscription's version
        self.consumer_group = consumer_group
        self.client_id = client_id
        self.api = api
        self.allocate_message_queue_strategy = strategy
        self.config = config if config is not None else PushConsumerConfig()
        self.message_model = self.config.message_model
        self.consume_orderly = bool(consume_orderly)
        if offset_store is None:
            offset_store = (
                LocalFileOffsetStore(consumer_group)
                if self.message_model is MessageModel.BROADCASTING
                else OffsetStore(consumer_group, api)
            )
        self.offset_store = offset_store
        self.pull_service = pull_service if pull_service is not None else PullMessageService()
        self.rebalance_service = rebalance_service
        self.pop_service = pop_service
        self.allocation_cache = allocation_cache
        self.pop_requests: list[tuple[int, PopRequest]] = []  # (due ms, request) when there is no pop_service
        self.message_queue_listener = message_queue_listener
        self.step_listener = step_listener
        self.unlock_delay_time_mills = check_int(unlock_delay_time_mills, "unlock_delay_time_mills", 0)
        self.paused = False
        self.start_timestamp = now_ms
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self.pop_process_queue_table: dict[MessageQueue, PopProcessQueue] = {}
        self.topic_subscribe_info_table: dict[str, AbstractSet[MessageQueue]] = {}
        self.subscription_inner: dict[str, SubscriptionData] = {}
        self.rebalance_requests: deque[tuple[int, int]] = deque(maxlen=REBALANCE_REQUESTS_KEPT)
        #: Orderly queues a round is waiting to give up (its 500 ms tryLock on the consume lock): queue -> (its
        #: ProcessQueue, until when the round waits). See :meth:`consume_lock_released`.
        self.consume_lock_waits: dict[MessageQueue, tuple[ProcessQueue, int]] = {}
        if self.message_model is MessageModel.CLUSTERING:
            # DefaultMQPushConsumerImpl#copySubscription: the retry topic, CLUSTERING only.
            rt = retry_topic(consumer_group)
            self.subscription_inner[rt] = SubscriptionData.build(rt, "*", now_ms)

    # ------------------------------------------------------------ set-up
    def subscribe(self, topic: str, sub_expression: str = "*", now_ms: int = 0) -> None:
        """Subscribe to a topic (DefaultMQPushConsumerImpl#subscribe)."""
        check_int(now_ms, "now_ms")  # it becomes the subscription's version
        if sub_expression is not None and not isinstance(sub_expression, str):
            raise ArgumentTypeError(f"sub_expression must be a str or None, got {type(sub_expression).__name__}")
        self.subscription_inner[topic] = SubscriptionData.build(topic, sub_expression, now_ms)

    def unsubscribe(self, topic: str) -> None:
        """Drop a subscription; its queues go at the next rebalance (truncate step)."""
        check_str(topic, "topic")
        self.subscription_inner.pop(topic, None)

    def update_topic_subscribe_info(self, topic: str, mqs: Iterable[MessageQueue]) -> None:
        """Route refresh: store the readable queues of a subscribed topic.

        Mirrors: DefaultMQPushConsumerImpl.java#updateTopicSubscribeInfo (ignored for topics
        not subscribed). Does not trigger a rebalance, as in Java. The table keeps a copy (a ``set``), or a
        ``frozenset`` given as it is (many consumers may then share one).
        """
        check_str(topic, "topic")
        if isinstance(mqs, (str, bytes, MessageQueue)) or not isinstance(mqs, Iterable):
            raise ArgumentTypeError(f"mqs must be a collection of MessageQueue, got {type(mqs).__name__}")
        if topic in self.subscription_inner:
            if type(mqs) is not frozenset:  # a frozenset cannot change under the model: it is kept as it is
                mqs = set(mqs)
            if mqs and (set(map(type, mqs)) != _ONLY_MQ or set(map(_TOPIC_OF, mqs)) != {topic}):
                for mq in mqs:  # the fast test above failed: find and name the culprit
                    if not isinstance(mq, MessageQueue) or mq.topic != topic:
                        raise ValueError(f"mqs: {mq!r} is not a MessageQueue of topic {topic!r}")
            self.topic_subscribe_info_table[topic] = mqs

    def _step(self, action: str, mq: MessageQueue | None, detail: str = "", offset: int | None = None) -> None:
        if self.step_listener is not None:
            self.step_listener(RebalanceStep(self.client_id, action, mq, detail, offset))

    # ----------------------------------------------------- rebalance service hooks
    def rebalance_later(self, delay_ms: int, now_ms: int) -> None:
        """Ask for an extra rebalance after ``delay_ms`` (MQClientInstance#rebalanceLater)."""
        check_int(delay_ms, "delay_ms")
        check_time(now_ms)
        self.rebalance_requests.append((now_ms, delay_ms))
        if self.rebalance_service is not None:
            self.rebalance_service.rebalance_later(delay_ms, now_ms)

    def rebalance_immediately(self, now_ms: int) -> None:
        """Wake the rebalance service (MQClientInstance#rebalanceImmediately)."""
        check_time(now_ms)
        self.rebalance_requests.append((now_ms, 0))
        if self.rebalance_service is not None:
            self.rebalance_service.wakeup(now_ms)

    def try_rebalance(self, now_ms: int) -> bool:
        """A paused consumer reports "not balanced" (DefaultMQPushConsumerImpl#tryRebalance)."""
        check_time(now_ms)
        if self.paused:
            return False
        return self.do_rebalance(self.consume_orderly, now_ms)

    # ----------------------------------------------------------- main loop
    def client_rebalance(self, topic: str) -> bool:
        """Mirrors: RebalancePushImpl.java#clientRebalance"""
        return self.config.client_rebalance or self.consume_orderly or self.message_model is MessageModel.BROADCASTING

    def do_rebalance(self, is_order: bool, now_ms: int) -> bool:
        """Rebalance every subscribed topic; return True if every topic is balanced.

        Mirrors: RebalanceImpl.java#doRebalance

        Errors on ``%RETRY%`` topics are swallowed and do not count; errors on
        other topics make the result False. Queues of topics no longer
        subscribed are then dropped.
        """
        check_bool(is_order, "is_order")
        check_time(now_ms)
        balanced = True
        for topic in list(self.subscription_inner):
            try:
                if not self.client_rebalance(topic):
                    if not self.get_rebalance_result_from_broker(topic, is_order, now_ms):
                        balanced = False
                elif not self.rebalance_by_topic(topic, is_order, now_ms):
                    balanced = False
            except Exception:
                if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                    balanced = False
        self.truncate_message_queue_not_my_topic()
        return balanced

    def rebalance_by_topic(self, topic: str, is_order: bool, now_ms: int) -> bool:
        """Compute this client's share of one topic and apply it; return "balanced".

        Mirrors: RebalanceImpl.java#rebalanceByTopic

        Balanced means the queues actually working (in the table, not dropped)
        equal the target set, so a failed lock makes the topic unbalanced; a
        dropped queue still waiting for its orderly unlock is not working, and
        does not count.
        """
        check_str(topic, "topic")
        check_bool(is_order, "is_order")
        check_time(now_ms)
        balanced = True
        mq_set = self.topic_subscribe_info_table.get(topic)
        if self.message_model is MessageModel.BROADCASTING:
            if mq_set is not None:
                if self.update_process_queue_table_in_rebalance(topic, mq_set, False, now_ms):
                    self._message_queue_changed(topic, mq_set, mq_set, now_ms)
                balanced = mq_set == self.get_working_message_queue(topic)
            else:
                self.message_queue_changed(topic, set(), set(), now_ms)
            return balanced

        cid_all = self.api.find_consumer_id_list(topic, self.consumer_group)
        if mq_set is None and not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            self.message_queue_changed(topic, set(), set(), now_ms)
        if mq_set is not None and cid_all is not None:
            strategy, cache = self.allocate_message_queue_strategy, self.allocation_cache
            if cache is None:
                mq_all = java_sorted_mqs(mq_set)
                cid_all = java_sorted_cids(cid_all)
            else:
                mq_all = cache.sorted_mqs(mq_set)
                cid_all = cache.sorted_cids(cid_all)
            try:
                if cache is None:
                    result = strategy.allocate(self.consumer_group, self.client_id, mq_all, cid_all)
                else:
                    result = cache.allocate(strategy, self.consumer_group, self.client_id, mq_all, cid_all)
            except Exception:
                return False
            allocate_result_set = set(result) if result is not None else set()
            if self.update_process_queue_table_in_rebalance(topic, allocate_result_set, is_order, now_ms):
                self._message_queue_changed(topic, mq_set, allocate_result_set, now_ms)
            balanced = allocate_result_set == self.get_working_message_queue(topic)
        return balanced

    def get_rebalance_result_from_broker(self, topic: str, is_order: bool, now_ms: int) -> bool:
        """Ask a broker for this client's queues of ``topic`` and apply them; return "balanced".

        Mirrors: RebalanceImpl.java#getRebalanceResultFromBroker

        ``api.query_assignment(topic, group, client_id, strategy_name, message_model)`` (QUERY_ASSIGNMENT
        to one broker of the topic, MQClientInstance#queryAssignment) answers a set of
        assignments (objects with ``message_queue`` and ``mode``, ``PULL`` or ``POP``), or None when
        the broker has no valid answer: then nothing changes and the topic counts as not balanced,
        as does a failed call. On a change, :meth:`message_queue_changed` runs (with ``mq_all``
        empty: Java passes null). Balanced means the queues working now equal the assigned ones.
        """
        check_str(topic, "topic")
        check_bool(is_order, "is_order")
        check_time(now_ms)
        strategy_name = self.allocate_message_queue_strategy.name
        try:
            api = cast(AssignmentQueryAPI, self.api)  # the broker-side rebalance needs the one RPC more
            assignments = api.query_assignment(
                topic, self.consumer_group, self.client_id, strategy_name, self.message_model
            )
        except Exception:
            return False
        if assignments is None:
            return False
        mq_set = {a.message_queue for a in assignments if a.message_queue is not None}
        if self.update_message_queue_assignment(topic, assignments, is_order, now_ms):
            self.message_queue_changed(topic, set(), mq_set, now_ms)
        return mq_set == self.get_working_message_queue(topic)

    def update_message_queue_assignment(
        self, topic: str, assignments: Iterable[MessageQueueAssignment], is_order: bool, now_ms: int
    ) -> bool:
        """Reconcile both tables for one topic with a broker's assignments; return "changed".

        Mirrors: RebalanceImpl.java#updateMessageQueueAssignment

        PULL assignments go to ``process_queue_table`` as in
        :meth:`update_process_queue_table_in_rebalance` (drop what is no longer assigned or is
        pull-expired; lock first when ``is_order``; a start offset; a PullRequest 500 ms later);
        POP assignments to ``pop_process_queue_table`` (drop what is no longer assigned or was not
        popped for 120 s; a new PopProcessQueue and a PopRequest, dispatched 500 ms later). A topic
        that is all POP unsubscribes its pop retry topic, one that is all PULL subscribes it.
        New queues are taken in Java's queue order (Java iterates a HashMap), so runs repeat.
        """
        check_str(topic, "topic")
        check_bool(is_order, "is_order")
        check_time(now_ms)
        push: dict[MessageQueue, object] = {}
        pop: dict[MessageQueue, object] = {}
        for assignment in assignments:
            mq = assignment.message_queue
            if mq is None:
                continue
            _check_mq(mq)
            (pop if assignment.mode == "POP" else push)[mq] = assignment
        if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            pop_retry = build_pop_retry_topic(topic, self.consumer_group)
            if not pop and push:  # from Pop back to push: read the pop retry topic too
                self.subscription_inner[pop_retry] = SubscriptionData.build(pop_retry, SUB_ALL, now_ms)
            elif pop and not push:  # push to Pop: the broker serves the retry messages with the pops
                self.subscription_inner.pop(pop_retry, None)
        changed = self._drop_process_queues(topic, push, now_ms, "not in the broker's assignment")
        pop_removed: list[tuple[MessageQueue, PopProcessQueue]] = []
        for mq, ppq in self.pop_process_queue_table.items():
            if mq.topic != topic:
                continue
            if mq not in pop:
                ppq.dropped = True
                pop_removed.append((mq, ppq))
                self._step(DROP, mq, "not in the broker's pop assignment")
            elif ppq.is_pull_expired(now_ms) and self.consume_type() is ConsumeType.CONSUME_PASSIVELY:
                ppq.dropped = True
                pop_removed.append((mq, ppq))
                self._step(DROP, mq, "pop expired (no pop for more than 120 s)")
        for mq, ppq in pop_removed:
            if self.remove_unnecessary_pop_message_queue(mq, ppq):
                del self.pop_process_queue_table[mq]
                changed = True
                self._step(REMOVE_FROM_TABLE, mq)

        all_locked = True
        pull_requests: list[PullRequest] = []
        for mq in java_sorted_mqs(push):
            if mq in self.process_queue_table:
                continue
            if is_order and not self.lock(mq, now_ms):
                all_locked = False
                self._step(LOCK_REFUSED, mq, "another consumer holds the broker lock")
                continue
            self.remove_dirty_offset(mq)
            pq = ProcessQueue(now_ms)
            pq.locked = True
            try:
                next_offset = self.compute_pull_from_where_with_exception(mq)
            except Exception:
                self._step(NO_START_OFFSET, mq, "computing the start offset failed, so the queue waits")
                continue
            self.process_queue_table[mq] = pq
            pull_requests.append(PullRequest(self.consumer_group, mq, pq, next_offset))
            changed = True
            self._step(
                NEW_PULL_REQUEST,
                mq,
                f"first pull from offset {next_offset}, {DISPATCH_PULL_REQUEST_DELAY_MILLS} ms later",
                next_offset,
            )
        if not all_locked:
            self.rebalance_later(REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS, now_ms)
            self._step(
                REBALANCE_LATER,
                None,
                f"a lock was refused, so another round is asked for in {REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS} ms",
            )
        self.dispatch_pull_request(pull_requests, DISPATCH_PULL_REQUEST_DELAY_MILLS, now_ms)

        pop_requests: list[PopRequest] = []
        for mq in java_sorted_mqs(pop):
            if mq in self.pop_process_queue_table:
                continue
            ppq = self.pop_process_queue_table[mq] = PopProcessQueue(now_ms)
            pop_requests.append(PopRequest(topic, self.consumer_group, mq, ppq, self.get_consume_init_mode()))
            changed = True
            self._step(NEW_POP_REQUEST, mq, f"first pop {DISPATCH_POP_REQUEST_DELAY_MILLS} ms later")
        self.dispatch_pop_pull_request(pop_requests, DISPATCH_POP_REQUEST_DELAY_MILLS, now_ms)
        return changed

    def remove_unnecessary_pop_message_queue(self, mq: MessageQueue, pq: PopProcessQueue) -> bool:
        """A POP assignment is given up at once: no offset, no lock
        (RebalanceImpl.java#removeUnnecessaryPopMessageQueue)."""
        return True

    def get_consume_init_mode(self) -> int:
        """Where a Pop group with no offset starts: MIN for CONSUME_FROM_FIRST_OFFSET, else MAX.

        Mirrors: RebalancePushImpl.java#getConsumeInitMode
        """
        if self.config.consume_from_where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
            return CONSUME_INIT_MODE_MIN
        return CONSUME_INIT_MODE_MAX

    def dispatch_pop_pull_request(self, pop_requests: list[PopRequest], delay_ms: int, now_ms: int) -> None:
        """Hand new PopRequests to the pop service, ``delay_ms`` from now
        (RebalancePushImpl.java#dispatchPopPullRequest)."""
        check_int(delay_ms, "delay_ms")
        check_time(now_ms)
        for request in pop_requests:
            check_instance(request, "pop_requests[...]", PopRequest)
            if self.pop_service is None:
                self.pop_requests.append((now_ms + max(delay_ms, 0), request))
            elif delay_ms <= 0:
                self.pop_service.execute_pop_pull_request_immediately(request)
            else:
                self.pop_service.execute_pop_pull_request_later(request, delay_ms, now_ms)

    def get_working_message_queue(self, topic: str) -> set[MessageQueue]:
        """Queues of ``topic`` in either table and not dropped (RebalanceImpl.java#getWorkingMessageQueue)."""
        check_str(topic, "topic")
        working = {mq for mq, pq in self.process_queue_table.items() if mq.topic == topic and not pq.dropped}
        if self.pop_process_queue_table:
            working.update(
                mq for mq, ppq in self.pop_process_queue_table.items() if mq.topic == topic and not ppq.dropped
            )
        return working

    def truncate_message_queue_not_my_topic(self) -> None:
        """Drop and forget queues (and Pop assignments) of unsubscribed topics: no persist, no unlock.

        Mirrors: RebalanceImpl.java#truncateMessageQueueNotMyTopic
        """
        for mq in list(self.process_queue_table):
            if mq.topic not in self.subscription_inner:
                pq = self.process_queue_table.pop(mq)
                pq.dropped = True
        for mq in list(self.pop_process_queue_table):
            if mq.topic not in self.subscription_inner:
                self.pop_process_queue_table.pop(mq).dropped = True

    def _drop_process_queues(self, topic: str, keep: Container[MessageQueue], now_ms: int, why: str) -> bool:
        """The first half of Java's updateProcessQueueTableInRebalance and updateMessageQueueAssignment (the
        same loop in both): drop ``topic``'s ProcessQueues not in ``keep`` (``why``) or whose pulls expired
        (push consumers only), and remove those the listener is not using. True if the table changed."""
        removed: list[tuple[MessageQueue, ProcessQueue]] = []
        for mq, pq in self.process_queue_table.items():
            if mq.topic != topic:
                continue
            if mq not in keep:
                pq.dropped = True
                removed.append((mq, pq))
                self._step(DROP, mq, why)
            elif pq.is_pull_expired(now_ms) and self.consume_type() is ConsumeType.CONSUME_PASSIVELY:
                pq.dropped = True
                removed.append((mq, pq))
                self._step(DROP, mq, "pull expired (no pull for more than 120 s)")
        changed = False
        for mq, pq in removed:
            if self.remove_unnecessary_message_queue(mq, pq, now_ms):
                del self.process_queue_table[mq]
                changed = True
                self._step(REMOVE_FROM_TABLE, mq)
            else:
                self._step(KEEP_DROPPED, mq, "a listener call is in progress: it stays, dropped, while the round waits")
        return changed

    def update_process_queue_table_in_rebalance(
        self, topic: str, mq_set: AbstractSet[MessageQueue], need_lock: bool, now_ms: int
    ) -> bool:
        """Reconcile the table for one topic with its target queue set; return "changed".

        Mirrors: RebalanceImpl.java#updateProcessQueueTableInRebalance

        1. Queues of the topic not in the target, or in it but pull-expired (no
           pull for 120 s), are marked dropped. 2. Each is removed if
           :meth:`remove_unnecessary_message_queue` agrees; otherwise the dropped
           ProcessQueue stays in the table until a later round. 3. Target queues
           missing from the table are locked first when ``need_lock`` (a failed
           lock skips the queue), get their dirty offset removed, a new
           ProcessQueue (``locked=True``), a start offset from
           :meth:`compute_pull_from_where` (negative: skipped) and a PullRequest,
           dispatched 500 ms later. Any failed lock asks for a rebalance 500 ms later.
        """
        check_str(topic, "topic")
        mq_set = _check_mq_set(mq_set, "mq_set")
        check_bool(need_lock, "need_lock")
        check_time(now_ms)
        changed = self._drop_process_queues(topic, mq_set, now_ms, "not in the new allocation")

        all_locked = True
        pull_requests: list[PullRequest] = []
        for mq in java_sorted_mqs(mq_set):  # Java iterates a HashSet; sorted keeps runs reproducible
            if mq in self.process_queue_table:
                continue
            if need_lock and not self.lock(mq, now_ms):
                all_locked = False
                self._step(LOCK_REFUSED, mq, "another consumer holds the broker lock")
                continue
            self.remove_dirty_offset(mq)
            pq = ProcessQueue(now_ms)
            pq.locked = True
            next_offset = self.compute_pull_from_where(mq)
            if next_offset >= 0:
                self.process_queue_table[mq] = pq
                pull_requests.append(PullRequest(self.consumer_group, mq, pq, next_offset))
                changed = True
                self._step(
                    NEW_PULL_REQUEST,
                    mq,
                    f"first pull from offset {next_offset}, {DISPATCH_PULL_REQUEST_DELAY_MILLS} ms later",
                    next_offset,
                )
            else:
                self._step(NO_START_OFFSET, mq, "no start offset, so the queue waits for a later round")
        if not all_locked:
            self.rebalance_later(REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS, now_ms)
            self._step(
                REBALANCE_LATER,
                None,
                f"a lock was refused, so another round is asked for in {REBALANCE_LATER_WHEN_LOCK_FAILED_MILLS} ms",
            )
        self.dispatch_pull_request(pull_requests, DISPATCH_PULL_REQUEST_DELAY_MILLS, now_ms)
        return changed

    def dispatch_pull_request(self, pull_requests: list[PullRequest], delay_ms: int, now_ms: int) -> None:
        """Mirrors: RebalancePushImpl.java#dispatchPullRequest"""
        if not isinstance(pull_requests, (list, tuple)) or not all(isinstance(r, PullRequest) for r in pull_requests):
            raise ArgumentTypeError(f"pull_requests must be a list of PullRequest, got {pull_requests!r:.80}")
        check_int(delay_ms, "delay_ms")
        check_time(now_ms)
        for req in pull_requests:
            if delay_ms <= 0:
                self.pull_service.execute_pull_request_immediately(req)
            else:
                self.pull_service.execute_pull_request_later(req, delay_ms, now_ms)

    def consume_type(self) -> ConsumeType:
        return ConsumeType.CONSUME_PASSIVELY

    def consume_from_where(self) -> ConsumeFromWhere:
        """What a heartbeat reports as this consumer's start position. Mirrors: MQConsumerInner#consumeFromWhere"""
        return self.config.consume_from_where

    # ------------------------------------------------------------- removal
    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue, now_ms: int) -> bool:
        """Give a queue up: persist its offset and, for orderly clustering, unlock it.

        Mirrors: RebalancePushImpl.java#removeUnnecessaryMessageQueue

        Returns False (queue kept, dropped) when an orderly queue is still being
        consumed and the 20 s force-unlock delay since its last lock has not
        passed: the round then waits up to 500 ms for the listener call
        (:meth:`consume_lock_released`), else a later round tries again.
        """
        _check_mq(mq)
        check_instance(pq, "pq", ProcessQueue)
        check_time(now_ms)
        if self.consume_orderly and self.message_model is MessageModel.CLUSTERING:
            self.offset_store.persist(mq)
            self._step_persist(mq)
            return self._try_remove_order_message_queue(mq, pq, now_ms)
        self.offset_store.persist(mq)
        self._step_persist(mq)
        self.offset_store.remove_offset(mq)
        self._step(REMOVE_OFFSET, mq)
        return True

    def _step_persist(self, mq: MessageQueue) -> None:
        if self.step_listener is not None:
            held = self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_MEMORY)
            self._step(
                PERSIST_OFFSET,
                mq,
                f"offset {held} sent to the broker" if held >= 0 else "no offset in memory: nothing sent",
                held if held >= 0 else None,
            )

    def _try_remove_order_message_queue(self, mq: MessageQueue, pq: ProcessQueue, now_ms: int) -> bool:
        """Mirrors: RebalancePushImpl.java#tryRemoveOrderMessageQueue

        Java's round blocks for up to 500 ms on the consume lock while a listener call runs. The model's round does
        not block: it leaves the queue in the table, dropped, and notes the wait; when the call returns within
        the 500 ms, :meth:`consume_lock_released` gives the queue up as the blocked round would have (the round's
        other steps have happened by then, and it did not count this removal as a change)."""
        try:
            self._end_consume_lock_wait(mq)
            force_unlock = pq.dropped and now_ms > pq.last_lock_timestamp + self.unlock_delay_time_mills
            if force_unlock or pq.try_consume_write_lock():
                why = (
                    f"forced, more than {self.unlock_delay_time_mills} ms since its last lock"
                    if force_unlock
                    else "no listener call in progress"
                )
                self._unlock_order_message_queue(mq, pq, why, now_ms)
                return True
            self.consume_lock_waits[mq] = (pq, now_ms + CONSUME_LOCK_TRY_TIMEOUT_MILLS)
        except Exception:
            pq.inc_try_unlock_times()
        return False

    def _unlock_order_message_queue(self, mq: MessageQueue, pq: ProcessQueue, why: str, now_ms: int) -> None:
        """The body of tryRemoveOrderMessageQueue once the consume lock is had (or forced, ``why`` says which):
        persist and forget the offset, unlock on the broker."""
        self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        self._step(REMOVE_OFFSET, mq)
        pq.locked = False
        self.unlock(mq, True, now_ms)
        self._step(UNLOCK, mq, why)

    def _end_consume_lock_wait(self, mq: MessageQueue) -> None:
        """A new attempt on ``mq``: a wait an earlier round left open ran out without the lock (tryLock failed)."""
        wait = self.consume_lock_waits.pop(mq, None)
        if wait is not None:
            wait[0].inc_try_unlock_times()

    def consume_lock_released(self, mq: MessageQueue, pq: ProcessQueue, now_ms: int) -> bool:
        """The listener call on ``pq`` has returned and its consume request has settled it (``now_ms``): a round
        that was waiting for the queue's consume lock gives the queue up now if its 500 ms have not run out, and
        it leaves the table. True if it did. Called by the orderly consume service when it finds the queue dropped.
        """
        _check_mq(mq)
        check_instance(pq, "pq", ProcessQueue)
        now_ms = check_time(now_ms)
        wait = self.consume_lock_waits.get(mq)
        if wait is None or wait[0] is not pq or not pq.try_consume_write_lock():
            return False
        if now_ms > wait[1]:  # the round gave up when its 500 ms ran out
            self._end_consume_lock_wait(mq)
            return False
        del self.consume_lock_waits[mq]
        self._unlock_order_message_queue(mq, pq, "the listener call returned within the round's 500 ms wait", now_ms)
        if self.process_queue_table.get(mq) is pq:
            del self.process_queue_table[mq]
            self._step(REMOVE_FROM_TABLE, mq)
        return True

    def remove_process_queue(self, mq: MessageQueue, now_ms: int) -> None:
        """Remove a queue outright (the OFFSET_ILLEGAL fix): drop it, then give it up.

        Mirrors: RebalanceImpl.java#removeProcessQueue
        """
        _check_mq(mq)
        check_time(now_ms)
        pq = self.process_queue_table.pop(mq, None)
        if pq is not None:
            pq.dropped = True
            self.remove_unnecessary_message_queue(mq, pq, now_ms)

    def remove_dirty_offset(self, mq: MessageQueue) -> None:
        """Mirrors: RebalancePushImpl.java#removeDirtyOffset"""
        _check_mq(mq)
        self.offset_store.remove_offset(mq)
        self._step(REMOVE_DIRTY_OFFSET, mq, "forget any offset held in memory from an earlier ownership")

    def destroy(self) -> None:
        """Drop every queue and Pop assignment and clear the tables (RebalanceImpl.java#destroy, at shutdown)."""
        for pq in self.process_queue_table.values():
            pq.dropped = True
        self.process_queue_table.clear()
        for ppq in self.pop_process_queue_table.values():
            ppq.dropped = True
        self.pop_process_queue_table.clear()

    # ---------------------------------------------------------- start offset
    def compute_pull_from_where_with_exception(self, mq: MessageQueue) -> int:
        """The offset a newly assigned queue starts from; raises MQClientError when unknown.

        Mirrors: RebalancePushImpl.java#computePullFromWhereWithException

        A stored offset (>= 0) always wins; a failed read (-2) raises. With none
        stored (-1): LAST_OFFSET (and its deprecated aliases) starts at 0 on a
        retry topic, else at the broker's max offset; FIRST_OFFSET at 0;
        TIMESTAMP at the max offset on a retry topic, else at the broker's
        answer for ``consume_timestamp_ms``. (A broker also answers 0 instead of
        "none" for a young queue whose offset 0 is still in memory; that rule
        belongs to the broker model behind ``api.query_consumer_offset``.)
        """
        _check_mq(mq)
        cfw = self.config.consume_from_where
        last = self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)
        is_retry = mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
        if last >= 0:
            result, rule = last, "the offset committed at the broker"
        elif last != -1:
            raise MQClientError(f"failed to query the consume offset of {mq} from the offset store")
        elif cfw is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
            result, rule = 0, f"none committed, {cfw.value} -> the first offset"
        elif cfw is ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
            try:
                if is_retry:
                    result = self.api.get_max_offset(mq)
                    rule = f"none committed, {cfw.value} on a retry topic -> the max offset"
                else:
                    ts = self.config.consume_timestamp_ms
                    if ts is None:
                        ts = self.start_timestamp - DEFAULT_CONSUME_TIMESTAMP_LOOKBACK_MILLS
                    result = self.api.search_offset(mq, ts)
                    rule = f"none committed, {cfw.value} -> the first stored at {ts} ms"
            except Exception as e:
                raise MQClientError(f"search/max offset of {mq} failed: {e}") from e
        else:  # LAST_OFFSET and the deprecated LAST/MIN/MAX variants
            if is_retry:
                result, rule = 0, f"none committed, {cfw.value} on a retry topic -> 0"
            else:
                try:
                    result, rule = self.api.get_max_offset(mq), f"none committed, {cfw.value} -> the max offset"
                except Exception as e:
                    raise MQClientError(f"max offset of {mq} failed: {e}") from e
        if result < 0:
            raise MQClientError(f"unexpected start offset {result} for {mq}")
        self._step(START_OFFSET, mq, f"{result} ({rule})", result)
        return result

    def compute_pull_from_where(self, mq: MessageQueue) -> int:
        """Like :meth:`compute_pull_from_where_with_exception` but -1 instead of raising.

        Mirrors: RebalancePushImpl.java#computePullFromWhere (what the rebalance calls)
        """
        try:
            return self.compute_pull_from_where_with_exception(mq)
        except MQClientError:
            return -1

    # --------------------------------------------------------- change hooks
    def message_queue_changed(
        self, topic: str, mq_all: AbstractSet[MessageQueue], mq_divided: AbstractSet[MessageQueue], now_ms: int
    ) -> None:
        """React to a changed assignment: new subVersion, per-queue thresholds, heartbeat, listener.

        Mirrors: RebalancePushImpl.java#messageQueueChanged

        The heartbeat carries the new subscription version; until it reaches a
        broker, that broker answers pulls with SUBSCRIPTION_NOT_LATEST.
        """
        check_str(topic, "topic")
        mq_all = _check_mq_set(mq_all, "mq_all")
        mq_divided = _check_mq_set(mq_divided, "mq_divided")
        check_time(now_ms)
        self._message_queue_changed(topic, mq_all, mq_divided, now_ms)

    def _message_queue_changed(
        self, topic: str, mq_all: AbstractSet[MessageQueue], mq_divided: AbstractSet[MessageQueue], now_ms: int
    ) -> None:
        """:meth:`message_queue_changed` on sets the rebalance round has already checked (its own table and
        allocation)."""
        sub = self.subscription_inner.get(topic)
        if sub is not None:  # Java would throw a NullPointerException here
            sub.sub_version = now_ms
        count = len(self.process_queue_table)
        if count != 0:
            if self.config.pull_threshold_for_topic != -1:
                self.config.pull_threshold_for_queue = max(1, self.config.pull_threshold_for_topic // count)
            if self.config.pull_threshold_size_for_topic != -1:
                self.config.pull_threshold_size_for_queue = max(1, self.config.pull_threshold_size_for_topic // count)
        self.send_heartbeat(now_ms, is_rebalance=True)
        if self.message_queue_listener is not None:
            self.message_queue_listener(topic, set(mq_all), set(mq_divided))

    def consumer_data(self) -> ConsumerData:
        """This consumer's part of a heartbeat (DefaultMQPushConsumerImpl#subscriptions etc.)."""
        return ConsumerData(
            group_name=self.consumer_group,
            consume_type=self.consume_type(),
            message_model=self.message_model,
            consume_from_where=self.consume_from_where(),
            subscription_data_set=[
                SubscriptionData(s.topic, s.sub_string, s.sub_version) for s in self.subscription_inner.values()
            ],
        )

    def send_heartbeat(self, now_ms: int, is_rebalance: bool = False) -> None:
        """Heartbeat to the brokers; failures are swallowed (MQClientInstance#sendHeartbeatToAllBrokerWithLock, or
        #sendHeartbeatToAllBrokerWithLockV2 with ``is_rebalance`` when the queues changed)."""
        check_time(now_ms)
        try:
            self.api.send_heartbeat(self.client_id, [self.consumer_data()], now_ms, is_rebalance=is_rebalance)
        except Exception:
            pass

    # --------------------------------------------------------------- locks
    def _table_by_broker(self) -> dict[str, set[MessageQueue]]:
        """Mirrors: RebalanceImpl.java#buildProcessQueueTableByBrokerName (non-dropped queues)."""
        result: dict[str, set[MessageQueue]] = {}
        for mq, pq in self.process_queue_table.items():
            if not pq.dropped:
                result.setdefault(mq.broker_name, set()).add(mq)
        return result

    def lock(self, mq: MessageQueue, now_ms: int) -> bool:
        """Lock one queue on its broker; True if granted. RPC errors count as refusal.

        Mirrors: RebalanceImpl.java#lock
        """
        _check_mq(mq)
        check_time(now_ms)
        try:
            locked = set(self.api.lock_batch_mq(mq.broker_name, self.consumer_group, self.client_id, {mq}, now_ms))
        except Exception:
            return False
        for m in locked:
            pq = self.process_queue_table.get(m)
            if pq is not None:
                pq.locked = True
                pq.last_lock_timestamp = now_ms
        return mq in locked

    def lock_all(self, now_ms: int) -> None:
        """Renew the locks of every held queue, per broker; refused ones become unlocked.

        Mirrors: RebalanceImpl.java#lockAll (run by ConsumeMessageOrderlyService every 20 s)
        """
        check_time(now_ms)
        for broker_name, mqs in sorted(self._table_by_broker().items()):
            if not mqs:
                continue
            try:
                ok = set(self.api.lock_batch_mq(broker_name, self.consumer_group, self.client_id, set(mqs), now_ms))
            except Exception:
                continue
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is None:
                    continue
                if mq in ok:
                    pq.locked = True
                    pq.last_lock_timestamp = now_ms
                else:
                    pq.locked = False

    def unlock(self, mq: MessageQueue, oneway: bool, now_ms: int) -> None:
        """Release one broker lock; errors are swallowed (RebalanceImpl.java#unlock)."""
        _check_mq(mq)
        check_bool(oneway, "oneway")
        check_time(now_ms)
        try:
            self.api.unlock_batch_mq(mq.broker_name, self.consumer_group, self.client_id, {mq}, now_ms)
        except Exception:
            pass

    def unlock_all(self, oneway: bool, now_ms: int) -> None:
        """Release every held lock, per broker (RebalanceImpl.java#unlockAll, at shutdown)."""
        check_bool(oneway, "oneway")
        check_time(now_ms)
        for broker_name, mqs in sorted(self._table_by_broker().items()):
            try:
                self.api.unlock_batch_mq(broker_name, self.consumer_group, self.client_id, set(mqs), now_ms)
            except Exception:
                continue
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is not None:
                    pq.locked = False

    # ------------------------------------------------------------ invariants
    def _check(self) -> None:
        """Invariants between the tables."""
        for mq, pq in self.process_queue_table.items():
            assert isinstance(mq, MessageQueue) and isinstance(pq, ProcessQueue)
            pq._check()
        for topic, mqs in self.topic_subscribe_info_table.items():
            assert all(mq.topic == topic for mq in mqs)
        for topic, sub in self.subscription_inner.items():
            assert sub.topic == topic

    def __repr__(self) -> str:
        return (
            f"RebalanceImpl(group={self.consumer_group!r}, client_id={self.client_id!r}, "
            f"queues={len(self.process_queue_table)})"
        )


_pull._RebalanceImpl = RebalanceImpl  # the exact type pull_message and friends take without further checks

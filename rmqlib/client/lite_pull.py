"""The lite pull consumer: the application pulls, and either the group shares the queues (subscribe) or the
application names its own queues (assign), with no rebalance at all.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3):

* client/.../impl/consumer/RebalanceLitePullImpl.java -- :class:`RebalanceLitePullImpl`, the same
  rebalance as a push consumer's with four differences: it reports ``CONSUME_ACTIVELY``; it gives a queue up
  without any orderly lock; it reads a new queue's offset memory-first (``MEMORY_FIRST_THEN_STORE``); and it
  dispatches no pull requests (its own pull tasks follow the assigned queues);
* client/.../impl/consumer/DefaultLitePullConsumerImpl.java -- :class:`DefaultLitePullConsumer`, only what
  decides the queues a consumer reads: ``subscribe`` or ``assign`` (mutually exclusive), the assigned
  queues, the heartbeat. Its pull tasks, ``poll`` and auto-commit are not modelled.

A lite pull consumer subscribes to no retry topic. In assign mode it still heartbeats its group (with no
subscription), so a broker lists it among the group's members: subscribe-mode members of the same group give
it a share of the queues, which it never reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from rmqlib.checks import check_items, check_str, check_time_ms
from rmqlib.client.api import ClientBrokerAPI, ConsumerData, MQClientError
from rmqlib.client.config import PushConsumerConfig
from rmqlib.client.offset_store import ReadOffsetType
from rmqlib.client.process_queue import ProcessQueue
from rmqlib.client.pull import PullRequest
from rmqlib.client.rebalance import DEFAULT_CONSUME_TIMESTAMP_LOOKBACK_MILLS, AllocateStrategy, RebalanceImpl
from rmqlib.model import MessageQueue
from rmqlib.protocol import (
    RETRY_GROUP_TOPIC_PREFIX,
    ConsumeFromWhere,
    ConsumeType,
    MessageModel,
    SubscriptionData,
    retry_topic,
)
from rmqlib.strategies import AllocateMessageQueueAveragely

SUBSCRIBE, ASSIGN, NONE = "SUBSCRIBE", "ASSIGN", "NONE"  # DefaultLitePullConsumerImpl.SubscriptionType
SUBSCRIPTION_CONFLICT = "Subscribe and assign are mutually exclusive."  # Java's IllegalStateException message
_LITE_PULL_START_POSITIONS = (
    ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    ConsumeFromWhere.CONSUME_FROM_TIMESTAMP,
)


class RebalanceLitePullImpl(RebalanceImpl):
    """A lite pull consumer's rebalance. Mirrors: RebalanceLitePullImpl.java"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # RebalanceImpl's arguments, passed on as they are
        super().__init__(*args, **kwargs)
        # DefaultLitePullConsumerImpl copies no %RETRY% subscription (it never sends a message back)
        self.subscription_inner.pop(retry_topic(self.consumer_group), None)

    def consume_type(self) -> ConsumeType:
        return ConsumeType.CONSUME_ACTIVELY

    def consume_from_where(self) -> ConsumeFromWhere:
        """A lite pull consumer's heartbeat always says the last offset, whatever it starts from.
        Mirrors: DefaultLitePullConsumerImpl#consumeFromWhere"""
        return ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET

    def client_rebalance(self, topic: str) -> bool:
        """Always on the client: the lite pull consumer keeps RebalanceImpl's rule, not the push consumer's.
        Mirrors: RebalanceImpl.java#clientRebalance"""
        return True

    def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue, now_ms: int) -> bool:
        """Persist and forget the queue's offset; never kept back (no orderly lock to wait for)."""
        self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        return True

    def compute_pull_from_where_with_exception(self, mq: MessageQueue) -> int:
        """Like the push consumer's, but the offset is read memory-first; -1 when the read fails."""
        last = self.offset_store.read_offset(mq, ReadOffsetType.MEMORY_FIRST_THEN_STORE)
        if last >= 0:
            return last
        if last != -1:
            return -1
        cfw = self.config.consume_from_where
        is_retry = mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
        try:
            if cfw is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
                return 0
            if cfw is ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
                if is_retry:
                    return self.api.get_max_offset(mq)
                ts = self.config.consume_timestamp_ms  # default: half an hour before start, as push's
                if ts is None:
                    ts = self.start_timestamp - DEFAULT_CONSUME_TIMESTAMP_LOOKBACK_MILLS
                return self.api.search_offset(mq, ts)
            return 0 if is_retry else self.api.get_max_offset(mq)  # LAST_OFFSET
        except Exception as e:
            raise MQClientError(f"start offset of {mq} failed: {e}") from e

    def dispatch_pull_request(self, pull_requests: list[PullRequest], delay_ms: int, now_ms: int) -> None:
        """Nothing to dispatch: the lite pull consumer's pull tasks follow its assigned queues."""

    def message_queue_changed(
        self, topic: str, mq_all: AbstractSet[MessageQueue], mq_divided: AbstractSet[MessageQueue], now_ms: int
    ) -> None:
        """Only tell the listener (the consumer's own, which updates the assigned queues)."""
        self._message_queue_changed(topic, mq_all, mq_divided, now_ms)

    def _message_queue_changed(
        self, topic: str, mq_all: AbstractSet[MessageQueue], mq_divided: AbstractSet[MessageQueue], now_ms: int
    ) -> None:
        if self.message_queue_listener is not None:
            self.message_queue_listener(topic, set(mq_all), set(mq_divided))


class DefaultLitePullConsumer:
    """The parts of a lite pull consumer that decide which queues it reads.

    Mirrors: DefaultLitePullConsumerImpl.java (``subscribe``, ``assign``, ``assignedMessageQueue``,
    ``updateAssignQueueAndStartPullTask``, ``subscriptions``, ``doRebalance``).
    """

    def __init__(
        self,
        consumer_group: str,
        client_id: str,
        api: ClientBrokerAPI,
        strategy: AllocateStrategy | None = None,
        *,
        config: PushConsumerConfig | None = None,
        now_ms: int = 0,
    ) -> None:
        if config is not None and config.consume_from_where not in _LITE_PULL_START_POSITIONS:
            raise ValueError(  # DefaultLitePullConsumer#setConsumeFromWhere: "Invalid ConsumeFromWhere Value"
                f"config.consume_from_where must be one of {', '.join(c.value for c in _LITE_PULL_START_POSITIONS)} "
                f"for a lite pull consumer, got {config.consume_from_where.value}"
            )
        self.subscription_type = NONE
        self.assigned: dict[str, set[MessageQueue]] = {}  # topic -> queues (AssignedMessageQueue)
        self.rebalance_impl = RebalanceLitePullImpl(
            consumer_group,
            client_id,
            api,
            strategy if strategy is not None else AllocateMessageQueueAveragely(),
            config=config,
            message_queue_listener=self._queues_changed,
            now_ms=now_ms,
        )

    def _set_subscription_type(self, kind: str) -> None:
        if self.subscription_type == NONE:
            self.subscription_type = kind
        elif self.subscription_type != kind:
            raise ValueError(SUBSCRIPTION_CONFLICT)

    def subscribe(self, topic: str, sub_expression: str = "*", now_ms: int = 0) -> None:
        """The group shares the topic's queues: the rebalance decides this consumer's part."""
        check_str(topic, "topic")
        self._set_subscription_type(SUBSCRIBE)
        self.rebalance_impl.subscription_inner[topic] = SubscriptionData.build(topic, sub_expression, now_ms)

    def assign(self, mqs: Iterable[MessageQueue]) -> None:
        """Read exactly these queues, whatever the group does; no rebalance ever changes them."""
        mqs = check_items(mqs, "mqs", MessageQueue, into=set)
        if not mqs:
            raise ValueError("mqs must name at least one queue (Java: 'Message queues can not be null or empty.')")
        self._set_subscription_type(ASSIGN)
        self.assigned = {}
        for mq in mqs:
            self.assigned.setdefault(mq.topic, set()).add(mq)

    def _queues_changed(self, topic: str, mq_all: set[MessageQueue], mq_divided: set[MessageQueue]) -> None:
        """MessageQueueListenerImpl -> updateAssignQueueAndStartPullTask."""
        broadcasting = self.rebalance_impl.message_model is MessageModel.BROADCASTING
        self.assigned[topic] = set(mq_all if broadcasting else mq_divided)

    def assignment(self) -> set[MessageQueue]:
        """The queues this consumer reads now (AssignedMessageQueue#messageQueues)."""
        return {mq for mqs in self.assigned.values() for mq in mqs}

    def update_topic_subscribe_info(self, topic: str, mqs: Iterable[MessageQueue]) -> None:
        self.rebalance_impl.update_topic_subscribe_info(topic, mqs)

    def do_rebalance(self, now_ms: int) -> bool:
        """One round (MQClientInstance#doRebalance calls it for every consumer); assign mode has nothing to do."""
        check_time_ms(now_ms)
        return self.rebalance_impl.do_rebalance(False, now_ms)

    def consumer_data(self) -> ConsumerData:
        """What its heartbeat says: CONSUME_ACTIVELY, and no subscription at all in assign mode."""
        return self.rebalance_impl.consumer_data()

    def send_heartbeat(self, now_ms: int) -> None:
        self.rebalance_impl.send_heartbeat(now_ms)


__all__ = ["ASSIGN", "NONE", "SUBSCRIBE", "SUBSCRIPTION_CONFLICT", "DefaultLitePullConsumer", "RebalanceLitePullImpl"]

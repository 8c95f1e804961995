"""The Pop consumer's client side (RIP-19, 5.x): one PopProcessQueue and one PopRequest per assignment.

With ``clientRebalance`` off, a push consumer asks a broker which queues it should read
(``RebalanceImpl#getRebalanceResultFromBroker``, in :mod:`rmqlib.client.rebalance`). For a POP
assignment it keeps a :class:`PopProcessQueue` (no offsets, no message tree: only how many messages
wait for their ack and when it last popped) and circulates a :class:`PopRequest`, as a pull consumer
circulates its PullRequest. The broker side is in :mod:`rmqlib.broker.pop`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlib.broker.pop import PoppedMessage
from rmqlib.checks import check_instance, check_int, check_str
from rmqlib.client.consume import DEFAULT_MAX_RECONSUME_TIMES_CONCURRENTLY
from rmqlib.client.process_queue import PULL_MAX_IDLE_TIME, check_time
from rmqlib.model import MessageQueue
from rmqlib.protocol import SubscriptionData

#: ConsumeInitMode.MIN / MAX (common/.../constant/ConsumeInitMode.java): where a group with no
#: offset starts popping.
CONSUME_INIT_MODE_MIN, CONSUME_INIT_MODE_MAX = 0, 1


class PopProcessQueue:
    """The client's per-assignment state in Pop mode: last pop time, messages awaiting ack.

    An assignment not popped for more than ``PULL_MAX_IDLE_TIME`` (120 s) is pull-expired: the next
    rebalance drops it and makes a new one (RebalanceImpl#updateMessageQueueAssignment).

    Mirrors: client/.../impl/consumer/PopProcessQueue.java
    """

    def __init__(self, now_ms: int = 0) -> None:
        self.last_pop_timestamp = check_time(now_ms)
        self.wait_ack_counter = 0
        self.dropped = False

    def inc_found_msg(self, count: int) -> None:
        check_int(count, "count")
        self.wait_ack_counter += count

    def ack(self) -> int:
        """Decrement; returns the value *before* the decrement, as Java's getAndDecrement."""
        before = self.wait_ack_counter
        self.wait_ack_counter -= 1
        return before

    def dec_found_msg(self, count: int) -> None:
        """Adds ``count`` (Java's addAndGet): callers pass a negative number to decrease."""
        check_int(count, "count")
        self.wait_ack_counter += count

    def get_wai_ack_msg_count(self) -> int:
        return self.wait_ack_counter

    def is_pull_expired(self, now_ms: int) -> bool:
        """Idle for strictly more than PULL_MAX_IDLE_TIME (120 s)."""
        return (check_time(now_ms) - self.last_pop_timestamp) > PULL_MAX_IDLE_TIME

    def __repr__(self) -> str:
        return (
            f"PopProcessQueue[waitAckCounter:{self.wait_ack_counter}, "
            f"lastPopTimestamp:{self.last_pop_timestamp}, drop:{self.dropped}]"
        )

    def _check(self) -> None:
        assert isinstance(self.dropped, bool)
        assert isinstance(self.wait_ack_counter, int)


class PopRequest:
    """One POP assignment in circulation: which queue to pop for which group, and its PopProcessQueue.

    Equal when topic, group and queue are (Java's equals/hashCode ignore the process queue).

    Mirrors: client/.../impl/consumer/PopRequest.java
    """

    __slots__ = ("topic", "consumer_group", "message_queue", "pop_process_queue", "init_mode", "locked_first")

    def __init__(
        self,
        topic: str,
        consumer_group: str,
        message_queue: MessageQueue,
        pop_process_queue: PopProcessQueue,
        init_mode: int = CONSUME_INIT_MODE_MAX,
    ):
        check_str(topic, "topic")
        check_str(consumer_group, "consumer_group")
        check_instance(message_queue, "message_queue", MessageQueue)
        check_instance(pop_process_queue, "pop_process_queue", PopProcessQueue)
        check_int(init_mode, "init_mode", CONSUME_INIT_MODE_MIN, CONSUME_INIT_MODE_MAX)
        self.topic, self.consumer_group, self.message_queue = topic, consumer_group, message_queue
        self.pop_process_queue, self.init_mode = pop_process_queue, init_mode
        self.locked_first = False

    def _key(self) -> tuple[str, str, MessageQueue]:
        return self.topic, self.consumer_group, self.message_queue

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PopRequest) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"PopRequest[topic={self.topic}, consumerGroup={self.consumer_group}, messageQueue={self.message_queue}]"


def process_pop_result(
    popped: Sequence[PoppedMessage], subscription: SubscriptionData, max_reconsume_times: int = -1
) -> tuple[list[PoppedMessage], list[PoppedMessage]]:
    """Split a pop's messages into those to consume and those the client acks without consuming: a message whose
    tag ``subscription`` does not list (when it lists tags: an untagged message is dropped too), and one reconsumed
    more than ``max_reconsume_times`` times (-1 means 16). The broker already filtered the topic's messages by the
    pop's own expression, so the tag check drops only what it did not filter: messages of the pop retry topic, which
    the broker reads with ``*``.

    Mirrors: DefaultMQPushConsumerImpl#processPopResult (no filter hooks, no class filter mode)
    """
    check_instance(subscription, "subscription", SubscriptionData)
    max_reconsume_times = check_int(max_reconsume_times, "max_reconsume_times", -1)
    limit = DEFAULT_MAX_RECONSUME_TIMES_CONCURRENTLY if max_reconsume_times == -1 else max_reconsume_times
    tags = subscription.tags_set
    kept: list[PoppedMessage] = []
    dropped: list[PoppedMessage] = []
    for item in popped:
        message = check_instance(item, "popped", PoppedMessage).message
        wanted = not tags or (message.tags is not None and message.tags in tags)
        (kept if wanted and message.reconsume_times <= limit else dropped).append(item)
    return kept, dropped

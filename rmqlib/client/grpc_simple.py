"""A 5.x gRPC simple consumer: no assignment and no rebalance; each receive picks its queue round-robin.

A ``SimpleConsumer`` never asks anyone which queues are its own. The application calls ``receive(maxMessageNum,
invisibleDuration)`` whenever it wants messages; each call takes the next of the consumer's subscribed topics in
turn, and the next readable master queue of that topic's route in turn (the route as the proxy answers QueryRoute,
:func:`rmqlib.proxy.query_route`; the proxy then pops any queue of that queue's broker). Both turns start at a
random place. The client keeps each route and fetches it again every 30 s (the first time 10 s after start); an
updated route keeps the turn's place. Every member of the group does the same, so every member reads from every
broker, and what it receives stays invisible for the ``invisibleDuration`` it asked for: nothing renews it, so a
message still being processed when that time ends is handed out again.

Mirrors: ``apache/rocketmq-clients`` java/client/.../impl/consumer/SimpleConsumerImpl.java (``receive0``,
``updateSubscriptionLoadBalancer``), SubscriptionLoadBalancer.java, ConsumerImpl.java#wrapReceiveMessageRequest
(``autoRenew`` false, the request's invisible duration) and ClientImpl.java#startUp (the route cache's schedule).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from rmqlib.checks import ArgumentTypeError, check_instance, check_str
from rmqlib.model import MessageQueue
from rmqlib.protocol import MASTER_ID, java_hash_map_keys
from rmqlib.proxy import Permission, RouteQueue

ROUTE_UPDATE_INITIAL_DELAY_MS = 10_000  # ClientImpl#startUp: scheduleWithFixedDelay(updateRouteCache, 10, 30, SECONDS)
ROUTE_UPDATE_PERIOD_MS = 30_000
_INT_MAX = 2**31 - 1  # RandomUtils.nextInt(0, Integer.MAX_VALUE): where a turn starts


def _java_int(value: int) -> int:
    """``value`` as a Java int (AtomicInteger#getAndIncrement wraps past Integer.MAX_VALUE)."""
    return (value + 2**31) % 2**32 - 2**31


class _Turn:
    """A round-robin index that survives route updates. Mirrors: the shared AtomicInteger of SubscriptionLoadBalancer"""

    __slots__ = ("value",)

    def __init__(self, start: int) -> None:
        self.value = start

    def get_and_increment(self) -> int:
        value = self.value
        self.value = _java_int(value + 1)
        return value


class SubscriptionLoadBalancer:
    """The readable queues of one topic's route on its masters, taken in turn.

    Mirrors: SubscriptionLoadBalancer.java (``isReadableMasterQueue``, ``update``, ``takeMessageQueue``)
    """

    def __init__(self, route: Iterable[RouteQueue], turn: _Turn) -> None:
        queues = list(route)
        for i, q in enumerate(queues):
            check_instance(q, f"route[{i}]", RouteQueue)
        self.message_queues = tuple(q.message_queue for q in queues if self.is_readable_master_queue(q))
        if not self.message_queues:
            raise ValueError(f"route: no readable message queue on a master, got {len(queues)} queue(s)")
        self._turn = turn

    @staticmethod
    def is_readable_master_queue(queue: RouteQueue) -> bool:
        return queue.permission in (Permission.READ, Permission.READ_WRITE) and queue.broker_id == MASTER_ID

    def update(self, route: Iterable[RouteQueue]) -> SubscriptionLoadBalancer:
        """A balancer over a new route that goes on from this one's place."""
        return SubscriptionLoadBalancer(route, self._turn)

    def take_message_queue(self) -> MessageQueue:
        return self.message_queues[self._turn.get_and_increment() % len(self.message_queues)]


class SimpleConsumerImpl:
    """One simple consumer's subscriptions and its balancer per topic. Mirrors: SimpleConsumerImpl.java"""

    def __init__(self, group: str, client_id: str, subscriptions: Mapping[str, str], rng: random.Random) -> None:
        self.group = check_str(group, "group")
        self.client_id = check_str(client_id, "client_id")
        if not isinstance(subscriptions, Mapping):
            raise ArgumentTypeError(f"subscriptions must map topics to expressions, got {type(subscriptions).__name__}")
        self.subscription_expressions = {
            check_str(topic, "subscriptions: a topic"): check_str(expression, f"subscriptions[{topic!r}]")
            for topic, expression in subscriptions.items()
        }
        check_instance(rng, "rng", random.Random)
        self._rng = rng
        self._topic_turn = _Turn(rng.randrange(_INT_MAX))
        self.subscription_route_data_cache: dict[str, SubscriptionLoadBalancer] = {}

    def update_subscription_load_balancer(self, topic: str, route: Iterable[RouteQueue]) -> SubscriptionLoadBalancer:
        """A fetched route of ``topic``: a new balancer, or the old one's place kept.
        Mirrors: #updateSubscriptionLoadBalancer"""
        check_str(topic, "topic")
        old = self.subscription_route_data_cache.get(topic)
        balancer = (
            SubscriptionLoadBalancer(route, _Turn(self._rng.randrange(_INT_MAX))) if old is None else old.update(route)
        )
        self.subscription_route_data_cache[topic] = balancer
        return balancer

    def next_topic(self) -> tuple[str, str]:
        """The topic the next receive reads, and its expression: the next in the turn over the topics in the order a
        ``HashMap`` of them iterates (:func:`~rmqlib.protocol.java_hash_map_keys`). Mirrors: #receive0's topicIndex"""
        topics = java_hash_map_keys(self.subscription_expressions)
        if not topics:
            raise ValueError("subscriptions: there is no topic to receive message")
        topic = topics[self._topic_turn.get_and_increment() % len(topics)]
        return topic, self.subscription_expressions[topic]

    def take_message_queue(self, topic: str) -> MessageQueue:
        """The queue the next receive of ``topic`` names (its route must have been fetched)."""
        balancer = self.subscription_route_data_cache.get(check_str(topic, "topic"))
        if balancer is None:
            raise ValueError(f"topic: no route of {topic!r} fetched yet")
        return balancer.take_message_queue()


__all__ = [
    "ROUTE_UPDATE_INITIAL_DELAY_MS",
    "ROUTE_UPDATE_PERIOD_MS",
    "SimpleConsumerImpl",
    "SubscriptionLoadBalancer",
]

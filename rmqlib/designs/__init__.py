"""Designs RocketMQ does not ship, as runnable models, and one adapter to compare them with those it does.

**Ours, not RocketMQ's**: :class:`AllocateMessageQueueSticky` (a sticky strategy, the "rebalancing re-think"
of apache/rocketmq-externals#568) and :class:`AllocateMessageQueueConsistentHashBoundedLoad` (consistent
hashing with bounded loads, apache/rocketmq#1333). Both implement RocketMQ's ``AllocateMessageQueueStrategy``
contract, so ``Scenario(strategy=AllocateMessageQueueSticky())`` simulates them like the six Java ports.

:mod:`rmqlib.designs.compare` puts every design behind one question ("who owns which queue?"): RocketMQ's
six strategies, these two, the 5.x broker's ``QueryAssignmentProcessor`` and Kafka's assignors
(:mod:`rmqlib.kafka`), and measures them on the same groups. It imports :mod:`rmqlib.sim` and is not
imported here, so the strategies stay in the core.

    >>> from rmqlib.allocation import make_cids, moved_queues, spread_queues
    >>> from rmqlib.designs import sticky_assign
    >>> queues = spread_queues(6)
    >>> before = sticky_assign(queues, make_cids(2))          # nothing to keep yet: AVG's blocks, 3 and 3
    >>> after = sticky_assign(queues, make_cids(3), before)   # a third joins: it takes 2, nobody else changes
    >>> [len(mine) for mine in after.values()], len(moved_queues(before, after))
    ([2, 2, 2], 2)
"""

from rmqlib.designs.bounded import (
    MAX_EPSILON,
    AllocateMessageQueueConsistentHashBoundedLoad,
    bounded_assign,
    load_bound,
)
from rmqlib.designs.sticky import MEMORY_MODES, AllocateMessageQueueSticky, sticky_assign

#: Our designs by name, next to :data:`rmqlib.strategies.STRATEGIES` (which holds RocketMQ's own).
DESIGN_STRATEGIES = {
    AllocateMessageQueueSticky.name: AllocateMessageQueueSticky,
    AllocateMessageQueueConsistentHashBoundedLoad.name: AllocateMessageQueueConsistentHashBoundedLoad,
}

__all__ = [
    "AllocateMessageQueueConsistentHashBoundedLoad",
    "AllocateMessageQueueSticky",
    "DESIGN_STRATEGIES",
    "MAX_EPSILON",
    "MEMORY_MODES",
    "bounded_assign",
    "load_bound",
    "sticky_assign",
]

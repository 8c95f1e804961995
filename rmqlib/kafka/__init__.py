"""Models of Apache Kafka's consumer-group assignment, for comparing Kafka's designs with RocketMQ's.

These are our Python models of Kafka, written from a reading of Kafka's Java source, not Kafka itself and not a
translation of its code. They follow the Kafka commit in ``KAFKA_COMMIT`` (trunk of 2024-10-25, between the 3.9 and
4.0 releases); every class names the Java class and file it mirrors, with a link built by :func:`java_url`.

What is here:

* ``RangeAssignor``, ``RoundRobinAssignor``, ``StickyAssignor`` (KIP-54) and ``CooperativeStickyAssignor``
  (KIP-429): the client-side assignors a classic group's leader runs (``rmqlib.kafka.assignors``);
* ``UniformAssignor`` and ``ServerRangeAssignor``: KIP-848's server-side assignors (``rmqlib.kafka.server``);
* ``settled_assignment``: the assignment a group ends with after one rebalance from a previous one, under the
  assignor's protocol (cooperative rounds repeated until nothing is held back);
* ``membership_change``: one join, graceful leave or crash played through the eager, cooperative (KIP-429) and
  KIP-848 consumer protocols, giving each partition's pause, the partitions moved and the duplicates
  (``rmqlib.kafka.protocol``).

The same three protocols also run in simulated time, as group members and a group coordinator driven by the
simulator's clock (``rmqlib.sim.kafka_group``, which imports this package, never the other way round), so that
Kafka's pauses and duplicates are counted exactly as the simulator counts RocketMQ's.

What is simplified: no replica racks (Kafka's ``assign(Map<String, Integer>, ...)`` entry point has none, so the
rack-aware branches never run); the protocols are a deterministic event model with a handful of durations
(``ProtocolTimings``), not a network simulation; topic ids (KIP-848) are replaced by topic names.
"""

from __future__ import annotations

from rmqlib.kafka.assignors import CooperativeStickyAssignor, RangeAssignor, RoundRobinAssignor, StickyAssignor
from rmqlib.kafka.protocol import (
    ChangeOutcome,
    ProtocolTimings,
    RebalanceProtocol,
    membership_change,
    settled_assignment,
)
from rmqlib.kafka.server import ServerRangeAssignor, UniformAssignor
from rmqlib.kafka.types import Subscription, TopicPartition

#: The apache/kafka commit these models were read from.
KAFKA_COMMIT = "1eb7644349cb07139d6a3c1ad1986979647cac99"

#: Where each model's Java twin lives in apache/kafka (pass to :func:`java_url` for a link at KAFKA_COMMIT).
_CLIENTS = "clients/src/main/java/org/apache/kafka/clients/consumer/"
_COORDINATOR = "group-coordinator/src/main/java/org/apache/kafka/coordinator/group/"
JAVA_SOURCES = {
    "TopicPartition": "clients/src/main/java/org/apache/kafka/common/TopicPartition.java",
    "Subscription": _CLIENTS + "ConsumerPartitionAssignor.java",
    "RangeAssignor": _CLIENTS + "RangeAssignor.java",
    "RoundRobinAssignor": _CLIENTS + "RoundRobinAssignor.java",
    "StickyAssignor": _CLIENTS + "StickyAssignor.java",
    "CooperativeStickyAssignor": _CLIENTS + "CooperativeStickyAssignor.java",
    "AbstractStickyAssignor": _CLIENTS + "internals/AbstractStickyAssignor.java",
    "ConsumerCoordinator": _CLIENTS + "internals/ConsumerCoordinator.java",
    "AbstractCoordinator": _CLIENTS + "internals/AbstractCoordinator.java",
    "GroupMetadataManager": _COORDINATOR + "GroupMetadataManager.java",
    "ConsumerMembershipManager": _CLIENTS + "internals/ConsumerMembershipManager.java",
    "ConsumerConfig": _CLIENTS + "ConsumerConfig.java",
    "UniformAssignor": _COORDINATOR + "assignor/UniformAssignor.java",
    "UniformHomogeneousAssignmentBuilder": _COORDINATOR + "assignor/UniformHomogeneousAssignmentBuilder.java",
    "UniformHeterogeneousAssignmentBuilder": _COORDINATOR + "assignor/UniformHeterogeneousAssignmentBuilder.java",
    "ServerRangeAssignor": _COORDINATOR + "assignor/RangeAssignor.java",
    "CurrentAssignmentBuilder": _COORDINATOR + "modern/consumer/CurrentAssignmentBuilder.java",
    "GroupCoordinatorConfig": _COORDINATOR + "GroupCoordinatorConfig.java",
}

#: Registry: a name -> a constructor. Client-side assignors under Kafka's protocol names; the two server-side
#: ones as "uniform" and "server-range" (Kafka calls the latter "range" too, which would clash here).
ASSIGNORS = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "uniform": UniformAssignor,
    "server-range": ServerRangeAssignor,
}

#: Client-side (classic protocol) and server-side (KIP-848) assignor names in ASSIGNORS.
CLIENT_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
SERVER_ASSIGNORS = ("uniform", "server-range")


def java_url(path: str) -> str:
    """A link to ``path`` in apache/kafka at ``KAFKA_COMMIT``."""
    if not isinstance(path, str) or not path or path.startswith("/"):
        raise ValueError(f"path must be a relative path in apache/kafka, got {path!r}")
    return f"https://github.com/apache/kafka/blob/{KAFKA_COMMIT}/{path}"


__all__ = [
    "ASSIGNORS",
    "CLIENT_ASSIGNORS",
    "JAVA_SOURCES",
    "SERVER_ASSIGNORS",
    "KAFKA_COMMIT",
    "ChangeOutcome",
    "CooperativeStickyAssignor",
    "ProtocolTimings",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "ServerRangeAssignor",
    "StickyAssignor",
    "Subscription",
    "TopicPartition",
    "UniformAssignor",
    "java_url",
    "membership_change",
    "settled_assignment",
]

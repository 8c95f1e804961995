"""The client's side of the second heartbeat (``useHeartbeatV2``, off by default): send the subscriptions only to a
broker that has not acknowledged them, and a bare heartbeat otherwise.

Mirrors ``MQClientInstance#sendHeartbeatToBrokerV2`` and ``#sendHeartbeatToAllBrokerV2``
(client/src/main/java/org/apache/rocketmq/client/impl/factory/MQClientInstance.java) and
``HeartbeatData#computeHeartbeatFingerprint``. The broker's side is :mod:`rmqlib.broker.client_manage`.
"""

from __future__ import annotations

from rmqlib.checks import check_bool, check_int, check_list_of, check_str
from rmqlib.client.api import ConsumerData
from rmqlib.protocol import java_string_hash


def heartbeat_fingerprint(consumers: list[ConsumerData]) -> int:
    """A heartbeat's fingerprint: equal for two heartbeats that differ only in their client id and their
    subscriptions' versions, as Java's is (``String.hashCode`` of the heartbeat's JSON with those two blanked). The
    text hashed here is not Java's JSON, so neither is the number; and it is never 0, which a broker would read as a
    first-way heartbeat."""
    consumers = check_list_of(consumers, "consumers", ConsumerData)
    text = repr(
        sorted(
            (
                c.group_name,
                c.consume_type.value,
                c.message_model.value,
                c.consume_from_where.value,
                sorted((s.topic, s.sub_string) for s in c.subscription_data_set),
            )
            for c in consumers
        )
    )
    return java_string_hash(text) or 1


class HeartbeatV2State:
    """What a client instance remembers between second-way heartbeats: the brokers that answered that they support
    it (``brokerSupportV2HeartbeatSet``) and, per broker, the fingerprint it last took with subscriptions and did not
    report changed (``brokerAddrHeartbeatFingerprintTable``)."""

    def __init__(self) -> None:
        self.broker_support_v2: set[str] = set()
        self.broker_fingerprints: dict[str, int] = {}

    def reset(self) -> None:
        """A heartbeat sent because the client's queues changed sends the subscriptions to every broker
        (``sendHeartbeatToAllBrokerV2(isRebalance=true)`` clears the fingerprint table)."""
        self.broker_fingerprints.clear()

    def with_sub(self, addr: str, fingerprint: int) -> bool:
        """Whether the heartbeat to ``addr`` must carry the subscriptions: unless that broker supports the second
        way and last took this very fingerprint."""
        check_str(addr, "addr")
        check_int(fingerprint, "fingerprint")
        return not (addr in self.broker_support_v2 and self.broker_fingerprints.get(addr) == fingerprint)

    def answered(self, addr: str, fingerprint: int, with_sub: bool, support_v2: bool, sub_change: bool) -> None:
        """Take the broker's answer to a heartbeat sent to ``addr``."""
        check_str(addr, "addr")
        check_int(fingerprint, "fingerprint")
        for value, name in ((with_sub, "with_sub"), (support_v2, "support_v2"), (sub_change, "sub_change")):
            check_bool(value, name)
        if not with_sub:
            if sub_change:
                self.broker_fingerprints.pop(addr, None)
            return
        if not support_v2:
            return
        self.broker_support_v2.add(addr)
        if sub_change:
            self.broker_fingerprints.pop(addr, None)
        else:
            self.broker_fingerprints[addr] = fingerprint

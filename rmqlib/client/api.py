"""What the client models ask of brokers, as an injected interface.

Java's client talks to brokers through ``MQClientInstance`` / ``MQClientAPIImpl``
(remoting RPCs, broker lookup by name, route refresh). The models here only
need a handful of answers, so they take any object with the methods of
:class:`ClientBrokerAPI`; the simulator plugs its broker models in, tests use an
in-memory fake. Every call names the broker through ``broker_name`` or the
queue's ``broker_name``; calls that depend on the broker's clock take ``now_ms``.

Failures are exceptions: :class:`OffsetNotFoundError` when a broker has no
offset for the group and queue (Java's ``OffsetNotFoundException`` /
``QUERY_NOT_FOUND``), :class:`BrokerError` (or any exception) for a failed RPC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rmqlib.checks import ArgumentTypeError, check_enum, check_int, check_str
from rmqlib.client.config import ConsumeFromWhere, ConsumeType, MessageModel
from rmqlib.model import MessageQueue
from rmqlib.protocol import RETRY_GROUP_TOPIC_PREFIX as RETRY_GROUP_TOPIC_PREFIX  # "X as X": re-exported
from rmqlib.protocol import SUB_ALL as SUB_ALL
from rmqlib.protocol import SubscriptionData as SubscriptionData
from rmqlib.protocol import retry_topic as retry_topic

# Response codes the pull path reacts to (remoting/.../protocol/ResponseCode.java).
FLOW_CONTROL = 215  # ResponseCode.FLOW_CONTROL (207 is CONSUME_MSG_TIMEOUT)
SUBSCRIPTION_NOT_LATEST = 25  # ResponseCode.SUBSCRIPTION_NOT_LATEST


class BrokerError(Exception):
    """A failed broker RPC; ``code`` is the broker's response code when there is one.

    Mirrors: client/.../exception/MQBrokerException.java
    """

    def __init__(self, message: str = "", code: int | None = None):
        if not isinstance(message, str):
            raise ArgumentTypeError(f"message must be str, got {type(message).__name__}")
        if code is not None:
            code = check_int(code, "code")
        super().__init__(message)
        self.code = code


class OffsetNotFoundError(BrokerError):
    """The broker stores no offset for this group and queue.

    Mirrors: client/.../exception/OffsetNotFoundException.java
    """


class MQClientError(Exception):
    """A client-side failure (Java ``MQClientException``), e.g. no start offset could be computed; ``code`` is
    the response code it carries, when there is one."""

    def __init__(self, message: str = "", code: int | None = None):
        check_str(message, "message", empty=True)
        super().__init__(message)
        self.code = None if code is None else check_int(code, "code")


@dataclass
class ConsumerData:
    """The part of a heartbeat that describes one consumer group member.

    Mirrors: remoting/.../protocol/heartbeat/ConsumerData.java
    """

    group_name: str
    consume_type: ConsumeType
    message_model: MessageModel
    consume_from_where: ConsumeFromWhere
    subscription_data_set: list[SubscriptionData]

    def __post_init__(self) -> None:
        check_str(self.group_name, "group_name")
        self.consume_type = check_enum(self.consume_type, "consume_type", ConsumeType)
        self.message_model = check_enum(self.message_model, "message_model", MessageModel)
        self.consume_from_where = check_enum(self.consume_from_where, "consume_from_where", ConsumeFromWhere)
        subs = self.subscription_data_set
        if not isinstance(subs, list) or not all(isinstance(sub, SubscriptionData) for sub in subs):
            raise ArgumentTypeError(f"subscription_data_set must be a list of SubscriptionData, got {subs!r:.80}")


@runtime_checkable
class ClientBrokerAPI(Protocol):
    """The broker RPCs the consumer-side models use.

    Mirrors: client/.../impl/MQClientAPIImpl.java and the broker look-ups of
    client/.../impl/factory/MQClientInstance.java
    """

    def find_consumer_id_list(self, topic: str, group: str) -> list[str] | None:
        """GET_CONSUMER_LIST_BY_GROUP to one broker of the topic; None when it fails."""

    def lock_batch_mq(
        self, broker_name: str, group: str, client_id: str, mqs: set[MessageQueue], now_ms: int
    ) -> set[MessageQueue]:
        """LOCK_BATCH_MQ: return the subset of ``mqs`` now locked by ``client_id``."""

    def unlock_batch_mq(
        self, broker_name: str, group: str, client_id: str, mqs: set[MessageQueue], now_ms: int
    ) -> None:
        """UNLOCK_BATCH_MQ (sent oneway by the rebalance)."""

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int:
        """QUERY_CONSUMER_OFFSET; raise OffsetNotFoundError when the broker has none."""

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None:
        """UPDATE_CONSUMER_OFFSET (oneway when persisting)."""

    def get_max_offset(self, mq: MessageQueue) -> int:
        """GET_MAX_OFFSET: the queue's next write offset."""

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        """SEARCH_OFFSET_BY_TIMESTAMP."""

    def send_heartbeat(
        self, client_id: str, consumers: list[ConsumerData], now_ms: int, is_rebalance: bool = False
    ) -> None:
        """HEART_BEAT to every broker of the consumer's topics; ``is_rebalance``: sent because the consumer's queues
        changed (``sendHeartbeatToAllBrokerWithLockV2(true)``, which the second way heeds)."""

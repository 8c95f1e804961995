"""QUERY_ASSIGNMENT: the broker allocates a client's queues (RocketMQ 5, ``clientRebalance`` off).

A push consumer whose ``clientRebalance`` is off (a concurrent clustering one) does not run its strategy
itself: it asks one broker of the topic, which sorts the route's queues and the group's members as the
client would, runs AVG or AVG_BY_CIRCLE, and in POP mode may share queues (``popShareQueueNum``). The
client's side is ``RebalanceImpl#getRebalanceResultFromBroker`` in :mod:`rmqlib.client.rebalance`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rmqlib.broker.config import BrokerConfig
from rmqlib.broker.protocol import (
    RETRY_GROUP_TOPIC_PREFIX,
    MessageModel,
    MessageRequestMode,
    ResponseCode,
    coerce_enum,
)
from rmqlib.checks import (
    ArgumentTypeError,
    check_instance,
    check_int,
    check_mapping,
    check_methods,
    check_str,
    check_str_or_none,
)
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
)

#: The strategies QueryAssignmentProcessor can run, by ``getName()``: the client's own classes,
#: as in Java (the broker holds AllocateMessageQueueAveragely and ...AveragelyByCircle instances).
SERVER_SIDE_STRATEGIES: dict[str, Callable] = {
    strategy.name: strategy.allocate
    for strategy in (AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle())
}


def _check_names(topic, group, client_id, strategy_name) -> None:
    check_str(topic, "topic")
    check_str(group, "group")
    check_str(client_id, "client_id", empty=True)
    check_str(strategy_name, "strategy_name", empty=True)


def _as_allocate_fn(strategy) -> Callable:
    if isinstance(strategy, str):
        fn = SERVER_SIDE_STRATEGIES.get(strategy)
        if fn is None:
            raise ValueError(f"strategy: the broker only knows {sorted(SERVER_SIDE_STRATEGIES)}, got {strategy!r}")
        return fn
    if hasattr(strategy, "allocate"):
        return strategy.allocate
    if callable(strategy):
        return strategy
    raise ValueError(f"strategy must be a name, a callable or have .allocate, got {strategy!r}")


@dataclass(frozen=True)
class MessageQueueAssignment:
    """Mirrors: common/.../message/MessageQueueAssignment.java"""

    message_queue: MessageQueue
    mode: MessageRequestMode = MessageRequestMode.PULL


class QueryAssignmentProcessor:
    """QUERY_ASSIGNMENT: the broker computes one client's queues (used when clientRebalance=false).

    ``topic_route`` maps a topic to its readable queues on all brokers (what
    the broker's TopicRouteInfoManager learns from the name server): a
    mapping or a callable ``topic -> Iterable[MessageQueue] | None``.

    Mirrors: broker/.../processor/QueryAssignmentProcessor.java
    """

    def __init__(self, consumer_manager, topic_route, broker_config: BrokerConfig | None = None):
        check_methods(consumer_manager, "consumer_manager", "get_consumer_group_info")
        if not callable(topic_route):
            check_mapping(topic_route, "topic_route")
        if broker_config is not None:
            check_instance(broker_config, "broker_config", BrokerConfig)
        self.consumer_manager = consumer_manager
        self.topic_route = topic_route
        self.broker_config = broker_config or BrokerConfig()
        # (topic, group) -> (mode, pop_share_queue_num); MessageRequestModeManager
        self.message_request_mode_table: dict[tuple[str, str], tuple[MessageRequestMode, int]] = {}

    def _route(self, topic: str):
        if callable(self.topic_route):
            mqs = self.topic_route(topic)
        else:
            mqs = self.topic_route.get(topic)
        return None if mqs is None else set(mqs)

    def set_message_request_mode(self, topic: str, group: str, mode, pop_share_queue_num: int = -1) -> ResponseCode:
        """``mqadmin setConsumeMode``. Retry topics are refused. Mirrors: #setMessageRequestMode"""
        check_str(topic, "topic")
        check_str(group, "group")
        pop_share_queue_num = check_int(pop_share_queue_num, "pop_share_queue_num", -(2**31), 2**31 - 1)
        mode = coerce_enum(MessageRequestMode, mode, "mode")
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            return ResponseCode.NO_PERMISSION
        if self._route(topic) is None:
            return ResponseCode.TOPIC_NOT_EXIST
        self.message_request_mode_table[(topic, group)] = (mode, int(pop_share_queue_num))
        return ResponseCode.SUCCESS

    def get_message_request_mode(self, topic: str, group: str) -> tuple[MessageRequestMode, int]:
        """Stored mode, else retry topics → PULL, else the broker default (PULL, share -1)."""
        check_str(topic, "topic")
        check_str(group, "group")
        stored = self.message_request_mode_table.get((topic, group))
        if stored is not None:
            return stored
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            return MessageRequestMode.PULL, 0
        mode = MessageRequestMode(self.broker_config.default_message_request_mode)
        share = self.broker_config.default_pop_share_queue_num if mode is MessageRequestMode.POP else 0
        return mode, share

    def query_assignment(
        self, topic: str, group: str, client_id: str, strategy_name: str, message_model
    ) -> set[MessageQueueAssignment] | None:
        """The client's assignments with the mode to use, or None ("skip this round"). The arguments come in the
        order of the request's body (QueryAssignmentRequestBody), as the client sends them.

        Mirrors: QueryAssignmentProcessor.java#queryAssignment
        """
        _check_names(topic, group, client_id, strategy_name)
        mode, share = self.get_message_request_mode(topic, group)
        mqs = self.do_load_balance(topic, group, client_id, message_model, strategy_name, mode, share)
        if mqs is None:
            return None
        return {MessageQueueAssignment(mq, mode) for mq in mqs}

    def do_load_balance(
        self,
        topic: str,
        group: str,
        client_id: str,
        message_model,
        strategy_name: str,
        mode=None,
        pop_share_queue_num: int | None = None,
    ) -> set[MessageQueue] | None:
        """Server-side load balance. None = invalid (client keeps its old view); empty = drop all.

        BROADCASTING → every queue. CLUSTERING → sort queues (Java order) and
        the group's client ids (duplicates kept), then AVG / AVG_BY_CIRCLE,
        or :meth:`allocate_for_pop` in POP mode. An unknown strategy name or
        an argument error gives None.

        Mirrors: QueryAssignmentProcessor.java#doLoadBalance
        """
        _check_names(topic, group, client_id, strategy_name)
        message_model = coerce_enum(MessageModel, message_model, "message_model")
        if pop_share_queue_num is not None:
            pop_share_queue_num = check_int(pop_share_queue_num, "pop_share_queue_num")
        if mode is None:
            mode, pop_share_queue_num = self.get_message_request_mode(topic, group)
        elif pop_share_queue_num is None:  # a mode without a share number: the stored (or default) one
            pop_share_queue_num = self.get_message_request_mode(topic, group)[1]
        mode = coerce_enum(MessageRequestMode, mode, "mode")
        if message_model is MessageModel.BROADCASTING:
            return self._route(topic)
        mq_set = self._route(topic)
        if mq_set is None:
            return None
        if not self.broker_config.server_load_balancer_enable:
            return mq_set
        info = self.consumer_manager.get_consumer_group_info(group)
        if info is None:
            return None
        cid_all = java_sorted_cids(info.get_all_client_id())
        mq_all = java_sorted_mqs(mq_set)
        fn = SERVER_SIDE_STRATEGIES.get(strategy_name)
        if fn is None:
            return None
        try:
            if mode is MessageRequestMode.POP:
                result = self.allocate_for_pop(fn, group, client_id, mq_all, cid_all, pop_share_queue_num)
            else:
                result = fn(group, client_id, mq_all, cid_all)
        except ValueError:
            return None
        return set(result)

    @staticmethod
    def allocate_for_pop(
        strategy, consumer_group: str, client_id: str, mq_all: list, cid_all: list, pop_share_queue_num: int
    ) -> list[MessageQueue]:
        """Pop-mode allocation.

        ``pop_share_queue_num`` ≤ 0 or ≥ ``len(cid_all) - 1`` → every client
        gets every queue as ``queueId -1`` ("broker chooses"; one per broker
        once put in a set). Else with no more cids than queues → own share
        plus the shares of the next ``pop_share_queue_num`` cids on the ring.
        Else (more cids than queues) → the single queue ``index mod queues``.

        Mirrors: QueryAssignmentProcessor.java#allocate4Pop
        """
        fn = _as_allocate_fn(strategy)
        check_str_or_none(consumer_group, "consumer_group")
        check_str_or_none(client_id, "client_id")
        pop_share_queue_num = check_int(pop_share_queue_num, "pop_share_queue_num")
        for name, values, cls in (("mq_all", mq_all, MessageQueue), ("cid_all", cid_all, str)):
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise ArgumentTypeError(f"{name} must be a list of {cls.__name__}, got {type(values).__name__}")
        mq_all, cid_all = list(mq_all), list(cid_all)
        for name, values, cls in (("mq_all", mq_all, MessageQueue), ("cid_all", cid_all, str)):
            for item in values:
                if not isinstance(item, cls):
                    raise ArgumentTypeError(f"{name} must hold {cls.__name__}, got {item!r:.80}")
        if pop_share_queue_num <= 0 or pop_share_queue_num >= len(cid_all) - 1:
            return [MessageQueue(mq.topic, mq.broker_name, -1) for mq in mq_all]
        if len(cid_all) <= len(mq_all):
            if not client_id:  # the strategy's own check would call it current_cid
                raise ValueError("client_id is empty (Java: currentCID is empty)")
            result = list(fn(consumer_group, client_id, mq_all, cid_all))
            if client_id in cid_all:
                index = cid_all.index(client_id)
                for _ in range(pop_share_queue_num):
                    index = (index + 1) % len(cid_all)
                    result.extend(fn(consumer_group, cid_all[index], mq_all, cid_all))
            return result
        if not client_id or not client_id.strip():
            raise ValueError("client_id is empty (Java: currentCID is empty)")
        if not mq_all:
            raise ValueError("mq_all is null or mq_all empty")
        if not cid_all:
            raise ValueError("cid_all is null or cid_all empty")
        if client_id not in cid_all:
            return []
        return [mq_all[cid_all.index(client_id) % len(mq_all)]]

"""What to simulate: the cluster, the consumers and their fates, and every timer.

Every timer defaults to RocketMQ's own value and names the Java setting it
models. ``Scenario.validate`` rejects bad input with a ValueError naming the
field before anything runs.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum

from rmqlib.broker.pop_long_polling import POP_POLLING_SIZE
from rmqlib.checks import check_enum
from rmqlib.client.grpc_push import MAX_CACHE_MESSAGE_COUNT
from rmqlib.protocol import MessageModel, SubscriptionData
from rmqlib.proxy import MAX_INVISIBLE_TIME_MILLS, MIN_INVISIBLE_TIME_MILLS_FOR_RECV
from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy, strategy_from_name


class ConsumeMode(StrEnum):
    """How the group's consumers take messages: which Java consume service (and request mode) runs.

    ``CONCURRENT`` is a push consumer with a ``MessageListenerConcurrently``
    (ConsumeMessageConcurrentlyService), ``ORDERLY`` one with a ``MessageListenerOrderly``
    (ConsumeMessageOrderlyService: broker locks, one thread per queue), ``POP`` a push
    consumer whose group the broker serves in ``MessageRequestMode.POP`` (RocketMQ 5).
    """

    CONCURRENT = "CONCURRENT"
    ORDERLY = "ORDERLY"
    POP = "POP"


class ClientKind(StrEnum):
    """Which client the group's members run (``Scenario.client``).

    ``REMOTING`` is the 4.x/5.x Java client of apache/rocketmq (``DefaultMQPushConsumer``), which talks to the
    brokers itself; ``GRPC`` a push consumer of the apache/rocketmq-clients SDKs, which talks to a proxy: it asks the
    proxy for its assignment and receives through it (always popping), and its group is a FIFO group when
    ``consume_mode`` is ``ORDERLY`` (``consumeMessageOrderly`` in the subscription group config). ``GRPC_SIMPLE`` is
    those SDKs' simple consumer (of a standard or a FIFO group): no assignment at all; its application receives in a
    loop, each receive from the next queue of the topic's route in turn, with the scenario's ``simple_*`` settings,
    and acks each message (first extending its invisible time, with ``simple_change_invisible``).
    """

    REMOTING = "REMOTING"
    GRPC = "GRPC"
    GRPC_SIMPLE = "GRPC_SIMPLE"


class LeaveKind(StrEnum):
    """How a consumer process ends (``ConsumerSpec.leave``)."""

    SHUTDOWN = "shutdown"  # graceful: persists offsets, unlocks, unregisters (DefaultMQPushConsumer#shutdown)
    CRASH = "crash"  # the process dies: its TCP connections close, so each broker sees a channel close
    HOST_LOSS = "host_loss"  # the machine vanishes: connections go silent until the inactive-channel scan


# The members by their old names (a module that compares ``scenario.consume_mode == POP`` keeps working).
CLUSTERING, BROADCASTING = MessageModel.CLUSTERING, MessageModel.BROADCASTING
CONCURRENT, ORDERLY, POP = ConsumeMode.CONCURRENT, ConsumeMode.ORDERLY, ConsumeMode.POP
SHUTDOWN, CRASH, HOST_LOSS = LeaveKind.SHUTDOWN, LeaveKind.CRASH, LeaveKind.HOST_LOSS
REMOTING, GRPC, GRPC_SIMPLE = ClientKind.REMOTING, ClientKind.GRPC, ClientKind.GRPC_SIMPLE


@dataclass(frozen=True)
class ConsumerSpec:
    """One consumer process: its client id, when it starts and how it ends (if it does).

    ``leave`` is a :class:`LeaveKind` or its value: ``"shutdown"`` (graceful: persists offsets, unlocks,
    unregisters), ``"crash"`` (the process dies; its TCP connections close, so each broker sees
    a channel close) or ``"host_loss"`` (the machine vanishes; connections go
    silent and brokers notice only at the inactive-channel scan).

    ``topics`` names the scenario's topics it subscribes to (None: every one), and ``subscription`` is the tag
    expression it subscribes each of them with (``consumer.subscribe(topic, "TagA || TagB")``; ``"*"``: every
    tag). Members of one group are meant to agree on both; see :attr:`Scenario.subscriptions_agree`.

    ``strategy`` is the allocation strategy this member runs (an ``AllocateMessageQueueStrategy`` or a Java name, as
    for ``Scenario.strategy``); None: the scenario's. Members of one group are meant to run the same one; see
    :attr:`Scenario.strategies_agree`.

    ``client_id`` names the member in the run's records, and is the id it sends to brokers unless
    ``same_client_id_as`` names another member: then this process computes that member's id (Java builds it from
    the host's IP and ``instanceName``, ``ClientConfig#buildMQClientId``), and brokers see one id on two channels.
    """

    client_id: str
    join_ms: int = 0
    leave_ms: int | None = None
    leave: LeaveKind = LeaveKind.SHUTDOWN
    subscription: str = "*"
    topics: tuple[str, ...] | None = None
    same_client_id_as: str | None = None
    strategy: AllocateMessageQueueStrategy | str | None = None
    consume_time_ms: float | None = None

    @property
    def sent_client_id(self) -> str:
        """The client id this process sends to brokers (``MQClientInstance#clientId``)."""
        return self.same_client_id_as or self.client_id

    def __post_init__(self) -> None:
        if type(self.leave) is not LeaveKind:
            object.__setattr__(self, "leave", check_enum(self.leave, "ConsumerSpec.leave", LeaveKind))
        if isinstance(self.topics, list):
            object.__setattr__(self, "topics", tuple(self.topics))
        if isinstance(self.strategy, str):
            try:
                object.__setattr__(self, "strategy", strategy_from_name(self.strategy))
            except ValueError as error:
                raise ValueError(f"ConsumerSpec.strategy: {error}") from None


@dataclass(frozen=True)
class TopicChange:
    """At ``at_ms`` an operator gives ``broker`` new queue counts for ``topic`` (``mqadmin updateTopic``).

    The broker registers its new topic config with the name server at once; clients see it at their next
    route poll (``poll_name_server_interval_ms``). A broker that held no queue of the topic joins its route;
    ``0, 0`` takes it out (``mqadmin deleteTopic`` for that broker: its config and the name server's route).
    Read and write counts may differ: producers send to write queues
    ``0..write-1``, consumers share read queues ``0..read-1``. ``topic`` defaults to the scenario's first.
    Until the producers' next route poll, the broker refuses their sends to a queue past both new counts (the
    send fails) and, after ``0, 0``, to the topic (the send is retried on another broker): see
    :mod:`rmqlib.broker.send_check`. A Pop group's pops and acks are checked against the broker's new counts at
    once (its assignments name brokers, not queues); a new broker waits for the routes, as with pull.
    """

    at_ms: int
    broker: str
    read_queue_nums: int
    write_queue_nums: int
    topic: str | None = None


@dataclass(frozen=True)
class BrokerOutage:
    """``broker`` stops at ``down_ms`` and, unless ``up_ms`` is None, starts again at ``up_ms``.

    A stopped process closes its connections, so the name server drops the broker from every route at
    once, and a producer's send to it is refused and retried on another broker. ``silent=True`` models a host
    that vanishes instead: the name server notices only when the broker's last registration is older than
    120 s (RouteInfoManager's scan, every 5 s); until the producers' next route poll after that, a send to it
    waits out its 3 s timeout and fails, and pulls to it wait for theirs (30 s). A restarted broker keeps its
    messages and committed offsets but starts with an empty consumer registry, lock table and held pulls.
    """

    broker: str
    down_ms: int
    up_ms: int | None = None
    silent: bool = False


@dataclass(frozen=True)
class Scenario:
    """A consumer group over simulated time. Times are in milliseconds."""

    name: str = "custom"
    brokers: tuple[str, ...] = ("broker-a", "broker-b")
    topics: dict[str, int] = field(default_factory=lambda: {"TopicTest": 4})  # read queues per broker
    consumers: tuple[ConsumerSpec, ...] = field(
        default_factory=lambda: tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}") for i in range(1, 5))
    )
    consumer_group: str = "GID_sim"
    strategy: AllocateMessageQueueStrategy | str = field(default_factory=AllocateMessageQueueAveragely)
    message_model: MessageModel = MessageModel.CLUSTERING  # or its name, "CLUSTERING" or "BROADCASTING"
    consume_mode: ConsumeMode = ConsumeMode.CONCURRENT  # or its name: "CONCURRENT", "ORDERLY" or "POP"
    client: ClientKind = ClientKind.REMOTING  # or its name: "REMOTING", "GRPC" or "GRPC_SIMPLE" (see ClientKind)
    produce_rate_per_queue: float = 10.0  # messages per second on every queue of every topic
    consume_time_ms: float = 1.0  # listener time per message
    duration_ms: int = 120_000  # producers run from 0 to duration_ms
    drain_ms: int = 180_000  # then the run goes on this long so that everything is consumed
    retry_queue_nums: int = 1  # SubscriptionGroupConfig.retryQueueNums: %RETRY%<group> queues per broker

    # Client timers
    rebalance_interval_ms: int = 20_000  # rocketmq.client.rebalance.waitInterval
    rebalance_min_interval_ms: int = 1_000  # rocketmq.client.rebalance.minInterval (retry when unbalanced)
    heartbeat_interval_ms: int = 30_000  # ClientConfig.heartbeatBrokerInterval
    # ClientConfig.useHeartbeatV2 (com.rocketmq.heartbeat.v2): a broker that took this fingerprint gets no subscriptions
    use_heartbeat_v2: bool = False
    offset_persist_interval_ms: int = 5_000  # ClientConfig.persistConsumerOffsetInterval
    lock_renew_interval_ms: int = 20_000  # rocketmq.client.rebalance.lockInterval
    client_lock_expiry_ms: int = 30_000  # rocketmq.client.rebalance.lockMaxLiveTime
    unlock_delay_ms: int = 20_000  # rocketmq.client.unlockDelayTimeMills (force-unlock a dropped orderly queue)
    pull_batch_size: int = 32  # DefaultMQPushConsumer.pullBatchSize
    consume_threads: int = 20  # DefaultMQPushConsumer.consumeThreadMin/Max
    suspend_timeout_ms: int = 15_000  # DefaultMQPushConsumerImpl.BROKER_SUSPEND_MAX_TIME_MILLIS
    pop_invisible_time_ms: int = 60_000  # DefaultMQPushConsumer.popInvisibleTime
    pop_batch_nums: int = 32  # DefaultMQPushConsumer.popBatchNums
    # A GRPC_SIMPLE member's application loop (as SimpleConsumerExample): receive(16, 15 s) with a 30 s await
    simple_max_message_num: int = 16  # receive's maxMessageNum (the broker pops at most 32)
    simple_invisible_ms: int = 15_000  # receive's invisibleDuration (the proxy takes 10 s to 12 h)
    simple_await_ms: int = 30_000  # SimpleConsumerBuilder#setAwaitDuration (the proxy holds a receive 5 s to 20 s)
    # before processing each message, changeInvisibleDuration(message, simple_invisible_ms); skip it if that fails
    simple_change_invisible: bool = False
    simple_threads: int = 1  # application threads, each running the receive loop on the one SimpleConsumer
    # A GRPC push member's cache, shared among the queues it receives from (PushConsumerBuilder#setMaxCacheMessageCount)
    push_max_cache_message_count: int = MAX_CACHE_MESSAGE_COUNT

    # Broker timers and switches
    real_time_notify: bool = True  # BrokerConfig.realTimeNotifyConsumerChange
    long_polling: bool = True  # BrokerConfig.longPollingEnable
    long_polling_check_ms: int = 5_000  # PullRequestHoldService: hard-coded 5 s scan
    short_polling_ms: int = 1_000  # BrokerConfig.shortPollingTimeMills
    broker_lock_expiry_ms: int = 60_000  # rocketmq.broker.rebalance.lockMaxLiveTime
    channel_expired_ms: int = 120_000  # BrokerConfig.channelExpiredTimeout
    channel_scan_ms: int = 10_000  # ClientHousekeepingService: scan every 10 s
    # A dashboard (or mqadmin consumerProgress) asks the group's brokers for its GET_CONSUME_STATS this often, from
    # the start (each master, or its slave while the master is out of the route); 0: nobody asks. What
    # SimResult.consume_stats holds
    consume_stats_interval_ms: int = 0
    # The topic the dashboard names (``mqadmin consumerProgress -t``, a dashboard's page of one topic); "": none, the
    # group's own view (``consumerProgress -g`` alone, a dashboard's list of groups), which shows the topics the group
    # has committed offsets of
    consume_stats_topic: str = ""
    pop_revive_interval_ms: int = 1_000  # BrokerConfig.reviveInterval
    # BrokerConfig.defaultPopShareQueueNum: -1 (or 0, or at least the group's size - 1) gives every member every
    # queue of each broker (queueId -1, the broker picks); n gives each its own share and the next n members'
    pop_share_queue_num: int = -1
    # BrokerConfig.popPollingSize: a broker holds a pop only while it holds no more than this many of the same queue
    # and group; the next one is answered POLLING_FULL at once (through the proxy: TOO_MANY_REQUESTS)
    pop_polling_size: int = POP_POLLING_SIZE

    # Producers tag each queue's messages with these in turn (TagA, TagB, TagA, ...); () sends them untagged
    message_tags: tuple[str, ...] = ()
    # Producers send every message with an order id (producer.send(msg, SelectMessageQueueByHash, id), as ordered
    # messages are sent): ids 0 .. order_keys-1 in turn, each to the write queue its hash picks in the producers'
    # current route, tried there only; 0 sends unordered messages, spread evenly over the write queues
    order_keys: int = 0

    # The network
    rpc_latency_ms: int = 1  # one-way delay of every request and response

    produce_batch_ms: int = 100  # producers send each queue's due messages in bursts this far apart
    produce_start_ms: int = 0  # producers start here (let a jittered group settle first)
    start_jitter_ms: int = 0  # each consumer starts up to this much after its join_ms (seeded)
    consume_time_dist: str = "fixed"  # "fixed", or "exponential" with mean consume_time_ms (seeded)

    # Route changes (each client polls the name server every poll_name_server_interval_ms)
    topic_changes: tuple[TopicChange, ...] = ()
    outages: tuple[BrokerOutage, ...] = ()
    # Broker names (of ``brokers``) that run a slave: broker id 1, acting master off. It never stops, holds a copy
    # of its master's messages, and while its master is away its broker name keeps its queues in the routes.
    slaves: tuple[str, ...] = ()
    slave_read_enable: bool = False  # BrokerConfig.slaveReadEnable: off, a slave refuses every pull
    poll_name_server_interval_ms: int = 30_000  # ClientConfig.pollNameServerInterval
    register_name_server_period_ms: int = 30_000  # BrokerConfig.registerNameServerPeriod

    def __post_init__(self):
        if isinstance(self.strategy, str):  # a Java strategy name, e.g. "CONSISTENT_HASH"
            try:
                object.__setattr__(self, "strategy", strategy_from_name(self.strategy))
            except ValueError as error:
                raise ValueError(f"Scenario.strategy: {error}") from None
        for name, kind in (("message_model", MessageModel), ("consume_mode", ConsumeMode), ("client", ClientKind)):
            value = getattr(self, name)
            if type(value) is not kind:  # a name, e.g. from the command line's --set consume_mode=ORDERLY
                object.__setattr__(self, name, check_enum(value, f"Scenario.{name}", kind))
        if isinstance(self.consumers, list):
            object.__setattr__(self, "consumers", tuple(self.consumers))
        for name in ("brokers", "topic_changes", "outages", "slaves", "message_tags"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        self.validate()

    def replace(self, **changes) -> Scenario:
        """A copy with some fields changed (validated)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown Scenario field(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    @property
    def end_ms(self) -> int:
        return self.duration_ms + self.drain_ms

    @property
    def pops(self) -> bool:
        """The group pops (Pop mode, or a gRPC group): brokers lend it messages, so a committed offset says nothing
        about what was consumed (the recorder checks none)."""
        return self.consume_mode is ConsumeMode.POP or self.through_proxy

    @property
    def through_proxy(self) -> bool:
        """The members are clients of the gRPC SDKs (push or simple), which reach the brokers through a proxy."""
        return self.client is not ClientKind.REMOTING

    @property
    def all_brokers(self) -> tuple[str, ...]:
        """``brokers``, then every broker that only a topic change brings in, in order of appearance."""
        return tuple(dict.fromkeys(self.brokers + tuple(c.broker for c in self.topic_changes)))

    @property
    def changes_routes(self) -> bool:
        """True when a topic change or an outage alters the name server's routes during the run."""
        return bool(self.topic_changes or self.outages)

    @property
    def narrows_subscriptions(self) -> bool:
        """True when producers tag their messages, or a consumer subscribes to only some topics or some tags: pulls
        may then be filtered or refused, and some messages may be meant for nobody."""
        return bool(self.message_tags) or any(s.subscription != "*" or s.topics is not None for s in self.consumers)

    @property
    def subscriptions_agree(self) -> bool:
        """True when every consumer subscribes to the same topics with the same tags, as RocketMQ expects of a
        group."""
        return len({(frozenset(self.topics_of(spec)), _tags_of(spec.subscription)) for spec in self.consumers}) == 1

    @property
    def client_ids_distinct(self) -> bool:
        """True when no two members send the same client id (none has ``same_client_id_as``), as RocketMQ expects
        of a group."""
        return all(spec.same_client_id_as is None for spec in self.consumers)

    @property
    def strategies_agree(self) -> bool:
        """True when every member runs the same allocation strategy (compared by ``repr``), as RocketMQ expects of a
        group."""
        return len({repr(self.strategy_of(spec)) for spec in self.consumers}) == 1

    def strategy_of(self, spec: ConsumerSpec) -> AllocateMessageQueueStrategy:
        """The allocation strategy consumer ``spec`` runs: its own, else the scenario's."""
        return self.strategy if spec.strategy is None else spec.strategy  # type: ignore[return-value]

    def consume_time_of(self, spec: ConsumerSpec) -> float:
        """The listener time per message of consumer ``spec``: its own, else the scenario's."""
        return self.consume_time_ms if spec.consume_time_ms is None else spec.consume_time_ms

    def topics_of(self, spec: ConsumerSpec) -> tuple[str, ...]:
        """The topics consumer ``spec`` subscribes to."""
        return tuple(self.topics) if spec.topics is None else spec.topics

    def tags_taken(self, topic: str) -> frozenset[str] | None:
        """The tags of ``topic`` that some consumer subscribes to; None when one takes every tag (``"*"``), empty
        when none subscribes to the topic. A message no consumer takes is not meant for the group
        (:attr:`SimResult.unsubscribed`)."""
        tag_sets = [_tags_of(s.subscription) for s in self.consumers if topic in self.topics_of(s)]
        if any(not tags for tags in tag_sets):
            return None
        return frozenset().union(*tag_sets)

    def expected_messages(self) -> float:
        """About how many messages the producers send in the run (what the message limit is checked on)."""
        queues = sum(self.topics.values()) * len(self.brokers)
        return self.produce_rate_per_queue * queues * (self.duration_ms - self.produce_start_ms) / 1000

    def validate(self) -> Scenario:
        """Raise ValueError naming the first bad field; return self when all is well."""
        _need(
            isinstance(self.brokers, tuple)
            and self.brokers
            and all(isinstance(b, str) and b for b in self.brokers)
            and len(set(self.brokers)) == len(self.brokers),
            "brokers",
            "a tuple of distinct non-empty names",
        )
        _need(isinstance(self.topics, dict) and self.topics, "topics", "a non-empty dict topic -> queues per broker")
        for topic, queues in self.topics.items():
            _need(
                isinstance(topic, str) and topic and not topic.startswith("%"),
                "topics",
                f"topic names must be non-empty and not start with '%' (got {topic!r})",
            )
            _need(_is_int(queues) and queues >= 1, "topics", f"{topic!r} needs >= 1 queue per broker, got {queues!r}")
        _need(_is_int(self.start_jitter_ms) and self.start_jitter_ms >= 0, "start_jitter_ms", "an int >= 0")
        _need(_is_int(self.duration_ms) and self.duration_ms > 0, "duration_ms", "an int > 0")
        _need(_is_int(self.drain_ms) and self.drain_ms >= 0, "drain_ms", "an int >= 0")
        _need(isinstance(self.consumers, tuple) and self.consumers, "consumers", "a non-empty tuple of ConsumerSpec")
        seen = set()
        for spec in self.consumers:
            _need(isinstance(spec, ConsumerSpec), "consumers", f"ConsumerSpec items, got {type(spec).__name__}")
            _need(isinstance(spec.client_id, str) and spec.client_id, "consumers", "non-empty client ids")
            _need(spec.client_id not in seen, "consumers", f"distinct client ids ({spec.client_id!r} repeats)")
            seen.add(spec.client_id)
            _need(
                _is_int(spec.join_ms) and 0 <= spec.join_ms and spec.join_ms + self.start_jitter_ms < self.end_ms,
                "consumers",
                f"{spec.client_id}: join_ms must be >= 0 and join_ms + start_jitter_ms before the end of the run "
                f"({self.end_ms}), got {spec.join_ms!r}",
            )
            _need(
                type(spec.leave) is LeaveKind,
                "consumers",
                f"{spec.client_id}: leave must be a LeaveKind, got {spec.leave!r}",
            )
            _need(
                spec.topics is None
                or (
                    isinstance(spec.topics, tuple)
                    and spec.topics
                    and all(topic in self.topics for topic in spec.topics)
                    and len(set(spec.topics)) == len(spec.topics)
                ),
                "consumers",
                f"{spec.client_id}: topics must be None or a tuple of distinct topics of the scenario, "
                f"got {spec.topics!r}",
            )
            _need(
                isinstance(spec.subscription, str) and _parses(spec.subscription),
                "consumers",
                f"{spec.client_id}: subscription must be a tag expression ('*' or 'TagA || TagB'), "
                f"got {spec.subscription!r}",
            )
            _need(
                spec.consume_time_ms is None or (_is_number(spec.consume_time_ms) and spec.consume_time_ms >= 0),
                "consumers",
                f"{spec.client_id}: consume_time_ms must be None or a finite number >= 0, got {spec.consume_time_ms!r}",
            )
            if spec.leave_ms is not None:
                _need(
                    _is_int(spec.leave_ms) and spec.join_ms + self.start_jitter_ms < spec.leave_ms < self.end_ms,
                    "consumers",
                    f"{spec.client_id}: leave_ms must be after join_ms + start_jitter_ms and before "
                    f"the end of the run ({self.end_ms}), got {spec.leave_ms!r}",
                )
        for spec in self.consumers:
            if spec.same_client_id_as is None:
                continue
            twin = next((other for other in self.consumers if other.client_id == spec.same_client_id_as), None)
            _need(
                twin is not None and twin is not spec and twin.same_client_id_as is None,
                "consumers",
                f"{spec.client_id}: same_client_id_as must name another member that sends its own client id, "
                f"got {spec.same_client_id_as!r}",
            )
            _need(
                self.client is ClientKind.REMOTING and self.message_model is MessageModel.CLUSTERING,
                "consumers",
                f"{spec.client_id}: a shared client id is modelled for a CLUSTERING group of the remoting client "
                "only (a gRPC client's id is unique by construction; a broadcasting member's id names its local "
                "offset file, which two processes on one host would share)",
            )
        _need(isinstance(self.consumer_group, str) and self.consumer_group, "consumer_group", "a non-empty str")
        _need(
            isinstance(self.strategy, AllocateMessageQueueStrategy),
            "strategy",
            f"an AllocateMessageQueueStrategy, got {type(self.strategy).__name__}",
        )
        _need(type(self.message_model) is MessageModel, "message_model", "a MessageModel")
        _need(type(self.consume_mode) is ConsumeMode, "consume_mode", "a ConsumeMode")
        _need(
            not (self.consume_mode is ConsumeMode.POP and self.message_model is MessageModel.BROADCASTING),
            "consume_mode",
            "POP works in CLUSTERING only (RocketMQ ignores it for broadcasting)",
        )
        _need(type(self.client) is ClientKind, "client", "a ClientKind")
        if self.through_proxy:
            _need(
                self.consume_mode is not ConsumeMode.POP,
                "consume_mode",
                "a gRPC group always pops: CONCURRENT (a standard group) or ORDERLY (a FIFO group)",
            )
            _need(self.message_model is MessageModel.CLUSTERING, "message_model", "CLUSTERING with the gRPC client")
            _need(
                not self.slaves,
                "client",
                "GRPC is not modelled with slaves (the proxy never fails either)",
            )
        _need(
            _is_int(self.simple_max_message_num) and 1 <= self.simple_max_message_num <= 32,
            "simple_max_message_num",
            "an int from 1 to 32 (a broker pops at most 32 messages)",
        )
        _need(
            _is_int(self.simple_invisible_ms)
            and MIN_INVISIBLE_TIME_MILLS_FOR_RECV <= self.simple_invisible_ms <= MAX_INVISIBLE_TIME_MILLS,
            "simple_invisible_ms",
            "an int from 10,000 (10 s) to 43,200,000 (12 h): the proxy refuses a receive's invisible time outside",
        )
        _need(_is_int(self.simple_await_ms) and self.simple_await_ms > 0, "simple_await_ms", "an int > 0")
        _need(
            _is_int(self.simple_threads) and 1 <= self.simple_threads <= MAX_SIMPLE_THREADS,
            "simple_threads",
            f"an int from 1 to {MAX_SIMPLE_THREADS}",
        )
        _need(
            _is_int(self.consume_stats_interval_ms) and self.consume_stats_interval_ms >= 0,
            "consume_stats_interval_ms",
            "an int >= 0 (0: no dashboard asks)",
        )
        _need(
            isinstance(self.consume_stats_topic, str)
            and (self.consume_stats_topic == "" or self.consume_stats_topic in self.topics),
            "consume_stats_topic",
            "one of the scenario's topics, or \"\" (the group's own view)",
        )
        _need(
            _is_int(self.push_max_cache_message_count) and self.push_max_cache_message_count > 0,
            "push_max_cache_message_count",
            "an int > 0 (PushConsumerBuilder#setMaxCacheMessageCount refuses the rest)",
        )
        for spec in self.consumers:
            _need(
                spec.strategy is None or isinstance(spec.strategy, AllocateMessageQueueStrategy),
                "consumers",
                f"{spec.client_id}: strategy must be None, a strategy name or an AllocateMessageQueueStrategy, "
                f"got {type(spec.strategy).__name__}",
            )
        names = {self.strategy_of(spec).name for spec in self.consumers} | {self.strategy.name}
        _need(
            self.consume_mode is not ConsumeMode.POP or names <= {"AVG", "AVG_BY_CIRCLE"},
            "strategy",
            "POP needs AVG or AVG_BY_CIRCLE: the broker's QueryAssignmentProcessor knows no other strategy "
            f"and would assign nothing (got {', '.join(sorted(names - {'AVG', 'AVG_BY_CIRCLE'}))})",
        )
        _need(
            _is_number(self.produce_rate_per_queue) and self.produce_rate_per_queue >= 0,
            "produce_rate_per_queue",
            "a finite number >= 0",
        )
        _need(_is_number(self.consume_time_ms) and self.consume_time_ms >= 0, "consume_time_ms", "a finite number >= 0")
        _need(_is_int(self.duration_ms) and self.duration_ms > 0, "duration_ms", "an int > 0")
        _need(_is_int(self.drain_ms) and self.drain_ms >= 0, "drain_ms", "an int >= 0")
        _need(_is_int(self.retry_queue_nums) and self.retry_queue_nums >= 1, "retry_queue_nums", "an int >= 1")
        for name in (
            "rebalance_interval_ms",
            "rebalance_min_interval_ms",
            "heartbeat_interval_ms",
            "offset_persist_interval_ms",
            "lock_renew_interval_ms",
            "client_lock_expiry_ms",
            "unlock_delay_ms",
            "pull_batch_size",
            "consume_threads",
            "suspend_timeout_ms",
            "pop_invisible_time_ms",
            "pop_batch_nums",
            "long_polling_check_ms",
            "short_polling_ms",
            "broker_lock_expiry_ms",
            "channel_expired_ms",
            "channel_scan_ms",
            "pop_revive_interval_ms",
            "produce_batch_ms",
        ):
            value = getattr(self, name)
            _need(_is_int(value) and value > 0, name, f"a timer or size > 0, got {value!r}")
        _need(_is_int(self.rpc_latency_ms) and self.rpc_latency_ms >= 0, "rpc_latency_ms", "an int >= 0")
        _need(
            _is_int(self.produce_start_ms) and 0 <= self.produce_start_ms < self.duration_ms,
            "produce_start_ms",
            "an int in [0, duration_ms)",
        )
        _need(_is_int(self.start_jitter_ms) and self.start_jitter_ms >= 0, "start_jitter_ms", "an int >= 0")
        _need(self.consume_time_dist in ("fixed", "exponential"), "consume_time_dist", "'fixed' or 'exponential'")
        _need(self.pop_batch_nums <= 32, "pop_batch_nums", "at most 32 (DefaultMQPushConsumer.popBatchNums)")
        _need(
            _is_int(self.pop_share_queue_num) and -1 <= self.pop_share_queue_num <= MAX_CONSUMERS,
            "pop_share_queue_num",
            f"an int in -1..{MAX_CONSUMERS}",
        )
        _need(_is_int(self.pop_polling_size) and self.pop_polling_size >= 0, "pop_polling_size", "an int >= 0")
        for name in (
            "real_time_notify",
            "long_polling",
            "slave_read_enable",
            "use_heartbeat_v2",
            "simple_change_invisible",
        ):
            value = getattr(self, name)
            _need(value is True or value is False, name, f"True or False, got {value!r}")
        _need(isinstance(self.name, str), "name", f"a str, got {self.name!r}")
        _need(
            _is_name(self.consumer_group, GROUP_MAX_LENGTH),
            "consumer_group",
            f"a group name of 1..{GROUP_MAX_LENGTH} characters from {NAME_CHARACTERS}, got {self.consumer_group!r}",
        )
        for topic in self.topics:
            _need(
                _is_name(topic, TOPIC_MAX_LENGTH),
                "topics",
                f"topic names of 1..{TOPIC_MAX_LENGTH} characters from {NAME_CHARACTERS}, got {topic!r}",
            )
        _need(
            isinstance(self.message_tags, tuple)
            and len(self.message_tags) <= MAX_TAGS
            and all(_is_name(tag, TOPIC_MAX_LENGTH) for tag in self.message_tags)
            and len(set(self.message_tags)) == len(self.message_tags),
            "message_tags",
            f"a tuple of at most {MAX_TAGS} distinct tags of 1..{TOPIC_MAX_LENGTH} characters from {NAME_CHARACTERS}, "
            f"got {self.message_tags!r}",
        )
        _need(
            _is_int(self.order_keys) and 0 <= self.order_keys <= MAX_ORDER_KEYS,
            "order_keys",
            f"an int in 0..{MAX_ORDER_KEYS}, got {self.order_keys!r}",
        )
        _need(1 <= self.pull_batch_size <= 1024, "pull_batch_size", "in 1..1024 (DefaultMQPushConsumer checks it)")
        _need(self.consume_threads <= 1000, "consume_threads", "at most 1000 (DefaultMQPushConsumer checks it)")
        self._validate_route_changes()
        self._validate_limits()
        return self

    def _validate_route_changes(self) -> None:
        _need(isinstance(self.topic_changes, tuple), "topic_changes", "a tuple of TopicChange")
        _need(isinstance(self.outages, tuple), "outages", "a tuple of BrokerOutage")
        _need(
            _is_int(self.poll_name_server_interval_ms) and self.poll_name_server_interval_ms > 0,
            "poll_name_server_interval_ms",
            "an int > 0",
        )
        _need(
            _is_int(self.register_name_server_period_ms) and self.register_name_server_period_ms > 0,
            "register_name_server_period_ms",
            "an int > 0",
        )
        for change in self.topic_changes:
            _need(isinstance(change, TopicChange), "topic_changes", f"TopicChange items, got {change!r}")
            _need(
                _is_int(change.at_ms) and 0 <= change.at_ms < self.end_ms,
                "topic_changes",
                f"at_ms must be an int in [0, {self.end_ms}), got {change.at_ms!r}",
            )
            _need(
                isinstance(change.broker, str) and change.broker,
                "topic_changes",
                f"broker must be a non-empty name, got {change.broker!r}",
            )
            _need(
                change.topic is None or change.topic in self.topics,
                "topic_changes",
                f"topic must be one of the scenario's topics, got {change.topic!r}",
            )
            for what in ("read_queue_nums", "write_queue_nums"):
                value = getattr(change, what)
                _need(
                    _is_int(value) and 0 <= value <= MAX_QUEUES_PER_BROKER,
                    "topic_changes",
                    f"{what} must be an int in 0..{MAX_QUEUES_PER_BROKER}, got {value!r}",
                )
        brokers = self.all_brokers
        _need(len(brokers) <= MAX_BROKERS, "brokers", f"at most {MAX_BROKERS} brokers, with topic changes")
        _need(
            isinstance(self.slaves, tuple)
            and all(name in self.brokers for name in self.slaves)
            and len(set(self.slaves)) == len(self.slaves),
            "slaves",
            f"a tuple of distinct names from brokers {self.brokers}, got {self.slaves!r}",
        )
        _need(
            self.slaves or not self.slave_read_enable,
            "slave_read_enable",
            "reads from a slave need one: name a broker in slaves",
        )
        _need(
            not self.slaves or self.consume_mode is not ConsumeMode.POP,
            "slaves",
            "not modelled with POP (a pop goes to the master only, and a slave's pop service is not modelled)",
        )
        _need(
            not any(change.broker in self.slaves for change in self.topic_changes),
            "slaves",
            "a topic change on a broker with a slave is not modelled (the slave copies topic configs once a minute)",
        )
        spans: dict[str, list[tuple[int, int]]] = {}
        for outage in self.outages:
            _need(isinstance(outage, BrokerOutage), "outages", f"BrokerOutage items, got {outage!r}")
            _need(outage.broker in brokers, "outages", f"broker must be one of {brokers}, got {outage.broker!r}")
            _need(
                _is_int(outage.down_ms) and 0 < outage.down_ms < self.end_ms,
                "outages",
                f"down_ms must be an int in (0, {self.end_ms}), got {outage.down_ms!r}",
            )
            _need(
                outage.up_ms is None or (_is_int(outage.up_ms) and outage.down_ms < outage.up_ms < self.end_ms),
                "outages",
                f"up_ms must be None or an int in ({outage.down_ms}, {self.end_ms}), got {outage.up_ms!r}",
            )
            _need(
                outage.silent is True or outage.silent is False,
                "outages",
                f"silent must be True or False, got {outage.silent!r}",
            )
            up = self.end_ms if outage.up_ms is None else outage.up_ms
            for start, end in spans.get(outage.broker, []):
                _need(
                    up <= start or end <= outage.down_ms,
                    "outages",
                    f"outages of {outage.broker} overlap ({start}..{end} and {outage.down_ms}..{up})",
                )
            spans.setdefault(outage.broker, []).append((outage.down_ms, up))

    def _validate_limits(self) -> None:
        """What keeps a run bounded in time and memory (the simulator's limits, stated in the error)."""
        _need(
            self.end_ms <= MAX_SPAN_MS,
            "drain_ms" if self.drain_ms > self.duration_ms else "duration_ms",
            f"duration_ms + drain_ms at most {MAX_SPAN_MS} ms (one simulated day), got {self.end_ms}",
        )
        _need(len(self.consumers) <= MAX_CONSUMERS, "consumers", f"at most {MAX_CONSUMERS} consumers")
        _need(len(self.brokers) <= MAX_BROKERS, "brokers", f"at most {MAX_BROKERS} brokers")
        _need(len(self.topics) <= MAX_TOPICS, "topics", f"at most {MAX_TOPICS} topics")
        _need(
            all(n <= MAX_QUEUES_PER_BROKER for n in self.topics.values()),
            "topics",
            f"at most {MAX_QUEUES_PER_BROKER} queues per broker",
        )
        _need(
            self.retry_queue_nums <= MAX_QUEUES_PER_BROKER,
            "retry_queue_nums",
            f"at most {MAX_QUEUES_PER_BROKER}, got {self.retry_queue_nums}",
        )
        messages = self.expected_messages()
        _need(
            messages <= MAX_MESSAGES,
            "produce_rate_per_queue",
            f"at most {MAX_MESSAGES:,} messages a run (rate x queues x producing time), this asks for {messages:,.0f}",
        )
        if self.message_model is MessageModel.BROADCASTING:  # every member consumes (and the run records) each
            _need(
                messages * len(self.consumers) <= MAX_MESSAGES,
                "produce_rate_per_queue",
                f"a BROADCASTING run delivers every message to every member: at most {MAX_MESSAGES:,} deliveries "
                f"(messages x members), this asks for {messages * len(self.consumers):,.0f}",
            )
        brokers, consumers = len(self.all_brokers), len(self.consumers)
        timers = {
            "rebalance_interval_ms": consumers,
            "heartbeat_interval_ms": consumers,
            "offset_persist_interval_ms": consumers,
            "produce_batch_ms": brokers,
            "long_polling_check_ms" if self.long_polling else "short_polling_ms": brokers,
            "channel_scan_ms": brokers,
        }
        if self.consume_mode is ConsumeMode.ORDERLY:
            timers["lock_renew_interval_ms"] = consumers
        if self.consume_mode is ConsumeMode.POP:
            timers["pop_revive_interval_ms"] = brokers
        if self.changes_routes:
            timers["poll_name_server_interval_ms"] = consumers + 1
        if self.consume_stats_interval_ms:
            timers["consume_stats_interval_ms"] = brokers
        wakeups = sum(self.end_ms / getattr(self, name) * count for name, count in timers.items())
        busiest = max(timers, key=lambda name: self.end_ms / getattr(self, name) * timers[name])
        _need(
            wakeups <= MAX_TIMER_WAKEUPS,
            busiest,
            f"the timers would wake {wakeups:,.0f} times; at most {MAX_TIMER_WAKEUPS:,} a run "
            f"(lengthen {busiest} or shorten the run)",
        )


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _tags_of(expression: str) -> frozenset[str]:
    """The tags a subscription expression takes; empty for ``"*"`` (every tag)."""
    return SubscriptionData("topic", expression).tags_set


def _parses(expression: str) -> bool:
    try:
        _tags_of(expression)
    except ValueError:
        return False
    return True


def _is_name(value, max_length: int) -> bool:
    return isinstance(value, str) and 0 < len(value) <= max_length and _NAME.fullmatch(value) is not None


# What one run may ask for: enough for every lesson, and a run stays within about a minute and a few GB.
MAX_SPAN_MS = 86_400_000  # duration_ms + drain_ms: one simulated day
MAX_CONSUMERS, MAX_BROKERS, MAX_TOPICS, MAX_QUEUES_PER_BROKER = 2_048, 64, 64, 1_024
MAX_MESSAGES = 5_000_000  # produced in one run
MAX_TIMER_WAKEUPS = 20_000_000  # periodic timer firings in one run, over all consumers and brokers
MAX_TAGS = 64  # message_tags
MAX_SIMPLE_THREADS = 64  # Scenario.simple_threads: receive loops per simple consumer
MAX_ORDER_KEYS = 1_000_000  # Scenario.order_keys
# Topic and group names: the characters TopicValidator allows (no '%' or '|' here: those mark system names)
NAME_CHARACTERS = "letters, digits, '_' and '-'"
_NAME = re.compile(r"[A-Za-z0-9_-]+")
TOPIC_MAX_LENGTH, GROUP_MAX_LENGTH = 127, 255  # TopicValidator.TOPIC_MAX_LENGTH; Validators.CHARACTER_MAX_LENGTH


def _need(ok, field_name: str, what: str) -> None:
    if not ok:
        raise ValueError(f"Scenario.{field_name}: {what}")

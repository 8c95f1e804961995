"""What to simulate: the cluster, the consumers and their fates, and every timer.

Every timer defaults to RocketMQ's own value and names the Java setting it
models. ``Scenario.validate`` rejects bad input with a ValueError naming the
field before anything runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from rmqlib.strategies import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy, strategy_from_name

CLUSTERING, BROADCASTING = "CLUSTERING", "BROADCASTING"
CONCURRENT, ORDERLY, POP = "CONCURRENT", "ORDERLY", "POP"
SHUTDOWN, CRASH, HOST_LOSS = "shutdown", "crash", "host_loss"


@dataclass(frozen=True)
class ConsumerSpec:
    """One consumer process: its client id, when it starts and how it ends (if it does).

    ``leave`` is ``"shutdown"`` (graceful: persists offsets, unlocks, unregisters),
    ``"crash"`` (the process dies; its TCP connections close, so each broker sees
    a channel close) or ``"host_loss"`` (the machine vanishes; connections go
    silent and brokers notice only at the inactive-channel scan).
    """

    client_id: str
    join_ms: int = 0
    leave_ms: int | None = None
    leave: str = SHUTDOWN


@dataclass(frozen=True)
class Scenario:
    """A consumer group over simulated time. Times are in milliseconds."""

    name: str = "custom"
    brokers: tuple[str, ...] = ("broker-a", "broker-b")
    topics: dict[str, int] = field(default_factory=lambda: {"TopicTest": 4})  # read queues per broker
    consumers: tuple[ConsumerSpec, ...] = field(
        default_factory=lambda: tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}") for i in range(1, 5)))
    consumer_group: str = "GID_sim"
    strategy: AllocateMessageQueueStrategy | str = field(default_factory=AllocateMessageQueueAveragely)
    message_model: str = CLUSTERING
    consume_mode: str = CONCURRENT
    produce_rate_per_queue: float = 10.0  # messages per second on every queue of every topic
    consume_time_ms: float = 1.0  # listener time per message
    duration_ms: int = 120_000  # producers run from 0 to duration_ms
    drain_ms: int = 180_000  # then the run goes on this long so that everything is consumed
    retry_queue_nums: int = 1  # SubscriptionGroupConfig.retryQueueNums: %RETRY%<group> queues per broker

    # Client timers
    rebalance_interval_ms: int = 20_000  # rocketmq.client.rebalance.waitInterval
    rebalance_min_interval_ms: int = 1_000  # rocketmq.client.rebalance.minInterval (retry when unbalanced)
    heartbeat_interval_ms: int = 30_000  # ClientConfig.heartbeatBrokerInterval
    offset_persist_interval_ms: int = 5_000  # ClientConfig.persistConsumerOffsetInterval
    lock_renew_interval_ms: int = 20_000  # rocketmq.client.rebalance.lockInterval
    client_lock_expiry_ms: int = 30_000  # rocketmq.client.rebalance.lockMaxLiveTime
    pull_batch_size: int = 32  # DefaultMQPushConsumer.pullBatchSize
    consume_threads: int = 20  # DefaultMQPushConsumer.consumeThreadMin/Max
    suspend_timeout_ms: int = 15_000  # DefaultMQPushConsumerImpl.BROKER_SUSPEND_MAX_TIME_MILLIS
    pop_invisible_time_ms: int = 60_000  # DefaultMQPushConsumer.popInvisibleTime
    pop_batch_nums: int = 32  # DefaultMQPushConsumer.popBatchNums

    # Broker timers and switches
    real_time_notify: bool = True  # BrokerConfig.realTimeNotifyConsumerChange
    long_polling: bool = True  # BrokerConfig.longPollingEnable
    long_polling_check_ms: int = 5_000  # PullRequestHoldService: hard-coded 5 s scan
    short_polling_ms: int = 1_000  # BrokerConfig.shortPollingTimeMills
    broker_lock_expiry_ms: int = 60_000  # rocketmq.broker.rebalance.lockMaxLiveTime
    channel_expired_ms: int = 120_000  # BrokerConfig.channelExpiredTimeout
    channel_scan_ms: int = 10_000  # ClientHousekeepingService: scan every 10 s
    pop_revive_interval_ms: int = 1_000  # BrokerConfig.reviveInterval

    # The network
    rpc_latency_ms: int = 1  # one-way delay of every request and response

    produce_batch_ms: int = 100  # producers send each queue's due messages in bursts this far apart
    produce_start_ms: int = 0  # producers start here (let a jittered group settle first)
    start_jitter_ms: int = 0  # each consumer starts up to this much after its join_ms (seeded)
    consume_time_dist: str = "fixed"  # "fixed", or "exponential" with mean consume_time_ms (seeded)

    def __post_init__(self):
        if isinstance(self.strategy, str):  # a Java strategy name, e.g. "CONSISTENT_HASH"
            try:
                object.__setattr__(self, "strategy", strategy_from_name(self.strategy))
            except ValueError as error:
                raise ValueError(f"Scenario.strategy: {error}") from None
        if isinstance(self.consumers, list):
            object.__setattr__(self, "consumers", tuple(self.consumers))
        if isinstance(self.brokers, list):
            object.__setattr__(self, "brokers", tuple(self.brokers))
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

    def validate(self) -> Scenario:
        """Raise ValueError naming the first bad field; return self when all is well."""
        _need(isinstance(self.brokers, tuple) and self.brokers and all(isinstance(b, str) and b for b in self.brokers)
              and len(set(self.brokers)) == len(self.brokers), "brokers", "a tuple of distinct non-empty names")
        _need(isinstance(self.topics, dict) and self.topics, "topics", "a non-empty dict topic -> queues per broker")
        for topic, queues in self.topics.items():
            _need(isinstance(topic, str) and topic and not topic.startswith("%"), "topics",
                  f"topic names must be non-empty and not start with '%' (got {topic!r})")
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
            _need(_is_int(spec.join_ms) and 0 <= spec.join_ms and spec.join_ms + self.start_jitter_ms < self.end_ms,
                  "consumers",
                  f"{spec.client_id}: join_ms must be >= 0 and join_ms + start_jitter_ms before the end of the run "
                  f"({self.end_ms}), got {spec.join_ms!r}")
            if spec.leave_ms is not None:
                _need(spec.leave in (SHUTDOWN, CRASH, HOST_LOSS), "consumers",
                      f"{spec.client_id}: leave must be shutdown, crash or host_loss, got {spec.leave!r}")
                _need(_is_int(spec.leave_ms) and spec.join_ms + self.start_jitter_ms < spec.leave_ms < self.end_ms,
                      "consumers", f"{spec.client_id}: leave_ms must be after join_ms + start_jitter_ms and before "
                      f"the end of the run ({self.end_ms}), got {spec.leave_ms!r}")
        _need(isinstance(self.consumer_group, str) and self.consumer_group, "consumer_group", "a non-empty str")
        _need(isinstance(self.strategy, AllocateMessageQueueStrategy), "strategy",
              f"an AllocateMessageQueueStrategy, got {type(self.strategy).__name__}")
        _need(self.message_model in (CLUSTERING, BROADCASTING), "message_model", "CLUSTERING or BROADCASTING")
        _need(self.consume_mode in (CONCURRENT, ORDERLY, POP), "consume_mode", "CONCURRENT, ORDERLY or POP")
        _need(not (self.consume_mode == POP and self.message_model == BROADCASTING), "consume_mode",
              "POP works in CLUSTERING only (RocketMQ ignores it for broadcasting)")
        _need(self.consume_mode != POP or self.strategy.name in ("AVG", "AVG_BY_CIRCLE"), "strategy",
              "POP needs AVG or AVG_BY_CIRCLE: the broker's QueryAssignmentProcessor knows no other strategy "
              f"and would assign nothing (got {self.strategy.name})")
        _need(_is_number(self.produce_rate_per_queue) and self.produce_rate_per_queue >= 0,
              "produce_rate_per_queue", "a number >= 0")
        _need(_is_number(self.consume_time_ms) and self.consume_time_ms >= 0, "consume_time_ms", "a number >= 0")
        _need(_is_int(self.duration_ms) and self.duration_ms > 0, "duration_ms", "an int > 0")
        _need(_is_int(self.drain_ms) and self.drain_ms >= 0, "drain_ms", "an int >= 0")
        _need(_is_int(self.retry_queue_nums) and self.retry_queue_nums >= 1, "retry_queue_nums", "an int >= 1")
        for name in ("rebalance_interval_ms", "rebalance_min_interval_ms", "heartbeat_interval_ms",
                     "offset_persist_interval_ms", "lock_renew_interval_ms", "client_lock_expiry_ms",
                     "pull_batch_size", "consume_threads", "suspend_timeout_ms", "pop_invisible_time_ms",
                     "pop_batch_nums", "long_polling_check_ms", "short_polling_ms", "broker_lock_expiry_ms",
                     "channel_expired_ms", "channel_scan_ms", "pop_revive_interval_ms", "produce_batch_ms"):
            value = getattr(self, name)
            _need(_is_int(value) and value > 0, name, f"a timer or size > 0, got {value!r}")
        _need(_is_int(self.rpc_latency_ms) and self.rpc_latency_ms >= 0, "rpc_latency_ms", "an int >= 0")
        _need(_is_int(self.produce_start_ms) and 0 <= self.produce_start_ms < self.duration_ms, "produce_start_ms",
              "an int in [0, duration_ms)")
        _need(_is_int(self.start_jitter_ms) and self.start_jitter_ms >= 0, "start_jitter_ms", "an int >= 0")
        _need(self.consume_time_dist in ("fixed", "exponential"), "consume_time_dist", "'fixed' or 'exponential'")
        _need(self.pop_batch_nums <= 32, "pop_batch_nums", "at most 32 (DefaultMQPushConsumer.popBatchNums)")
        return self


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _need(ok, field_name: str, what: str) -> None:
    if not ok:
        raise ValueError(f"Scenario.{field_name}: {what}")

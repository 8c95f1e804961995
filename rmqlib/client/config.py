"""Push-consumer settings (DefaultMQPushConsumer defaults and checkConfig ranges).

Defaults are those of ``DefaultMQPushConsumer`` (and ``ClientConfig`` where the
push consumer copies a value from it); ranges are those its ``checkConfig``
enforces at start, raised here as ValueError naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from rmqlib.checks import ArgumentTypeError, check_enum
from rmqlib.protocol import ConsumeFromWhere as ConsumeFromWhere  # "X as X": re-exported, the settings name them
from rmqlib.protocol import ConsumeType as ConsumeType
from rmqlib.protocol import MessageModel as MessageModel

MIN_POP_INVISIBLE_TIME = 5000  # DefaultMQPushConsumerImpl.java
MAX_POP_INVISIBLE_TIME = 300000  # DefaultMQPushConsumerImpl.java

# (field, low, high) ranges of DefaultMQPushConsumerImpl.java#checkConfig; None = unbounded.
_RANGES = (
    ("consume_thread_min", 1, 1000),
    ("consume_thread_max", 1, 1000),
    ("consume_concurrently_max_span", 1, 65535),
    ("pull_threshold_for_queue", 1, 65535),
    ("pull_threshold_size_for_queue", 1, 1024),
    ("pull_interval", 0, 65535),
    ("consume_message_batch_max_size", 1, 1024),
    ("pull_batch_size", 1, 1024),
    ("pull_batch_size_in_bytes", 1, None),
    ("pop_invisible_time", MIN_POP_INVISIBLE_TIME, MAX_POP_INVISIBLE_TIME),
    ("pop_batch_nums", 1, 32),
    ("pop_threshold_for_queue", 1, None),
    ("suspend_current_queue_time_millis", 0, None),
    ("consume_timeout", 1, None),
    ("pull_time_delay_mills_when_exception", 0, None),
)


@dataclass
class PushConsumerConfig:
    """The settings of a push consumer that the rebalance and pull models read.

    Mirrors: client/.../consumer/DefaultMQPushConsumer.java (fields and defaults)

    Units follow Java: thresholds in messages, ``*_size_*`` thresholds in MiB,
    ``consume_timeout`` in minutes, times in ms. ``consume_timestamp_ms`` replaces
    Java's ``yyyyMMddHHmmss`` string; None means "consumer creation time minus
    30 minutes", Java's default. ``message_queue_changed`` overwrites
    ``pull_threshold_for_queue`` / ``pull_threshold_size_for_queue`` when a
    per-topic threshold is set, as Java does.

    The ranges are ``DefaultMQPushConsumerImpl#checkConfig``'s, plus a few Java leaves unchecked: a
    ``consume_timeout`` below 1 (Java's consume service then fails to start, its clean-up scheduled with a period
    of 0 minutes), ``max_reconsume_times`` below -1 (Java would send every failed message straight to the dead
    letter queue), a negative suspend time or pull delay, and ``pull_batch_size_in_bytes`` or
    ``pop_threshold_for_queue`` below 1; each is refused naming the field.
    """

    message_model: MessageModel = MessageModel.CLUSTERING
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET
    consume_timestamp_ms: int | None = None
    consume_thread_min: int = 20
    consume_thread_max: int = 20
    consume_concurrently_max_span: int = 2000
    pull_threshold_for_queue: int = 1000
    pull_threshold_size_for_queue: int = 100  # MiB
    pull_threshold_for_topic: int = -1
    pull_threshold_size_for_topic: int = -1  # MiB
    pull_interval: int = 0
    consume_message_batch_max_size: int = 1
    pull_batch_size: int = 32
    pull_batch_size_in_bytes: int = 256 * 1024
    max_reconsume_times: int = -1  # -1: 16 concurrent, Integer.MAX_VALUE orderly
    suspend_current_queue_time_millis: int = 1000
    consume_timeout: int = 15  # minutes
    client_rebalance: bool = True
    pop_threshold_for_queue: int = 96
    pop_invisible_time: int = 60000
    pop_batch_nums: int = 32
    post_subscription_when_pull: bool = False
    #: ClientConfig.pullTimeDelayMillsWhenException, copied into the push consumer impl
    #: (whose own field initialiser of 3000 is thus never effective).
    pull_time_delay_mills_when_exception: int = 1000

    def __post_init__(self) -> None:
        self.message_model = check_enum(self.message_model, "message_model", MessageModel)
        self.consume_from_where = check_enum(self.consume_from_where, "consume_from_where", ConsumeFromWhere)
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("client_rebalance", "post_subscription_when_pull"):
                if not isinstance(v, bool):
                    raise ArgumentTypeError(f"{f.name} must be bool, got {v!r}")
            elif f.name in ("message_model", "consume_from_where"):
                continue
            elif f.name == "consume_timestamp_ms" and v is None:
                continue
            elif isinstance(v, bool) or not isinstance(v, int):
                raise ArgumentTypeError(f"{f.name} must be int, got {v!r}")
        for name, lo, hi in _RANGES:
            v = getattr(self, name)
            if v < lo or (hi is not None and v > hi):
                raise ValueError(f"{name} out of range [{lo}, {hi if hi is not None else 'inf'}]: {v}")
        if self.consume_thread_min > self.consume_thread_max:
            raise ValueError(
                f"consume_thread_min ({self.consume_thread_min}) is larger than "
                f"consume_thread_max ({self.consume_thread_max})"
            )
        if self.pull_threshold_for_topic != -1 and not 1 <= self.pull_threshold_for_topic <= 6553500:
            raise ValueError(
                f"pull_threshold_for_topic out of range [1, 6553500] (or -1): {self.pull_threshold_for_topic}"
            )
        if self.pull_threshold_size_for_topic != -1 and not 1 <= self.pull_threshold_size_for_topic <= 102400:
            raise ValueError(
                f"pull_threshold_size_for_topic out of range [1, 102400] (or -1): {self.pull_threshold_size_for_topic}"
            )
        if self.max_reconsume_times < -1:
            raise ValueError(f"max_reconsume_times must be >= -1, got {self.max_reconsume_times}")

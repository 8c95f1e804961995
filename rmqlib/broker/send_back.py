"""Where a failed message goes: the retry topic after a delay, or the dead-letter queue.

Mirrors: broker/.../processor/AbstractSendMessageProcessor.java#consumerSendMsgBack (CONSUMER_SEND_MSG_BACK),
with the delay levels of store/.../config/MessageStoreConfig.java (``messageDelayLevel``) and the cap the
commit log applies to a level above the last (CommitLog.java).

A concurrent consumer sends a message it could not consume back to the broker. The broker stores a copy
in ``%RETRY%<group>`` with ``reconsumeTimes + 1``, to be delivered after the delay of level
``3 + reconsumeTimes`` (unless the consumer asked for a level). Once the message has been reconsumed
``maxReconsumeTimes`` times (16 by default for concurrent consumers), the copy goes to ``%DLQ%<group>``
instead, where no consumer reads it until someone does by hand.
"""

from __future__ import annotations

from typing import NamedTuple

from rmqlib.checks import ArgumentTypeError, check_int
from rmqlib.protocol import retry_topic

#: MessageStoreConfig.messageDelayLevel: level k (1-based) waits the k-th of these.
MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
DELAY_LEVEL_MILLIS: tuple[int, ...] = tuple(int(word[:-1]) * _UNIT_MS[word[-1]] for word in MESSAGE_DELAY_LEVEL.split())
MAX_DELAY_LEVEL = len(DELAY_LEVEL_MILLIS)
#: The first retry waits level 3 (10 s): AbstractSendMessageProcessor uses ``3 + reconsumeTimes``.
FIRST_RETRY_DELAY_LEVEL = 3
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
#: The largest ``max_reconsume_times`` :func:`retry_timeline` lists (one entry per delivery, so this bounds it).
#: The consumer's own checkConfig allows at most 16 for concurrent consumers by default; 10,000 is far past any use.
MAX_TIMELINE_RECONSUME_TIMES = 10_000


def dlq_topic(consumer_group: str) -> str:
    """``%DLQ%<group>`` (MixAll.java#getDLQTopic)."""
    if not isinstance(consumer_group, str):
        raise ArgumentTypeError(f"consumer_group must be str, got {type(consumer_group).__name__}")
    return DLQ_GROUP_TOPIC_PREFIX + consumer_group


def delay_level_millis(level: int) -> int:
    """How long a message of delay level ``level`` waits; a level above the last waits the last (2 h)."""
    if isinstance(level, bool) or not isinstance(level, int):
        raise ArgumentTypeError(f"level must be an int, got {type(level).__name__}")
    if level < 1:
        raise ValueError(f"level must be >= 1, got {level}")
    return DELAY_LEVEL_MILLIS[min(level, MAX_DELAY_LEVEL) - 1]


class SendBack(NamedTuple):
    """What the broker stored for one CONSUMER_SEND_MSG_BACK."""

    topic: str  # %RETRY%<group> or %DLQ%<group>
    reconsume_times: int  # the copy's reconsumeTimes (the original's + 1)
    delay_level: int  # 0 for the dead-letter queue (delivered to nobody)
    delay_ms: int  # how long until a consumer of the retry topic can get it (0 for the DLQ)

    @property
    def dead(self) -> bool:
        return self.topic.startswith(DLQ_GROUP_TOPIC_PREFIX)


def consumer_send_msg_back(
    consumer_group: str, reconsume_times: int, delay_level: int = 0, max_reconsume_times: int = 16
) -> SendBack:
    """The broker's handling of a message sent back by a consumer.

    ``reconsume_times`` is the failed message's count so far (0 the first time); ``delay_level`` is the
    level the consumer asked for (0: let the broker choose, ``3 + reconsume_times``; negative: straight
    to the dead-letter queue); ``max_reconsume_times`` comes with the request (16 for a concurrent
    consumer unless configured).
    """
    for name, value in (
        ("reconsume_times", reconsume_times),
        ("delay_level", delay_level),
        ("max_reconsume_times", max_reconsume_times),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentTypeError(f"{name} must be an int, got {type(value).__name__}")
    if reconsume_times < 0 or max_reconsume_times < 0:
        raise ValueError("reconsume_times and max_reconsume_times must be >= 0")
    if not isinstance(consumer_group, str) or not consumer_group:
        raise (ValueError if isinstance(consumer_group, str) else ArgumentTypeError)(
            f"consumer_group must be a non-empty str, got {consumer_group!r}"
        )
    if reconsume_times >= max_reconsume_times or delay_level < 0:
        return SendBack(dlq_topic(consumer_group), reconsume_times + 1, 0, 0)
    level = delay_level or FIRST_RETRY_DELAY_LEVEL + reconsume_times
    return SendBack(retry_topic(consumer_group), reconsume_times + 1, level, delay_level_millis(level))


class Attempt(NamedTuple):
    """One delivery of a message that keeps failing."""

    number: int  # 0: the first delivery, 1: the first retry, ...
    at_ms: int  # when it is delivered, counted from the first delivery (consume time ignored)
    topic: str  # where it was delivered from


def retry_timeline(consumer_group: str, max_reconsume_times: int = 16, delay_level: int = 0) -> list[Attempt]:
    """Every delivery of a concurrent consumer's message that always fails, then where it ends.

    The last entry is the dead-letter queue (``topic`` = ``%DLQ%<group>``), reached when the broker
    refuses another retry. ``delay_level`` is what the listener asks for each time (0: the default).
    ``max_reconsume_times`` may be at most :data:`MAX_TIMELINE_RECONSUME_TIMES` (the list has one entry
    per delivery).
    """
    check_int(max_reconsume_times, "max_reconsume_times", 0, MAX_TIMELINE_RECONSUME_TIMES)
    consumer_send_msg_back(consumer_group, 0, delay_level, max_reconsume_times)  # the other checks, up front
    attempts = [Attempt(0, 0, "the original topic")]
    at, times = 0, 0
    while True:
        back = consumer_send_msg_back(consumer_group, times, delay_level, max_reconsume_times)
        if back.dead:
            attempts.append(Attempt(back.reconsume_times, at, back.topic))
            return attempts
        at += back.delay_ms
        times = back.reconsume_times
        attempts.append(Attempt(times, at, back.topic))


__all__ = [
    "DELAY_LEVEL_MILLIS",
    "DLQ_GROUP_TOPIC_PREFIX",
    "FIRST_RETRY_DELAY_LEVEL",
    "MAX_DELAY_LEVEL",
    "MAX_TIMELINE_RECONSUME_TIMES",
    "MESSAGE_DELAY_LEVEL",
    "Attempt",
    "SendBack",
    "consumer_send_msg_back",
    "delay_level_millis",
    "dlq_topic",
    "retry_timeline",
]

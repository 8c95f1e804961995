"""A message that keeps failing, replayed on the client models: how often it comes back, and where it ends.

* :func:`concurrent_retry_timeline` -- a concurrent consumer sends the message back each time; the broker
  (:func:`rmqlib.broker.send_back.consumer_send_msg_back`) delays it by level ``3 + reconsumeTimes`` in
  ``%RETRY%<group>`` until ``maxReconsumeTimes`` (16), then puts it in ``%DLQ%<group>``.
* :func:`orderly_retry_timeline` -- an orderly consumer keeps the message and retries it in place every
  ``suspendCurrentQueueTimeMillis`` (1 s), holding up the queue, until ``maxReconsumeTimes`` (unbounded by
  default); then it sends it back, and the broker moves it to the dead-letter queue. Each step runs the real
  :func:`~rmqlib.client.consume.process_consume_result_orderly` on a real :class:`ProcessQueue`.
"""

from __future__ import annotations

from rmqlib.broker.send_back import Attempt, dlq_topic, retry_timeline
from rmqlib.client.consume import (
    DEFAULT_MAX_RECONSUME_TIMES_CONCURRENTLY,
    ConsumeOrderlyStatus,
    process_consume_result_orderly,
)
from rmqlib.client.message import Message
from rmqlib.client.offset_store import LocalFileOffsetStore
from rmqlib.client.process_queue import ProcessQueue
from rmqlib.model import MessageQueue

#: DefaultMQPushConsumer.suspendCurrentQueueTimeMillis: an orderly queue's pause before a local retry.
SUSPEND_CURRENT_QUEUE_TIME_MILLIS = 1000


def concurrent_retry_timeline(
    consumer_group: str = "GID_demo",
    max_reconsume_times: int = DEFAULT_MAX_RECONSUME_TIMES_CONCURRENTLY,
    delay_level: int = 0,
) -> list[Attempt]:
    """Every delivery of a concurrently consumed message that always fails, and the dead-letter queue at the end."""
    return retry_timeline(consumer_group, max_reconsume_times, delay_level)


def orderly_retry_timeline(
    consumer_group: str = "GID_demo",
    max_reconsume_times: int = -1,
    suspend_current_queue_time_millis: int = SUSPEND_CURRENT_QUEUE_TIME_MILLIS,
    limit: int = 20,
) -> list[Attempt]:
    """Deliveries of an orderly message that always fails (at most ``limit``), and the DLQ if it gets there.

    ``max_reconsume_times`` -1 is Java's default for orderly consumers: Integer.MAX_VALUE, so the
    timeline stops at ``limit`` with the message still blocking its queue.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an int >= 1, got {limit!r}")
    mq = MessageQueue("TopicTest", "broker-a", 0)
    pq = ProcessQueue(now_ms=0)
    pq.put_message([Message(topic=mq.topic, queue_id=0, queue_offset=0, body_size=1)])
    store = LocalFileOffsetStore(consumer_group)
    attempts: list[Attempt] = []
    at = 0
    while len(attempts) < limit:
        batch = pq.take_messages(1, now_ms=at)
        attempts.append(Attempt(len(attempts), at, mq.topic))
        out = process_consume_result_orderly(
            pq,
            mq,
            batch,
            ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT,
            offset_store=store,
            max_reconsume_times=max_reconsume_times,
            suspend_current_queue_time_millis=suspend_current_queue_time_millis,
        )
        if out.sent_back:  # out of local retries: sent back with reconsumeTimes > max, so the broker dead-letters it
            attempts.append(Attempt(len(attempts), at, dlq_topic(consumer_group)))
            return attempts
        at += out.resubmit_delay_ms or 0
    return attempts


__all__ = ["SUSPEND_CURRENT_QUEUE_TIME_MILLIS", "concurrent_retry_timeline", "orderly_retry_timeline"]

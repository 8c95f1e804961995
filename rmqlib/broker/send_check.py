"""Whether a broker takes a producer's message for a topic's queue, or refuses it.

Mirrors: broker/.../processor/AbstractSendMessageProcessor.java#msgCheck, the two rules that depend on the topic's
queue counts: a topic the broker has no config for is refused with ``TOPIC_NOT_EXIST``, and a queue id at or above
both counts (``Math.max(writeQueueNums, readQueueNums)``) with ``INVALID_PARAMETER``. So a send to a queue the read
count still covers is taken even after the write count shrank, while a queue beyond both counts refuses it.

Java may instead create a missing topic on the first send when the broker runs with ``autoCreateTopicEnable``;
this model is a broker with that switch off, as production brokers are run.
"""

from __future__ import annotations

from collections.abc import Mapping

from rmqlib.broker.protocol import ResponseCode
from rmqlib.checks import check_int, check_mapping, check_str


def msg_check(topic_config: Mapping[str, tuple[int, int]], topic: str, queue_id: int) -> ResponseCode:
    """The broker's answer to a send of ``topic`` to queue ``queue_id``: ``SUCCESS``, ``TOPIC_NOT_EXIST`` or
    ``INVALID_PARAMETER``. ``topic_config``: what the broker registers, topic -> (read queues, write queues)."""
    check_mapping(topic_config, "topic_config")
    check_str(topic, "topic")
    check_int(queue_id, "queue_id", lo=0)
    return _msg_check_trusted(topic_config, topic, queue_id)


def _msg_check_trusted(topic_config: Mapping[str, tuple[int, int]], topic: str, queue_id: int) -> ResponseCode:
    """:func:`msg_check` for a caller whose arguments are known good (the simulator's producers): no checks."""
    queue_nums = topic_config.get(topic)
    if queue_nums is None:
        return ResponseCode.TOPIC_NOT_EXIST
    read, write = queue_nums
    return ResponseCode.SUCCESS if queue_id < max(write, read) else ResponseCode.INVALID_PARAMETER

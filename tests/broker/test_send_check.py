"""The broker's check of a send against the topic's queue counts (AbstractSendMessageProcessor#msgCheck), and the
producer's rule for which refusals it retries."""

import pytest

from rmqlib.broker.protocol import ResponseCode
from rmqlib.broker.send_check import msg_check
from rmqlib.checks import ArgumentTypeError
from rmqlib.client.producer import RETRY_RESPONSE_CODES

CONFIG = {"TopicTest": (2, 4), "Narrow": (4, 1)}  # topic -> (read queues, write queues)


@pytest.mark.parametrize(
    "topic, queue_id, code",
    [
        ("TopicTest", 0, ResponseCode.SUCCESS),
        ("TopicTest", 3, ResponseCode.SUCCESS),  # past the read count, inside the write count: taken, never read
        ("TopicTest", 4, ResponseCode.INVALID_PARAMETER),
        ("Narrow", 3, ResponseCode.SUCCESS),  # past the write count, inside the read count: still taken
        ("Narrow", 4, ResponseCode.INVALID_PARAMETER),
        ("Gone", 0, ResponseCode.TOPIC_NOT_EXIST),
    ],
)
def test_a_queue_below_both_counts_takes_the_message(topic, queue_id, code):
    assert msg_check(CONFIG, topic, queue_id) is code


def test_the_producer_retries_a_missing_topic_but_not_an_illegal_queue():
    assert ResponseCode.TOPIC_NOT_EXIST in RETRY_RESPONSE_CODES
    assert ResponseCode.INVALID_PARAMETER not in RETRY_RESPONSE_CODES


@pytest.mark.parametrize(
    "args, error, name",
    [
        (([("TopicTest", (2, 4))], "TopicTest", 0), ArgumentTypeError, "topic_config"),
        ((CONFIG, 7, 0), ArgumentTypeError, "topic"),
        ((CONFIG, "TopicTest", -1), ValueError, "queue_id"),
        ((CONFIG, "TopicTest", "0"), ArgumentTypeError, "queue_id"),
    ],
)
def test_bad_arguments_are_named(args, error, name):
    with pytest.raises(error, match=name):
        msg_check(*args)

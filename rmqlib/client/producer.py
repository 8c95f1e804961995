"""What a producer does when a synchronous send fails, and how an ordered send picks its queue.

Mirrors: client/.../producer/DefaultMQProducer.java (``retryTimesWhenSendFailed``, ``retryResponseCodes``) and
client/.../impl/producer/DefaultMQProducerImpl.java#sendDefaultImpl: a send is tried at most
``1 + RETRY_TIMES_WHEN_SEND_FAILED`` times, each retry on a queue of another broker where the route has one. A
refused connection is always retried; a broker's answer only when its code is one of :data:`RETRY_RESPONSE_CODES`
(any other code, ``INVALID_PARAMETER`` say, fails the send at once).

A send with a ``MessageQueueSelector`` (``producer.send(msg, selector, arg)``, how ordered messages are sent:
DefaultMQProducerImpl#sendSelectImpl) asks the selector for one queue of the producer's current write queues and
is tried on that queue only: no retry elsewhere, so while that queue's broker is down the send fails.
:class:`SelectMessageQueueByHash` is the selector RocketMQ ships for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rmqlib.broker.protocol import ResponseCode
from rmqlib.checks import check_each, check_instance
from rmqlib.model import MessageQueue
from rmqlib.protocol import java_string_hash

RETRY_TIMES_WHEN_SEND_FAILED = 2  # DefaultMQProducer.retryTimesWhenSendFailed
RETRY_RESPONSE_CODES = frozenset(
    {
        ResponseCode.TOPIC_NOT_EXIST,
        ResponseCode.SERVICE_NOT_AVAILABLE,
        ResponseCode.SYSTEM_ERROR,
        ResponseCode.SYSTEM_BUSY,
        ResponseCode.NO_PERMISSION,
        ResponseCode.NO_BUYER_ID,
        ResponseCode.NOT_IN_CURRENT_UNIT,
        ResponseCode.GO_AWAY,
    }
)


_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def java_hash_code(arg: int | str) -> int:
    """``arg.hashCode()`` of the object a selector gets: a str as a Java ``String``; an int as a Java ``Integer``
    (itself) when it fits in 32 bits, else as a ``Long`` (its two halves xor-ed, as a signed int)."""
    if isinstance(arg, str):
        return java_string_hash(arg)
    if isinstance(arg, bool) or not isinstance(arg, int):
        raise TypeError(f"arg must be an int or a str, got {type(arg).__name__}")
    if _INT_MIN <= arg <= _INT_MAX:
        return arg
    if not -(1 << 63) <= arg < (1 << 63):
        raise ValueError(f"arg must fit in a Java long, got {arg!r}")
    bits = arg & 0xFFFF_FFFF_FFFF_FFFF
    folded = (bits ^ (bits >> 32)) & 0xFFFF_FFFF
    return folded - (1 << 32) if folded > _INT_MAX else folded


class SelectMessageQueueByHash:
    """The queue at ``hashCode(arg) % len(mqs)`` (a negative remainder made positive): one order id, one queue, as
    long as the producer's list of write queues stays the same; when it changes, most order ids move.
    Mirrors: client/.../producer/selector/SelectMessageQueueByHash.java"""

    def select(self, mqs: Sequence[MessageQueue], msg: object, arg: int | str) -> MessageQueue:
        """One of ``mqs`` (the producer's write queues, in its route's order) for a message sent with ``arg``;
        ``msg`` is unused, as in Java."""
        queues: list[MessageQueue] = check_each(mqs, "mqs", lambda mq, name: check_instance(mq, name, MessageQueue))
        if not queues:
            raise ValueError("mqs must not be empty (Java: an ArithmeticException, / by zero)")
        return queues[abs(java_hash_code(arg)) % len(queues)]  # Java's remainder keeps the hash's sign; abs of it

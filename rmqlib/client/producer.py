"""What a producer does when a synchronous send fails.

Mirrors: client/.../producer/DefaultMQProducer.java (``retryTimesWhenSendFailed``, ``retryResponseCodes``) and
client/.../impl/producer/DefaultMQProducerImpl.java#sendDefaultImpl: a send is tried at most
``1 + RETRY_TIMES_WHEN_SEND_FAILED`` times, each retry on a queue of another broker where the route has one. A
refused connection is always retried; a broker's answer only when its code is one of :data:`RETRY_RESPONSE_CODES`
(any other code, ``INVALID_PARAMETER`` say, fails the send at once).
"""

from __future__ import annotations

from rmqlib.broker.protocol import ResponseCode

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

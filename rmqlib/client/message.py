"""The message a push consumer holds in its ProcessQueue.

Only what the rebalance and consumption models look at is kept: where the
message sits (topic, broker, queue id, queue offset), how big its body is (the
ProcessQueue counts bytes for flow control), its tag (client-side filtering),
and the bookkeeping the consume services write onto it (reconsume times,
consume start time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rmqlib.checks import ArgumentTypeError
from rmqlib.model import INT_MAX, INT_MIN, MessageQueue

#: Property the broker sets on the last message of a pull batch: the queue's max
#: offset at pull time. common/.../message/MessageConst.java#PROPERTY_MAX_OFFSET
PROPERTY_MAX_OFFSET = "MAX_OFFSET"


class _DefaultFactory:
    """Default of a parameter whose field has a ``default_factory``, in a hand-written dataclass ``__init__``
    (shown as the generated ``__init__`` shows it). Only ``consume.ConcurrentConsumeOutcome`` still has one."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


#: "Build the field's default" (a new dict or list per instance).
_FACTORY = _DefaultFactory()


def _require_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")


@dataclass(eq=False, slots=True)
class Message:
    """A stored message as the consumer sees it after a pull.

    Mirrors: common/.../message/MessageExt.java (the fields the client models read)

    Identity is object identity (like a Java object without ``equals``); the
    ProcessQueue keys messages by ``queue_offset``. ``reconsume_times`` and
    ``consume_start_timestamp`` are mutable on purpose: the consume services
    update them, as Java does on ``MessageExt``.
    """

    topic: str
    queue_id: int
    queue_offset: int
    body_size: int
    tags: str | None = None
    store_timestamp: int = 0
    broker_name: str = ""
    msg_id: str = ""
    reconsume_times: int = 0
    #: ms when a concurrent consume call started (Java: CONSUME_START_TIME property);
    #: None until the consume service stamps it.
    consume_start_timestamp: int | None = None
    properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def _trusted(
        cls,
        topic: str,
        queue_id: int,
        queue_offset: int,
        body_size: int,
        tags: str | None,
        store_timestamp: int,
        broker_name: str,
        msg_id: str,
    ) -> Message:
        """The message MessageDecoder builds from a pull answer, for code that took every field from the broker's
        own record (the simulator): the constructor's first eight fields in order, no checks, no properties."""
        m = object.__new__(cls)
        m.topic = topic
        m.queue_id = queue_id
        m.queue_offset = queue_offset
        m.body_size = body_size
        m.tags = tags
        m.store_timestamp = store_timestamp
        m.broker_name = broker_name
        m.msg_id = msg_id
        m.reconsume_times = 0
        m.consume_start_timestamp = None
        m.properties = {}
        return m

    def __post_init__(self) -> None:
        """The checks, which raise the errors naming the field, and the ``msg_id`` default."""
        if not isinstance(self.topic, str):
            raise ArgumentTypeError(f"topic must be str, got {type(self.topic).__name__}")
        if not isinstance(self.broker_name, str):
            raise ArgumentTypeError(f"broker_name must be str, got {type(self.broker_name).__name__}")
        _require_int("queue_id", self.queue_id, INT_MIN, INT_MAX)  # a Java int, as in MessageQueue
        _require_int("queue_offset", self.queue_offset, 0)
        _require_int("body_size", self.body_size, 0)
        _require_int("store_timestamp", self.store_timestamp)
        _require_int("reconsume_times", self.reconsume_times, 0)
        if self.consume_start_timestamp is not None:
            _require_int("consume_start_timestamp", self.consume_start_timestamp)
        if self.tags is not None and not isinstance(self.tags, str):
            raise ArgumentTypeError(f"tags must be str or None, got {type(self.tags).__name__}")
        if not isinstance(self.msg_id, str):
            raise ArgumentTypeError(f"msg_id must be str, got {type(self.msg_id).__name__}")
        if self.properties is None:
            return self._fill_msg_id()  # no properties (Java's MessageExt starts with a null map too)
        if not isinstance(self.properties, dict):
            raise ArgumentTypeError(
                f"properties must be a dict of str -> str or None, got {type(self.properties).__name__}"
            )
        for key, value in self.properties.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ArgumentTypeError(f"properties must map str to str, got {key!r}: {value!r}")
        max_offset = self.properties.get(PROPERTY_MAX_OFFSET)
        if max_offset is not None:
            try:
                int(max_offset)
            except ValueError:
                raise ValueError(
                    f"properties: {PROPERTY_MAX_OFFSET} must be a decimal integer, got {max_offset[:80]!r}"
                ) from None
        self._fill_msg_id()

    def _fill_msg_id(self) -> None:
        if not self.msg_id:
            self.msg_id = f"{self.topic}@{self.broker_name}:{self.queue_id}:{self.queue_offset}"

    @property
    def message_queue(self) -> MessageQueue:
        """The queue this message was pulled from."""
        return MessageQueue(self.topic, self.broker_name, self.queue_id)

    def __repr__(self) -> str:
        return (
            f"Message(topic={self.topic!r}, broker_name={self.broker_name!r}, "
            f"queue_id={self.queue_id}, queue_offset={self.queue_offset}, "
            f"body_size={self.body_size}, tags={self.tags!r}, "
            f"reconsume_times={self.reconsume_times})"
        )

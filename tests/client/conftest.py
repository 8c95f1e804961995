"""Shared fixtures for the client-model tests."""

import pytest

from rmqlib.client import InMemoryClientBrokerAPI, Message, PushConsumerConfig, RebalanceImpl
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely


class FixedStrategy:
    """Returns a preset list (like CONFIG); None models an unset CONFIG."""

    name = "CONFIG"

    def __init__(self, result):
        self.result = result

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        return None if self.result is None else list(self.result)


class BrokenStrategy:
    name = "BROKEN"

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        raise IllegalArgument("boom")


class IllegalArgument(ValueError):
    pass


@pytest.fixture
def avg():
    return AllocateMessageQueueAveragely()


@pytest.fixture
def fixed_strategy():
    return FixedStrategy


@pytest.fixture
def broken_strategy():
    return BrokenStrategy()


@pytest.fixture
def api():
    return InMemoryClientBrokerAPI()


@pytest.fixture
def mqs():
    """Four queues of TopicA on broker-a."""
    return [MessageQueue("TopicA", "broker-a", i) for i in range(4)]


@pytest.fixture
def msg():
    def make(offset, body_size=123, **kw):
        kw.setdefault("topic", "TopicA")
        kw.setdefault("queue_id", 0)
        return Message(queue_offset=offset, body_size=body_size, **kw)

    return make


@pytest.fixture
def consumer(api, avg):
    """Factory: a RebalanceImpl subscribed to TopicA whose route knows ``mqs`` (``settings``: more of its keyword
    arguments)."""

    def make(
        cid="10.0.0.1@1",
        mqs=(),
        *,
        group="G",
        orderly=False,
        strategy=None,
        config=None,
        now_ms=0,
        subscribe=True,
        **settings,
    ):
        impl = RebalanceImpl(
            group,
            cid,
            api,
            strategy or avg,
            config=config or PushConsumerConfig(),
            consume_orderly=orderly,
            now_ms=now_ms,
            **settings,
        )
        if subscribe:
            impl.subscribe("TopicA", "*", now_ms)
            impl.update_topic_subscribe_info("TopicA", mqs)
        return impl

    return make

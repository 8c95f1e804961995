"""RebalanceImpl with clientRebalance off: the broker assigns the queues (getRebalanceResultFromBroker)."""

from __future__ import annotations

import pytest

from rmqlib.broker import MessageQueueAssignment, MessageRequestMode
from rmqlib.client import (
    DISPATCH_POP_REQUEST_DELAY_MILLS,
    InMemoryClientBrokerAPI,
    MessageModel,
    PopRequest,
    PushConsumerConfig,
    RebalanceImpl,
)
from rmqlib.client.config import ConsumeFromWhere
from rmqlib.client.pop import CONSUME_INIT_MODE_MAX, CONSUME_INIT_MODE_MIN
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely

POP, PULL = MessageRequestMode.POP, MessageRequestMode.PULL


class AssigningAPI(InMemoryClientBrokerAPI):
    """The in-memory broker API plus QUERY_ASSIGNMENT answered from ``answers[(topic, client_id)]``."""

    def __init__(self):
        super().__init__()
        self.answers: dict[tuple[str, str], object] = {}
        self.queries: list[tuple] = []

    def query_assignment(self, topic, group, client_id, strategy_name, message_model):
        self.queries.append((topic, group, client_id, strategy_name, message_model))
        if "query_assignment" in self.fail:
            raise RuntimeError("broker unreachable")
        return self.answers.get((topic, client_id))


class PopService:
    def __init__(self):
        self.later: list[tuple[PopRequest, int, int]] = []
        self.now: list[PopRequest] = []

    def execute_pop_pull_request_later(self, request, delay_ms, now_ms):
        self.later.append((request, delay_ms, now_ms))

    def execute_pop_pull_request_immediately(self, request):
        self.now.append(request)


def assign(mode, *mqs):
    return {MessageQueueAssignment(mq, mode) for mq in mqs}


def consumer(api, *, pop_service=None, topics=("T",), **config):
    impl = RebalanceImpl(
        "G",
        "c1",
        api,
        AllocateMessageQueueAveragely(),
        pop_service=pop_service,
        config=PushConsumerConfig(client_rebalance=False, **config),
    )
    for topic in topics:
        impl.subscribe(topic, "*", 0)
    return impl


def mq(queue_id, topic="T", broker="broker-a"):
    return MessageQueue(topic, broker, queue_id)


def test_pop_assignment_gets_a_pop_process_queue_and_a_pop_request_500_ms_later():
    api, service = AssigningAPI(), PopService()
    impl = consumer(api, pop_service=service)
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    assert impl.get_rebalance_result_from_broker("T", False, 1_000) is True
    assert list(impl.pop_process_queue_table) == [mq(-1)]
    assert impl.process_queue_table == {}
    [(request, delay, at)] = service.later
    assert (delay, at) == (DISPATCH_POP_REQUEST_DELAY_MILLS, 1_000) and delay == 500
    assert request.message_queue == mq(-1) and request.topic == "T" and request.consumer_group == "G"
    assert request.pop_process_queue is impl.pop_process_queue_table[mq(-1)]
    assert request.init_mode == CONSUME_INIT_MODE_MAX
    assert api.queries == [("T", "G", "c1", "AVG", MessageModel.CLUSTERING)]


def test_a_changed_assignment_bumps_the_sub_version_and_heartbeats_once():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    impl.get_rebalance_result_from_broker("T", False, 5_000)
    assert impl.subscription_inner["T"].sub_version == 5_000
    assert len(api.heartbeats) == 1
    impl.get_rebalance_result_from_broker("T", False, 6_000)  # the same answer: nothing changes
    assert len(api.heartbeats) == 1 and impl.subscription_inner["T"].sub_version == 5_000


def test_no_answer_or_a_failed_query_changes_nothing_and_is_not_balanced():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(0), mq(1))
    impl.get_rebalance_result_from_broker("T", False, 0)
    before = dict(impl.pop_process_queue_table)
    api.answers[("T", "c1")] = None
    assert impl.get_rebalance_result_from_broker("T", False, 1_000) is False
    api.fail.add("query_assignment")
    assert impl.get_rebalance_result_from_broker("T", False, 2_000) is False
    assert impl.pop_process_queue_table == before and not any(p.dropped for p in before.values())


def test_a_queue_no_longer_assigned_is_dropped():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(0), mq(1))
    impl.get_rebalance_result_from_broker("T", False, 0)
    kept, lost = impl.pop_process_queue_table[mq(0)], impl.pop_process_queue_table[mq(1)]
    api.answers[("T", "c1")] = assign(POP, mq(0))
    assert impl.get_rebalance_result_from_broker("T", False, 1_000) is True
    assert list(impl.pop_process_queue_table) == [mq(0)]
    assert lost.dropped and not kept.dropped and impl.pop_process_queue_table[mq(0)] is kept


def test_a_pop_assignment_idle_for_more_than_120_s_is_replaced():
    api, service = AssigningAPI(), PopService()
    impl = consumer(api, pop_service=service)
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    impl.get_rebalance_result_from_broker("T", False, 0)
    first = impl.pop_process_queue_table[mq(-1)]
    impl.get_rebalance_result_from_broker("T", False, 120_000)  # exactly 120 s: not yet
    assert impl.pop_process_queue_table[mq(-1)] is first
    impl.get_rebalance_result_from_broker("T", False, 120_001)
    second = impl.pop_process_queue_table[mq(-1)]
    assert first.dropped and second is not first and not second.dropped
    assert len(service.later) == 2


def test_pull_assignments_get_process_queues_and_pull_requests():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(PULL, mq(0), mq(1))
    assert impl.get_rebalance_result_from_broker("T", False, 0) is True
    assert set(impl.process_queue_table) == {mq(0), mq(1)} and impl.pop_process_queue_table == {}
    assert impl.pull_service.due(499) == []
    assert sorted(r.message_queue.queue_id for r in impl.pull_service.due(500)) == [0, 1]


def test_switching_between_pull_and_pop_subscribes_and_unsubscribes_the_pop_retry_topic():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(PULL, mq(0))
    impl.get_rebalance_result_from_broker("T", False, 0)
    assert "%RETRY%G_T" in impl.subscription_inner
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    impl.get_rebalance_result_from_broker("T", False, 1_000)
    assert "%RETRY%G_T" not in impl.subscription_inner
    assert impl.process_queue_table == {} and list(impl.pop_process_queue_table) == [mq(-1)]


def test_do_rebalance_asks_the_broker_when_client_rebalance_is_off():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    api.answers[("%RETRY%G", "c1")] = assign(PULL, mq(0, "%RETRY%G"))
    assert impl.do_rebalance(False, 0) is True
    assert [q[0] for q in api.queries] == list(impl.subscription_inner)
    assert list(impl.pop_process_queue_table) == [mq(-1)]
    assert list(impl.process_queue_table) == [mq(0, "%RETRY%G")]


def test_client_rebalance_stays_on_for_orderly_and_broadcasting_consumers():
    api = AssigningAPI()
    orderly = RebalanceImpl(
        "G",
        "c1",
        api,
        AllocateMessageQueueAveragely(),
        consume_orderly=True,
        config=PushConsumerConfig(client_rebalance=False),
    )
    broadcast = RebalanceImpl(
        "G",
        "c1",
        api,
        AllocateMessageQueueAveragely(),
        config=PushConsumerConfig(client_rebalance=False, message_model=MessageModel.BROADCASTING),
    )
    assert orderly.client_rebalance("T") and broadcast.client_rebalance("T")
    assert not consumer(api).client_rebalance("T")


def test_unsubscribing_drops_the_topics_pop_assignments():
    api = AssigningAPI()
    impl = consumer(api, topics=("T", "U"))
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    api.answers[("U", "c1")] = assign(POP, mq(-1, "U"))
    impl.do_rebalance(False, 0)
    gone = impl.pop_process_queue_table[mq(-1, "U")]
    impl.unsubscribe("U")
    impl.do_rebalance(False, 1_000)
    assert list(impl.pop_process_queue_table) == [mq(-1)] and gone.dropped


def test_consume_from_first_offset_pops_from_the_minimum():
    impl = consumer(AssigningAPI(), consume_from_where=ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
    assert impl.get_consume_init_mode() == CONSUME_INIT_MODE_MIN
    assert consumer(AssigningAPI()).get_consume_init_mode() == CONSUME_INIT_MODE_MAX


def test_without_a_pop_service_the_requests_wait_in_pop_requests():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(0), mq(1))
    impl.get_rebalance_result_from_broker("T", False, 2_000)
    assert [(due, r.message_queue.queue_id) for due, r in impl.pop_requests] == [(2_500, 0), (2_500, 1)]


def test_destroy_drops_pop_assignments_too():
    api = AssigningAPI()
    impl = consumer(api)
    api.answers[("T", "c1")] = assign(POP, mq(-1))
    impl.get_rebalance_result_from_broker("T", False, 0)
    ppq = impl.pop_process_queue_table[mq(-1)]
    impl.destroy()
    assert ppq.dropped and impl.pop_process_queue_table == {}


def test_a_bad_pop_service_is_refused_by_name():
    with pytest.raises(TypeError, match="pop_service"):
        RebalanceImpl("G", "c1", AssigningAPI(), AllocateMessageQueueAveragely(), pop_service=object())

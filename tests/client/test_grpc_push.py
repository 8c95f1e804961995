"""A gRPC push consumer's assignment loop (rocketmq-clients PushConsumerImpl#scanAssignments)."""

import pytest

from rmqlib.client.grpc_push import MAX_CACHE_MESSAGE_COUNT, RECEIVE_BATCH_SIZE, PushConsumerImpl, ScanOutcome
from rmqlib.namesrv import RouteInfoManager
from rmqlib.proxy import query_assignment


def _routes() -> RouteInfoManager:
    table = RouteInfoManager()
    for name in ("broker-a", "broker-b"):
        table.register_broker(name, {"T": (4, 4)}, now_ms=0)
        table.register_broker(name, {"T": (4, 4)}, now_ms=0, broker_id=1)
    return table


def _answer(table, fifo=False):
    return query_assignment(table.pickup_topic_route_data("T"), "T", fifo)


def test_every_member_takes_the_same_answer_and_a_second_scan_changes_nothing():
    table = _routes()
    members = [PushConsumerImpl("G", f"c{i}") for i in range(3)]
    assert {m.scan_assignments("T", _answer(table)) for m in members} == {ScanOutcome.CHANGED}
    assert len({tuple(m.assigned("T")) for m in members}) == 1
    assert [mq.broker_name for mq in members[0].assigned("T")] == ["broker-a", "broker-b"]
    assert members[0].scan_assignments("T", _answer(table)) is ScanOutcome.SAME


def test_a_failed_answer_keeps_what_a_member_had_and_leaves_a_new_member_with_nothing():
    table = _routes()
    old = PushConsumerImpl("G", "old")
    old.scan_assignments("T", _answer(table))
    table.unregister_broker("broker-a")  # broker-a's master stops: the proxy's answer fails
    new = PushConsumerImpl("G", "new")
    assert new.scan_assignments("T", _answer(table)) is ScanOutcome.FAILED
    assert old.scan_assignments("T", _answer(table)) is ScanOutcome.FAILED
    assert new.assigned("T") == [] and len(old.assigned("T")) == 2
    table.unregister_broker("broker-a", broker_id=1)  # its slave goes too: broker-a leaves the route
    assert new.scan_assignments("T", _answer(table)) is ScanOutcome.CHANGED
    assert old.scan_assignments("T", _answer(table)) is ScanOutcome.CHANGED
    assert [mq.broker_name for mq in old.assigned("T")] == ["broker-b"] == [mq.broker_name for mq in new.assigned("T")]


def test_a_group_turned_fifo_drops_the_any_queue_entries_for_one_per_queue():
    table = _routes()
    member = PushConsumerImpl("G", "c0")
    member.scan_assignments("T", _answer(table))
    member.scan_assignments("T", _answer(table, fifo=True))
    assert sorted((mq.broker_name, mq.queue_id) for mq in member.assigned("T")) == [
        (name, q) for name in ("broker-a", "broker-b") for q in range(4)
    ]


def test_a_queue_left_out_of_the_answer_is_dropped_and_the_cache_is_shared_among_the_queues():
    table = _routes()
    member = PushConsumerImpl("G", "c0")
    assert member.cache_message_count_threshold_per_queue() == 0  # no queue, no cache
    member.scan_assignments("T", _answer(table, fifo=True))
    queues = dict(member.process_queue_table)
    assert member.cache_message_count_threshold_per_queue() == MAX_CACHE_MESSAGE_COUNT // 8
    member.scan_assignments("T", _answer(table))  # back to one entry per broker: the eight queues go
    assert all(pq.dropped for pq in queues.values()) and not any(
        pq.dropped for pq in member.process_queue_table.values()
    )
    assert member.cache_message_count_threshold_per_queue() == MAX_CACHE_MESSAGE_COUNT // 2


def test_a_smaller_cache_is_shared_the_same_way_at_least_one_message_a_queue():
    table = _routes()
    small, tiny = PushConsumerImpl("G", "c0", max_cache_message_count=64), PushConsumerImpl("G", "c1", 5)
    for member in (small, tiny):
        member.scan_assignments("T", _answer(table, fifo=True))  # eight queues
    assert (small.cache_message_count_threshold_per_queue(), tiny.cache_message_count_threshold_per_queue()) == (8, 1)


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError), ("64", TypeError)])
def test_a_cache_that_is_not_a_positive_count_is_refused_by_name(bad, error):
    with pytest.raises(error, match="max_cache_message_count"):
        PushConsumerImpl("G", "c0", max_cache_message_count=bad)


def test_a_receive_asks_for_what_the_cache_has_room_for_between_one_and_32():
    table = _routes()
    member = PushConsumerImpl("G", "c0")
    member.scan_assignments("T", _answer(table))
    pq = next(iter(member.process_queue_table.values()))
    threshold = member.cache_message_count_threshold_per_queue()
    assert pq.reception_batch_size(threshold) == RECEIVE_BATCH_SIZE
    pq.cached = threshold - 5
    assert pq.reception_batch_size(threshold) == 5 and not pq.is_cache_full(threshold)
    pq.cached = threshold
    assert pq.reception_batch_size(threshold) == 1 and pq.is_cache_full(threshold)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="group"):
        PushConsumerImpl("", "c0")
    with pytest.raises(TypeError, match="response"):
        PushConsumerImpl("G", "c0").scan_assignments("T", None)

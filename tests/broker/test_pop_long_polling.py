"""PopLongPollingService: empty pops held per key until a message for them arrives or they expire."""

import pytest

from rmqlib.broker import PopLongPollingService, SubscriptionData
from rmqlib.broker.pop_long_polling import (
    POLLING_SCAN_INTERVAL_MS,
    POP_LONG_POLLING_FORCE_NOTIFY_INTERVAL,
    POP_POLL_TIME_MILLIS,
    PollingResult,
)

TAG_A, TAG_B = SubscriptionData("T", "TagA"), SubscriptionData("T", "TagB")
A_CODE = next(iter(TAG_A.code_set))


def hold(service, request, queue_id=-1, born_ms=0, now_ms=0, group="G", **kwargs):
    result = service.polling(request, "T", group, queue_id, born_ms, now_ms, **kwargs)
    assert result is PollingResult.POLLING_SUC
    return result


def test_an_arrival_wakes_the_first_held_pop_of_the_any_queue_key_and_of_its_own_queue_key_only():
    service = PopLongPollingService()
    for request, queue_id in [("any-1", -1), ("any-2", -1), ("q0", 0), ("q1", 1)]:
        hold(service, request, queue_id)
    assert service.notify_message_arriving("T", 0, offset=1) == ["any-1", "q0"]
    assert service.notify_message_arriving("T", 0, offset=2) == ["any-2"]  # key T@G@0 holds nobody now
    assert service.notify_message_arriving("T", 0, offset=3) == []
    assert service.held == ["q1"] and service.total_polling_num == 1
    assert service.notify_message_arriving("Other", 1, offset=1) == []  # no group holds pops of that topic


def test_every_group_holding_pops_of_the_topic_gets_its_own_wake():
    service = PopLongPollingService()
    hold(service, "g1", group="G1")
    hold(service, "g2", group="G2")
    assert service.notify_message_arriving("T", 3, offset=1) == ["g1", "g2"]


def test_held_pops_wake_in_order_of_expiry_then_of_arrival():
    service = PopLongPollingService()
    hold(service, "late", born_ms=500, now_ms=500)
    hold(service, "early", born_ms=100, now_ms=600)
    hold(service, "early-too", born_ms=100, now_ms=700)
    woken = [service.notify_queue("T", -1, "G") for _ in range(3)]
    assert woken == ["early", "early-too", "late"]


def test_a_first_pop_whose_filter_refuses_the_message_stays_held_and_nobody_behind_it_wakes():
    service = PopLongPollingService()
    hold(service, "wants A", message_filter=TAG_A)
    hold(service, "wants B", born_ms=1, now_ms=1, message_filter=TAG_B)
    b_code = next(iter(TAG_B.code_set))
    assert service.notify_message_arriving("T", 0, offset=1, tags_code=b_code) == []
    assert service.held == ["wants A", "wants B"] and service.total_polling_num == 2
    assert service.notify_message_arriving("T", 0, offset=2, tags_code=None) == ["wants A"]  # no tag: no test
    assert service.notify_message_arriving("T", 0, offset=3, tags_code=A_CODE) == []  # B's filter refuses A


def test_an_arrival_at_a_multiple_of_the_force_interval_wakes_the_first_pop_whatever_its_filter():
    service = PopLongPollingService()
    hold(service, "wants B", message_filter=TAG_B)
    assert (
        service.notify_message_arriving("T", 0, offset=POP_LONG_POLLING_FORCE_NOTIFY_INTERVAL + 1, tags_code=A_CODE)
        == []
    )
    assert service.notify_message_arriving(
        "T", 0, offset=2 * POP_LONG_POLLING_FORCE_NOTIFY_INTERVAL, tags_code=A_CODE
    ) == ["wants B"]


def test_pops_whose_connection_closed_are_dropped_instead_of_woken():
    service = PopLongPollingService()
    hold(service, "gone", channel_active=lambda: False)
    hold(service, "here", born_ms=1, now_ms=1)
    assert service.notify_message_arriving("T", 0, offset=1) == ["here"]
    assert service.held == [] and service.total_polling_num == 0


def test_the_scan_wakes_held_pops_from_50_ms_before_their_expiry_on_its_20_ms_grid():
    service = PopLongPollingService()
    hold(service, "first", born_ms=0, now_ms=0)
    hold(service, "second", born_ms=30, now_ms=30)
    expired = POP_POLL_TIME_MILLIS
    assert service.scan(expired - 50) == []  # isTimeout: strictly after expired - 50
    assert service.scan(expired - 49) == ["first"]
    due = service.next_scan_ms(expired - 49)
    assert due % POLLING_SCAN_INTERVAL_MS == 0 and due - POLLING_SCAN_INTERVAL_MS < 30 + expired - 49 <= due
    assert service.next_scan_ms(0, started_ms=7) % POLLING_SCAN_INTERVAL_MS == 7
    assert service.scan(due) == ["second"] and service.next_scan_ms(due) is None


def test_a_pop_is_woken_once():
    service = PopLongPollingService()
    hold(service, "p")
    [pop] = service.polling_map["T@G@-1"]
    assert service.notify_message_arriving("T", 0, offset=1) == ["p"]
    assert pop.complete() is False  # the wake took it


def test_polling_answers_full_expired_or_not_polling_instead_of_holding():
    assert PopLongPollingService().polling("p", "T", "G", -1, 0, 0, poll_time_ms=0) is PollingResult.NOT_POLLING
    late = PopLongPollingService().polling("p", "T", "G", -1, 0, now_ms=POP_POLL_TIME_MILLIS - 49)
    assert late is PollingResult.POLLING_TIMEOUT
    small = PopLongPollingService(pop_polling_size=1)
    hold(small, "a")
    hold(small, "b")  # Java refuses only when a key already holds MORE than popPollingSize
    assert small.polling("c", "T", "G", -1, 0, 0) is PollingResult.POLLING_FULL
    assert small.polling("d", "T", "G", 0, 0, 0) is PollingResult.POLLING_SUC  # another key
    capped = PopLongPollingService(max_pop_polling_size=1)
    hold(capped, "a")
    assert capped.polling("b", "T", "G", 0, 0, 0) is PollingResult.POLLING_FULL


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda s: s.polling("p", "T", "G", -1, 0, 0, poll_time_ms="15s"), "poll_time_ms"),
        (lambda s: s.polling("p", "", "G", -1, 0, 0), "topic"),
        (lambda s: s.polling("p", "T", "G", -2, 0, 0), "queue_id"),
        (lambda s: s.polling("p", "T", "G", -1, 0, 0, channel_active="open"), "channel_active"),
        (lambda s: s.notify_message_arriving("T", None), "queue_id"),
        (lambda s: s.scan("now"), "now_ms"),
        (lambda s: s.polling("p", "T", "G", -1, 0.5, 0), "born_ms"),
    ],
)
def test_bad_arguments_are_named(call, name):
    with pytest.raises((TypeError, ValueError), match=name):
        call(PopLongPollingService())

"""PopLongPollingService: empty pops held until a message arrives."""

import pytest

from rmqlib.broker import PopLongPollingService


def test_an_arrival_wakes_every_held_pop_in_the_order_held():
    service = PopLongPollingService()
    assert service.polling("a") and service.polling("b")
    assert service.notify_message_arriving("T", 0) == ["a", "b"]
    assert service.notify_message_arriving("T", 1) == [] and service.held == []
    assert service.total_polling_num == 2


def test_a_pop_without_poll_time_is_not_held():
    service = PopLongPollingService()
    assert service.polling("a", 0) is False and service.held == []


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="poll_time_ms"):
        PopLongPollingService().polling("a", "15s")
    with pytest.raises(TypeError, match="queue_id"):
        PopLongPollingService().notify_message_arriving("T", None)

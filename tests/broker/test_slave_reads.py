"""A slave's answer to a pull: PullMessageProcessor#rejectRequest (5.x), stepped by hand.

A broker name whose master is gone stays in the routes while its slave is registered, and a consumer's pulls go to
the slave (PullAPIWrapper#pullKernelImpl takes any replica). With ``slaveReadEnable`` off, the default, the slave
answers every pull SYSTEM_BUSY before the processor runs (the consumer's side: tests/client/test_pull.py). With it
on, the slave serves what it stores and sends every other pull back at once
(PullMessageProcessor#composeResponseHeader).
"""

import pytest

from rmqlib.broker import BrokerConfig, BrokerRole, MessageStore, PullMessageProcessor, PullMessageRequest, ResponseCode


def processor(**config):
    store = MessageStore(BrokerConfig(**config))
    store.create_topic("T", 2)
    store.put_message("T", 0, now_ms=0)
    store.reput(1)
    return store, PullMessageProcessor(store)


def pull(offset=0, **kw):
    return PullMessageRequest("G", "T", 0, offset, client_id="c1", channel="ch1", has_subscription_flag=True, **kw)


def test_a_broker_is_a_master_that_serves_no_slave_reads_by_default():
    config = BrokerConfig()
    assert config.broker_role is BrokerRole.ASYNC_MASTER and config.slave_read_enable is False


@pytest.mark.parametrize("role", ["ASYNC_MASTER", "SYNC_MASTER"])
@pytest.mark.parametrize("slave_read_enable", [False, True])
def test_a_master_takes_every_pull_whatever_slave_read_enable_says(role, slave_read_enable):
    store, proc = processor(broker_role=role, slave_read_enable=slave_read_enable)
    assert proc.reject_request() is False
    answer = proc.process_request(pull(), 2)
    assert answer.code is ResponseCode.SUCCESS and [m.queue_offset for m in answer.messages] == [0]


def test_a_slave_refuses_every_pull_by_default_and_touches_nothing():
    store, proc = processor(broker_role=BrokerRole.SLAVE)
    assert proc.reject_request() is True
    answer = proc.process_request(pull(has_commit_offset_flag=True, commit_offset=1), 2)
    assert answer.code is ResponseCode.SYSTEM_BUSY and answer.messages == []
    assert answer.client_pull_status is None  # not a pull result: the client's callback gets an exception
    assert store.query_offset("G", "T", 0) == -1  # the piggy-backed commit was not stored
    assert proc.hold_service.held_count() == 0
    # a pull that finds nothing is refused too, not held
    assert proc.process_request(pull(offset=1), 3).code is ResponseCode.SYSTEM_BUSY
    assert proc.hold_service.held_count() == 0


def test_a_slave_that_serves_reads_answers_what_it_stores_and_holds_nothing():
    store, proc = processor(broker_role="SLAVE", slave_read_enable=True)
    assert proc.reject_request() is False
    found = proc.process_request(pull(), 2)
    assert found.code is ResponseCode.SUCCESS and [m.queue_offset for m in found.messages] == [0]
    # caught up: a master holds this pull (PULL_NOT_FOUND with the suspend flag); the slave sends it back at once,
    # and the client pulls again immediately (NO_MATCHED_MSG)
    caught_up = proc.process_request(pull(offset=1), 3)
    assert caught_up.code is ResponseCode.PULL_RETRY_IMMEDIATELY and caught_up.client_pull_status == "NO_MATCHED_MSG"
    assert proc.hold_service.held_count() == 0
    master_store, master = processor()
    assert master.process_request(pull(offset=1), 3) is None and master.hold_service.held_count() == 1


@pytest.mark.parametrize("offset", [1, 5])  # one past the end (OFFSET_OVERFLOW_ONE), far past it (OVERFLOW_BADLY)
def test_a_slave_answers_every_status_but_found_pull_retry_immediately(offset):
    _, master = processor()
    _, slave = processor(broker_role="SLAVE", slave_read_enable=True)
    on_master = master.process_request(pull(offset=offset), 2, broker_allow_suspend=False)
    on_slave = slave.process_request(pull(offset=offset), 2, broker_allow_suspend=False)
    assert on_master.code in (ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED)
    assert on_slave.code is ResponseCode.PULL_RETRY_IMMEDIATELY and on_slave.status is on_master.status


def test_switching_slave_reads_on_later_takes_effect_at_the_next_pull():
    store, proc = processor(broker_role="SLAVE")
    assert proc.process_request(pull(), 2).code is ResponseCode.SYSTEM_BUSY
    proc.broker_config.slave_read_enable = True
    assert proc.process_request(pull(), 3).code is ResponseCode.SUCCESS


@pytest.mark.parametrize(
    "role, error, message",
    [
        ("MASTER", ValueError, "broker_role must be one of ASYNC_MASTER, SYNC_MASTER, SLAVE"),
        (0, ValueError, "broker_role must be one of"),
    ],
)
def test_broker_role_must_name_a_role(role, error, message):
    with pytest.raises(error, match=message):
        BrokerConfig(broker_role=role)

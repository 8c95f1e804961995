"""LOCK_BATCH_MQ across a broker's replicas (AdminBrokerProcessor#lockBatchMQ, lockInStrictMode)."""

import pytest

from rmqlib.broker import AdminBrokerProcessor, BrokerMemberGroup
from rmqlib.client import InMemoryClientBrokerAPI, RebalanceImpl
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely

Q0, Q1 = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)


def owners(brokers, mq=Q0, now_ms=0):
    return [brokers.lock_owner(i, "G", mq, now_ms) for i in sorted(brokers.replicas)]


def test_without_strict_mode_the_master_answers_from_its_own_table_alone():
    brokers = BrokerMemberGroup("broker-a", 3, enable_slave_acting_master=True)
    assert brokers.lock_batch_mq("G", "c1", [Q0, Q1], 0) == {Q0, Q1}
    assert owners(brokers) == ["c1", None, None]
    brokers.stop(0)
    brokers.start(0)  # a restart forgets every lock
    assert brokers.lock_batch_mq("G", "c2", [Q0], 1_000) == {Q0}


def test_strict_mode_locks_on_a_majority_of_the_replicas():
    brokers = BrokerMemberGroup("broker-a", 3, lock_in_strict_mode=True, enable_slave_acting_master=True)
    assert brokers.lock_batch_mq("G", "c1", [Q0], 0) == {Q0}
    assert owners(brokers) == ["c1", "c1", "c1"]
    brokers.stop(2)  # two of three still make a majority
    assert brokers.lock_batch_mq("G", "c1", [Q0, Q1], 10_000) == {Q0, Q1}
    assert owners(brokers, Q1, 10_000) == ["c1", "c1", None]


def test_a_refused_strict_lock_leaves_the_masters_own_entry():
    brokers = BrokerMemberGroup("broker-a", 3, lock_in_strict_mode=True, enable_slave_acting_master=True)
    brokers.lock_batch_mq("G", "c1", [Q0], 0)
    brokers.stop(0)
    brokers.start(0)
    assert brokers.lock_batch_mq("G", "c2", [Q0], 1_000) == set()  # both slaves still hold c1's lock
    assert owners(brokers, now_ms=1_000) == ["c2", "c1", "c1"]
    # so the real owner's renewal is refused by the master, and the slaves are not even asked
    assert brokers.lock_batch_mq("G", "c1", [Q0], 20_000) == set()
    assert brokers.replicas[1].lock_manager.mq_lock_table["G"][Q0].last_update_timestamp == 0
    # once the master's entry for c2 (1 s) and the slaves' for c1 (0 s) have both expired, c1 gets it back
    assert brokers.lock_batch_mq("G", "c1", [Q0], 61_000) == set()
    assert brokers.lock_batch_mq("G", "c1", [Q0], 61_001) == {Q0}


def test_two_replicas_in_strict_mode_lock_nothing_while_one_is_down():
    brokers = BrokerMemberGroup("broker-a", 2, lock_in_strict_mode=True, enable_slave_acting_master=True)
    assert brokers.lock_batch_mq("G", "c1", [Q0], 0) == {Q0}
    brokers.stop(0)
    assert brokers.route_master_id() == 1  # the slave acts as master
    assert brokers.lock_batch_mq("G", "c1", [Q0], 1_000) == set()  # c1 holds it there, but 1 < 2
    assert owners(brokers, now_ms=1_000) == [None, "c1"]


def test_strict_mode_without_acting_master_knows_no_other_replica_and_grants_nothing():
    brokers = BrokerMemberGroup("broker-a", 2, lock_in_strict_mode=True)
    assert brokers.lock_batch_mq("G", "c1", [Q0], 0) == set()
    assert owners(brokers) == ["c1", None]


def test_a_quorum_of_one_answers_from_the_own_table_even_in_strict_mode():
    brokers = BrokerMemberGroup(
        "broker-a", 2, lock_in_strict_mode=True, total_replicas=1, enable_slave_acting_master=True
    )
    assert brokers.lock_batch_mq("G", "c1", [Q0], 0) == {Q0}
    assert owners(brokers) == ["c1", None]


def test_a_strict_unlock_reaches_every_live_replica_and_a_plain_one_only_the_master():
    strict = BrokerMemberGroup("broker-a", 3, lock_in_strict_mode=True, enable_slave_acting_master=True)
    strict.lock_batch_mq("G", "c1", [Q0], 0)
    strict.unlock_batch_mq("G", "c2", [Q0], 0)  # not the owner: nothing
    assert owners(strict) == ["c1", "c1", "c1"]
    strict.unlock_batch_mq("G", "c1", [Q0], 0)
    assert owners(strict) == [None, None, None]
    plain = BrokerMemberGroup("broker-a", 2, enable_slave_acting_master=True)
    for replica in plain.replicas.values():
        replica.lock_batch_mq("G", "c1", [Q0], 0, only_this_broker=True)
    plain.unlock_batch_mq("G", "c1", [Q0], 0)
    assert owners(plain) == [None, "c1"]


def test_the_route_shows_an_acting_master_only_when_that_is_on():
    acting = BrokerMemberGroup("broker-a", 3, enable_slave_acting_master=True)
    plain = BrokerMemberGroup("broker-a", 3)
    for brokers in (acting, plain):
        assert brokers.route_master_id() == 0
        brokers.stop(0)
        brokers.stop(1)
    assert acting.route_master_id() == 2 and acting.minimum_broker_id() == 2
    assert plain.route_master_id() is None
    with pytest.raises(ConnectionError, match="no master of broker-a"):
        plain.lock_batch_mq("G", "c1", [Q0], 0)


def test_starting_a_live_replica_keeps_its_table():
    brokers = BrokerMemberGroup("broker-a")
    brokers.lock_batch_mq("G", "c1", [Q0], 0)
    brokers.start(0)
    assert owners(brokers) == ["c1", None]


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="replicas"):
        BrokerMemberGroup("broker-a", 0)
    with pytest.raises(ValueError, match="total_replicas"):
        BrokerMemberGroup("broker-a", total_replicas=0)
    with pytest.raises(TypeError, match="lock_in_strict_mode"):
        BrokerMemberGroup("broker-a", lock_in_strict_mode="yes")
    with pytest.raises(ValueError, match="broker_id"):
        BrokerMemberGroup("broker-a", 2).stop(2)
    with pytest.raises(TypeError, match="member_group"):
        AdminBrokerProcessor(None, 0)
    with pytest.raises(TypeError, match="only_this_broker"):
        BrokerMemberGroup("broker-a").replicas[0].lock_batch_mq("G", "c1", [Q0], 0, only_this_broker=1)


def test_an_orderly_client_stops_when_its_strict_renewal_is_refused():
    brokers = BrokerMemberGroup("broker-a", 2, lock_in_strict_mode=True, enable_slave_acting_master=True)
    api = InMemoryClientBrokerAPI()
    api.lock_servers["broker-a"] = brokers
    c1 = RebalanceImpl("G", "c1", api, AllocateMessageQueueAveragely(), consume_orderly=True)
    assert c1.update_process_queue_table_in_rebalance("T", {Q0}, True, 0)
    pq = c1.process_queue_table[Q0]
    assert pq.locked
    brokers.stop(0)  # the lone slave cannot make a majority of two
    c1.lock_all(20_000)
    assert not pq.locked
    assert api.lock_calls[-1] == ("broker-a", "c1", frozenset({Q0}))
    brokers.stop(1)  # no replica left: the route shows no master, and a lock counts as refused
    assert c1.lock(Q0, 21_000) is False

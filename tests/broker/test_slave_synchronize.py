"""SlaveSynchronize: a slave copies its master's consumer offsets about once a minute, topic@group by topic@group."""

from rmqlib.broker import ConsumerOffsetManager, SlaveSynchronize
from rmqlib.broker.slave_synchronize import (
    SLAVE_SYNC_ALL_INTERVAL_MS,
    SLAVE_SYNC_CHECK_INTERVAL_MS,
    SLAVE_SYNC_FIRST_DELAY_MS,
)


def _offsets(**by_queue) -> ConsumerOffsetManager:
    table = ConsumerOffsetManager()
    for name, offset in by_queue.items():
        table.commit_offset("G", "T", int(name[1:]), offset)
    return table


def _task_runs(until_ms):
    """The instants the slave's task runs: 10 s after start, then every 3 s."""
    return range(SLAVE_SYNC_FIRST_DELAY_MS, until_ms + 1, SLAVE_SYNC_CHECK_INTERVAL_MS)


def test_the_first_sync_comes_after_a_minute_and_the_next_a_minute_after_that():
    master = _offsets(q0=5)
    sync = SlaveSynchronize(ConsumerOffsetManager(), started_ms=0)
    sync.set_master_addr("broker-a:10911")
    synced = [now for now in _task_runs(200_000) if sync.run(now, master)]
    assert synced == [61_000, 124_000, 187_000]  # the first run more than 60 s after the last sync, each time
    assert all(b - a > SLAVE_SYNC_ALL_INTERVAL_MS for a, b in zip(synced, synced[1:], strict=False))
    assert sync.offsets.query_offset("G", "T", 0) == 5 and sync.syncs == 3


def test_the_masters_offsets_of_a_topic_and_group_replace_the_slaves_and_others_only_on_the_slave_stay():
    """Java's table maps ``topic@group`` to that pair's queue offsets, and putAll replaces whole entries."""
    slave = _offsets(q0=9, q1=7)  # commits a client sent the slave while the master was away
    slave.commit_offset("Other", "T", 0, 3)
    sync = SlaveSynchronize(slave, started_ms=0)
    sync.set_master_addr("broker-a:10911")
    assert sync.run(61_000, _offsets(q0=4))
    assert (slave.query_offset("G", "T", 0), slave.query_offset("G", "T", 1)) == (4, -1)  # 9 went back, 7 went
    assert slave.query_offset("Other", "T", 0) == 3  # the master has no T@Other entry


def test_a_sync_that_cannot_reach_the_master_still_counts_as_the_last_one():
    slave = _offsets(q0=9)
    sync = SlaveSynchronize(slave, started_ms=0)
    assert not sync.run(61_000, _offsets(q0=4))  # no master address learnt yet: nothing asked
    sync.set_master_addr("broker-a:10911")
    assert not sync.run(64_000, _offsets(q0=4))  # 3 s after the last attempt: too soon
    assert not sync.run(122_000, None)  # the master does not answer
    assert not sync.run(125_000, _offsets(q0=4))  # and the failure waits out its minute too
    assert slave.query_offset("G", "T", 0) == 9 and sync.syncs == 0
    assert sync.run(183_000, _offsets(q0=4)) and slave.query_offset("G", "T", 0) == 4

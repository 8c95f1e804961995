"""A slave's copy of its master's consumer offsets, and when it is taken.

A slave runs a task 10 s after it starts and every 3 s after that; a run syncs everything (topic configs, consumer
offsets and more) when the last sync is more than 60 s old, counting from the slave's start, so the first sync
comes about a minute in. The offsets are copied over the slave's own table topic@group by topic@group: the master's
queue offsets of a topic and group replace all the slave's of that pair (an offset a client committed to the slave
stays only until the master's table has the same topic and group). A sync needs the master's address,
which the slave learns from the name server's answer to its own registration (every 30 s); a sync that cannot
reach the master fails, and the next one waits another minute all the same.

Mirrors (commit 8fc57f1468d182eea11c01e089c0250d647dc5f3): broker/.../slave/SlaveSynchronize.java
(``syncAll``, ``syncConsumerOffset``, ``setMasterAddr``) and the slave's scheduled task in
broker/.../BrokerController.java (``lastSyncTimeMs``). Only the consumer offsets are modelled.
"""

from __future__ import annotations

from rmqlib.broker.message_store import ConsumerOffsetManager
from rmqlib.broker.protocol import check_time
from rmqlib.checks import check_instance, check_str

SLAVE_SYNC_FIRST_DELAY_MS = 10_000  # BrokerController: the slave's sync task first runs 10 s after start
SLAVE_SYNC_CHECK_INTERVAL_MS = 3_000  # and then every 3 s
SLAVE_SYNC_ALL_INTERVAL_MS = 60_000  # a run syncs when the last sync is more than this old (lastSyncTimeMs)


class SlaveSynchronize:
    """One slave's sync of consumer offsets from its master. Mirrors: SlaveSynchronize.java

    ``offsets`` is the slave's own :class:`ConsumerOffsetManager`; ``started_ms`` when the slave started (its
    ``lastSyncTimeMs`` starts there). :meth:`run` is one run of the 3 s task."""

    def __init__(self, offsets: ConsumerOffsetManager, started_ms: int):
        self.offsets = check_instance(offsets, "offsets", ConsumerOffsetManager)
        self.last_sync_time_ms = check_time(started_ms, "started_ms")
        self.master_addr: str | None = None  # from the slave's last registration
        self.syncs = 0  # syncs that copied the master's offsets

    def set_master_addr(self, master_addr: str | None) -> None:
        """What the name server answered to the slave's registration: the master's address, or None (no master)."""
        if master_addr is not None:
            check_str(master_addr, "master_addr")
        self.master_addr = master_addr

    def run(self, now_ms: int, master_offsets: ConsumerOffsetManager | None) -> bool:
        """One run of the task at ``now_ms``; ``master_offsets`` is the master's table, or None when the master
        does not answer. True when the offsets were copied. A run that finds the last sync too recent does
        nothing; otherwise it tries (a slave that knows no master address does not ask) and, copied or not,
        counts as the last sync."""
        now_ms = check_time(now_ms)
        if master_offsets is not None:
            check_instance(master_offsets, "master_offsets", ConsumerOffsetManager)
        if now_ms - self.last_sync_time_ms <= SLAVE_SYNC_ALL_INTERVAL_MS:
            return False
        self.last_sync_time_ms = now_ms
        if self.master_addr is None or master_offsets is None:
            return False
        self.offsets.put_all(master_offsets)
        self.syncs += 1
        return True


__all__ = [
    "SLAVE_SYNC_ALL_INTERVAL_MS",
    "SLAVE_SYNC_CHECK_INTERVAL_MS",
    "SLAVE_SYNC_FIRST_DELAY_MS",
    "SlaveSynchronize",
]

"""An orderly queue across its broker master's restart or failover, replayed on the client and replica models.

Two orderly consumers (real :class:`RebalanceImpl` models) and one queue, q, of a broker whose replicas are a
:class:`rmqlib.broker.BrokerMemberGroup`. The story is fixed; the broker's settings are the caller's:

* 0 s: 10.0.0.1's round takes q (its lock request goes to the route's master); it renews every 20 s (``lockAll``).
* 25 s: the master stops. It starts again, with an empty lock table, at ``master_back_ms`` (None: it stays away,
  and with acting master on a slave takes its place in the route).
* 29 s: 10.0.0.2 runs a round that hears only of itself and asks for q; at 49 s its next round hears of both and
  gives q up.

After each step, :class:`ReplicaLockStep` records who may consume q (an orderly consume request runs only while its
``ProcessQueue`` is locked and its lock is at most 30 s old) and what each replica's lock table says. A consumer's
trust in its lock can lapse between two steps; the replay then adds a step at that instant.

Simplified, and said so: both clients see every change of the route at once. A real client reads its route every
30 s (``pollNameServerInterval``) and until then sends its lock requests to the old address, where they fail; which
consumer reaches the new master first can then differ from the replay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from rmqlib.broker.replica_locks import BrokerMemberGroup
from rmqlib.checks import check_bool, check_int
from rmqlib.client.fake_api import InMemoryClientBrokerAPI
from rmqlib.client.process_queue import REBALANCE_LOCK_MAX_LIVE_TIME
from rmqlib.client.rebalance import RebalanceImpl
from rmqlib.model import MessageQueue
from rmqlib.strategies import AllocateMessageQueueAveragely

GROUP, TOPIC = "GID_orderly", "TopicOrder"
QUEUE = MessageQueue(TOPIC, "broker-a", 0)
OWNER, NEWCOMER = "10.0.0.1", "10.0.0.2"
MASTER_STOPS_MS, NEWCOMER_ASKS_MS, NEWCOMER_GIVES_UP_MS = 25_000, 29_000, 49_000
RENEW_EVERY_MS = 20_000  # ConsumeMessageOrderlyService's lockMQPeriodically
LOCK_EXPIRED = "lock expires"


class ReplicaLockStep(NamedTuple):
    """The state of q after one step of :func:`replay_master_outage`."""

    time_ms: int
    step: str  # e.g. "10.0.0.1 lockAll", "master stops", "10.0.0.1 lock expires"
    consumers: tuple[str, ...]  # who may consume q now, in client id order
    owners: tuple[str | None, ...]  # each replica's lock owner of q, by broker id (None: none, expired or down)


def replay_master_outage(
    *,
    replicas: int = 2,
    lock_in_strict_mode: bool = False,
    enable_slave_acting_master: bool = True,
    master_back_ms: int | None = 28_000,
    end_ms: int = 120_000,
) -> list[ReplicaLockStep]:
    """The story above for one setting of broker-a's replicas, from 0 to ``end_ms``."""
    check_int(replicas, "replicas", 1, 16)
    check_bool(lock_in_strict_mode, "lock_in_strict_mode")
    check_bool(enable_slave_acting_master, "enable_slave_acting_master")
    check_int(end_ms, "end_ms", NEWCOMER_GIVES_UP_MS, 3_600_000)
    if master_back_ms is not None:
        check_int(master_back_ms, "master_back_ms", MASTER_STOPS_MS + 1, end_ms)
    brokers = BrokerMemberGroup(
        QUEUE.broker_name,
        replicas,
        lock_in_strict_mode=lock_in_strict_mode,
        enable_slave_acting_master=enable_slave_acting_master,
    )
    api = InMemoryClientBrokerAPI()
    api.lock_servers[QUEUE.broker_name] = brokers
    owner, newcomer = (
        RebalanceImpl(GROUP, cid, api, AllocateMessageQueueAveragely(), consume_orderly=True)
        for cid in (OWNER, NEWCOMER)
    )

    def round_of(consumer: RebalanceImpl, mqs: set[MessageQueue]) -> Callable[[int], object]:
        return lambda now_ms: consumer.update_process_queue_table_in_rebalance(TOPIC, mqs, True, now_ms)

    script: list[tuple[int, str, Callable[[int], object]]] = [
        (0, f"{OWNER} takes q", round_of(owner, {QUEUE})),
        (MASTER_STOPS_MS, "master stops", lambda _: brokers.stop(0)),
        (NEWCOMER_ASKS_MS, f"{NEWCOMER} asks for q", round_of(newcomer, {QUEUE})),
        (NEWCOMER_GIVES_UP_MS, f"{NEWCOMER} gives q up", round_of(newcomer, set())),
    ]
    script += [(t, f"{OWNER} lockAll", owner.lock_all) for t in range(RENEW_EVERY_MS, end_ms + 1, RENEW_EVERY_MS)]
    if master_back_ms is not None:
        script.append((master_back_ms, "master starts", lambda _: brokers.start(0)))
    script.sort(key=lambda s: s[0])  # stable: at one instant, the order above

    consumers = (owner, newcomer)

    def may_consume(now_ms: int) -> tuple[str, ...]:
        return tuple(
            c.client_id
            for c in consumers
            if (pq := c.process_queue_table.get(QUEUE)) is not None and pq.locked and not pq.is_lock_expired(now_ms)
        )

    def record(now_ms: int, step: str) -> None:
        owners = tuple(brokers.lock_owner(i, GROUP, QUEUE, now_ms) for i in sorted(brokers.replicas))
        steps.append(ReplicaLockStep(now_ms, step, may_consume(now_ms), owners))

    steps: list[ReplicaLockStep] = []
    for i, (now_ms, step, call) in enumerate(script):
        call(now_ms)
        record(now_ms, step)
        next_ms = script[i + 1][0] if i + 1 < len(script) else end_ms + 1
        lapses = []  # a lock trusted now but not at the next step lapses in between
        for c in consumers:
            pq = c.process_queue_table.get(QUEUE)
            if pq is not None and pq.locked:
                lapse_ms = pq.last_lock_timestamp + REBALANCE_LOCK_MAX_LIVE_TIME + 1
                if now_ms < lapse_ms < next_ms:
                    lapses.append((lapse_ms, c.client_id))
        for lapse_ms, cid in sorted(lapses):
            record(lapse_ms, f"{cid} {LOCK_EXPIRED}")
    return steps

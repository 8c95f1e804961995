"""A FIFO group's batch when its gRPC member stops holding it: who gets it, when, through the proxy.

Two push consumers of the ``rocketmq-clients`` SDK, A and B, read a one-queue topic of a FIFO group through one
proxy. A receives the first batch; then it leaves, in one of four ways (:class:`MemberLeave`), and B, which keeps
asking, receives the batch (or the rest of the queue) once the broker lends it again. The replay steps the library's
models of every party, one simulated second at a time:

* the broker's orderly Pop (:class:`~rmqlib.broker.pop.PopMessageProcessor` with ``order=True``), which lends a
  queue's batch to one receive at a time;
* the proxy's :class:`~rmqlib.proxy.ReceiptHandleManager` (auto-renewal every 5 s; clearing a client's messages
  when it leaves), listening on the proxy's consumer registry, a
  :class:`~rmqlib.broker.consumer_manager.ConsumerManager` scanned every 10 s
  (:class:`~rmqlib.broker.consumer_manager.ClientHousekeepingService`, the scan of ClusterServiceManager#init or, in
  local mode, the broker's);
* the clients' settings at start and their heartbeats, 1 s after start and every 10 s after (ClientManagerImpl
  ``HEART_BEAT_*``), each of which registers the client (ClientActivity#processAndWriteClientSettings, #heartbeat).

Each second runs, in this order: A's leaving (at ``left_ms``), the heartbeats due, the registry's scan, the
proxy's renewal scan (every 5 s from 0), then the receives (A's first one at 1 s; B's from 2 s on, every second).
B's receive is a long poll in the SDK, answered as soon as the broker can lend; asking every second stands for it,
so a time here is right to within that second. A receive pops up to ``batch`` messages with the proxy's 60 s
invisible time (``autoRenew``), orderly, and an empty receive keeps its attempt id (ProcessQueueImpl#
onReceiveMessageResult).

Left out: A's further receives (the queue stays blocked by its own batch, so they get nothing), the
proxy's request and renewal thread pools, and, for a shutdown, the wait for in-flight receives
(PushConsumerImpl#waitingReceiveRequestFinished), which changes nothing B sees.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from rmqlib.broker import BrokerConfig, MessageStore, PopMessageProcessor
from rmqlib.broker.consumer_manager import ClientChannelInfo, ClientHousekeepingService, ConsumerManager
from rmqlib.checks import check_enum, check_int
from rmqlib.client.grpc_push import HEART_BEAT_INITIAL_DELAY_MS, HEART_BEAT_PERIOD_MS, SHUTDOWN_ACK_WAIT_MS
from rmqlib.proxy import (
    DEFAULT_INVISIBLE_TIME_MILLS,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    ReceiptHandleManager,
    RenewKind,
    register_client,
)

GROUP, TOPIC = "GID_fifo", "TopicFifo"
STEP_MS = 1_000


class MemberLeave(StrEnum):
    """How A stops holding its batch."""

    CRASH = "crash"  # the process dies: no ack, no more heartbeats
    HOST_LOSS = "host_loss"  # the machine vanishes: to the proxy, the same as a crash
    HANG = "hang"  # the listener never returns: no ack, but the heartbeats go on
    SHUTDOWN = "shutdown"  # PushConsumerImpl#shutDown: the batch consumed and acked, then NotifyClientTermination


_LEAVING = {
    MemberLeave.CRASH: "crashes",
    MemberLeave.HOST_LOSS: "its host vanishes",
    MemberLeave.HANG: "its listener hangs",
}


@dataclass(frozen=True)
class FifoHandover:
    """What the replay saw. ``unregistered_ms``: when the proxy's registry dropped A, if it did before B received
    (else None); ``taken_ms`` and ``taken``: when B first received messages and which (None and ``()``: not within
    the horizon); ``renewals``: how many times the proxy renewed A's batch; ``timeline``: ``(ms, who, what)`` rows."""

    leave: MemberLeave
    left_ms: int
    unregistered_ms: int | None
    taken_ms: int | None
    taken: tuple[str, ...]
    renewals: int
    timeline: tuple[tuple[int, str, str], ...]

    @property
    def wait_ms(self) -> int | None:
        """From A's leaving to B's first messages."""
        return None if self.taken_ms is None else self.taken_ms - self.left_ms


def fifo_handover(
    leave: MemberLeave | str,
    left_ms: int = 3_000,
    *,
    messages: int = 5,
    batch: int = 3,
    horizon_ms: int = 4 * 3_600_000,
    seed: int = 0,
) -> FifoHandover:
    """Replay A receiving ``batch`` of the queue's ``messages`` at 1 s and leaving at ``left_ms`` (whole seconds,
    after 1 s), until B receives messages or ``horizon_ms`` passes. The same arguments give the same result.

    >>> crash = fifo_handover("crash", left_ms=3_000)
    >>> crash.unregistered_ms, crash.taken_ms, crash.taken
    (130000, 131000, ('m0', 'm1', 'm2'))
    """
    leave = check_enum(leave, "leave", MemberLeave)
    check_int(messages, "messages", 1, 10_000)
    check_int(batch, "batch", 1, 32)
    check_int(horizon_ms, "horizon_ms", 2 * STEP_MS, 24 * 3_600_000)
    check_int(left_ms, "left_ms", 2 * STEP_MS, horizon_ms)
    check_int(seed, "seed")
    if left_ms % STEP_MS:
        raise ValueError(f"left_ms must be a whole number of seconds (a multiple of {STEP_MS}), got {left_ms}")

    config = BrokerConfig()
    store = MessageStore(config)
    store.create_topic(TOPIC, 1)
    for i in range(messages):
        store.put_message(TOPIC, 0, now_ms=0, uniq_key=f"m{i}")
    store.reput(0)
    broker = PopMessageProcessor(store, config, random.Random(seed))
    receipts = ReceiptHandleManager({config.broker_name: broker})
    registry = ConsumerManager(listeners=[receipts], broker_config=config)
    housekeeping = ClientHousekeepingService(registry, start_ms=0)
    channels = {who: ClientChannelInfo(who, who) for who in ("A", "B")}
    heartbeating = {"A": True, "B": True}
    timeline: list[tuple[int, str, str]] = []
    unregistered_ms: int | None = None

    def receive(who: str, attempt_id: str, now_ms: int) -> list[str]:
        got = broker.pop(
            GROUP, TOPIC, -1, batch, DEFAULT_INVISIBLE_TIME_MILLS, now_ms, order=True, attempt_id=attempt_id
        )
        for m in got.messages:
            receipts.add_receipt_handle(who, GROUP, m.handle, m.message.reconsume_times)
        return [m.message.uniq_key for m in got.messages]

    def is_online(channel: str, group: str) -> bool:
        return registry.find_channel(group, channel) is not None

    def renewals() -> int:
        return len({e.time_ms for e in receipts.events if e.kind is RenewKind.RENEW})

    def log(now_ms: int, who: str, what: str) -> None:
        timeline.append((now_ms, who, what))

    for now in range(0, horizon_ms + 1, STEP_MS):
        if now == left_ms:
            if leave is MemberLeave.SHUTDOWN:
                for handle in receipts.held("A", GROUP):  # the listener finished the batch: ack each, newest handle
                    watched = receipts.remove_receipt_handle("A", GROUP, handle)
                    assert watched is not None
                    broker.ack(watched.handle, now)
                log(now, "A", "shuts down: its batch consumed and acked")
            else:
                heartbeating["A"] = leave is MemberLeave.HANG
                log(now, "A", _LEAVING[leave])
        if leave is MemberLeave.SHUTDOWN and now == left_ms + SHUTDOWN_ACK_WAIT_MS:
            heartbeating["A"] = False
            registry.unregister_consumer(GROUP, channels["A"], False, now)  # NotifyClientTermination
            unregistered_ms = now
            log(now, "proxy", "unregisters A (NotifyClientTermination)")
        if now == 0 or (now - HEART_BEAT_INITIAL_DELAY_MS) % HEART_BEAT_PERIOD_MS == 0:  # settings, then heartbeats
            for who, alive in heartbeating.items():
                if alive:
                    register_client(registry, GROUP, channels[who], now)
        cleared_before = len(receipts.events)
        for _, info in housekeeping.run_due(now):
            unregistered_ms = now
            silent_s = (now - info.last_update_timestamp) // 1000
            log(now, "proxy", f"unregisters {info.client_id}: its last heartbeat was {silent_s} s ago (over 120 s)")
        if now % RENEW_SCHEDULE_PERIOD_MILLIS == 0:
            receipts.schedule_renew_task(now, is_online)
        for kind in RenewKind:
            done = [e for e in receipts.events[cleared_before:] if e.kind is kind]
            if done:
                keys = ", ".join(str(e.handle.queue_offset) for e in done)
                how = f"visible again in {done[0].invisible_time_ms // 1000} s"
                log(now, "proxy", f"{kind.value}: A's messages at offsets {keys}, {how}")
        if now == HEART_BEAT_INITIAL_DELAY_MS:
            log(now, "A", "receives " + ", ".join(receive("A", "A-1", now)))
        elif now > HEART_BEAT_INITIAL_DELAY_MS:
            got = receive("B", "B-1", now)  # B's receives come back empty, so they keep their attempt id
            if got:
                log(now, "B", "receives " + ", ".join(got))
                return FifoHandover(leave, left_ms, unregistered_ms, now, tuple(got), renewals(), tuple(timeline))
    return FifoHandover(leave, left_ms, unregistered_ms, None, (), renewals(), tuple(timeline))


__all__ = ["FifoHandover", "MemberLeave", "fifo_handover"]

"""A minimal in-memory broker side for stepping client models by hand (tests, notebook cells).

Not a broker model (those live in ``rmqlib.broker``): one shared table per
concern, no routing, no latency. Failures can be injected per method.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rmqlib.checks import ArgumentTypeError, check_bool, check_int, check_items, check_str
from rmqlib.client.api import BrokerError, ConsumerData, OffsetNotFoundError
from rmqlib.client.process_queue import check_time
from rmqlib.model import MessageQueue


def _mq(mq: object) -> MessageQueue:
    if not isinstance(mq, MessageQueue):
        raise ArgumentTypeError(f"mq must be a MessageQueue, got {type(mq).__name__}")
    return mq


def _mqs(mqs: Iterable[MessageQueue]) -> frozenset[MessageQueue]:
    checked: frozenset[MessageQueue] = check_items(mqs, "mqs", MessageQueue, into=frozenset)
    return checked


#: Broker-side lock expiry (broker/.../client/rebalance/RebalanceLockManager.java;
#: rocketmq.broker.rebalance.lockMaxLiveTime).
BROKER_REBALANCE_LOCK_MAX_LIVE_TIME = 60_000


class InMemoryClientBrokerAPI:
    """Implements :class:`rmqlib.client.api.ClientBrokerAPI` with plain dicts.

    ``consumer_ids[group]``: the member list every broker reports (None: the
    call fails). ``locks[(group, mq)] = (client_id, last_update_ms)`` with the
    broker's grant rule (absent, same client, or expired). ``offsets[(group, mq)]``:
    durable consumer offsets. ``max_offsets[mq]``: queue max offsets (default 0).
    ``fail``: names of methods that raise BrokerError. ``lock_servers[broker_name]``: an object whose
    ``lock_batch_mq(group, client_id, mqs, now_ms)`` and ``unlock_batch_mq(group, client_id, mqs, now_ms)`` answer
    that broker name's lock requests instead of the shared table (e.g. :class:`rmqlib.broker.BrokerMemberGroup`).
    """

    def __init__(self) -> None:
        self.consumer_ids: dict[str, list[str] | None] = {}
        self.locks: dict[tuple[str, MessageQueue], tuple[str, int]] = {}
        self.offsets: dict[tuple[str, MessageQueue], int] = {}
        self.max_offsets: dict[MessageQueue, int] = {}
        self.timestamp_offsets: dict[tuple[MessageQueue, int], int] = {}
        self.heartbeats: list[tuple[int, str, list[ConsumerData]]] = []
        self.rebalance_heartbeats: list[int] = []  # when a heartbeat was sent because the queues changed
        self.unlock_calls: list[tuple[str, str, frozenset[MessageQueue]]] = []
        self.lock_calls: list[tuple[str, str, frozenset[MessageQueue]]] = []
        self.fail: set[str] = set()
        self.lock_servers: dict[str, Any] = {}

    @staticmethod
    def _check_call(broker_name: str, group: str, client_id: str, now_ms: int) -> None:
        check_str(broker_name, "broker_name", empty=True)
        check_str(group, "group")
        check_str(client_id, "client_id")
        check_time(now_ms)

    def _maybe_fail(self, name: str) -> None:
        if name in self.fail:
            raise BrokerError(f"injected failure of {name}")

    def find_consumer_id_list(self, topic: str, group: str) -> list[str] | None:
        check_str(topic, "topic")
        check_str(group, "group")
        if "find_consumer_id_list" in self.fail:
            return None
        ids = self.consumer_ids.get(group)
        return None if ids is None else list(ids)

    def lock_batch_mq(
        self, broker_name: str, group: str, client_id: str, mqs: Iterable[MessageQueue], now_ms: int
    ) -> set[MessageQueue]:
        self._check_call(broker_name, group, client_id, now_ms)
        checked = _mqs(mqs)
        self._maybe_fail("lock_batch_mq")
        self.lock_calls.append((broker_name, client_id, checked))
        server = self.lock_servers.get(broker_name)
        if server is not None:
            return set(server.lock_batch_mq(group, client_id, checked, now_ms))
        granted = set()
        for mq in checked:
            held = self.locks.get((group, mq))
            if held is None or held[0] == client_id or now_ms - held[1] > BROKER_REBALANCE_LOCK_MAX_LIVE_TIME:
                self.locks[(group, mq)] = (client_id, now_ms)
                granted.add(mq)
        return granted

    def unlock_batch_mq(
        self, broker_name: str, group: str, client_id: str, mqs: Iterable[MessageQueue], now_ms: int
    ) -> None:
        self._check_call(broker_name, group, client_id, now_ms)
        checked = _mqs(mqs)
        self._maybe_fail("unlock_batch_mq")
        self.unlock_calls.append((broker_name, client_id, checked))
        server = self.lock_servers.get(broker_name)
        if server is not None:
            server.unlock_batch_mq(group, client_id, checked, now_ms)
            return
        for mq in checked:
            held = self.locks.get((group, mq))
            if held is not None and held[0] == client_id:
                del self.locks[(group, mq)]

    def query_consumer_offset(self, group: str, mq: MessageQueue) -> int:
        check_str(group, "group")
        _mq(mq)
        self._maybe_fail("query_consumer_offset")
        try:
            return self.offsets[(group, mq)]
        except KeyError:
            raise OffsetNotFoundError(f"no offset for {group} {mq}") from None

    def update_consumer_offset(self, group: str, mq: MessageQueue, offset: int) -> None:
        check_str(group, "group")
        _mq(mq)
        check_int(offset, "offset", 0)
        self._maybe_fail("update_consumer_offset")
        self.offsets[(group, mq)] = offset

    def get_max_offset(self, mq: MessageQueue) -> int:
        _mq(mq)
        self._maybe_fail("get_max_offset")
        return self.max_offsets.get(mq, 0)

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        _mq(mq)
        check_time(timestamp_ms, "timestamp_ms")
        self._maybe_fail("search_offset")
        return self.timestamp_offsets.get((mq, timestamp_ms), 0)

    def send_heartbeat(
        self, client_id: str, consumers: list[ConsumerData], now_ms: int, is_rebalance: bool = False
    ) -> None:
        check_str(client_id, "client_id")
        check_bool(is_rebalance, "is_rebalance")
        if not isinstance(consumers, list) or not all(isinstance(c, ConsumerData) for c in consumers):
            raise ArgumentTypeError(f"consumers must be a list of ConsumerData, got {consumers!r:.80}")
        check_time(now_ms)
        self._maybe_fail("send_heartbeat")
        self.heartbeats.append((now_ms, client_id, consumers))
        if is_rebalance:
            self.rebalance_heartbeats.append(now_ms)

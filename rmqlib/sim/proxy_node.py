"""The 5.x proxy in simulated time, between a gRPC group (:mod:`rmqlib.sim.grpc_consumer_node`) and the brokers.

A :class:`ProxyNode` owns the proxy's models: its consumer registry (a
:class:`~rmqlib.broker.consumer_manager.ConsumerManager`, scanned every 10 s for clients whose last heartbeat is more
than ``channel_expired_ms`` old, as ClusterServiceManager#init schedules it) and its
:class:`~rmqlib.proxy.ReceiptHandleManager` (the renewal scan every 5 s, listening on that registry). It answers
what a gRPC push consumer asks:

* its assignment (:func:`~rmqlib.proxy.query_assignment`, from the name server's route alone);
* a receive (ReceiveMessageActivity): a pop of queue -1 of the named broker with the proxy's 60 s invisible time
  (``autoRenew``), the clamped poll time and the client's attempt id, orderly for a FIFO group; the messages it finds
  are watched for the client, then written to it. A client whose process has died has its stream cancelled, so
  the write fails and each message is handed back 1 s later (ReceiveMessageResponseStreamWriter's nack), though the
  manager still watches it until the registry drops the client;
* an ack (AckMessageActivity): the handle the manager holds now, the latest renewal's, is acked at the broker;
* a heartbeat or the client's settings (ClientActivity): the client is registered (again);
* NotifyClientTermination: the client is unregistered, and what it still holds is shown again 1 s later.

Modelled as one proxy in cluster mode that never fails: a request takes ``rpc_latency_ms`` from the client to the
proxy and as long back, and so does each call of the proxy to a broker (pop, ack, nack); its renewals and clears
take effect at the broker at once (their answers replace the handles it keeps).
"""

from __future__ import annotations

from collections.abc import Mapping

from rmqlib.broker import BrokerConfig
from rmqlib.broker.consumer_manager import (
    CLIENT_HOUSEKEEPING_INTERVAL_MS,
    ClientChannelInfo,
    ConsumerManager,
)
from rmqlib.broker.pop import AckHandle
from rmqlib.model import MessageQueue
from rmqlib.proxy import (
    BROKER_ACTING_QUEUE_ID,
    DEFAULT_INVISIBLE_TIME_MILLS,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    QueryAssignmentResponse,
    ReceiptHandleManager,
    RenewKind,
    query_assignment,
    register_client,
)
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import ORDERLY, Scenario
from rmqlib.sim.wire import PopCall, ProxiedPop

GRPC_MIN_LONG_POLLING_MS = 5_000  # ProxyConfig.grpcClientConsumerMinLongPollingTimeoutMillis
GRPC_MAX_LONG_POLLING_MS = 20_000  # ProxyConfig.grpcClientConsumerMaxLongPollingTimeoutMillis
NACK_INVISIBLE_TIME_MS = 1_000  # ReceiveMessageResponseStreamWriter.NACK_INVISIBLE_TIME


class ProxyNode:
    """The proxy: its consumer registry and receipt handles, and the requests of the gRPC clients."""

    def __init__(self, scenario: Scenario, clock: Clock, recorder: Recorder, routes: Routes, brokers: Mapping):
        self.scenario, self.clock, self.recorder, self.routes, self.brokers = scenario, clock, recorder, routes, brokers
        self.group = scenario.consumer_group
        self.fifo = scenario.consume_mode is ORDERLY  # the subscription group's consumeMessageOrderly
        self.receipts = ReceiptHandleManager(brokers)  # a BrokerNode changes invisible times as the processor does
        config = BrokerConfig(channel_expired_timeout=scenario.channel_expired_ms)
        self.registry = ConsumerManager(listeners=[self.receipts], broker_config=config)
        self.channels: dict[str, ClientChannelInfo] = {}

    # --- the proxy's own services ----------------------------------------------------------------------------
    def housekeeping_loop(self):
        """The registry's scan every 10 s: a client silent for longer than channelExpiredTimeout is unregistered,
        and the receipt handle manager clears what it held."""
        clock = self.clock
        while True:
            yield clock.timeout(CLIENT_HOUSEKEEPING_INTERVAL_MS)
            now = int(clock.now)
            for _, info in self.registry.scan_not_active_channel(now):
                silent_s = (now - info.last_update_timestamp) // 1000
                self.recorder.log(now, "proxy unregistered", info.client_id, f"no heartbeat for {silent_s} s")
                self._record_invisible_time_changes(now)

    def renew_loop(self):
        """DefaultReceiptHandleManager#scheduleRenewTask: from the proxy's start, every 5 s."""
        clock = self.clock
        while True:
            self.receipts.schedule_renew_task(int(clock.now), self._online)
            self._record_invisible_time_changes(int(clock.now))
            yield clock.timeout(RENEW_SCHEDULE_PERIOD_MILLIS)

    def _online(self, channel: str, group: str) -> bool:
        return self.registry.find_channel(group, channel) is not None

    def _record_invisible_time_changes(self, now: int) -> None:
        """Count the changes of invisible time the proxy sent at ``now`` by kind (renew, stop renew, clear group)."""
        events = self.receipts.events
        for event in events:
            self.recorder.counters[f"proxy {event.kind.value}"] += 1
            if event.kind is RenewKind.CLEAR_GROUP:
                self.recorder.log(now, "proxy cleared", event.channel, f"{event.handle.topic}@{event.handle.queue_id}")
        events.clear()

    # --- what the clients ask ------------------------------------------------------------------------------
    def register(self, client_id: str, now: int) -> None:
        """A heartbeat, or the client's settings on its telemetry stream (ClientActivity#registerConsumer)."""
        info = self.channels.get(client_id)
        if info is None:
            info = self.channels[client_id] = ClientChannelInfo(client_id, client_id)
        register_client(self.registry, self.group, info, now)

    def terminate(self, client_id: str, now: int) -> None:
        """NotifyClientTermination: the client leaves the registry at once, and what it holds is cleared."""
        info = self.channels.get(client_id)
        if info is not None:
            self.registry.unregister_consumer(self.group, info, False, now)
            self.recorder.log(now, "proxy unregistered", client_id, "NotifyClientTermination")
            self._record_invisible_time_changes(now)

    def query_assignment(self, topic: str) -> QueryAssignmentResponse:
        """RouteActivity#queryAssignment, from the name server's route now."""
        route = self.routes.namesrv.pickup_topic_route_data(topic)
        if route is None:  # not in a gRPC run: its topics stay routed (no topic changes, no outages)
            raise RuntimeError(f"no route for {topic!r}")
        return query_assignment(route, topic, self.fifo)

    def receive(self, client, mq: MessageQueue, expression: str, batch: int, attempt_id: str, polling_ms: int):
        """One ReceiveMessage from ``client`` (a generator its receive loop runs): the messages it gets (a list of
        popped items), once the answer is back at the client."""
        clock, latency = self.clock, self.scenario.rpc_latency_ms
        yield clock.timeout(latency)  # the client's request reaches the proxy
        poll_ms = min(max(polling_ms, GRPC_MIN_LONG_POLLING_MS), GRPC_MAX_LONG_POLLING_MS)
        broker = self.brokers[mq.broker_name]
        terms = ProxiedPop(batch, DEFAULT_INVISIBLE_TIME_MILLS, poll_ms, self.fifo, attempt_id)
        call = PopCall(mq.topic, BROKER_ACTING_QUEUE_ID, expression, int(clock.now), _always, clock.event(), terms)
        yield clock.timeout(latency)  # the proxy's pop reaches the broker
        self.recorder.counters["pops"] += 1
        result = broker.serve_pop(call)
        if result is None:  # held at the broker until woken or its poll time ends
            yield call.waiter
            result = call.waiter.value
        yield clock.timeout(latency)  # the broker's answer reaches the proxy
        popped = list(result.messages)
        if popped:
            info = self.channels.get(client.cid)
            if info is None or self.registry.find_channel(self.group, info.channel) is None:
                popped = self._nack(popped)  # the client is disconnected: MESSAGE_NOT_FOUND
            else:
                for item in popped:
                    self.receipts.add_receipt_handle(client.cid, self.group, item.handle, item.message.reconsume_times)
                if not client.connected:  # its stream is cancelled: writing the answer fails
                    popped = self._nack(popped)
        yield clock.timeout(latency)  # the answer reaches the client
        return popped if client.alive else []

    def _nack(self, popped) -> list:
        """processThrowableWhenWriteMessage: each message's invisible time changed to 1 s, at its broker one network
        delay later."""
        for item in popped:
            broker = self.brokers[item.handle.broker_name]
            self.clock.later(self.scenario.rpc_latency_ms, self._change_at, broker, item.handle, NACK_INVISIBLE_TIME_MS)
        self.recorder.counters["proxy nacked"] += len(popped)
        return []

    def _change_at(self, broker, handle: AckHandle, invisible_time_ms: int) -> None:
        broker.change_invisible_time(handle, invisible_time_ms, int(self.clock.now))

    def ack(self, client_id: str, handle: AckHandle) -> None:
        """An ack sent now reaches the proxy one network delay later; the proxy takes the latest handle it holds for
        the message (each renewal replaces it), or the client's if it holds none, and acks it at the broker one
        network delay after that."""
        self.clock.later(self.scenario.rpc_latency_ms, self._ack, client_id, handle)

    def _ack(self, client_id: str, handle: AckHandle) -> None:
        watched = self.receipts.remove_receipt_handle(client_id, self.group, handle)
        latest = handle if watched is None else watched.handle
        self.clock.later(self.scenario.rpc_latency_ms, self._ack_at, self.brokers[latest.broker_name], latest)
        self.recorder.counters["acks"] += 1

    def _ack_at(self, broker, handle: AckHandle) -> None:
        if handle.is_order:
            broker.ack_orderly(handle, int(self.clock.now))
        else:
            broker.pop.ack(handle, int(self.clock.now))


def _always() -> bool:
    """The proxy's own connection to a broker: always open here."""
    return True


__all__ = ["ProxyNode"]

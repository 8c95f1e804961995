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
* an ack (AckMessageActivity): the handle the manager holds now, the latest renewal's (or the client's own, once the
  manager no longer watches the message), is acked at the broker, unless its message is already visible again: the
  proxy refuses an expired handle as INVALID_RECEIPT_HANDLE (and so it refuses to renew, clear or nack one);
* a heartbeat or the client's settings (ClientActivity): the client is registered (again);
* NotifyClientTermination: the client is unregistered, and what it still holds is shown again 1 s later.

The proxy reads routes through its cache (:class:`~rmqlib.proxy.TopicRouteService`: an entry is reloaded from the
name server on the first read more than 20 s after it was written, that read still getting the old one). So when a
broker stops (:class:`~rmqlib.sim.scenario.BrokerOutage`), the proxy goes on sending to it for up to 20 s: its pops and
acks fail to connect (the client receives again, or acks again, 1 s later) and its renewals fail (tried again at the
next scans, until the handle has expired and the proxy refuses it). A broker that vanishes instead
(``BrokerOutage.silent``) answers nothing: a receive waits for the client's deadline (23 s for a push consumer, 33 s
for a simple one), an ack for its 3 s one, and the name server drops the broker only 120 s after its last
registration. Once the topic's route is reloaded
without the broker, a receive for a queue of the broker pops another broker in turn, and the assignments leave the
broker out. Once the route of the topic named after the broker is reloaded without it, the proxy cannot find the
broker's address: an ack for one of its messages is refused as INVALID_RECEIPT_HANDLE, which the client takes as
final (the message shows again at the broker when its invisible time ends), and so is a renewal. When the broker
comes back, each route takes it back at its next reload. A topic change (:class:`~rmqlib.sim.scenario.TopicChange`)
counts at the broker at once, since the proxy pops queue -1 and the broker reads its own topic config; a broker that
joins or leaves the topic reaches the assignments with the topic's next reload, and until then a pop of a topic the
broker no longer has is refused (TOPIC_NOT_EXIST), which fails the receive. A restarted broker keeps a FIFO group's
orderly state (Java persists it every 5 s and at shutdown), so its queues go on in order.

Modelled as one proxy in cluster mode that never fails: a request takes ``rpc_latency_ms`` from the client to the
proxy and as long back, and so does each call of the proxy to a broker (pop, ack, nack); a failed connection is
known one such delay after the call; an ack's answer comes back the way it went (:meth:`ProxyNode.ack`); its
renewals and clears take effect at the broker at once (their answers replace the handles it keeps).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from rmqlib.broker import BrokerConfig
from rmqlib.broker.consumer_manager import (
    CLIENT_HOUSEKEEPING_INTERVAL_MS,
    ClientChannelInfo,
    ConsumerManager,
)
from rmqlib.broker.pop import AckHandle
from rmqlib.broker.protocol import ResponseCode
from rmqlib.client.grpc_push import REQUEST_TIMEOUT_MS
from rmqlib.model import MessageQueue
from rmqlib.namesrv import TopicRouteData
from rmqlib.proxy import (
    BROKER_ACTING_QUEUE_ID,
    DEFAULT_INVISIBLE_TIME_MILLS,
    RENEW_SCHEDULE_PERIOD_MILLIS,
    Code,
    MQClientException,
    ProxyException,
    QueryAssignmentResponse,
    ReceiptHandleManager,
    RemotingConnectException,
    RemotingTimeoutException,
    RenewKind,
    RouteQueue,
    TopicRouteService,
    changed_handle,
    query_assignment,
    query_route,
    register_client,
    status_code,
    validate_receipt_handle,
)
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import GRPC_SIMPLE, ORDERLY, Scenario
from rmqlib.sim.wire import POP_ANSWERS, BrokerUnavailable, PopCall, ProxiedPop

GRPC_MIN_LONG_POLLING_MS = 5_000  # ProxyConfig.grpcClientConsumerMinLongPollingTimeoutMillis
GRPC_MAX_LONG_POLLING_MS = 20_000  # ProxyConfig.grpcClientConsumerMaxLongPollingTimeoutMillis
NACK_INVISIBLE_TIME_MS = 1_000  # ReceiveMessageResponseStreamWriter.NACK_INVISIBLE_TIME


class ReceiveFailed(Exception):
    """The proxy answered a receive with an error status (``code``)."""

    def __init__(self, code: Code, why: str) -> None:
        super().__init__(f"{code.name}: {why}")
        self.code = code


class AckCall:
    """One ack on its way through the proxy: the status its answer brings the client (set once the proxy knows it)."""

    __slots__ = ("handle", "code")
    counter = "acks"  # what the recorder counts it as

    def __init__(self, handle: AckHandle) -> None:
        self.handle, self.code = handle, Code.OK

    def at_broker(self, broker, handle: AckHandle, now: int) -> None:
        code = broker.ack_orderly(handle, now) if handle.is_order else broker.pop.ack(handle, now)
        self.code = Code.OK if code is ResponseCode.SUCCESS else Code.INTERNAL_SERVER_ERROR


class ChangeCall(AckCall):
    """One change of invisible time on its way through the proxy: its status, and the new receipt handle an OK brings
    (None otherwise: the answer then carries none). An orderly message the group has committed past gets an OK with
    an already expired handle (:func:`~rmqlib.proxy.changed_handle`)."""

    __slots__ = ("invisible_ms", "receipt_handle")
    counter = "invisible time changes"

    def __init__(self, handle: AckHandle, invisible_ms: int) -> None:
        super().__init__(handle)
        self.invisible_ms, self.receipt_handle = invisible_ms, None

    def at_broker(self, broker, handle: AckHandle, now: int) -> None:
        code, new_handle = broker.change_invisible_time(handle, self.invisible_ms, now)
        ok = code is ResponseCode.SUCCESS
        self.code = Code.OK if ok else Code.INTERNAL_SERVER_ERROR
        self.receipt_handle = changed_handle(handle, new_handle) if ok else None


class ProxyNode:
    """The proxy: its consumer registry, route cache and receipt handles, and the requests of the gRPC clients."""

    def __init__(
        self, scenario: Scenario, clock: Clock, recorder: Recorder, routes: Routes, brokers: Mapping, rng: random.Random
    ):
        self.scenario, self.clock, self.recorder, self.routes, self.brokers = scenario, clock, recorder, routes, brokers
        self.group = scenario.consumer_group
        self.fifo = scenario.consume_mode is ORDERLY  # the subscription group's consumeMessageOrderly
        # a held pop can go unanswered only when a broker may vanish: only then does a receive wait with a deadline
        self.brokers_may_vanish = any(outage.silent for outage in scenario.outages)
        self.route_service = TopicRouteService(self._load_route, rng)
        # its renewals and clears go to each broker through the address its route cache gives
        self.receipts = ReceiptHandleManager({name: _ProxiedBroker(self, node) for name, node in brokers.items()})
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

    def _load_route(self, topic: str) -> TopicRouteData | None:
        """The name server's answer for ``topic`` now (for the topic named after a broker: its one queue there,
        while the name server has the broker)."""
        namesrv = self.routes.namesrv
        if topic in self.brokers:
            return namesrv.pickup_broker_topic_route_data(topic)
        return namesrv.pickup_topic_route_data(topic)

    def reach(self, broker_name: str, now: int) -> None:
        """A call of the proxy to ``broker_name`` about a receipt handle (ack, change of invisible time) sets off: it
        raises :class:`~rmqlib.proxy.ProxyException` when the route cache cannot find the broker,
        :class:`~rmqlib.proxy.RemotingConnectException` when the broker is down, or
        :class:`~rmqlib.proxy.RemotingTimeoutException` when it has vanished (no answer comes)."""
        self.route_service.resolve_broker_addr_in_receipt_handle(broker_name, now)
        self._connect(self.brokers[broker_name])

    @staticmethod
    def _connect(broker) -> None:
        """Raise what a request to ``broker`` fails with now, if it is not up."""
        if not broker.up:
            if broker.silent:
                raise RemotingTimeoutException(f"no answer from {broker.name}")
            raise RemotingConnectException(f"connect to {broker.name} failed")

    def _online(self, channel: str, group: str) -> bool:
        return self.registry.find_channel(group, channel) is not None

    def _record_invisible_time_changes(self, now: int) -> None:
        """Count the changes of invisible time the proxy sent at ``now`` by kind (renew, stop renew, clear group)."""
        events = self.receipts.events
        for event in events:
            self.recorder.counters[f"proxy {event.kind.value}" + (" failed" if event.code is None else "")] += 1
            if event.kind is RenewKind.CLEAR_GROUP and event.code is not None:  # one that failed shows nothing
                self.recorder.log(now, "proxy cleared", event.channel, f"{event.handle.topic}@{event.handle.queue_id}")
        events.clear()

    # --- what the clients ask ------------------------------------------------------------------------------
    def register(self, client_id: str, now: int) -> None:
        """A heartbeat, or the client's settings on its telemetry stream (ClientActivity#registerConsumer)."""
        info = self.channels.get(client_id)
        if info is None:
            info = self.channels[client_id] = ClientChannelInfo(client_id, client_id)
        register_client(self.registry, self.group, info, now, simple=self.scenario.client is GRPC_SIMPLE)

    def terminate(self, client_id: str, now: int) -> None:
        """NotifyClientTermination: the client leaves the registry at once, and what it holds is cleared."""
        info = self.channels.get(client_id)
        if info is not None:
            self.registry.unregister_consumer(self.group, info, False, now)
            self.recorder.log(now, "proxy unregistered", client_id, "NotifyClientTermination")
            self._record_invisible_time_changes(now)

    def query_assignment(self, topic: str) -> QueryAssignmentResponse:
        """RouteActivity#queryAssignment, from the proxy's cached route now (TOPIC_NOT_FOUND when it has none)."""
        try:
            view = self.route_service.get_all_message_queue_view(topic, int(self.clock.now))
        except MQClientException as error:
            return QueryAssignmentResponse(status_code(error), str(error))
        return query_assignment(view.route, topic, self.fifo)

    def query_route(self, topic: str) -> tuple[RouteQueue, ...]:
        """RouteActivity#queryRoute, from the proxy's cached route now; nothing when it has none (the client's
        TOPIC_NOT_FOUND, which changes nothing, as a route without a readable queue does)."""
        try:
            view = self.route_service.get_all_message_queue_view(topic, int(self.clock.now))
        except MQClientException:
            return ()
        return query_route(view.route, topic)

    def receive(
        self,
        client,
        mq: MessageQueue,
        expression: str,
        batch: int,
        attempt_id: str | None,
        polling_ms: int,
        invisible_ms: int | None = None,
    ):
        """One ReceiveMessage from ``client`` (a generator its receive loop runs): the messages it gets (a list of
        popped items), once the answer is back at the client; :class:`ReceiveFailed` when the answer is an error.

        A push consumer's receive (``invisible_ms`` None) asks the proxy to renew what it gets (``autoRenew``): the
        proxy pops with its own 60 s invisible time and keeps a receipt handle of each message. A simple
        consumer's asks for ``invisible_ms`` and nothing is renewed (ReceiveMessageActivity#receiveMessage)."""
        clock, latency = self.clock, self.scenario.rpc_latency_ms
        deadline = int(clock.now) + polling_ms + REQUEST_TIMEOUT_MS  # the client's (ConsumerImpl#receiveMessage)
        yield clock.timeout(latency)  # the client's request reaches the proxy
        poll_ms = min(max(polling_ms, GRPC_MIN_LONG_POLLING_MS), GRPC_MAX_LONG_POLLING_MS)
        try:
            picked = self.route_service.get_all_message_queue_view(mq.topic, int(clock.now)).select_receive_queue(
                mq.broker_name
            )
        except MQClientException as error:
            yield clock.timeout(latency)
            raise ReceiveFailed(status_code(error), str(error)) from error
        if picked is None:
            yield clock.timeout(latency)
            raise ReceiveFailed(Code.FORBIDDEN, "no readable queue")
        broker = self.brokers[picked[0].broker_name]
        if broker.name != mq.broker_name:  # the cached route no longer reads from the named broker
            self.recorder.counters["receives redirected"] += 1
        auto_renew = invisible_ms is None
        invisible = DEFAULT_INVISIBLE_TIME_MILLS if invisible_ms is None else invisible_ms
        terms = ProxiedPop(batch, invisible, poll_ms, self.fifo, attempt_id)
        call = PopCall(mq.topic, BROKER_ACTING_QUEUE_ID, expression, int(clock.now), _always, clock.event(), terms)
        yield clock.timeout(latency)  # the proxy's pop reaches the broker
        result = None
        if broker.up:
            self.recorder.counters["pops"] += 1
            result = broker.serve_pop(call)
            if result is None and not self.brokers_may_vanish:  # held until woken, its poll time ends, or it stops
                yield call.waiter
                result = call.waiter.value
            elif result is None:  # ... or no answer ever comes, if the broker vanishes meanwhile
                yield call.waiter | clock.timeout(deadline - int(clock.now))
                result = call.waiter.value if call.waiter.triggered else None
        elif not broker.silent:
            result = BrokerUnavailable(f"connect to {broker.name} failed")
        else:  # the request goes out on a connection that looks open, and nothing answers
            yield clock.timeout(deadline - int(clock.now))
        if result is None:  # the proxy's pop times out with the client's deadline, which fails the receive
            self.recorder.counters["proxy pops failed"] += 1
            raise ReceiveFailed(Code.PROXY_TIMEOUT, f"no answer from {broker.name} before the deadline")
        yield clock.timeout(latency)  # the broker's answer (or the failed connection) reaches the proxy
        if isinstance(result, BrokerUnavailable) or result.code not in POP_ANSWERS:  # the broker refuses the pop
            self.recorder.counters["proxy pops failed"] += 1
            yield clock.timeout(latency)
            why = str(result) if isinstance(result, BrokerUnavailable) else f"the broker answered {result.code.name}"
            raise ReceiveFailed(Code.INTERNAL_SERVER_ERROR, why)
        if result.code is ResponseCode.POLLING_FULL:  # ReceiveMessageResponseStreamWriter#writeAndComplete
            yield clock.timeout(latency)
            raise ReceiveFailed(Code.TOO_MANY_REQUESTS, "polling full")
        popped = list(result.messages)
        if popped and auto_renew:
            info = self.channels.get(client.cid)
            if info is None or self.registry.find_channel(self.group, info.channel) is None:
                popped = self._nack(popped)  # the client is disconnected: MESSAGE_NOT_FOUND
            else:
                for item in popped:
                    self.receipts.add_receipt_handle(client.cid, self.group, item.handle, item.message.reconsume_times)
        if popped and not client.connected:  # its stream is cancelled: writing the answer fails
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
        now = int(self.clock.now)
        try:
            validate_receipt_handle(handle, now)
            self.reach(broker.name, now)
        except (ProxyException, RemotingConnectException, RemotingTimeoutException):
            self.recorder.counters["proxy nacks failed"] += 1  # only logged: the message shows when its time ends
            return
        broker.change_invisible_time(handle, invisible_time_ms, now)

    def ack(self, client_id: str, handle: AckHandle, answered: Callable[[AckCall], None]) -> None:
        """An ack sent now (AckMessageActivity). ``answered`` gets the call when its answer is back at the client:
        OK, or INTERNAL_SERVER_ERROR when the broker refuses the ack; the timing is :meth:`_send`'s."""
        self._send(client_id, AckCall(handle), answered)

    def change_invisible_duration(
        self, client_id: str, handle: AckHandle, invisible_ms: int, answered: Callable[[ChangeCall], None]
    ) -> None:
        """A change of invisible time sent now (ChangeInvisibleDurationActivity): the broker makes the message
        invisible for ``invisible_ms`` from when the change reaches it. ``answered`` gets the call when its answer is
        back at the client: OK with the new receipt handle, or INTERNAL_SERVER_ERROR and no handle when the broker
        refuses it; the timing is :meth:`_send`'s."""
        self._send(client_id, ChangeCall(handle, invisible_ms), answered)

    def _send(self, client_id: str, call: AckCall, answered: Callable) -> None:
        """A request about a receipt handle reaches the proxy one network delay after it is sent; the proxy takes the
        latest handle it holds for the message (each renewal replaces it), or the client's if it holds none, refuses
        it if its message is already visible again (INVALID_RECEIPT_HANDLE), and sends it to the broker its route
        cache names for the handle, one network delay away. Its answer is back at the client four delays after
        sending; two when the proxy refuses it (an expired handle, or a broker its route cache cannot find); four
        when the broker is down (the connection fails); at the client's deadline when the broker has vanished
        (PROXY_TIMEOUT)."""
        self.clock.later(self.scenario.rpc_latency_ms, self._at_proxy, client_id, call, int(self.clock.now), answered)

    def _at_proxy(self, client_id: str, call: AckCall, sent: int, answered: Callable) -> None:
        watched = self.receipts.remove_receipt_handle(client_id, self.group, call.handle)
        latest = call.handle if watched is None else watched.handle
        self.recorder.counters[call.counter] += 1
        now = int(self.clock.now)
        try:
            validate_receipt_handle(latest, now)
            self.route_service.resolve_broker_addr_in_receipt_handle(latest.broker_name, now)
        except ProxyException as error:
            self._failed(call, error, sent, answered, self.scenario.rpc_latency_ms)
            return
        self.clock.later(self.scenario.rpc_latency_ms, self._at_broker, latest, call, sent, answered)

    def _at_broker(self, handle: AckHandle, call: AckCall, sent: int, answered: Callable) -> None:
        """The proxy's request reaches the broker (ConsumerProcessor#ackMessage, #changeInvisibleTime): the broker's
        SUCCESS is OK, any other code INTERNAL_SERVER_ERROR (MQClientAPIImpl reads it as AckStatus.NO_EXIST)."""
        broker = self.brokers[handle.broker_name]
        try:
            self._connect(broker)
        except (RemotingConnectException, RemotingTimeoutException) as error:
            self._failed(call, error, sent, answered, 2 * self.scenario.rpc_latency_ms)
            return
        call.at_broker(broker, handle, int(self.clock.now))
        self.clock.later(2 * self.scenario.rpc_latency_ms, answered, call)

    def _failed(self, call: AckCall, error: Exception, sent: int, answered: Callable, back_ms: int) -> None:
        """The failed request's status reaches the client ``back_ms`` from now, or, from a broker that never answers,
        at the client's deadline."""
        call.code = status_code(error)
        self.recorder.counters[f"proxy {call.counter} failed"] += 1
        if call.code is Code.PROXY_TIMEOUT:
            back_ms = sent + REQUEST_TIMEOUT_MS - int(self.clock.now)
        self.clock.later(back_ms, answered, call)


def _always() -> bool:
    """The proxy's own connection to a broker: always open here."""
    return True


class _ProxiedBroker:
    """A broker as the proxy's receipt handle manager calls it: through the address the proxy's route cache gives."""

    def __init__(self, proxy: ProxyNode, broker) -> None:
        self.proxy, self.broker = proxy, broker

    def change_invisible_time(self, handle: AckHandle, invisible_time_ms: int, now_ms: int):
        self.proxy.reach(self.broker.name, now_ms)
        return self.broker.change_invisible_time(handle, invisible_time_ms, now_ms)


__all__ = ["ProxyNode"]

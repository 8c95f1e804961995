"""One simple consumer of the rocketmq-clients SDK (``Scenario.client = "GRPC_SIMPLE"``) in simulated time.

Like the push consumer (:mod:`rmqlib.sim.grpc_consumer_node`, whose lifecycle it shares) it talks only to the
proxy, registers with it at start and heartbeats it every 10 s. Unlike it, it asks for no assignment and keeps no
process queues. What it does, and the Java it mirrors (apache/rocketmq-clients, java/client/.../impl/):

* at start it fetches each subscribed topic's route (QueryRoute, ClientImpl#startUp) and again 10 s after start and
  every 30 s; each route gives a :class:`~rmqlib.client.grpc_simple.SubscriptionLoadBalancer`;
* its application runs ``simple_threads`` loops (one by default), each as SimpleConsumerExample does, all on the one
  client and so on its shared turns: ``receive(simple_max_message_num,
  simple_invisible_ms)`` (SimpleConsumerImpl#receive0: the next topic, the next queue of its route, the proxy pops
  any queue of that queue's broker; held by the proxy for ``simple_await_ms``, at most 20 s), then each message in
  turn is processed (``consume_time_ms``) and acked, the loop waiting for each ack's answer. Nothing renews what it
  holds: a message still unacked when its invisible time ends is handed out again, to this member or another (in a
  FIFO group, whose pops are orderly, the broker then lends its queue again from that message on), and its late ack
  is refused (the proxy refuses an expired receipt handle). With ``simple_change_invisible`` the application first
  extends each message's invisible time by ``simple_invisible_ms`` from then (SimpleConsumerImpl
  #changeInvisibleDuration0, waiting for the answer), and skips a message whose change fails;
* a receive that fails is the application's exception; the loop here waits 1 s and receives again (the SDK leaves
  that to the application); a failed ack is only counted, and its message comes back after its invisible time;
* a shutdown stops the loop once the batch in hand is processed and acked, and tells the proxy
  (NotifyClientTermination); a crash or a lost host stops everything at once.

Every member may receive from every broker of the route, so its ownership is every queue those brokers read.
"""

from __future__ import annotations

from rmqlib.client.grpc_push import RECEIVING_FAILURE_BACKOFF_DELAY_MS
from rmqlib.client.grpc_simple import ROUTE_UPDATE_INITIAL_DELAY_MS, ROUTE_UPDATE_PERIOD_MS, SimpleConsumerImpl
from rmqlib.model import MessageQueue
from rmqlib.proxy import Code
from rmqlib.sim.grpc_consumer_node import _WAIT_STEP_MS, GrpcConsumerNode
from rmqlib.sim.proxy_node import AckCall, ChangeCall, ReceiveFailed


class GrpcSimpleConsumerNode(GrpcConsumerNode):
    """One gRPC simple consumer process: its routes, its application's receive loop, and its lifecycle (the push
    node's registration, heartbeats and crash; its process-queue table and consumption pool stay empty)."""

    def __init__(self, spec, scenario, clock, recorder, proxy, rng):
        super().__init__(spec, scenario, clock, recorder, proxy, rng)
        subscriptions = dict.fromkeys(self.topics, spec.subscription)
        self.simple = SimpleConsumerImpl(scenario.consumer_group, self.cid, subscriptions, rng)
        self.loops = 0  # the application's receive loops still running

    # --- lifecycle -------------------------------------------------------------------------------------------
    def start(self):
        yield self.clock.timeout(self.join_ms)
        self._register()
        if self.spec.leave_ms is not None:
            self.clock.process(self.leave())
        yield from self._fetch_routes()  # the client starts once every route is in
        if not self.alive:
            return
        self.clock.process(self.route_loop())
        self.loops = self.scenario.simple_threads
        for _ in range(self.loops):
            self.clock.process(self.application_loop())

    def _shut_down(self):
        """The application leaves its loops once each one's batch in hand is done; then the client closes."""
        self.running = False
        while self.loops:
            yield self.clock.timeout(_WAIT_STEP_MS)

    # --- routes ----------------------------------------------------------------------------------------------
    def route_loop(self):
        """ClientImpl's route cache: fetched again 10 s after start, then every 30 s."""
        clock = self.clock
        yield clock.timeout(ROUTE_UPDATE_INITIAL_DELAY_MS)
        while self.alive:
            clock.process(self._fetch_routes())
            yield clock.timeout(ROUTE_UPDATE_PERIOD_MS)

    def _fetch_routes(self):
        latency = self.scenario.rpc_latency_ms
        yield self.clock.timeout(latency)
        answers = {topic: self.proxy.query_route(topic) for topic in self.topics}
        yield self.clock.timeout(latency)
        if not self.alive:
            return
        for topic, answer in answers.items():
            if answer:  # a route without a readable queue changes nothing (Java's balancer refuses it)
                self.simple.update_subscription_load_balancer(topic, answer)
        self.sync_ownership(int(self.clock.now))

    def sync_ownership(self, now: int) -> None:
        """Every queue read by a broker that a route names: any receive may pop any of them."""
        held: set[MessageQueue] = set()
        if self.alive:
            for topic, balancer in self.simple.subscription_route_data_cache.items():
                for broker_name in {mq.broker_name for mq in balancer.message_queues}:
                    read = self.proxy.brokers[broker_name].topic_config.get(topic, (0, 0))[0]
                    held.update(MessageQueue(topic, broker_name, q) for q in range(read))
        self.recorder.own(self.cid, held, now)

    # --- the application -------------------------------------------------------------------------------------
    def application_loop(self):
        clock, recorder, scenario = self.clock, self.recorder, self.scenario
        while self.running:
            topic, expression = self.simple.next_topic()
            mq = self.simple.take_message_queue(topic)
            self.in_flight += 1
            recorder.pulls += 1
            try:
                popped = yield from self.proxy.receive(
                    self,
                    mq,
                    expression,
                    scenario.simple_max_message_num,
                    None,
                    scenario.simple_await_ms,
                    scenario.simple_invisible_ms,
                )
            except ReceiveFailed as failure:
                self.in_flight -= 1
                if not self.alive:
                    return
                recorder.counters["receives failed"] += 1
                recorder.log(int(clock.now), "receive failed", self.cid, f"{mq.broker_name}: {failure}")
                yield clock.timeout(RECEIVING_FAILURE_BACKOFF_DELAY_MS)
                continue
            self.in_flight -= 1
            if not self.alive:
                return
            if popped:
                recorder.log(int(clock.now), "pop", self.cid, f"{len(popped)} from {mq.broker_name} via the proxy")
            for item in popped:
                handle = item.handle
                if scenario.simple_change_invisible:
                    handle = yield from self._change_invisible_duration(handle)
                    if not self.alive:
                        return
                    if handle is None:
                        continue
                started = int(clock.now)
                yield clock.timeout(self.consume_duration(1))
                if not self.alive:
                    return
                recorder.record_popped(self.cid, self.died_at, item, started, int(clock.now))
                answered = clock.event()
                self.proxy.ack(self.cid, handle, answered.succeed)
                call: AckCall = yield answered
                if not self.alive:
                    return
                if call.code is Code.INVALID_RECEIPT_HANDLE:
                    recorder.counters["acks refused"] += 1
                    recorder.log(int(clock.now), "ack refused", self.cid, handle.broker_name)
                elif call.code is not Code.OK:
                    recorder.counters["acks failed"] += 1
        self.loops -= 1

    def _change_invisible_duration(self, handle):
        """changeInvisibleDuration(message, simple_invisible_ms), waiting for its answer: the message's new handle,
        or None when it failed. The SDK replaces the message's handle with the answer's before it checks the status
        (SimpleConsumerImpl#changeInvisibleDuration0), so a failed change leaves it none to ack with; the application
        skips the message, which is handed out again when its invisible time ends (the application's choice)."""
        clock = self.clock
        answered = clock.event()
        self.proxy.change_invisible_duration(self.cid, handle, self.scenario.simple_invisible_ms, answered.succeed)
        call: ChangeCall = yield answered
        if call.code is Code.OK or not self.alive:
            return call.receipt_handle
        self.recorder.counters["invisible time changes refused"] += 1
        self.recorder.log(int(clock.now), "change refused", self.cid, f"{handle.broker_name}: {call.code.name}")
        return None


__all__ = ["GrpcSimpleConsumerNode"]

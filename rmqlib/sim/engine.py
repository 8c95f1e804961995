"""The simulation: wires the nodes together and runs them in simulated time.

Nothing in ``rmqlib.sim`` re-implements RocketMQ behaviour. Each consumer node owns a real
:class:`~rmqlib.client.RebalanceImpl` (with its RebalanceService, PullMessageService, ProcessQueues and offset
store); each broker node owns a real MessageStore, ConsumerManager, PullMessageProcessor with its
PullRequestHoldService, RebalanceLockManager and Pop processors; the name server is a real
:class:`~rmqlib.namesrv.RouteInfoManager`. The package moves time forward (:mod:`~rmqlib.sim.clock`), carries
requests and answers with a network delay (:mod:`~rmqlib.sim.wire`), runs the listener for a consume time, and
records what happened (:mod:`~rmqlib.sim.recorder`). This module builds one run from a :class:`Scenario`, plays
the scenario's script (topic changes, broker outages) and returns the :class:`SimResult`.

Modelling choices:

* Producers send in bursts every ``produce_batch_ms``; a message's store time
  is its burst time, so the measured latency (store to consume) is unaffected.
* A pulled batch goes to the consumer's thread pool (``consume_threads`` wide)
  as one task per ``consumeMessageBatchMaxSize`` messages (default 1), as
  ``submitConsumeRequest`` splits it; a task's messages finish one after
  another, every ``consume_time_ms``. A task whose ProcessQueue was dropped
  before it started is skipped, as Java's ConsumeRequest checks ``isDropped`` first.
* Broker calls made by the rebalance (consumer list, assignments, locks, offsets,
  heartbeats) take no simulated time; pulls and pops take ``rpc_latency_ms``
  each way.
* Pop long polling: an empty pop is held by the broker's PopLongPollingService until an
  arrival wakes it (the first held pop of its key, if its tag filter takes the message) or the
  service's scan answers it 50 ms before its 15 s poll time ends; a woken pop runs again on the
  broker once the store has dispatched what is arriving at that instant.
"""

from __future__ import annotations

import gc
import random
import time

import numpy as np

from rmqlib.model import MessageQueue
from rmqlib.sim.broker_node import BrokerNode
from rmqlib.sim.clock import Clock
from rmqlib.sim.consumer_node import ConsumerNode
from rmqlib.sim.dashboard import Dashboard
from rmqlib.sim.grpc_consumer_node import GrpcConsumerNode
from rmqlib.sim.grpc_simple_node import GrpcSimpleConsumerNode
from rmqlib.sim.ordered_producer import OrderedProducer
from rmqlib.sim.proxy_node import ProxyNode
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.result import SimResult
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import GRPC_SIMPLE, POP, BrokerOutage, Scenario, TopicChange
from rmqlib.sim.shared_views import SharedViews
from rmqlib.sim.wire import Wire


class Simulation:
    """One run: the clock, the recorder, the routes and the wire, and a node per broker replica and per consumer."""

    def __init__(self, scenario: Scenario, seed: int, trace: bool = False):
        scenario.validate()
        self.scenario, self.seed = scenario, seed
        self.rng = random.Random(seed)  # the one source of every random draw of the run
        self.clock = Clock()
        self.recorder = Recorder(scenario, trace)
        self.routes = Routes(self.clock, scenario, self.recorder)
        self.wire = Wire(self.clock, scenario, self.recorder)
        parts = (scenario, self.clock, self.wire, self.recorder, self.routes, self.rng)
        self.brokers = {name: BrokerNode(name, *parts) for name in scenario.all_brokers}  # the masters
        self.slaves = {name: BrokerNode(name, *parts, broker_id=1) for name in scenario.slaves}
        for name, slave in self.slaves.items():
            self.brokers[name].attach_slave(slave)
        self.nodes = [*self.brokers.values(), *self.slaves.values()]  # every broker process
        for broker in self.nodes:
            broker.connect(self.brokers)
        for name in scenario.brokers:
            self.brokers[name].register(0)
        for slave in self.slaves.values():
            slave.register(0)
        self.routes.start_producers()
        self.views = SharedViews()  # what identical views of the consumers compute once (see shared_views)
        self.proxy: ProxyNode | None = None
        if scenario.through_proxy:  # the members talk to a proxy, never to a broker
            self.proxy = ProxyNode(scenario, self.clock, self.recorder, self.routes, self.brokers, self.rng)
            node = GrpcSimpleConsumerNode if scenario.client is GRPC_SIMPLE else GrpcConsumerNode
            self.consumers = {
                spec.client_id: node(spec, scenario, self.clock, self.recorder, self.proxy, self.rng)
                for spec in scenario.consumers
            }
            self.wire.connect(self.brokers, {})
            return
        self.consumers = {spec.client_id: ConsumerNode(spec, *parts, self.views) for spec in scenario.consumers}
        channels = {}
        for consumer in self.consumers.values():
            consumer.connect(self.brokers)
            for broker in self.nodes:
                channels[consumer.channel(broker)] = consumer
        self.wire.connect(self.brokers, channels)
        if scenario.consume_mode == POP:
            for broker in self.brokers.values():
                for topic in scenario.topics:
                    broker.assignment.set_message_request_mode(
                        topic, scenario.consumer_group, "POP", scenario.pop_share_queue_num
                    )

    # --- the scenario's script ------------------------------------------------------
    def route_changes(self):
        """Topic changes and broker outages, in time order (a change and an outage at one instant: the change first)."""
        clock, sc, recorder = self.clock, self.scenario, self.recorder
        steps = [(c.at_ms, 0, c) for c in sc.topic_changes]
        for outage in sc.outages:
            steps.append((outage.down_ms, 1, outage))
            if outage.up_ms is not None:
                steps.append((outage.up_ms, 2, outage))
        for at_ms, kind, step in sorted(steps, key=lambda s: (s[0], s[1])):
            yield clock.timeout(at_ms - clock.now)
            now = int(clock.now)
            if isinstance(step, TopicChange):
                broker, topic = self.brokers[step.broker], step.topic or next(iter(sc.topics))
                broker.set_topic(topic, step.read_queue_nums, step.write_queue_nums)
                recorder.log(
                    now,
                    "topic change",
                    broker.name,
                    f"{topic}: {step.read_queue_nums} read / {step.write_queue_nums} write queues",
                )
                if not broker.up and broker.name not in sc.brokers and not self._outage_covers(broker.name, now):
                    broker.start_serving()
                if step.read_queue_nums == step.write_queue_nums == 0:  # mqadmin deleteTopic, for this broker
                    self.routes.delete_topic(topic, broker.name)
                if broker.up:
                    broker.register(now)
                if sc.pops:  # a Pop (or gRPC) assignment reaches whatever queues the broker reads now
                    for consumer in self.consumers.values():
                        consumer.sync_ownership(now)
            elif isinstance(step, BrokerOutage):
                if kind == 1:
                    self.brokers[step.broker].go_down(step.silent)
                else:
                    self.brokers[step.broker].come_up()
                    if self.proxy is None:  # every client connection to it is gone (a gRPC client's go to the proxy)
                        for consumer in self.consumers.values():
                            consumer.lost_connections.add(step.broker)

    def _outage_covers(self, broker_name: str, now_ms: int) -> bool:
        return any(
            o.broker == broker_name and o.down_ms <= now_ms and (o.up_ms is None or now_ms < o.up_ms)
            for o in self.scenario.outages
        )

    # --- the run ------------------------------------------------------------------
    def run(self) -> SimResult:
        wall = time.perf_counter()
        clock, sc = self.clock, self.scenario
        if sc.order_keys:  # the producers send each message to the queue its order id selects
            clock.process(OrderedProducer(clock, sc, self.routes, self.recorder, self.brokers).run())
        for broker in self.brokers.values():
            clock.process(broker.producer())
            clock.process(broker.hold_loop())
            clock.process(broker.housekeeping_loop())
            if not sc.real_time_notify:
                clock.process(broker.notify_flush_loop())
            if sc.consume_stats_interval_ms:
                broker.start_stats_sampling()
            if sc.consume_mode == POP:
                clock.process(broker.revive_loop())
                if broker.up:
                    clock.process(broker.route_info_loop())
            elif sc.through_proxy:  # a gRPC group pops: what is not acked in time revives
                clock.process(broker.revive_loop())
        for slave in self.slaves.values():  # no producer and no held pulls: a slave holds none (see BrokerNode)
            clock.process(slave.housekeeping_loop())
            if not sc.real_time_notify:
                clock.process(slave.notify_flush_loop())
            clock.process(slave.sync_loop())
            if sc.consume_stats_interval_ms:
                slave.start_stats_sampling()
        if sc.consume_stats_interval_ms:
            # its own draws (a broker to ask for the group's connections), so that polling changes nothing in the run
            dashboard_rng = random.Random(f"dashboard/{self.seed}")
            clock.process(Dashboard(clock, sc, self.recorder, self.routes, self.nodes, dashboard_rng).run())
        if self.proxy is not None:
            clock.process(self.proxy.housekeeping_loop())
            clock.process(self.proxy.renew_loop())
        for consumer in self.consumers.values():
            clock.process(consumer.start())
        if sc.changes_routes:
            for broker in self.nodes:
                clock.process(broker.registration_loop())
            clock.process(self.route_changes())
            clock.process(self.routes.scan_loop())
            clock.process(self.routes.producer_poll_loop())
        gc_was_enabled = gc.isenabled()
        gc.disable()  # the run allocates millions of short-lived objects; collecting as it goes costs 3-4x
        try:
            clock.run(until=sc.end_ms)
        finally:
            if gc_was_enabled:
                gc.enable()
        stored = {
            str(MessageQueue(topic, broker.name, queue_id)): broker.store.get_max_offset(topic, queue_id)
            for broker in self.brokers.values()
            for topic in sc.topics
            for queue_id in range(broker.store.topic_queue_nums.get(topic, 0))
        }
        return self.recorder.result(
            self.seed,
            [c.cid for c in self.consumers.values() if c.alive],
            stored,
            self._arrivals(),
            wall_seconds=time.perf_counter() - wall,
            simpy_events=next(clock._eid),  # simpy numbers every event it schedules
            never_delivered=self._never_delivered() if sc.pops else None,
            unsubscribed=self._unsubscribed() if sc.narrows_subscriptions else None,
        )

    def _arrivals(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per queue of the scenario's topics: its messages' store times and ids (a message's ``uniq_key`` is the
        id the recorder gave it, as text), in offset order."""
        return {
            queue: (
                np.array([m.store_timestamp for m in messages], dtype=float),
                np.array([m.uniq_key for m in messages], dtype=np.int64),
            )
            for _, queue, messages in self._stored_messages()
        }

    def _stored_messages(self):
        """Per queue of the scenario's topics: its topic, its ``str`` and the messages its master's store holds."""
        for broker in self.brokers.values():
            store = broker.store
            for topic in self.scenario.topics:
                for queue_id in range(store.topic_queue_nums.get(topic, 0)):
                    yield topic, str(MessageQueue(topic, broker.name, queue_id)), store.queue_messages(topic, queue_id)

    def _unsubscribed(self) -> tuple[frozenset[int], dict[str, int]]:
        """The stored messages no consumer subscribes to (to their topic, with an expression that takes their
        tag): their ids, and per queue how many."""
        taken = {topic: self.scenario.tags_taken(topic) for topic in self.scenario.topics}
        ids: set[int] = set()
        counts = {}
        for topic, queue, messages in self._stored_messages():
            tags = taken[topic]
            unsubscribed = [] if tags is None else [int(m.uniq_key) for m in messages if m.tags not in tags]
            ids.update(unsubscribed)
            counts[queue] = len(unsubscribed)
        return frozenset(ids), counts

    def _never_delivered(self) -> dict[str, int]:
        """Per queue of the scenario's topics, its stored messages no listener ever got (Pop mode keeps no
        per-queue consumption log: a popped message may come back through the retry topic)."""
        delivered = self.recorder.delivered
        return {
            queue: sum(1 for m in messages if not delivered[int(m.uniq_key)])
            for _, queue, messages in self._stored_messages()
        }


def simulate(scenario: Scenario, seed: int = 0, trace: bool = False) -> SimResult:
    """Run ``scenario`` in simulated time; the same seed gives the same result.

    ``trace=True`` also logs every consumer-list query, queue-table step, pull, answer and reput
    (kinds ``find consumer ids``, ``step``, ``pull``, ``pull answered``, ``reput``), for
    :func:`rmqlib.viz.sequence_figure`; it changes nothing else in the run.

    >>> from rmqlib.sim import scenarios, simulate
    >>> result = simulate(scenarios.steady_state(duration_ms=30_000, drain_ms=30_000), seed=1)
    >>> result.produced, len(result.lost), result.duplicates
    (1440, 0, 0)
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if not isinstance(trace, bool):
        raise TypeError(f"trace must be a bool, got {type(trace).__name__}")
    return Simulation(scenario, seed, trace).run()

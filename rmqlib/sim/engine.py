"""The simulation: simpy processes that drive the client and broker models.

Nothing here re-implements RocketMQ behaviour. Each simulated consumer owns a
real :class:`~rmqlib.client.RebalanceImpl` (with its RebalanceService,
PullMessageService, ProcessQueues and offset store); each simulated broker
owns a real MessageStore, ConsumerManager, PullMessageProcessor with its
PullRequestHoldService, RebalanceLockManager and Pop processors. The engine
moves time forward, carries requests and answers between them with a network
delay, runs the listener (a consume time per message) and records what
happened. Calls due at one instant that are scheduled back to back share one
simpy event (:class:`_Calls`), in the order simpy would have run them.

Modelling choices:

* Producers send in bursts every ``produce_batch_ms``; a message's store time
  is its burst time, so the measured latency (store to consume) is unaffected.
* A pulled batch goes to the consumer's thread pool (``consume_threads`` wide)
  as one task per ``consumeMessageBatchMaxSize`` messages (default 1), as
  ``submitConsumeRequest`` splits it; a task's messages finish one after
  another, every ``consume_time_ms``. A task whose ProcessQueue was dropped
  before it started is skipped, as Java's ConsumeRequest checks ``isDropped`` first.
* Broker calls made by the rebalance (consumer list, locks, offsets,
  heartbeats) take no simulated time; pulls and pops take ``rpc_latency_ms``
  each way.
* Pop long polling (PopLongPollingService) is modelled here: an empty pop
  waits for a message arriving on that broker or for the 15 s poll time.
"""

from __future__ import annotations

import math
import random
import time
import gc
from collections import defaultdict, deque

import numpy as np
import simpy

from rmqlib.broker import (BrokerConfig, ClientChannelInfo, ConsumerManager,
                           DefaultConsumerIdsChangeListener, MessageStore, PopMessageProcessor, PopProcessQueue,
                           PopReviveService, PullMessageProcessor, PullMessageRequest, QueryAssignmentProcessor,
                           RebalanceLockManager)
from rmqlib.broker.protocol import ResponseCode
from rmqlib.client import (BrokerError, ConsumeConcurrentlyStatus, Message, MessageModel, OffsetNotFoundError,
                           PullMessageService, PullResult, PullStatus, PushConsumerConfig, RebalanceImpl,
                           RebalanceService, process_consume_result_concurrently, process_pull_exception,
                           process_pull_result, pull_message, retry_topic)
from rmqlib.client.route import topic_route_data_to_publish_info, topic_route_data_to_subscribe_info
from rmqlib.model import MessageQueue
from rmqlib.namesrv import SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS, RouteInfoManager, TopicRouteData
from rmqlib.sim.result import ConsumptionLog, EventLog, Interval, SimResult
from rmqlib.sim.scenario import BROADCASTING, CRASH, HOST_LOSS, ORDERLY, POP, BrokerOutage, Scenario, TopicChange

POP_THRESHOLD_FOR_QUEUE = 96  # DefaultMQPushConsumer.popThresholdForQueue
PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL = 50  # DefaultMQPushConsumerImpl, also used by the pop path
POP_LONG_POLLING_MS = 15_000  # DefaultMQPushConsumerImpl: BROKER_SUSPEND_MAX_TIME_MILLIS sent as pollTime
TRY_LOCK_LATER_MILLS = 100  # ConsumeMessageOrderlyService#tryLockLaterAndReconsume when not locked
LOAD_BUCKET_MS = 1_000
FIRST_ROUTE_POLL_MS = 10  # MQClientInstance#startScheduledTask: the first route poll, 10 ms after start
PULL_TIMEOUT_MS = 30_000  # DefaultMQPushConsumerImpl: CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND (a pull's RPC timeout)


class BrokerUnavailable(Exception):
    """A call to a broker that is down (connection refused, or no answer before the timeout)."""


class _Environment(simpy.Environment):
    """simpy's Environment, noting when an event is scheduled so the engine knows its open batch is closed."""

    def __init__(self):
        super().__init__()
        self.open_batch: _Calls | None = None

    def schedule(self, event, priority=simpy.core.NORMAL, delay=0):
        self.open_batch = None
        super().schedule(event, priority, delay)

    def later(self, delay_ms, action, *args) -> None:
        """Run ``action(*args)`` after ``delay_ms`` of simulated time (no process; see :class:`_Calls`)."""
        if delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms}")
        at = self.now + delay_ms
        batch = self.open_batch
        if batch is not None and batch.at == at:
            batch.calls.append((action, args))
        else:
            _Calls(self, at, delay_ms, (action, args))


class _Calls(simpy.Event):
    """One simpy event that runs a list of calls ``(action, args)``, in order, when the clock reaches ``at``.

    :meth:`_Environment.later` appends to the batch scheduled last while nothing else has
    been scheduled since and the time is the same. simpy orders events by (time,
    priority, sequence number), so calls scheduled back to back for one instant would
    run back to back anyway, in the same order: batching them changes no outcome, it
    saves the events (a woken pull's answer, the next pull, a finished consume call:
    thousands per simulated second).
    """

    def __init__(self, env: _Environment, at, delay, call):
        self.env = env
        self.callbacks = [_run_calls]
        self._ok, self._value = True, None  # triggered, as a Timeout is
        self.at = at
        self.calls = [call]
        simpy.Environment.schedule(env, self, simpy.core.NORMAL, delay)
        env.open_batch = self


def _run_calls(batch: _Calls) -> None:
    env = batch.env
    if env.open_batch is batch:  # calls made now for this same instant go after it, in a new batch
        env.open_batch = None
    for action, args in batch.calls:
        action(*args)


class _OffsetTally:
    """Per queue: the offsets consumed so far and the lowest one never consumed (``low_water``)."""

    __slots__ = ("name", "pending", "low_water")

    def __init__(self, name: str):
        self.name = name
        self.pending: set[int] = set()  # consumed offsets above low_water
        self.low_water = 0

    def consumed(self, offsets) -> None:
        pending = self.pending
        pending.update(offsets)
        low = self.low_water
        while low in pending:
            pending.discard(low)
            low += 1
        self.low_water = low


class _TracingStore(MessageStore):
    """A MessageStore that tells the recorder about every committed offset."""

    recorder = None

    def commit_offset(self, group, topic, queue_id, offset):
        MessageStore.commit_offset(self, group, topic, queue_id, offset)
        if self.recorder is not None:
            self.recorder.on_commit(self.broker_name, topic, queue_id, offset)


class SimBroker:
    """One broker and its services."""

    def __init__(self, sim: Simulation, name: str):
        sc = sim.scenario
        self.sim, self.name = sim, name
        self.up = name in sc.brokers  # a broker that only a topic change brings in starts with it
        self.silent = False  # down without closing its connections (BrokerOutage.silent)
        self.config = BrokerConfig(broker_name=name, long_polling_enable=sc.long_polling, short_polling_time_mills=sc.short_polling_ms,
                                   real_time_notify_consumer_change=sc.real_time_notify,
                                   channel_expired_timeout=sc.channel_expired_ms)
        self.listener = DefaultConsumerIdsChangeListener(self.config)
        self.store = _TracingStore(self.config, message_arriving_listener=self._on_arrival)
        self.store.broker_name = name
        self.store.recorder = sim
        self._start_services()
        self.pop = PopMessageProcessor(self.store, self.config, random.Random(sim.rng.random()))
        self.revive = PopReviveService(self.pop)
        self.assignment = QueryAssignmentProcessor(self.consumer_manager, sim.route, self.config)
        self.pop_waiters: list[simpy.Event] = []
        # what the broker registers with the name server: topic -> (read queues, write queues)
        self.topic_config: dict[str, tuple[int, int]] = {}
        if self.up:
            for topic, queues in sc.topics.items():
                self.set_topic(topic, queues, queues)
        self.set_topic(retry_topic(sc.consumer_group), sc.retry_queue_nums, sc.retry_queue_nums)

    def _start_services(self) -> None:
        """What a (re)started broker keeps only in memory: its consumer registry, held pulls and lock table."""
        sc = self.sim.scenario
        self.consumer_manager = ConsumerManager([self.listener], self.config)
        self.processor = PullMessageProcessor(self.store, consumer_manager=self.consumer_manager,
                                              broker_config=self.config)
        self.hold = self.processor.hold_service
        self.locks = RebalanceLockManager(sc.broker_lock_expiry_ms)

    def set_topic(self, topic: str, read: int, write: int) -> None:
        """Give ``topic`` these queue counts here (0 and 0: drop it from the config); the store only grows."""
        if read == 0 and write == 0:
            self.topic_config.pop(topic, None)
            return
        if max(read, write) > self.store.topic_queue_nums.get(topic, 0):
            self.store.create_topic(topic, max(read, write))
        self.topic_config[topic] = (read, write)

    def register(self, now_ms: int) -> None:
        """BrokerController#registerBrokerAll: the whole topic config to the name server."""
        self.sim.namesrv.register_broker(self.name, dict(self.topic_config), now_ms)
        self.sim.note_routes()

    # --- outages (BrokerOutage) ----------------------------------------------
    def go_down(self, silent: bool) -> None:
        sim, now = self.sim, int(self.sim.env.now)
        self.up, self.silent = False, silent
        sim.log(now, "broker down", self.name, "silent" if silent else "connections closed")
        if not silent and sim.namesrv.on_channel_destroy(self.name):
            sim.log(now, "route removed", self.name, "channel closed")
            sim.note_routes()
        sim.fail_pending_pulls(self)
        sim.close_locks(self, now)

    def come_up(self) -> None:
        sim, now = self.sim, int(self.sim.env.now)
        self.up, self.silent = True, False
        self._start_services()
        sim.log(now, "broker up", self.name)
        self.register(now)

    def registration_loop(self):
        """Re-register every registerNameServerPeriod while up (keeps the name server's entry fresh)."""
        env = self.sim.env
        while True:
            yield env.timeout(self.sim.scenario.register_name_server_period_ms)
            if self.up:
                self.register(int(env.now))

    def _on_arrival(self, topic, queue_id, max_offset, tags_code, store_time, properties, now_ms):
        self.hold.notify_message_arriving(topic, queue_id, max_offset, now_ms, tags_code, store_time)
        if self.pop_waiters:
            waiters, self.pop_waiters = self.pop_waiters, []
            for waiter in waiters:
                if not waiter.triggered:
                    waiter.succeed()

    def flush_pull_answers(self) -> None:
        """Send the answers of woken held pulls back to their consumers."""
        log, answer = self.sim.log, self.sim.answer_pull
        for response in self.processor.drain():
            request = response.request
            detail = f"{request.topic}@{request.queue_id} {_CODE_NAMES[response.code]}"
            log(response.time_ms, "pull woken", self.name, detail)
            answer(response)

    def flush_notifications(self) -> None:
        for note in self.listener.drain():
            self.sim.notify(self, note)

    # --- periodic services -------------------------------------------------
    def hold_loop(self):
        env, sc = self.sim.env, self.sim.scenario
        interval = sc.long_polling_check_ms if sc.long_polling else sc.short_polling_ms
        while True:
            yield env.timeout(interval)
            if self.up:
                self.hold.check_hold_request(int(env.now))
                self.flush_pull_answers()

    def housekeeping_loop(self):
        env = self.sim.env
        while True:
            yield env.timeout(self.sim.scenario.channel_scan_ms)
            if not self.up:
                continue
            for _group, info in self.consumer_manager.scan_not_active_channel(int(env.now)):
                self.sim.log(int(env.now), "channel expired", self.name, info.client_id)
            self.flush_notifications()

    def notify_flush_loop(self):
        env = self.sim.env
        while True:
            yield env.timeout(max(1, self.listener.next_flush_ms - int(env.now)))
            self.listener.run_due(int(env.now))
            self.flush_notifications()

    def revive_loop(self):
        env = self.sim.env
        while True:
            yield env.timeout(self.sim.scenario.pop_revive_interval_ms)
            revived = self.revive.revive(int(env.now))
            if revived:
                self.sim.log(int(env.now), "revive", self.name, f"{len(revived)} message(s)")
                self.store.reput(int(env.now))

    def producer(self):
        """Bursts every produce_batch_ms to this broker's write queues in the producers' route view; queue
        q's messages are spread evenly over time. Each topic keeps the total rate it started with
        (``produce_rate_per_queue`` x its queues), shared by however many write queues the view shows.
        While this broker is down, its share is sent elsewhere or fails (:meth:`Simulation.send_elsewhere`)."""
        sim, env, sc = self.sim, self.sim.env, self.sim.scenario
        if sc.produce_rate_per_queue / 1000.0 <= 0:
            return
        put, new_id, body_size = self.store.put_message, sim.new_message_id, sim.body_size
        yield env.timeout(sc.produce_start_ms)
        plan: list[list] = []
        version = -1
        while env.now < sc.duration_ms:
            yield env.timeout(min(sc.produce_batch_ms, sc.duration_ms - env.now))
            now = int(env.now)
            if version != sim.publish_version:  # the producers' view of the routes changed (or: the first burst)
                plan, version = self._replan(plan, now), sim.publish_version
            if not self.up:
                for entry in plan:
                    due = int((now - entry[4]) * entry[3] + entry[5] + entry[2]) - entry[6]
                    entry[6] += due
                    sim.send_elsewhere(self, entry[0], due, now)
                continue
            for entry in plan:  # [topic, queue id, phase, rate, since, produced before since, sent]
                due = int((now - entry[4]) * entry[3] + entry[5] + entry[2]) - entry[6]
                for _ in range(due):
                    put(entry[0], entry[1], now, body_size, None, str(new_id()))  # tags None, uniq_key
                entry[6] += due
            if sim.trace and self.store.behind():  # logged first: the wake-ups happen inside reput
                sim.log(now, "reput", self.name, _queue_counts(self.store.commit_log[self.store.reput_from_index:]))
            self.store.reput(now)
            self.flush_pull_answers()

    def _replan(self, plan: list[list], now: int) -> list[list]:
        """The burst plan for this broker's queues in the producers' view, carrying over what each queue
        that stays has produced so far (its phase, count and credit), at the rate its topic now gives it."""
        sim, sc = self.sim, self.sim.scenario
        old = {(entry[0], entry[1]): entry for entry in plan}
        queues = [(mq.topic, mq.queue_id) for topic in sc.topics for mq in sim.publish_view.get(topic, ())
                  if mq.broker_name == self.name]
        start = max(now, sc.produce_start_ms) if plan else sc.produce_start_ms
        fresh = []
        for i, (topic, queue_id) in enumerate(queues):
            rate = sim.produce_rate(topic)
            entry = old.get((topic, queue_id))
            if entry is None:
                fresh.append([topic, queue_id, (i + 0.5) / len(queues), rate, start, 0.0, 0])
            else:
                produced = (start - entry[4]) * entry[3] + entry[5]
                fresh.append([topic, queue_id, entry[2], rate, start, produced, entry[6]])
        return fresh


class SimClientAPI:
    """The broker calls of one consumer, answered by the simulated brokers (no simulated time)."""

    def __init__(self, consumer: SimConsumer):
        self.consumer = consumer
        self.sim = consumer.sim

    def _broker(self, name: str) -> SimBroker:
        broker = self.sim.brokers[name]
        if not broker.up:
            raise BrokerUnavailable(f"{name} is down")
        return broker

    def find_consumer_id_list(self, topic, group):
        """GET_CONSUMER_LIST_BY_GROUP to a random broker of the topic's route as this client last saw it
        (MQClientInstance#findConsumerIdList); None when that broker is down."""
        broker = self.sim.brokers[self.sim.rng.choice(self.consumer.route_brokers[topic])]
        if not broker.up:
            if self.sim.trace:
                self.sim.log(int(self.sim.env.now), "find consumer ids", self.consumer.cid,
                             f"{broker.name}: {topic}, failed (broker down)")
            return None
        ids = broker.consumer_manager.get_consumer_id_list(group)
        if self.sim.trace:
            self.sim.log(int(self.sim.env.now), "find consumer ids", self.consumer.cid,
                         f"{broker.name}: {topic}, {len(ids or ())} member(s)")
        return ids

    def lock_batch_mq(self, broker_name, group, client_id, mqs, now_ms):
        broker = self._broker(broker_name)
        locked = broker.locks.try_lock_batch(group, mqs, client_id, now_ms)
        self.sim.on_locks(broker, group, mqs, now_ms)
        return locked

    def unlock_batch_mq(self, broker_name, group, client_id, mqs, now_ms):
        broker = self._broker(broker_name)
        broker.locks.unlock_batch(group, mqs, client_id)
        self.sim.on_locks(broker, group, mqs, now_ms)
        self.sim.log(now_ms, "unlock", client_id, _names(mqs))

    def query_consumer_offset(self, group, mq):
        code, offset = self._broker(mq.broker_name).store.query_consumer_offset(group, mq.topic, mq.queue_id)
        if code is not ResponseCode.SUCCESS:
            raise OffsetNotFoundError(f"no offset for {mq}", int(code))
        return offset

    def update_consumer_offset(self, group, mq, offset):
        self._broker(mq.broker_name).store.commit_offset(group, mq.topic, mq.queue_id, offset)

    def get_max_offset(self, mq):
        return self._broker(mq.broker_name).store.get_max_offset(mq.topic, mq.queue_id)

    def search_offset(self, mq, timestamp_ms):
        store = self._broker(mq.broker_name).store
        lo, hi = store.get_min_offset(mq.topic, mq.queue_id), store.get_max_offset(mq.topic, mq.queue_id)
        for offset in range(lo, hi):
            msg = store.look_message_by_offset(mq.topic, mq.queue_id, offset)
            if msg is not None and msg.store_timestamp >= timestamp_ms:
                return offset
        return hi

    def send_heartbeat(self, client_id, consumers, now_ms):
        self.consumer.heartbeat(now_ms, consumers)


class SimConsumer:
    """One consumer process: its RebalanceImpl and the threads around it, as simpy processes."""

    def __init__(self, sim: Simulation, spec):
        self.sim, self.spec, self.cid = sim, spec, spec.client_id
        self.alive = False
        self.died_at: int | None = None
        self.connected = False
        self.rebalance_wake: simpy.Event | None = None
        self.pull_timer_at: int | None = None
        self.orderly_running: set[MessageQueue] = set()
        self.pop_queues: dict[tuple[str, str], PopProcessQueue] = {}
        self.impl: RebalanceImpl | None = None
        self.orderly = sim.scenario.consume_mode == ORDERLY
        self.channel_names = {name: f"{self.cid}->{name}" for name in sim.scenario.all_brokers}
        self.routes: dict[str, TopicRouteData | None] = {}  # topic -> the route this client last took
        self.route_brokers: dict[str, list[str]] = {}  # topic -> the brokers of that route
        jitter = sim.scenario.start_jitter_ms
        self.join_ms = spec.join_ms + (sim.rng.randrange(jitter + 1) if jitter else 0)

    def channel(self, broker: SimBroker) -> str:
        """The name of this consumer's connection to ``broker``."""
        return self.channel_names[broker.name]

    # --- lifecycle ---------------------------------------------------------
    def start(self):
        sim, sc = self.sim, self.sim.scenario
        yield sim.env.timeout(self.join_ms)
        now = int(sim.env.now)
        self.alive = self.connected = True
        config = PushConsumerConfig(message_model=MessageModel(sc.message_model), pull_batch_size=sc.pull_batch_size)
        self.service = RebalanceService(now, wait_interval=sc.rebalance_interval_ms,
                                        min_interval=sc.rebalance_min_interval_ms)
        self.impl = RebalanceImpl(sc.consumer_group, self.cid, SimClientAPI(self), sc.strategy, config=config,
                                  consume_orderly=sc.consume_mode == ORDERLY, pull_service=PullMessageService(),
                                  rebalance_service=self.service, now_ms=now)
        if sim.trace:  # each step of the queue-table update, as Java logs it
            self.impl.step_listener = lambda step: sim.log(
                int(sim.env.now), "step", self.cid,
                f"{step.action} {step.mq.broker_name} {step.mq.topic}@{step.mq.queue_id}" if step.mq is not None
                else step.action)
        for topic in sc.topics:
            self.impl.subscribe(topic, "*", now)
        for topic in list(self.impl.subscription_inner):
            self.take_route(topic, now)
        self.service.register(self if sc.consume_mode == POP else self.impl)
        self.pool = ConsumePool(sim, sc.consume_threads)
        sim.log(now, "join", self.cid)
        self.impl.send_heartbeat(now)
        self.impl.rebalance_immediately(now)
        env = sim.env
        env.process(self.rebalance_loop())
        env.process(self.heartbeat_loop())
        if sc.changes_routes:  # otherwise every poll would find the same routes
            env.process(self.route_loop())
        if self.spec.leave_ms is not None:
            env.process(self.leave())
        if sc.consume_mode == POP:
            return
        self.kick_pull()
        if sc.message_model != BROADCASTING:
            env.process(self.persist_loop())
        if sc.consume_mode == ORDERLY and sc.message_model != BROADCASTING:
            env.process(self.lock_loop())

    def leave(self):
        sim = self.sim
        yield sim.env.timeout(self.spec.leave_ms - sim.env.now)
        now = int(sim.env.now)
        how = self.spec.leave
        self.alive = False
        self.died_at = now
        sim.close_ownership(self, now)
        if how == CRASH or how == HOST_LOSS:
            self.connected = False
            sim.log(now, "leave", self.cid, how)
            if how == CRASH:  # the kernel closes the sockets: every broker sees a channel close
                for broker in sim.brokers.values():
                    if broker.up and broker.consumer_manager.do_channel_close_event(self.cid, self.channel(broker), now):
                        sim.log(now, "channel closed", broker.name, self.cid)
                    broker.flush_notifications()
            return
        # Graceful shutdown: stop consuming, unlock (orderly), persist offsets, unregister.
        impl = self.impl
        if sim.scenario.consume_mode == ORDERLY and sim.scenario.message_model != BROADCASTING:
            impl.unlock_all(True, now)
        if sim.scenario.consume_mode != POP and sim.scenario.message_model != BROADCASTING:
            impl.offset_store.persist_all(set(impl.process_queue_table))
        impl.destroy()
        self.connected = False
        sim.log(now, "leave", self.cid, "shutdown")
        for broker in sim.brokers.values():
            if not broker.up:
                continue
            info = broker.consumer_manager.find_channel(sim.scenario.consumer_group, self.channel(broker))
            if info is not None:
                broker.consumer_manager.unregister_consumer(sim.scenario.consumer_group, info, True, now)
            broker.flush_notifications()

    def heartbeat(self, now_ms, consumers=None):
        """HEART_BEAT to every broker of the routes this client holds (MQClientInstance#sendHeartbeatToAllBroker);
        one that is down misses it."""
        if not self.connected:
            return
        sim, sc = self.sim, self.sim.scenario
        data = (consumers or [self.impl.consumer_data()])[0]
        known = {name for names in self.route_brokers.values() for name in names}
        for broker in sim.brokers.values():
            if not broker.up or broker.name not in known:
                continue
            info = ClientChannelInfo(self.channel(broker), self.cid, last_update_timestamp=now_ms)
            broker.consumer_manager.register_consumer(sc.consumer_group, info, data.consume_type.value,
                                                      data.message_model.value, data.consume_from_where.value,
                                                      data.subscription_data_set, True, now_ms)
            broker.flush_notifications()
        sim.log(now_ms, "heartbeat", self.cid)

    def take_route(self, topic: str, now_ms: int) -> bool:
        """MQClientInstance#updateTopicRouteInfoFromNameServer for one topic: ask the name server and, if the
        route changed, hand the readable queues to the rebalance (which sees them at its next run). A topic
        the name server no longer knows leaves the old route in place, as Java does (the call fails)."""
        route = self.sim.namesrv.pickup_topic_route_data(topic)
        if route is None or not route.topic_route_data_changed(self.routes.get(topic)):
            return False
        self.routes[topic] = route
        self.route_brokers[topic] = [bd.broker_name for bd in route.broker_datas]
        queues = self.sim.ordered(topic_route_data_to_subscribe_info(topic, route), route)
        self.impl.update_topic_subscribe_info(topic, queues)
        if topic in self.sim.scenario.topics and self.sim.scenario.changes_routes:
            self.sim.log(now_ms, "route", self.cid, f"{topic}: {_route_text(route)}")
        return True

    def route_loop(self):
        """The client's route poll: 10 ms after start, then every pollNameServerInterval."""
        env, sc = self.sim.env, self.sim.scenario
        yield env.timeout(FIRST_ROUTE_POLL_MS)
        while self.alive:
            now = int(env.now)
            for topic in list(self.impl.subscription_inner):
                self.take_route(topic, now)
            yield env.timeout(sc.poll_name_server_interval_ms)

    def on_notify(self):
        if self.alive:
            self.impl.rebalance_immediately(int(self.sim.env.now))
            self.kick_rebalance()

    def kick_rebalance(self):
        if self.rebalance_wake is not None and not self.rebalance_wake.triggered:
            self.rebalance_wake.succeed()

    def kick_pull(self):
        if self.alive and self.sim.scenario.consume_mode != POP:
            self.drain_pulls()

    # --- the client's threads ----------------------------------------------
    def rebalance_loop(self):
        env, sim = self.sim.env, self.sim
        while self.alive:
            delay = max(0, self.service.next_run_ms - env.now)
            self.rebalance_wake = env.event()
            yield env.timeout(delay) | self.rebalance_wake
            if not self.alive:
                return
            now = int(env.now)
            ran = self.service.run_due(now)
            if ran is not None:
                sim.counters["rebalances"] += 1
                sim.log(now, "rebalance", self.cid, "balanced" if ran else "unbalanced")
                sim.sync_ownership(self, now)
                self.kick_pull()

    def heartbeat_loop(self):
        env = self.sim.env
        while self.alive:
            yield env.timeout(self.sim.scenario.heartbeat_interval_ms)
            if self.alive:
                self.heartbeat(int(env.now))

    def persist_loop(self):
        env = self.sim.env
        while self.alive:
            yield env.timeout(self.sim.scenario.offset_persist_interval_ms)
            if self.alive:
                self.impl.offset_store.persist_all(set(self.impl.process_queue_table))

    def lock_loop(self):
        """ConsumeMessageOrderlyService: lockAll 1 s after start, then every lock_renew_interval_ms."""
        env, sim = self.sim.env, self.sim
        yield env.timeout(1_000)
        while self.alive:
            now = int(env.now)
            self.impl.lock_all(now)
            sim.log(now, "lock", self.cid, "lockAll")
            self.kick_pull()
            yield env.timeout(sim.scenario.lock_renew_interval_ms)

    def drain_pulls(self):
        """PullMessageService: send every due pull request the gates allow; wake again when the next is due."""
        sim, service = self.sim, self.impl.pull_service
        now = int(sim.env.now)
        service.due(now)
        while self.alive:
            request = service.take()
            if request is None:
                break
            decision = pull_message(request, self.impl, now)
            if decision.allowed:
                sim.send_pull(self, request, decision.command, now)
        due = service.next_due_ms()
        if self.alive and due is not None and (self.pull_timer_at is None or due < self.pull_timer_at):
            self.pull_timer_at = due
            sim.later(due - now, self._pull_timer)

    def _pull_timer(self):
        if self.pull_timer_at is not None and self.pull_timer_at <= self.sim.env.now:
            self.pull_timer_at = None
        self.drain_pulls()

    def on_pull_failure(self, request, error):
        """PullCallback#onException: the pull goes out again after pullTimeDelayMillsWhenException."""
        if not self.alive:
            return
        process_pull_exception(request, error, self.impl, int(self.sim.env.now))
        self.drain_pulls()

    def on_pull_answer(self, request, response):
        """PullCallback: handle the broker's answer and put the request back in circulation."""
        if not self.alive:
            return
        sim = self.sim
        now = int(sim.env.now)
        status = response.client_pull_status
        if status is None:
            process_pull_exception(request, BrokerError(response.remark, int(response.code)), self.impl, now)
        else:
            broker_name = request.message_queue.broker_name
            # What MessageDecoder builds; positional (topic, queue_id, queue_offset, body_size, tags,
            # store_timestamp, broker_name, msg_id): keywords cost more than the rest of the call.
            msgs = [Message(m.topic, m.queue_id, m.queue_offset, m.body_size, m.tags, int(m.store_timestamp),
                            broker_name, m.uniq_key) for m in response.messages]
            result = PullResult(_PULL_STATUS[status], response.next_begin_offset, response.min_offset,
                                response.max_offset, msgs)
            outcome = process_pull_result(request, result, self.impl, now)
            if outcome.rebalance_immediately:
                sim.sync_ownership(self, now)
                self.kick_rebalance()
            if outcome.msgs:
                if self.orderly:
                    if outcome.dispatch_to_consume:
                        sim.env.process(self.consume_orderly(request.message_queue, request.process_queue))
                else:
                    for msgs in _consume_batches(outcome.msgs, self.impl.config.consume_message_batch_max_size):
                        self.pool.submit(ConsumeRequest(self, request.message_queue, request.process_queue, msgs))
        self.drain_pulls()

    def consume_orderly(self, mq, pq):
        """ConsumeMessageOrderlyService.ConsumeRequest: one queue, in order, only while locked."""
        sim, env = self.sim, self.sim.env
        if mq in self.orderly_running:
            return
        self.orderly_running.add(mq)
        broadcasting = sim.scenario.message_model == BROADCASTING
        try:
            if True:  # one ConsumeRequest per queue at a time (Java: synchronized on the queue's lock object)
                while self.alive and not pq.dropped:
                    now = int(env.now)
                    lock_fresh = now - pq.last_lock_timestamp <= sim.scenario.client_lock_expiry_ms
                    if not broadcasting and not (pq.locked and lock_fresh):
                        self.impl.lock(mq, now)  # tryLockLaterAndReconsume
                        yield env.timeout(TRY_LOCK_LATER_MILLS)
                        continue
                    msgs = pq.take_messages(sim.scenario.pull_batch_size, now)
                    if not msgs:
                        return
                    pq.acquire_consume_lock()
                    start = now
                    yield env.timeout(sim.consume_duration(len(msgs)))
                    pq.release_consume_lock()
                    sim.record_batch(self, mq, msgs, start)
                    if not self.alive:
                        return
                    offset = pq.commit()
                    if offset >= 0 and not pq.dropped:
                        self.impl.offset_store.update_offset(mq, offset, False)
        finally:
            self.orderly_running.discard(mq)

    # --- Pop mode ------------------------------------------------------------
    def try_rebalance(self, now_ms) -> bool:
        """Pop mode's round, run by the RebalanceService like RebalanceImpl's.

        Mirrors: RebalanceImpl#getRebalanceResultFromBroker: ask a broker which queues to pop
        (QUERY_ASSIGNMENT); no client-side allocation.
        """
        sim, sc = self.sim, self.sim.scenario
        broker = sim.brokers[sim.rng.choice(sim.broker_names)]
        wanted = set()
        for topic in sc.topics:
            assigned = broker.assignment.query_assignment(topic, sc.consumer_group, self.cid, "CLUSTERING",
                                                          sc.strategy.name)
            for assignment in assigned or ():
                wanted.add((assignment.message_queue.broker_name, topic, assignment.message_queue.queue_id))
        for key in list(self.pop_queues):
            if key not in wanted:
                self.pop_queues.pop(key).dropped = True
        for key in sorted(wanted):
            if key not in self.pop_queues:
                ppq = self.pop_queues[key] = PopProcessQueue(now_ms)
                sim.env.process(self.pop_loop(key, ppq))
        return True

    def pop_loop(self, key, ppq):
        """The PopRequest circulating for one assignment (DefaultMQPushConsumerImpl#popMessage)."""
        sim, env, sc = self.sim, self.sim.env, self.sim.scenario
        broker_name, topic, queue_id = key
        broker = sim.brokers[broker_name]
        while self.alive and not ppq.dropped:
            if ppq.get_wai_ack_msg_count() > POP_THRESHOLD_FOR_QUEUE:
                yield env.timeout(PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL)
                continue
            yield env.timeout(sc.rpc_latency_ms)
            now = int(env.now)
            result = broker.pop.pop(sc.consumer_group, topic, queue_id, sc.pop_batch_nums,
                                    sc.pop_invisible_time_ms, now)
            sim.pulls += 1
            if not result.messages:
                waiter = env.event()
                broker.pop_waiters.append(waiter)
                yield waiter | env.timeout(POP_LONG_POLLING_MS)
                continue
            yield env.timeout(sc.rpc_latency_ms)
            if not self.alive:
                return
            ppq.last_pop_timestamp = int(env.now)
            ppq.inc_found_msg(len(result.messages))
            sim.log(int(env.now), "pop", self.cid, f"{len(result.messages)} from {broker_name}")
            for popped in _consume_batches(result.messages, self.impl.config.consume_message_batch_max_size):
                self.pool.submit(PopConsumeRequest(self, broker, ppq, popped))


class ConsumeRequest:
    """One pulled batch on its way through the consume pool.

    Mirrors: ConsumeMessageConcurrentlyService.ConsumeRequest (``run`` skips a dropped
    ProcessQueue; the listener takes ``consume_time_ms`` per message; then
    processConsumeResult).
    """

    __slots__ = ("consumer", "mq", "pq", "msgs", "started")

    def __init__(self, consumer: SimConsumer, mq: MessageQueue, pq, msgs):
        self.consumer, self.mq, self.pq, self.msgs = consumer, mq, pq, msgs
        self.started = 0

    def start(self, now_ms: int) -> int | None:
        """A pool thread takes the request: how long the listener runs, or None if there is nothing to do."""
        if not self.consumer.alive or self.pq.dropped:
            return None
        self.started = now_ms
        return self.consumer.sim.consume_duration(len(self.msgs))

    def finish(self, now_ms: int) -> None:
        consumer = self.consumer
        consumer.sim.record_batch(consumer, self.mq, self.msgs, self.started)
        if consumer.alive:
            process_consume_result_concurrently(self.pq, self.mq, self.msgs, ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
                                                offset_store=consumer.impl.offset_store,
                                                message_model=consumer.impl.message_model, now_ms=now_ms)


class PopConsumeRequest:
    """One popped batch: consumed on the pool, then each message acked on its broker."""

    __slots__ = ("consumer", "broker", "ppq", "popped", "started")

    def __init__(self, consumer: SimConsumer, broker: SimBroker, ppq: PopProcessQueue, popped):
        self.consumer, self.broker, self.ppq, self.popped = consumer, broker, ppq, popped
        self.started = 0

    def start(self, now_ms: int) -> int | None:
        if not self.consumer.alive:
            return None
        self.started = now_ms
        return self.consumer.sim.consume_duration(len(self.popped))

    def finish(self, now_ms: int) -> None:
        consumer = self.consumer
        consumer.sim.record_pop_batch(consumer, self.popped, self.started)
        if consumer.alive:
            for item in self.popped:
                self.broker.pop.ack(item.handle, now_ms)
                self.ppq.ack()


class ConsumePool:
    """The consumer's consumeExecutor: ``size`` threads taking requests first-come first-served.

    A request has ``start(now_ms)``, called when a thread takes it, which returns how
    long the thread is busy (or None: nothing to do), and ``finish(now_ms)``, called
    when the thread is done.
    """

    def __init__(self, sim: Simulation, size: int):
        self.sim, self.size = sim, size
        self.busy = 0
        self.waiting = deque()

    def submit(self, request) -> None:
        if self.waiting or self.busy >= self.size:
            self.waiting.append(request)
        else:
            self._run(request)

    def _run(self, request) -> None:
        duration = request.start(int(self.sim.env.now))
        if duration is not None:
            self.busy += 1
            self.sim.later(duration, self._done, request)

    def _done(self, request) -> None:
        self.busy -= 1
        request.finish(int(self.sim.env.now))
        while self.waiting and self.busy < self.size:
            self._run(self.waiting.popleft())


class Simulation:
    """One run: the brokers, the consumers, the clock and the recorder."""

    def __init__(self, scenario: Scenario, seed: int, trace: bool = False):
        scenario.validate()
        self.scenario, self.seed = scenario, seed
        self.trace = trace  # also log what a sequence diagram needs: consumer lists, steps, pulls, reputs
        self.rng = random.Random(seed)
        self.env = _Environment()
        self.later = self.env.later  # later(delay_ms, action, *args): run action(*args) delay_ms from now
        self.body_size = 1024
        self.broker_names = list(scenario.brokers)
        self.namesrv = RouteInfoManager()
        self.route_queues: dict[str, dict[MessageQueue, None]] = defaultdict(dict)  # every queue a route held
        self.routed: dict[str, list[list]] = defaultdict(list)  # queue -> [start, end or None] while in the route
        self.publish_view: dict[str, list[MessageQueue]] = {}  # the producers' write queues, per topic
        self.publish_version = 0
        self.brokers = {name: SimBroker(self, name) for name in scenario.all_brokers}
        for name in scenario.brokers:
            self.brokers[name].register(0)
        self.start_queue_counts = {topic: len(self.publish_queues(topic)) for topic in scenario.topics}
        self.take_publish_routes()
        self.consumers = {spec.client_id: SimConsumer(self, spec) for spec in scenario.consumers}
        self.channels = {}
        for consumer in self.consumers.values():
            for broker in self.brokers.values():
                self.channels[consumer.channel(broker)] = consumer
        self.broadcasting = scenario.message_model == BROADCASTING
        self.pop_mode = scenario.consume_mode == POP
        self.next_id = 0
        self.next_send = -1  # the last live queue a redirected send went to
        self.delivered: list[int] = []
        self.duplicates = 0
        self.seen_by = defaultdict(set)
        self.latencies: list[float] = []
        self.event_log = EventLog()
        self.counters = defaultdict(int)
        self.pending_pulls = {}
        self.pulls = self.held = 0  # pull requests sent (pops in Pop mode); pulls the broker held
        self.next_opaque = 0
        self.open_ownership: dict[tuple[str, MessageQueue], int] = {}
        self.ownership = defaultdict(list)
        self.lock_state: dict[MessageQueue, tuple[str, int, int]] = {}
        self.lock_ownership = defaultdict(list)
        self.consumption_log = ConsumptionLog()
        self.offset_tallies: dict[tuple[str, str, int], _OffsetTally] = {}  # by (broker, topic, queue id)
        self.queue_tallies: dict[MessageQueue, _OffsetTally] = {}  # the same, by MessageQueue
        self.offset_violations: list[str] = []
        self.load: dict[str, defaultdict[int, int]] = defaultdict(lambda: defaultdict(int))  # cid -> bucket -> count
        if scenario.consume_mode == POP:
            for broker in self.brokers.values():
                for topic in scenario.topics:
                    broker.assignment.set_message_request_mode(topic, scenario.consumer_group, "POP", -1)

    # --- wiring helpers ---------------------------------------------------------
    def route(self, topic: str):
        """The topic's readable queues as the name server now routes them (brokers in route order), or None."""
        route = self.namesrv.pickup_topic_route_data(topic)
        return None if route is None else self.ordered(topic_route_data_to_subscribe_info(topic, route), route)

    @staticmethod
    def ordered(queues, route: TopicRouteData) -> list[MessageQueue]:
        """``queues`` by the broker's place in ``route``, then by queue id."""
        rank = {qd.broker_name: i for i, qd in enumerate(route.queue_datas)}
        return sorted(queues, key=lambda mq: (rank[mq.broker_name], mq.queue_id))

    def publish_queues(self, topic: str) -> list[MessageQueue]:
        """The topic's write queues as the name server now routes them (what a producer takes)."""
        route = self.namesrv.pickup_topic_route_data(topic)
        return [] if route is None else topic_route_data_to_publish_info(topic, route)

    def note_routes(self) -> None:
        """Remember every queue the name server's routes have held (the result lists them all), and when
        each one was in a route."""
        now = int(self.env.now)
        for topic in self.scenario.topics:
            current = set(self.route(topic) or ())
            for mq in current:
                self.route_queues[topic].setdefault(mq)
            for mq in self.route_queues[topic]:
                spans = self.routed[str(mq)]
                open_now = bool(spans) and spans[-1][1] is None
                if mq in current and not open_now:
                    spans.append([now, None])
                elif mq not in current and open_now:
                    spans[-1][1] = now

    def take_publish_routes(self) -> None:
        """The producers' route poll (they share one view): take the name server's write queues."""
        view = {topic: self.publish_queues(topic) for topic in self.scenario.topics}
        view = {topic: queues for topic, queues in view.items() if queues or topic not in self.publish_view}
        if any(self.publish_view.get(topic) != queues for topic, queues in view.items()):
            self.publish_view.update(view)
            self.publish_version += 1

    def produce_rate(self, topic: str) -> float:
        """Messages per ms on each write queue of ``topic``: its starting total over the queues it has now."""
        rate = self.scenario.produce_rate_per_queue / 1000.0
        now, start = len(self.publish_view.get(topic, ())), self.start_queue_counts[topic]
        return rate if now == start or now == 0 else rate * start / now

    def send_elsewhere(self, down: SimBroker, topic: str, count: int, now_ms: int) -> None:
        """``count`` sends meant for ``down``. A stopped broker refuses the connection, so each send is retried at
        once on the next live broker's queue of ``topic`` (DefaultMQProducerImpl#sendDefaultImpl). A silent one
        lets the send wait out its whole timeout (sendMsgTimeout, 3 s), which leaves no time to retry: the send
        fails. Failed sends (also: no live broker) never become messages; they are counted as ``send_failed``."""
        live = [mq for mq in self.publish_view.get(topic, ()) if self.brokers[mq.broker_name].up]
        if not live or down.silent:
            self.counters["send_failed"] += count
            return
        touched = set()
        for _ in range(count):
            self.next_send = (self.next_send + 1) % len(live)
            mq = live[self.next_send]
            broker = self.brokers[mq.broker_name]
            broker.store.put_message(topic, mq.queue_id, now_ms, self.body_size, None, str(self.new_message_id()))
            touched.add(broker)
        self.counters["sent_elsewhere"] += count
        for broker in sorted(touched, key=lambda b: b.name):
            broker.store.reput(now_ms)
            broker.flush_pull_answers()

    def new_message_id(self) -> int:
        self.next_id += 1
        self.delivered.append(0)
        return self.next_id - 1

    def consume_duration(self, count: int) -> int:
        """Listener time for ``count`` messages: fixed, or a sum of exponential draws (one gamma draw)."""
        mean = self.scenario.consume_time_ms
        if self.scenario.consume_time_dist == "exponential" and mean > 0:
            return math.ceil(self.rng.gammavariate(count, mean))
        return math.ceil(count * mean)

    def log(self, time_ms, kind, who, detail=""):
        self.event_log.append(int(time_ms), kind, who, detail)

    # --- messages on the wire -----------------------------------------------------
    def notify(self, broker: SimBroker, note):
        consumer = self.channels.get(note.channel)
        self.counters["notifications"] += 1
        self.log(note.time_ms, "notify", note.client_id, f"from {broker.name}")
        if consumer is not None and consumer.connected:
            self.later(self.scenario.rpc_latency_ms, consumer.on_notify)

    def send_pull(self, consumer: SimConsumer, request, command, now_ms):
        mq, sc = command.message_queue, self.scenario
        self.next_opaque = opaque = self.next_opaque + 1
        commit_offset = command.commit_offset if command.commit_offset > 0 else 0
        header = PullMessageRequest(sc.consumer_group, mq.topic, mq.queue_id, command.queue_offset,
                                    command.max_msg_nums, command.commit_offset_enable, commit_offset,
                                    True, sc.suspend_timeout_ms, False, "*", command.sub_version,
                                    consumer.cid, consumer.channel_names[mq.broker_name], opaque)
        self.pending_pulls[opaque] = (consumer, request, now_ms)
        self.pulls += 1
        if self.trace:
            self.log(now_ms, "pull", consumer.cid,
                     f"{mq.broker_name} {mq.topic}@{mq.queue_id} from {command.queue_offset}")
        self.later(sc.rpc_latency_ms, self._pull_at_broker, self.brokers[mq.broker_name], header)

    def _pull_at_broker(self, broker: SimBroker, header):
        now = int(self.env.now)
        if not broker.up:
            self._fail_pull(broker, header.opaque)
            return
        response = broker.processor.process_request(header, now)
        if response is None:
            self.held += 1
            self.log(now, "pull held", broker.name, f"{header.topic}@{header.queue_id} from {header.client_id}")
        else:
            self.answer_pull(response)

    def _fail_pull(self, broker: SimBroker, opaque: int) -> None:
        """A pull that reached a broker that is down: refused at once (its answer takes the way back), or,
        for a silent broker, never answered until the pull's RPC timeout."""
        consumer, request, sent_ms = self.pending_pulls.pop(opaque, (None, None, 0))
        if consumer is None:  # already failed when the broker went down
            return
        error = BrokerUnavailable(f"pull to {broker.name} failed: broker down")
        now = int(self.env.now)
        delay = max(0, sent_ms + PULL_TIMEOUT_MS - now) if broker.silent else self.scenario.rpc_latency_ms
        self.later(delay, consumer.on_pull_failure, request, error)

    def fail_pending_pulls(self, broker: SimBroker) -> None:
        """The broker went down: every pull it holds (or that is on its way to it) fails."""
        for opaque in [o for o, (_, request, _) in self.pending_pulls.items()
                       if request.message_queue.broker_name == broker.name]:
            self._fail_pull(broker, opaque)

    def close_locks(self, broker: SimBroker, now_ms: int) -> None:
        """The broker's lock table is gone with it: close the lock intervals it held."""
        for mq in [mq for mq in self.lock_state if mq.broker_name == broker.name]:
            holder, start, _ = self.lock_state.pop(mq)
            self.lock_ownership[str(mq)].append(Interval(str(mq), holder, start, now_ms))

    def answer_pull(self, response):
        consumer, request, _ = self.pending_pulls.pop(response.request.opaque, (None, None, None))
        if self.trace and consumer is not None:
            header = response.request
            self.log(int(self.env.now), "pull answered", request.message_queue.broker_name,
                     f"to {consumer.cid}: {header.topic}@{header.queue_id} {len(response.messages)} message(s)")
        if consumer is not None:
            self.later(self.scenario.rpc_latency_ms, consumer.on_pull_answer, request, response)

    # --- recording ------------------------------------------------------------------
    def record_batch(self, consumer: SimConsumer, mq: MessageQueue, msgs, start_ms):
        """Count deliveries; a consumer that died mid-batch delivered only what finished before."""
        now = self.env.now
        step = (now - start_ms) / len(msgs)
        end = int(now)
        if consumer.died_at is not None:
            msgs = [m for k, m in enumerate(msgs) if start_ms + (k + 1) * step <= consumer.died_at]
            if not msgs:
                return
            end = min(end, consumer.died_at)
        load, latencies, deliver = self.load[consumer.cid], self.latencies, self.deliver
        offsets = []
        for k, m in enumerate(msgs):
            t = start_ms + (k + 1) * step
            deliver(consumer, int(m.msg_id))
            latencies.append(t - m.store_timestamp)
            load[int(t) // LOAD_BUCKET_MS] += 1
            offsets.append(m.queue_offset)
        tally = self.queue_tallies.get(mq)
        if tally is None:
            tally = self.offset_tallies.setdefault((mq.broker_name, mq.topic, mq.queue_id), _OffsetTally(str(mq)))
            self.queue_tallies[mq] = tally
        tally.consumed(offsets)
        self.consumption_log.append(tally.name, consumer.cid, start_ms, end, offsets)

    def deliver(self, consumer: SimConsumer, message_id: int) -> None:
        """Count one listener call on a message; a repeat is a duplicate (per consumer when broadcasting,
        where every consumer is meant to get every message)."""
        if self.broadcasting:
            seen = self.seen_by[consumer.cid]
            if message_id in seen:
                self.duplicates += 1
            seen.add(message_id)
        elif self.delivered[message_id]:
            self.duplicates += 1
        self.delivered[message_id] += 1

    def record_pop_batch(self, consumer, popped, start_ms):
        step = (self.env.now - start_ms) / len(popped)
        for k, item in enumerate(popped):
            t = start_ms + (k + 1) * step
            if consumer.died_at is not None and t > consumer.died_at:
                break
            m = item.message
            self.deliver(consumer, int(m.uniq_key))
            self.latencies.append(t - m.born_timestamp)
            self.load[consumer.cid][int(t) // LOAD_BUCKET_MS] += 1

    def on_commit(self, broker_name, topic, queue_id, offset):
        """The broker stored an offset: it must not pass a message nobody consumed."""
        if self.pop_mode or topic not in self.scenario.topics:
            return
        tally = self.offset_tallies.get((broker_name, topic, queue_id))
        low = tally.low_water if tally is not None else 0
        if offset > low:
            self.offset_violations.append(f"{topic}@{broker_name}:{queue_id} committed {offset} at "
                                          f"{int(self.env.now)} but offset {low} was never consumed")

    def sync_ownership(self, consumer: SimConsumer, now_ms):
        """Open and close the intervals in which ``consumer`` believes it owns each queue.

        In Pop mode a consumer "owns" what its assignments let it pop: every queue of a
        broker for a queueId -1 assignment (the broker chooses), else the one queue.
        """
        if not consumer.alive:
            held = set()
        elif self.scenario.consume_mode == POP:
            held = {mq for (broker, topic, queue_id), ppq in consumer.pop_queues.items() if not ppq.dropped
                    for mq in self.route(topic) if mq.broker_name == broker and queue_id in (-1, mq.queue_id)}
        else:
            held = {mq for mq, pq in consumer.impl.process_queue_table.items() if not pq.dropped}
        for key in [k for k in self.open_ownership if k[0] == consumer.cid and k[1] not in held]:
            start = self.open_ownership.pop(key)
            self.ownership[str(key[1])].append(Interval(str(key[1]), consumer.cid, start, now_ms))
            self.log(now_ms, "drop", consumer.cid, str(key[1]))
        for mq in sorted(held):
            if (consumer.cid, mq) not in self.open_ownership:
                self.open_ownership[(consumer.cid, mq)] = now_ms
                self.log(now_ms, "take", consumer.cid, str(mq))

    def close_ownership(self, consumer: SimConsumer, now_ms):
        for key in [k for k in self.open_ownership if k[0] == consumer.cid]:
            start = self.open_ownership.pop(key)
            self.ownership[str(key[1])].append(Interval(str(key[1]), consumer.cid, start, now_ms))

    def on_locks(self, broker: SimBroker, group, mqs, now_ms):
        """Follow the broker lock table (read directly, no side effects): owners, renewals, releases."""
        expiry = self.scenario.broker_lock_expiry_ms
        table = broker.locks.mq_lock_table.get(group, {})
        for mq in mqs:
            entry = table.get(mq)
            live = entry is not None and not entry.is_expired(now_ms, expiry)
            owner = entry.client_id if live else None
            current = self.lock_state.get(mq)
            if current is not None and owner != current[0]:
                holder, start, renewed = current
                self.lock_ownership[str(mq)].append(Interval(str(mq), holder, start, min(now_ms, renewed + expiry)))
                del self.lock_state[mq]
                current = None
            if owner is not None:
                if current is None:
                    self.log(now_ms, "lock", owner, str(mq))
                    self.lock_state[mq] = (owner, now_ms, int(entry.last_update_timestamp))
                else:
                    self.lock_state[mq] = (owner, current[1], int(entry.last_update_timestamp))

    # --- routes that change ---------------------------------------------------------
    def route_changes(self):
        """Topic changes and broker outages, in time order (a change and an outage at one instant: the change first)."""
        env, sc = self.env, self.scenario
        steps = [(c.at_ms, 0, c) for c in sc.topic_changes]
        for outage in sc.outages:
            steps.append((outage.down_ms, 1, outage))
            if outage.up_ms is not None:
                steps.append((outage.up_ms, 2, outage))
        for at_ms, kind, step in sorted(steps, key=lambda s: (s[0], s[1])):
            yield env.timeout(at_ms - env.now)
            now = int(env.now)
            if isinstance(step, TopicChange):
                broker, topic = self.brokers[step.broker], step.topic or next(iter(sc.topics))
                broker.set_topic(topic, step.read_queue_nums, step.write_queue_nums)
                self.log(now, "topic change", broker.name,
                         f"{topic}: {step.read_queue_nums} read / {step.write_queue_nums} write queues")
                if not broker.up and broker.name not in sc.brokers and not self._outage_covers(broker.name, now):
                    broker.up = True  # a new broker starts serving with its first topic
                    self.log(now, "broker up", broker.name, "new")
                if broker.up:
                    broker.register(now)
            elif isinstance(step, BrokerOutage):
                if kind == 1:
                    self.brokers[step.broker].go_down(step.silent)
                else:
                    self.brokers[step.broker].come_up()

    def _outage_covers(self, broker_name: str, now_ms: int) -> bool:
        return any(o.broker == broker_name and o.down_ms <= now_ms and (o.up_ms is None or now_ms < o.up_ms)
                   for o in self.scenario.outages)

    def name_server_scan_loop(self):
        """RouteInfoManager#scanNotActiveBroker every 5 s: a broker silent for 120 s leaves every route."""
        env = self.env
        while True:
            yield env.timeout(SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS)
            for name in self.namesrv.scan_not_active_broker(int(env.now)):
                self.log(int(env.now), "route removed", name, "registration expired")
                self.note_routes()

    def producer_route_loop(self):
        """The producers' route poll: 10 ms after they start, then every pollNameServerInterval."""
        env = self.env
        yield env.timeout(FIRST_ROUTE_POLL_MS)
        while True:
            before = self.publish_version
            self.take_publish_routes()
            if self.publish_version != before:
                self.log(int(env.now), "route", "producers",
                         "; ".join(f"{t}: {len(q)} write queues" for t, q in self.publish_view.items()))
            yield env.timeout(self.scenario.poll_name_server_interval_ms)

    # --- the run ------------------------------------------------------------------
    def run(self) -> SimResult:
        wall = time.perf_counter()
        env, sc = self.env, self.scenario
        for broker in self.brokers.values():
            env.process(broker.producer())
            env.process(broker.hold_loop())
            env.process(broker.housekeeping_loop())
            if not sc.real_time_notify:
                env.process(broker.notify_flush_loop())
            if sc.consume_mode == POP:
                env.process(broker.revive_loop())
        for consumer in self.consumers.values():
            env.process(consumer.start())
        if sc.changes_routes:
            for broker in self.brokers.values():
                env.process(broker.registration_loop())
            env.process(self.route_changes())
            env.process(self.name_server_scan_loop())
            env.process(self.producer_route_loop())
        gc_was_enabled = gc.isenabled()
        gc.disable()  # the run allocates millions of short-lived objects; collecting as it goes costs 3-4x
        try:
            env.run(until=sc.end_ms)
        finally:
            if gc_was_enabled:
                gc.enable()
        end = sc.end_ms
        for consumer in self.consumers.values():
            if consumer.alive:
                self.close_ownership(consumer, end)
        for mq, (holder, start, renewed) in self.lock_state.items():
            self.lock_ownership[str(mq)].append(Interval(str(mq), holder, start, min(end, renewed + sc.broker_lock_expiry_ms)))
        queues = [str(mq) for topic in sc.topics for mq in self.route_queues[topic]]
        self.counters["pulls"], self.counters["held"] = self.pulls, self.held
        self.counters["events"] = len(self.event_log)
        self.counters["simpy_events"] = next(env._eid)  # simpy numbers every event it schedules
        return SimResult(
            scenario=sc, seed=self.seed, produced=self.next_id,
            delivered=dict(enumerate(self.delivered)), duplicates=self.duplicates,
            ownership=dict(self.ownership), lock_ownership=dict(self.lock_ownership),
            consumption_log=self.consumption_log, latencies_ms=np.asarray(self.latencies, dtype=float),
            load={cid: _series(self.load.get(cid, {})) for cid in self.consumers}, load_bucket_ms=LOAD_BUCKET_MS,
            event_log=self.event_log, offset_violations=self.offset_violations,
            queues=queues, counters=dict(self.counters), wall_seconds=time.perf_counter() - wall,
            routed={queue: [(start, end if end is not None else sc.end_ms) for start, end in spans]
                    for queue, spans in self.routed.items()},
            stored={str(MessageQueue(topic, broker.name, queue_id)): broker.store.get_max_offset(topic, queue_id)
                    for broker in self.brokers.values() for topic in sc.topics
                    for queue_id in range(broker.store.topic_queue_nums.get(topic, 0))})


_CODE_NAMES = {code: code.name for code in ResponseCode}  # Enum.name is a slow property
_PULL_STATUS = {status.value: status for status in PullStatus}  # PullStatus[...] is a Python-level call


def _series(buckets: dict[int, int]) -> list[int]:
    """A load series from bucket -> count: every bucket up to the last one with a message (none after)."""
    return [buckets.get(i, 0) for i in range(max(buckets) + 1)] if buckets else []


def _route_text(route: TopicRouteData) -> str:
    """``broker-a 4r/4w, broker-b 8r/4w``: the route's brokers and queue counts."""
    return ", ".join(f"{qd.broker_name} {qd.read_queue_nums}r/{qd.write_queue_nums}w" for qd in route.queue_datas)


def _consume_batches(msgs, size: int) -> list:
    """``msgs`` cut into consume requests of ``consumeMessageBatchMaxSize`` (default 1), as
    ConsumeMessageConcurrentlyService#submitConsumeRequest (and the Pop service's twin) cut them."""
    if len(msgs) <= size:
        return [msgs]
    return [msgs[start:start + size] for start in range(0, len(msgs), size)]


def _queue_counts(dispatched) -> str:
    """``TopicTest@0 x2, TopicTest@3`` for the messages one reput dispatched."""
    counts: dict[str, int] = {}
    for m in dispatched:
        key = f"{m.topic}@{m.queue_id}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counts.items())


def _names(mqs) -> str:
    return ", ".join(str(mq) for mq in sorted(mqs))


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

"""One broker replica in simulated time: a master with the producers' sends to it, or a slave.

A :class:`BrokerNode` owns the real broker models (MessageStore, ConsumerManager with its change listener,
PullMessageProcessor with its PullRequestHoldService, RebalanceLockManager, the Pop processors) and runs
their periodic services. It gets what it needs and nothing more: the clock, the wire (answers and
notifications go out on it), the recorder, the routes (the name server and the producers' view), and the
other brokers by name (a send refused here is retried on one of them).

A slave (``Scenario.slaves``, broker id 1) runs the same registry and pull processor with the role SLAVE: it
registers with the name server, takes heartbeats and notifies its consumers like a master, takes the offset commits
a client sends it while the master is away, and copies the master's offsets about once a minute
(:class:`~rmqlib.broker.SlaveSynchronize`). Its store holds a copy of every message its master stores, made as the
master stores it (replication lag is not modelled). With ``Scenario.slave_read_enable`` off, the default, it
refuses every pull; with it on, it serves what it holds and sends every other pull straight back
(:class:`~rmqlib.broker.PullMessageProcessor`). It never stops.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Mapping

from rmqlib.broker import (
    BrokerConfig,
    BrokerRole,
    ConsumerManager,
    DefaultConsumerIdsChangeListener,
    MessageStore,
    PopLongPollingService,
    PopMessageProcessor,
    PopResult,
    PopReviveService,
    PullMessageProcessor,
    QueryAssignmentProcessor,
    RebalanceLockManager,
    SlaveSynchronize,
    TopicRouteInfoManager,
)
from rmqlib.broker.client_manage import ClientManageProcessor
from rmqlib.broker.pop_long_polling import POP_POLL_TIME_MILLIS as POP_POLL
from rmqlib.broker.protocol import ResponseCode
from rmqlib.broker.send_check import _msg_check_trusted
from rmqlib.broker.slave_synchronize import SLAVE_SYNC_CHECK_INTERVAL_MS, SLAVE_SYNC_FIRST_DELAY_MS
from rmqlib.broker.stats import SAMPLING_INTERVAL_MS, BrokerStatsManager
from rmqlib.broker.topic_route_info import FIRST_ROUTE_UPDATE_DELAY_MILLIS, LOAD_BALANCE_POLL_NAME_SERVER_INTERVAL
from rmqlib.client import retry_topic
from rmqlib.client.producer import RETRY_RESPONSE_CODES, RETRY_TIMES_WHEN_SEND_FAILED
from rmqlib.namesrv import MASTER_ID
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import POP, Scenario
from rmqlib.sim.wire import BrokerUnavailable, PopCall, Wire

BODY_SIZE = 1024  # bytes of every simulated message
_CODE_NAMES = {code: code.name for code in ResponseCode}  # Enum.name is a slow property


class _TracingStore(MessageStore):
    """A MessageStore that tells the recorder about every committed offset."""

    recorder: Recorder | None = None
    clock: Clock | None = None
    broker_name = ""

    def _commit_offset_trusted(self, group, topic, queue_id, offset):  # every commit, checked or not, ends here
        MessageStore._commit_offset_trusted(self, group, topic, queue_id, offset)
        if self.recorder is not None:
            self.recorder.on_commit(self.broker_name, topic, queue_id, offset, self.clock.now)


class _ReplicatedStore(_TracingStore):
    """A master's store that copies every message it stores to its slave's store at once (HAService's transfer,
    without its lag), so both hold the same messages at the same offsets."""

    replica: MessageStore

    def _put_message_trusted(self, *message):
        self.replica._put_message_trusted(*message)
        return _TracingStore._put_message_trusted(self, *message)

    def reput(self, now_ms):
        self.replica.reput(now_ms)
        return _TracingStore.reput(self, now_ms)


class BrokerNode:
    """One broker replica and its services: the master (``broker_id`` 0) or its slave (1)."""

    def __init__(
        self,
        name: str,
        scenario: Scenario,
        clock: Clock,
        wire: Wire,
        recorder: Recorder,
        routes: Routes,
        rng: random.Random,
        broker_id: int = MASTER_ID,
    ):
        sc = scenario
        self.name, self.scenario, self.clock, self.wire, self.recorder, self.routes = (
            name,
            scenario,
            clock,
            wire,
            recorder,
            routes,
        )
        self.cluster: Mapping[str, BrokerNode] = {}  # every broker by name, set by connect()
        self.broker_id = broker_id
        self.is_slave = broker_id != MASTER_ID
        self.label = f"{name}/slave" if self.is_slave else name  # who it is in the run's log
        self.slave: BrokerNode | None = None  # a master's slave (Scenario.slaves), set by the simulation
        self.master: BrokerNode | None = None  # a slave's master
        self.up = name in sc.brokers  # a broker that only a topic change brings in starts with it
        self.silent = False  # down without closing its connections (BrokerOutage.silent)
        self.starts = 0  # how many times it came back up: a request sent before a restart dies with the connection
        self.config = BrokerConfig(
            broker_name=name,
            long_polling_enable=sc.long_polling,
            short_polling_time_mills=sc.short_polling_ms,
            real_time_notify_consumer_change=sc.real_time_notify,
            channel_expired_timeout=sc.channel_expired_ms,
            broker_role=BrokerRole.SLAVE if self.is_slave else BrokerRole.ASYNC_MASTER,
            slave_read_enable=sc.slave_read_enable,
        )
        self.listener = DefaultConsumerIdsChangeListener(self.config)
        store_class = _ReplicatedStore if name in sc.slaves and not self.is_slave else _TracingStore
        self.store = store_class(self.config, message_arriving_listener=self._on_arrival)
        self.store.broker_name, self.store.recorder, self.store.clock = name, recorder, clock
        # what the broker registers with the name server (and its pulls are checked against):
        # topic -> (read queues, write queues)
        self.topic_config: dict[str, tuple[int, int]] = {}
        self.topic_config_changes = 0  # set_topic calls so far: the producers' burst plan checks its queues again
        self._start_services()
        self.pop = PopMessageProcessor(
            self.store, self.config, random.Random(rng.random()), self.topic_config, self.stats
        )
        self.revive = PopReviveService(self.pop)
        self.assignment = QueryAssignmentProcessor(
            self.consumer_manager, self.route_info.get_topic_subscribe_info, self.config
        )
        if self.up:
            for topic, queues in sc.topics.items():
                self.set_topic(topic, queues, queues)
        self.set_topic(retry_topic(sc.consumer_group), sc.retry_queue_nums, sc.retry_queue_nums)
        self.sync = SlaveSynchronize(self.store.offsets, 0) if self.is_slave else None

    def connect(self, cluster: Mapping[str, BrokerNode]) -> None:
        self.cluster = cluster

    def attach_slave(self, slave: BrokerNode) -> None:
        """``slave`` (broker id 1, same name) replicates this master from now on."""
        self.slave, slave.master = slave, self
        self.store.replica = slave.store

    def _start_services(self) -> None:
        """What a (re)started broker keeps only in memory: its consumer registry (and the groups' heartbeat
        fingerprints), held pulls, lock table, statistics and pull offsets (the committed offsets are kept)."""
        self.store.offsets.pull_offset_table.clear()
        self.consumer_manager = ConsumerManager([self.listener], self.config)
        # the counters a dashboard reads (Scenario.consume_stats_interval_ms); a restart zeroes them
        self.stats = BrokerStatsManager() if self.scenario.consume_stats_interval_ms else None
        self.client_manage = ClientManageProcessor(self.consumer_manager)  # HEART_BEAT
        self.processor = PullMessageProcessor(
            self.store,
            consumer_manager=self.consumer_manager,
            broker_config=self.config,
            topic_config=self.topic_config,
            broker_stats_manager=self.stats,
        )
        self.hold = self.processor.hold_service
        self.locks = RebalanceLockManager(self.scenario.broker_lock_expiry_ms)
        self.route_info = TopicRouteInfoManager(self.routes.route)
        self.pop_polling = PopLongPollingService(self.scenario.pop_polling_size)  # holds PopCalls
        self.pop_polling_started_ms = int(self.clock.now)  # its scan runs every 20 ms from here
        self.pop_scan_at: int | None = None  # the next scan scheduled
        self.lock_free_at: int | None = None  # the next lock-free timer scheduled (a FIFO group's pops)
        self.woken_pops: list[PopCall] = []  # woken by arrivals, to run again once the store has dispatched them

    def set_topic(self, topic: str, read: int, write: int) -> None:
        """Give ``topic`` these queue counts here (0 and 0: drop it from the config); the store only grows."""
        self.topic_config_changes += 1
        if read == 0 and write == 0:
            self.topic_config.pop(topic, None)
            return
        if max(read, write) > self.store.topic_queue_nums.get(topic, 0):
            self.store.create_topic(topic, max(read, write))
        self.topic_config[topic] = (read, write)

    def register(self, now_ms: int) -> None:
        """BrokerController#registerBrokerAll: the whole topic config to the name server. A slave takes the
        master's address from the answer (BrokerController#handleRegisterBrokerResult)."""
        self.routes.register(self.name, dict(self.topic_config), now_ms, self.broker_id)
        if self.is_slave:
            self.sync.set_master_addr(self.routes.master_address(self.name))

    # --- outages (BrokerOutage) ----------------------------------------------
    def go_down(self, silent: bool) -> None:
        now = int(self.clock.now)
        self.up, self.silent = False, silent
        self.recorder.log(now, "broker down", self.name, "silent" if silent else "connections closed")
        if not silent and self.routes.unregister(self.name):
            if self.routes.has_broker(self.name):  # its slave keeps the broker name and its queues in the routes
                self.recorder.log(now, "route reduced", self.name, "master gone, slave stays")
            else:
                self.recorder.log(now, "route removed", self.name, "channel closed")
        self.wire.fail_pending_pulls(self)
        self.recorder.close_locks(self.name, now)
        if not silent:  # the connections close: every pop this broker holds fails at its client at once
            for call in self.pop_polling.held + self.woken_pops:
                call.answer(BrokerUnavailable(f"pop to {self.name} failed: broker down"))
        self.woken_pops = []

    def come_up(self) -> None:
        now = int(self.clock.now)
        self.up, self.silent = True, False
        self.starts += 1
        self._start_services()
        self.pop.broker_stats_manager = self.stats
        self.start_stats_sampling()
        self.pop.consumer_order_info.recover(now)  # the persisted orderly batches, on a new timer wheel
        self.schedule_lock_free(now)
        # QueryAssignmentProcessor reads the broker's registry and route copy, the new ones (its request modes, a
        # config file in Java, stay)
        self.assignment.consumer_manager = self.consumer_manager
        self.assignment.topic_route = self.route_info.get_topic_subscribe_info
        if self.scenario.consume_mode == POP:
            self.clock.process(self.route_info_loop())
        self.recorder.log(now, "broker up", self.name)
        self.register(now)

    def start_serving(self) -> None:
        """A broker that only a topic change brings in starts with its first topic (its route copy's task too)."""
        self.up = True
        if self.stats is not None:  # its counters start now
            self.stats = self.processor.broker_stats_manager = self.pop.broker_stats_manager = BrokerStatsManager()
            self.start_stats_sampling()
        self.recorder.log(int(self.clock.now), "broker up", self.name, "new")
        if self.scenario.consume_mode == POP:
            self.clock.process(self.route_info_loop())

    def registration_loop(self):
        """Re-register every registerNameServerPeriod while up (keeps the name server's entry fresh)."""
        clock = self.clock
        while True:
            yield clock.timeout(self.scenario.register_name_server_period_ms)
            if self.up:
                self.register(int(clock.now))

    def _on_arrival(self, topic, queue_id, max_offset, tags_code, store_time, properties, now_ms):
        self.hold._notify_message_arriving_trusted(topic, queue_id, max_offset, now_ms, tags_code)
        if self.pop_polling.total_polling_num:
            self.wake_pops(self.pop_polling.notify_message_arriving(topic, queue_id, max_offset, tags_code))

    # --- Pop: POP_MESSAGE, and the pops held in PopLongPollingService ------------------------------------
    def serve_pop(self, call: PopCall) -> PopResult | None:
        """The broker takes ``call`` now (PopMessageProcessor#processRequest): its answer, or None when it holds
        the pop (the answer then goes to ``call.waiter`` once the pop is woken and run again)."""
        now = int(self.clock.now)
        sc = self.scenario
        # a gRPC receive's pop comes with the proxy's terms; a remoting pop takes the group's
        terms = call.proxied or (sc.pop_batch_nums, sc.pop_invisible_time_ms, POP_POLL, False, None)
        nums, invisible, poll, order, attempt_id = terms
        result, woken = self.pop.process_request(
            call, self.pop_polling, sc.consumer_group, call.topic, call.queue_id, nums, invisible, call.born_ms, now,
            call.expression, poll, call.channel_active, order, attempt_id,
        )  # fmt: skip
        if order:
            self.schedule_lock_free(now)
        self.wake_pops(woken)
        if result is None:
            self.schedule_pop_scan(now)
        return result

    # --- a FIFO group's orderly pops: acks, changes of invisible time and the lock-free timers ------------------
    def ack_orderly(self, handle, now_ms: int) -> ResponseCode:
        """An orderly ack (AckMessageProcessor#ackOrderly): the pops it wakes run again, and the lock-free timers
        move."""
        code, woken = self.pop.ack_orderly(handle, now_ms, self.pop_polling)
        self.wake_pops(woken)
        self.schedule_lock_free(now_ms)
        return code

    def change_invisible_time(self, handle, invisible_time_ms: int, now_ms: int):
        """CHANGE_MESSAGE_INVISIBLETIME (ChangeInvisibleTimeProcessor): for an orderly handle the queue's lock-free
        timer moves with the message's new visible time."""
        answer = self.pop.change_invisible_time(handle, invisible_time_ms, now_ms)
        if handle.is_order:
            self.schedule_lock_free(now_ms)
        return answer

    def schedule_lock_free(self, now: int) -> None:
        """Make sure the lock-free timers fire when the next one is due (ConsumerOrderInfoLockManager's timer)."""
        due = self.pop.next_lock_free_ms()
        if due is not None and (self.lock_free_at is None or due < self.lock_free_at):
            self.lock_free_at = due
            self.clock.later(max(0, due - now), self.lock_free, self.pop_polling)

    def lock_free(self, service) -> None:
        now = int(self.clock.now)
        if service is not self.pop_polling or not self.up:
            return
        if self.lock_free_at == now:
            self.lock_free_at = None
        self.wake_pops(self.pop.notify_lock_free(now, self.pop_polling))
        self.schedule_lock_free(now)

    def wake_pops(self, calls: list) -> None:
        """Run the woken pops again (PopLongPollingService#wakeUp hands them to the pull executor): after what the
        store is dispatching now, each in turn."""
        if not calls:
            return
        if not self.woken_pops:
            self.clock.later(0, self.run_woken_pops, self.pop_polling)
        self.woken_pops.extend(calls)

    def run_woken_pops(self, service) -> None:
        if service is not self.pop_polling or not self.up:  # the broker stopped: its woken pops died with it
            return
        calls, self.woken_pops = self.woken_pops, []
        for call in calls:
            result = self.serve_pop(call)
            if result is not None:
                call.answer(result)

    def schedule_pop_scan(self, now: int, earliest: int | None = None) -> None:
        """Make sure the service's scan runs (at ``earliest`` or later) when the first held pop expires
        (PopLongPollingService#run)."""
        due = self.pop_polling.next_scan_ms(now if earliest is None else earliest, self.pop_polling_started_ms)
        if due is not None and (self.pop_scan_at is None or due < self.pop_scan_at):
            self.pop_scan_at = due
            self.clock.later(due - now, self.pop_scan, self.pop_polling)

    def pop_scan(self, service) -> None:
        now = int(self.clock.now)
        if service is not self.pop_polling or not self.up:
            return
        if self.pop_scan_at == now:
            self.pop_scan_at = None
        self.wake_pops(self.pop_polling.scan(now))
        self.schedule_pop_scan(now, earliest=now + 1)

    def flush_pull_answers(self) -> None:
        """Send the answers of woken held pulls back to their consumers."""
        log, answer = self.recorder.event_log.append, self.wire.answer_pull  # a broker's times are int ms
        for response in self.processor.drain():
            request = response.request
            detail = f"{request.topic}@{request.queue_id} {_CODE_NAMES[response.code]}"
            log(response.time_ms, "pull woken", self.name, detail)
            answer(response)

    def flush_notifications(self) -> None:
        notes = self.listener.drain()
        if notes:
            self.wire.notify(self.label, notes)

    # --- periodic services -------------------------------------------------
    def hold_loop(self):
        clock, sc = self.clock, self.scenario
        interval = sc.long_polling_check_ms if sc.long_polling else sc.short_polling_ms
        while True:
            yield clock.timeout(interval)
            if self.up:
                self.hold.check_hold_request(int(clock.now))
                self.flush_pull_answers()

    def start_stats_sampling(self) -> None:
        """Sample this broker's counters every 10 s from its start, the first at once (StatsItemSet#init), until
        a restart gives it new ones."""
        if self.stats is not None:
            self.clock.process(self._stats_sampling_loop(self.stats))

    def _stats_sampling_loop(self, stats: BrokerStatsManager):
        clock = self.clock
        while self.stats is stats:
            if self.up:
                stats.sampling_in_seconds(int(clock.now))
            yield clock.timeout(SAMPLING_INTERVAL_MS)

    def housekeeping_loop(self):
        clock = self.clock
        while True:
            yield clock.timeout(self.scenario.channel_scan_ms)
            if not self.up:
                continue
            for _group, info in self.consumer_manager.scan_not_active_channel(int(clock.now)):
                self.recorder.log(int(clock.now), "channel expired", self.label, info.client_id)
            self.flush_notifications()

    def notify_flush_loop(self):
        clock = self.clock
        while True:
            yield clock.timeout(max(1, self.listener.next_flush_ms - int(clock.now)))
            self.listener.run_due(int(clock.now))
            self.flush_notifications()

    def sync_loop(self):
        """A slave's sync task (SlaveSynchronize): 10 s after start, then every 3 s."""
        clock, master = self.clock, self.master
        yield clock.timeout(SLAVE_SYNC_FIRST_DELAY_MS)
        while True:
            now = int(clock.now)
            if self.sync.run(now, master.store.offsets if master.up else None):
                self.recorder.log(now, "slave sync", self.label, f"consumer offsets from {master.name}")
            yield clock.timeout(SLAVE_SYNC_CHECK_INTERVAL_MS)

    def route_info_loop(self):
        """TopicRouteInfoManager's scheduled task, while this start of the broker lasts: 1 s after it, then every
        loadBalancePollNameServerInterval. Only a Pop group asks a broker for assignments here, so only its runs
        keep the copy fresh (it changes nothing else)."""
        clock, route_info, starts = self.clock, self.route_info, self.starts
        yield clock.timeout(FIRST_ROUTE_UPDATE_DELAY_MILLIS)
        while self.up and self.starts == starts:
            route_info.update_topic_route_info_from_name_server()
            yield clock.timeout(LOAD_BALANCE_POLL_NAME_SERVER_INTERVAL)

    def revive_loop(self):
        """PopReviveService: every reviveInterval while the broker is up (its checkpoints are in the store, so a
        restart keeps them)."""
        clock = self.clock
        while True:
            yield clock.timeout(self.scenario.pop_revive_interval_ms)
            if not self.up:
                continue
            revived = self.revive.revive(int(clock.now))
            if revived:
                self.recorder.log(int(clock.now), "revive", self.name, f"{len(revived)} message(s)")
                self.store.reput(int(clock.now))

    # --- the producers' sends to this broker ------------------------------------
    def producer(self):
        """Bursts every produce_batch_ms to this broker's write queues in the producers' route view; queue
        q's messages are spread evenly over time. Each topic keeps the total rate it started with
        (``produce_rate_per_queue`` x its queues), shared by however many write queues the view shows.
        While this broker is down, its share is sent elsewhere or fails (:meth:`send_elsewhere`)."""
        clock, sc, routes, recorder = self.clock, self.scenario, self.routes, self.recorder
        if sc.produce_rate_per_queue / 1000.0 <= 0:
            return
        put, new_id = self.store._put_message_trusted, recorder.new_message_id  # the plan holds existing queues
        tags = sc.message_tags
        yield clock.timeout(sc.produce_start_ms)
        plan: list[list] = []
        version = checked = -1
        waiting: list[tuple[float, int]] | None = None  # (when entry i may next be due, i); None: build it
        while clock.now < sc.duration_ms:
            yield clock.timeout(min(sc.produce_batch_ms, sc.duration_ms - clock.now))
            now = int(clock.now)
            if version != routes.publish_version:  # the producers' view of the routes changed (or: the first burst)
                plan, version, waiting, checked = self._replan(plan, now), routes.publish_version, None, -1
            if checked != self.topic_config_changes:  # what this broker answers a send to each planned queue
                for entry in plan:
                    entry[7] = _msg_check_trusted(self.topic_config, entry[0], entry[1])
                checked = self.topic_config_changes
            if not self.up:
                for entry in plan:
                    due = int((now - entry[4]) * entry[3] + entry[5] + entry[2]) - entry[6]
                    self.send_elsewhere(entry[0], due, now, entry[6])
                    entry[6] += due
                waiting = None
                continue
            # A queue's count of messages due only grows with time, so a queue whose next message cannot be due
            # yet is skipped; the ones that may be are handled in plan order, as a pass over the whole plan would.
            if waiting is None:
                waiting = [(_next_due(entry), i) for i, entry in enumerate(plan)]
                heapq.heapify(waiting)
            ready = []
            while waiting and waiting[0][0] <= now:
                ready.append(heapq.heappop(waiting)[1])
            ready.sort()
            for i in ready:  # entry: [topic, queue id, phase, rate, since, produced before since, sent, send check]
                entry = plan[i]
                due = int((now - entry[4]) * entry[3] + entry[5] + entry[2]) - entry[6]
                if entry[7] is ResponseCode.SUCCESS:
                    if not tags:
                        for _ in range(due):
                            put(entry[0], entry[1], now, BODY_SIZE, None, str(new_id()), now, 0, ())  # born now
                    else:  # the queue's messages take the tags in turn
                        for seq in range(entry[6], entry[6] + due):
                            tag = tags[seq % len(tags)]
                            put(entry[0], entry[1], now, BODY_SIZE, tag, str(new_id(tag)), now, 0, ())
                elif due:  # the producers' route is older than this broker's topic config
                    self.send_refused(entry[0], entry[7], due, now, entry[6])
                entry[6] += due
                heapq.heappush(waiting, (_next_due(entry), i))
            if recorder.trace and self.store.behind():  # logged first: the wake-ups happen inside reput
                recorder.log(
                    now, "reput", self.name, _queue_counts(self.store.commit_log[self.store.reput_from_index :])
                )
            self.store.reput(now)
            self.flush_pull_answers()

    def _replan(self, plan: list[list], now: int) -> list[list]:
        """The burst plan for this broker's queues in the producers' view, carrying over what each queue
        that stays has produced so far (its phase, count and credit), at the rate its topic now gives it. Empty
        when the producers send ordered messages: the :class:`~rmqlib.sim.ordered_producer.OrderedProducer`
        sends them all (this loop still dispatches what the store took)."""
        sc, routes = self.scenario, self.routes
        if sc.order_keys:
            return []
        old = {(entry[0], entry[1]): entry for entry in plan}
        queues = [
            (mq.topic, mq.queue_id)
            for topic in sc.topics
            for mq in routes.publish_view.get(topic, ())
            if mq.broker_name == self.name
        ]
        start = max(now, sc.produce_start_ms) if plan else sc.produce_start_ms
        fresh = []
        for i, (topic, queue_id) in enumerate(queues):
            rate = routes.produce_rate(topic)
            entry = old.get((topic, queue_id))
            if entry is None:
                fresh.append([topic, queue_id, (i + 0.5) / len(queues), rate, start, 0.0, 0, None])
            else:
                produced = (start - entry[4]) * entry[3] + entry[5]
                fresh.append([topic, queue_id, entry[2], rate, start, produced, entry[6], None])
        return fresh

    def send_refused(self, topic: str, code: ResponseCode, count: int, now_ms: int, seq: int) -> None:
        """``count`` sends of ``topic`` that this broker refused with ``code``
        (AbstractSendMessageProcessor#msgCheck): the producer retries them elsewhere, or they fail, as
        :mod:`rmqlib.client.producer` says. ``seq``: as for :meth:`send_elsewhere`."""
        if code in RETRY_RESPONSE_CODES:
            self.send_elsewhere(topic, count, now_ms, seq)
        else:
            self.recorder.counters["send_failed"] += count

    def send_elsewhere(self, topic: str, count: int, now_ms: int, seq: int) -> None:
        """``count`` sends meant for this broker that it refused: while it is down, the connection; while up,
        with a code the producer retries. Each send is retried at once on the next queue of ``topic`` on
        another live broker, up to RETRY_TIMES_WHEN_SEND_FAILED times while the answer is one the producer
        retries (DefaultMQProducerImpl#sendDefaultImpl). A silent broker lets the send wait out its whole
        timeout (sendMsgTimeout, 3 s), which leaves no time to retry: the send fails. Failed sends (also: no
        other live broker) never become messages; they are counted as ``send_failed``. ``seq`` counts the sends
        made before these to the queue they were meant for: with ``message_tags``, send ``seq + i`` keeps its tag."""
        live = [
            mq
            for mq in self.routes.publish_view.get(topic, ())
            if mq.broker_name != self.name and self.cluster[mq.broker_name].up
        ]
        counters = self.recorder.counters
        if not live or self.silent:
            counters["send_failed"] += count
            return
        touched = set()
        tags = self.scenario.message_tags
        for i in range(count):
            tag = tags[(seq + i) % len(tags)] if tags else None
            for _retry in range(RETRY_TIMES_WHEN_SEND_FAILED):
                mq = self.routes.next_send_queue(live)
                broker = self.cluster[mq.broker_name]
                code = _msg_check_trusted(broker.topic_config, topic, mq.queue_id)
                if code is ResponseCode.SUCCESS:
                    message_id = str(self.recorder.new_message_id(tag))
                    put = broker.store._put_message_trusted
                    put(topic, mq.queue_id, now_ms, BODY_SIZE, tag, message_id, now_ms, 0, ())  # born now
                    touched.add(broker)
                    counters["sent_elsewhere"] += 1
                    break
                if code not in RETRY_RESPONSE_CODES:
                    counters["send_failed"] += 1
                    break
            else:
                counters["send_failed"] += 1
        for broker in sorted(touched, key=lambda b: b.name):
            broker.store.reput(now_ms)
            broker.flush_pull_answers()


def _next_due(entry: list) -> float:
    """A moment no later than the first at which burst-plan ``entry`` owes one more message (1 ms early, so that
    rounding can never make it late: at that burst the count is computed as before and may still be 0)."""
    rate = entry[3]
    if rate <= 0:
        return math.inf
    return entry[4] + (entry[6] + 1 - entry[5] - entry[2]) / rate - 1.0


def _queue_counts(dispatched) -> str:
    """``TopicTest@0 x2, TopicTest@3`` for the messages one reput dispatched."""
    counts: dict[str, int] = {}
    for m in dispatched:
        key = f"{m.topic}@{m.queue_id}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counts.items())

"""One consumer process in simulated time: its real RebalanceImpl, and the threads around it as simpy processes.

A :class:`ConsumerNode` gets the clock, the wire (its pulls go out on it), the recorder, the routes (it polls the
name server itself) and the brokers by name (the rebalance's broker calls, which take no simulated time, go
straight to them through :class:`SimClientAPI`). The orderly consume service
(:class:`~rmqlib.client.ConsumeMessageOrderlyService`) and the Pop group's broker-side rebalance
(:meth:`~rmqlib.client.RebalanceImpl.get_rebalance_result_from_broker`, QUERY_ASSIGNMENT to a broker of each
subscribed topic) are the client models; this module runs them in simulated time.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping

import simpy

from rmqlib.broker import ClientChannelInfo
from rmqlib.broker.pop_long_polling import POP_POLL_TIME_MILLIS
from rmqlib.broker.protocol import ResponseCode
from rmqlib.client import (
    PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL,
    BrokerError,
    ConsumeMessageOrderlyService,
    Message,
    MessageModel,
    OffsetNotFoundError,
    PopProcessQueue,
    PopRequest,
    PullMessageService,
    PullResult,
    PullStatus,
    PushConsumerConfig,
    RebalanceImpl,
    RebalanceService,
    process_pop_result,
    process_pull_exception,
)
from rmqlib.client.consume import _CONSUME_SUCCESS, _process_consume_result_concurrently_trusted
from rmqlib.client.heartbeat import HeartbeatV2State, heartbeat_fingerprint
from rmqlib.client.pull import _process_pull_result_trusted, _pull_message_trusted
from rmqlib.model import INT_MAX, MessageQueue
from rmqlib.namesrv import MASTER_ID, TopicRouteData
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.result import subscription_detail
from rmqlib.sim.routes import FIRST_ROUTE_POLL_MS, Routes, route_text
from rmqlib.sim.scenario import BROADCASTING, CRASH, HOST_LOSS, ORDERLY, POP, Scenario
from rmqlib.sim.shared_views import SharedViews
from rmqlib.sim.wire import POP_ANSWERS, BrokerUnavailable, PopCall, Wire

POP_THRESHOLD_FOR_QUEUE = 96  # DefaultMQPushConsumer.popThresholdForQueue
POP_RPC_TIMEOUT_MS = POP_POLL_TIME_MILLIS + 10_000  # PullAPIWrapper#popAsync: the poll time plus 10 s
_SUCCESS = ResponseCode.SUCCESS
_POLLING_FULL = ResponseCode.POLLING_FULL
_SUBSCRIPTION_REFUSALS = (ResponseCode.SUBSCRIPTION_NOT_EXIST, ResponseCode.SUBSCRIPTION_NOT_LATEST)
_PULL_STATUS = {status.value: status for status in PullStatus}  # PullStatus[...] is a Python-level call


#: MQClientInstance#startScheduledTask: the first periodic heartbeat and offset persist, this long after start.
FIRST_HEARTBEAT_MS = 1_000
FIRST_PERSIST_MS = 10_000


class SimClientAPI:
    """The broker calls of one consumer, answered by the simulated brokers (no simulated time)."""

    def __init__(self, consumer: ConsumerNode):
        self.consumer = consumer
        self.recorder = consumer.recorder

    def _broker(self, name: str, only_this_broker: bool = True, topic: str | None = None):
        """The replica of ``name`` a call goes to (MQClientInstance#findBrokerAddressInSubscribe with the master's
        id), reached; BrokerUnavailable when it is down or this client knows no such address. With ``topic``, a
        client that knows no address asks the name server for the topic's route first and then takes any replica
        (what RemoteBrokerOffsetStore does for offsets)."""
        consumer = self.consumer
        broker = consumer.find_broker_in_subscribe(name, only_this_broker)
        if broker is None and topic is not None:
            consumer.take_route(topic, int(consumer.clock.now))
            broker = consumer.find_broker_in_subscribe(name, False)
        if broker is None:
            raise BrokerUnavailable(f"the broker[{name}] not exist")
        if not broker.up:
            raise BrokerUnavailable(f"{name} is down")
        consumer.reach(broker, int(consumer.clock.now))
        return broker

    def find_consumer_id_list(self, topic, group):
        """GET_CONSUMER_LIST_BY_GROUP to a random broker of the topic's route as this client last saw it, at its
        master, or at its slave when the route shows no master (MQClientInstance#findConsumerIdList,
        #findBrokerAddrByTopic, BrokerData#selectBrokerAddr); None when that broker is down."""
        consumer = self.consumer
        data = consumer.rng.choice(consumer.topic_routes[topic].broker_datas)
        broker = consumer.cluster[data.broker_name]
        if broker.slave is not None and not data.has_master():
            broker = broker.slave
        if not broker.up:
            if self.recorder.trace:
                self.recorder.log(
                    int(consumer.clock.now),
                    "find consumer ids",
                    consumer.cid,
                    f"{broker.label}: {topic}, failed (broker down)",
                )
            return None
        consumer.reach(broker, int(consumer.clock.now))
        ids = broker.consumer_manager.get_consumer_id_list(group)
        if self.recorder.trace:
            self.recorder.log(
                int(consumer.clock.now),
                "find consumer ids",
                consumer.cid,
                f"{broker.label}: {topic}, {len(ids or ())} member(s)",
            )
        return ids

    def lock_batch_mq(self, broker_name, group, client_id, mqs, now_ms):
        broker = self._broker(broker_name)
        locked = broker.locks.try_lock_batch(group, mqs, client_id, now_ms)
        self.recorder.on_locks(broker.locks.mq_lock_table.get(group, {}), mqs, now_ms)
        return locked

    def unlock_batch_mq(self, broker_name, group, client_id, mqs, now_ms):
        broker = self._broker(broker_name)
        broker.locks.unlock_batch(group, mqs, client_id)
        self.recorder.on_locks(broker.locks.mq_lock_table.get(group, {}), mqs, now_ms)
        self.recorder.log(now_ms, "unlock", self.consumer.cid, _names(mqs))

    def query_consumer_offset(self, group, mq):
        broker = self._broker(mq.broker_name, True, mq.topic)  # RemoteBrokerOffsetStore#fetchConsumeOffsetFromBroker
        code, offset = broker.store.query_consumer_offset(group, mq.topic, mq.queue_id)
        if code is not ResponseCode.SUCCESS:
            raise OffsetNotFoundError(f"no offset for {mq}", int(code))
        return offset

    def update_consumer_offset(self, group, mq, offset):
        broker = self._broker(mq.broker_name, False, mq.topic)  # RemoteBrokerOffsetStore#updateConsumeOffsetToBroker
        broker.store.commit_offset(group, mq.topic, mq.queue_id, offset)

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

    def send_heartbeat(self, client_id, consumers, now_ms, is_rebalance=False):
        self.consumer.heartbeat(now_ms, consumers, is_rebalance)

    def query_assignment(self, topic, group, client_id, strategy_name, message_model):
        """QUERY_ASSIGNMENT to a random broker of the topic's route as this client last saw it
        (MQClientInstance#queryAssignment, through #findBrokerAddrByTopic); a broker that is down fails the call."""
        consumer = self.consumer
        broker = self._broker(consumer.rng.choice(consumer.route_brokers[topic]))
        return broker.assignment.query_assignment(topic, group, client_id, strategy_name, message_model)


class ConsumerNode:
    """One consumer process: its RebalanceImpl and the threads around it, as simpy processes."""

    def __init__(
        self,
        spec,
        scenario: Scenario,
        clock: Clock,
        wire: Wire,
        recorder: Recorder,
        routes: Routes,
        rng: random.Random,
        views: SharedViews | None = None,
    ):
        # cid names the member in the records; client_id is what it sends to brokers (another member's, if shared)
        self.spec, self.cid, self.client_id = spec, spec.client_id, spec.sent_client_id
        self.scenario, self.clock, self.wire, self.recorder, self.routes, self.rng = (
            scenario,
            clock,
            wire,
            recorder,
            routes,
            rng,
        )
        self.views = views if views is not None else SharedViews()  # work the run's consumers share
        self.consume_time_ms = scenario.consume_time_of(spec)  # its listener's time per message
        self.cluster: Mapping = {}  # every broker node by name, set by connect()
        self.alive = False
        self.died_at: int | None = None
        self.connected = False
        self._rebalance_wait: _RebalanceWait | None = None  # the rebalance thread's current wait
        self.pull_timer_at: int | None = None
        self.impl: RebalanceImpl | None = None
        self.orderly_service: ConsumeMessageOrderlyService | None = None
        self.orderly = scenario.consume_mode == ORDERLY
        # then the group's subscriptions on each broker are followed, and each pull's filtered offsets recorded
        self.narrows_subscriptions = scenario.narrows_subscriptions
        # ConsumeMessageOrderlyService's messageQueueLock: requests waiting for a queue whose request runs
        self.orderly_waiting: dict[MessageQueue, deque[OrderlyConsumeRequest]] = {}
        self.channel_names: dict[str, str] = {}  # by BrokerNode.label, set by connect()
        self.lost_connections: set[str] = set()  # brokers restarted since this client last reached them
        self.topic_routes: dict[str, TopicRouteData] = {}  # MQClientInstance#topicRouteTable: routes taken
        self.route_brokers: dict[str, list[str]] = {}  # topic -> the brokers of that route
        # MQClientInstance#brokerAddrTable: broker name -> the broker ids of the routes taken (the last route
        # taken that names it wins), until cleanOfflineBroker finds the name in no route
        self.broker_addrs: dict[str, frozenset[int]] = {}
        # MQClientInstance's second-way heartbeat tables (by BrokerNode.label), with useHeartbeatV2 only
        self.heartbeat_v2 = HeartbeatV2State() if scenario.use_heartbeat_v2 else None
        jitter = scenario.start_jitter_ms
        self.join_ms = spec.join_ms + (rng.randrange(jitter + 1) if jitter else 0)

    def connect(self, cluster: Mapping) -> None:
        self.cluster = cluster
        self.channel_names = {broker.label: f"{self.cid}->{broker.label}" for broker in self.nodes()}

    def channel(self, broker) -> str:
        """The name of this consumer's connection to ``broker`` (a master or a slave)."""
        return self.channel_names[broker.label]

    def nodes(self):
        """Every broker process, masters then slaves."""
        masters = list(self.cluster.values())
        return masters + [broker.slave for broker in masters if broker.slave is not None]

    def find_broker_in_subscribe(self, name: str, only_this_broker: bool):
        """MQClientInstance#findBrokerAddressInSubscribe for the master's id: ``name``'s master if this client's
        address table has it, else (``only_this_broker`` False) its slave, else None. A broker name with no slave
        is always its master, up or not: a call to a name the table has dropped still goes there and fails there (a
        network delay later than Java's "no address"), as before slaves were modelled and as the fingerprints pin."""
        master = self.cluster[name]
        if master.slave is None:
            return master
        ids = self.broker_addrs.get(name, ())
        if MASTER_ID in ids:
            return master
        return None if only_this_broker or not ids else master.slave

    def replicas_known(self, master) -> list:
        """The replicas of ``master``'s broker name in this client's address table."""
        if master.slave is None:
            return [master]
        ids = self.broker_addrs.get(master.name, ())
        return [node for node in (master, master.slave) if node.broker_id in ids]

    def consume_duration(self, count: int) -> int:
        """Listener time for ``count`` messages: fixed, or a sum of exponential draws (one gamma draw)."""
        mean = self.consume_time_ms
        if self.scenario.consume_time_dist == "exponential" and mean > 0:
            return math.ceil(self.rng.gammavariate(count, mean))
        return math.ceil(count * mean)

    def sync_ownership(self, now_ms) -> None:
        """Tell the recorder which queues this consumer believes it owns now: the queues it pulls and, in Pop mode,
        what its POP assignments let it pop, for a broker in its own route view: for a queueId -1 assignment every
        queue the broker reads now (its topic config, which a topic change moves ahead of any route), else the one
        queue."""
        held = set()
        if self.alive:
            held = {mq for mq, pq in self.impl.process_queue_table.items() if not pq.dropped}
            routes = self.impl.topic_subscribe_info_table
            for assigned, ppq in self.impl.pop_process_queue_table.items():
                topic, broker_name, queue_id = assigned.topic, assigned.broker_name, assigned.queue_id
                routed = [mq for mq in routes.get(topic, ()) if mq.broker_name == broker_name]
                if ppq.dropped or not routed:
                    continue
                if queue_id >= 0:
                    held.update(mq for mq in routed if mq.queue_id == queue_id)
                else:  # the broker pops whichever queues it reads now (PopMessageProcessor#popMsgFromTopic)
                    read = self.cluster[broker_name].topic_config.get(topic, (0, 0))[0]
                    held.update(MessageQueue(topic, broker_name, q) for q in range(read))
        self.recorder.own(self.cid, held, now_ms)

    # --- lifecycle ---------------------------------------------------------
    def start(self):
        clock, recorder, sc = self.clock, self.recorder, self.scenario
        yield clock.timeout(self.join_ms)
        now = int(clock.now)
        self.alive = self.connected = True
        self.lost_connections.clear()  # a client that starts now opens every connection afresh
        config = PushConsumerConfig(
            message_model=MessageModel(sc.message_model),
            pull_batch_size=sc.pull_batch_size,
            client_rebalance=sc.consume_mode != POP,  # a Pop group's consumers ask a broker for their queues
        )
        self.service = RebalanceService(
            now, wait_interval=sc.rebalance_interval_ms, min_interval=sc.rebalance_min_interval_ms
        )
        self.impl = RebalanceImpl(
            sc.consumer_group,
            self.client_id,
            SimClientAPI(self),
            sc.strategy_of(self.spec),
            config=config,
            consume_orderly=sc.consume_mode == ORDERLY,
            pull_service=PullMessageService(),
            rebalance_service=self.service,
            pop_service=self,
            allocation_cache=self.views,
            now_ms=now,
            unlock_delay_time_mills=sc.unlock_delay_ms,
        )
        if self.orderly:
            config = self.impl.config
            self.orderly_service = ConsumeMessageOrderlyService(
                self.impl,
                consume_batch_size=config.consume_message_batch_max_size,
                lock_max_live_time_ms=sc.client_lock_expiry_ms,
                max_reconsume_times=config.max_reconsume_times,
                suspend_current_queue_time_millis=config.suspend_current_queue_time_millis,
            )
        if recorder.trace:  # each step of the queue-table update, as Java logs it
            self.impl.step_listener = lambda step: recorder.log(
                int(clock.now),
                "step",
                self.cid,
                f"{step.action} {step.mq.broker_name} {step.mq.topic}@{step.mq.queue_id}"
                if step.mq is not None
                else step.action,
            )
        for topic in sc.topics_of(self.spec):
            self.impl.subscribe(topic, self.spec.subscription, now)
        for topic in list(self.impl.subscription_inner):
            self.take_route(topic, now)
        self.service.register(self.impl)
        self.pool = ConsumePool(clock, sc.consume_threads)
        recorder.log(now, "join", self.cid)
        self.impl.send_heartbeat(now)
        self.impl.rebalance_immediately(now)
        clock.call(0, self._rebalance_wait_next, simpy.core.URGENT)  # the thread starts (as a process would)
        clock.process(self.heartbeat_loop())
        if sc.changes_routes:  # otherwise every poll would find the same routes
            clock.process(self.route_loop())
        if self.spec.leave_ms is not None:
            clock.process(self.leave())
        self.kick_pull()
        if sc.message_model != BROADCASTING:
            clock.process(self.persist_loop())
        if sc.consume_mode == ORDERLY and sc.message_model != BROADCASTING:
            clock.process(self.lock_loop())

    def leave(self):
        clock, recorder, sc = self.clock, self.recorder, self.scenario
        yield clock.timeout(self.spec.leave_ms - clock.now)
        now = int(clock.now)
        how = self.spec.leave
        self.alive = False
        self.died_at = now
        recorder.close_ownership(self.cid, now)
        if how == CRASH or how == HOST_LOSS:
            self.connected = False
            recorder.log(now, "leave", self.cid, how.value)  # the log holds plain strings
            if how == CRASH:  # the kernel closes the sockets: every broker sees a channel close
                for broker in self.nodes():
                    closed = broker.up and broker.consumer_manager.do_channel_close_event(
                        self.cid, self.channel(broker), now
                    )
                    if closed:
                        recorder.log(now, "channel closed", broker.label, self.cid)
                    broker.flush_notifications()
            return
        # Graceful shutdown: stop consuming, unlock (orderly), persist offsets, unregister.
        impl = self.impl
        if sc.consume_mode == ORDERLY and sc.message_model != BROADCASTING:
            impl.unlock_all(True, now)
        if sc.message_model != BROADCASTING:
            impl.offset_store.persist_all(set(impl.process_queue_table))
        impl.destroy()
        self.connected = False
        recorder.log(now, "leave", self.cid, "shutdown")
        for broker in self.nodes():
            if not broker.up:
                continue
            info = broker.consumer_manager.find_channel(sc.consumer_group, self.channel(broker))
            if info is not None:
                broker.consumer_manager.unregister_consumer(sc.consumer_group, info, True, now)
            broker.flush_notifications()

    def heartbeat(self, now_ms, consumers=None, is_rebalance: bool = False):
        """HEART_BEAT to every broker of the routes this client holds (MQClientInstance#sendHeartbeatToAllBroker,
        or #sendHeartbeatToAllBrokerV2, which sends the subscriptions to every broker when ``is_rebalance``); one
        that is down misses it."""
        if not self.connected:
            return
        if is_rebalance and self.heartbeat_v2 is not None:
            self.heartbeat_v2.reset()
        data = (consumers or [self.impl.consumer_data()])[0]
        known = self.routed_broker_names()
        self.recorder.log(now_ms, "heartbeat", self.cid)  # logged before the notifications it makes brokers send
        for master in self.cluster.values():
            if master.name in known:
                for broker in self.replicas_known(master):
                    if broker.up:
                        self.reach(broker, now_ms)
                        self._register_with(broker, data, now_ms)

    def _register_with(self, broker, data, now_ms: int) -> None:
        """One broker's part of a heartbeat: it registers this client's consumer data on this channel."""
        sc = self.scenario
        info = ClientChannelInfo(self.channel(broker), self.client_id, last_update_timestamp=now_ms)
        before = self.group_subscriptions(broker) if self.narrows_subscriptions else None
        v2 = self.heartbeat_v2
        fingerprint = heartbeat_fingerprint([data]) if v2 is not None else 0
        with_sub = v2 is None or v2.with_sub(broker.label, fingerprint)
        answer = broker.client_manage.heart_beat(
            sc.consumer_group,
            info,
            data.consume_type.value,
            data.message_model.value,
            data.consume_from_where.value,
            data.subscription_data_set,
            now_ms,
            fingerprint,
            without_sub=not with_sub,
        )
        if v2 is not None:
            v2.answered(broker.label, fingerprint, with_sub, answer.support_v2, answer.sub_change)
            if not with_sub:
                self.recorder.counters["heartbeats without subscriptions"] += 1
        if before is not None:
            after = self.group_subscriptions(broker)
            for topic in sc.topics:
                if before.get(topic) != after.get(topic):
                    expression = after.get(topic, "none")  # a heartbeat without the topic takes it out
                    self.recorder.log(
                        now_ms, "subscription", broker.label, subscription_detail(topic, expression, self.cid)
                    )
        broker.flush_notifications()

    def group_subscriptions(self, broker) -> dict[str, str]:
        """The tag expression ``broker``'s registry holds for each topic of the group (ConsumerGroupInfo keeps one
        per topic: the one with the newest version, whoever sent it)."""
        info = broker.consumer_manager.get_consumer_group_info(self.scenario.consumer_group)
        if info is None:
            return {}
        subs = {topic: info.find_subscription_data(topic) for topic in self.scenario.topics}
        return {topic: sub.sub_string for topic, sub in subs.items() if sub is not None}

    def reach(self, broker, now_ms: int) -> None:
        """A request of this client reaches ``broker``, which is up. If the broker has restarted since this client
        last reached it (``lost_connections``), the request opens a new connection, and MQClientInstance's
        onChannelActive listener (``enableHeartbeatChannelEventListener``, on by default) sends that broker a
        heartbeat and asks for a rebalance at once. (The first connection's call is folded into start, which
        heartbeats and rebalances.)"""
        if broker.label not in self.lost_connections:
            return
        self.lost_connections.discard(broker.label)
        if self.connected:
            self.recorder.log(now_ms, "heartbeat", self.cid, f"to {broker.label}: a new connection")
            self._register_with(broker, self.impl.consumer_data(), now_ms)
            self.on_notify(now_ms)  # MQClientInstance#rebalanceImmediately, as a notification asks

    def routed_broker_names(self) -> set[str]:
        """The broker names of the routes this client has taken."""
        return {name for names in self.route_brokers.values() for name in names}

    def take_route(self, topic: str, now_ms: int) -> bool:
        """MQClientInstance#updateTopicRouteInfoFromNameServer for one topic: ask the name server and, if the
        route changed, hand the readable queues to the rebalance (which sees them at its next run). A topic
        the name server no longer knows leaves the old route in place, as Java does (the call fails)."""
        route = self.routes.namesrv.pickup_topic_route_data(topic)
        if route is None or not route.topic_route_data_changed(self.topic_routes.get(topic)):
            return False
        self.topic_routes[topic] = route
        self.route_brokers[topic] = [bd.broker_name for bd in route.broker_datas]
        self.broker_addrs.update((bd.broker_name, frozenset(dict(bd.broker_addrs))) for bd in route.broker_datas)
        queues = self.views.subscribe_queues(topic, route, self.routes.ordered)
        self.impl.update_topic_subscribe_info(topic, queues)
        if topic in self.scenario.topics and self.scenario.changes_routes:
            self.recorder.log(now_ms, "route", self.cid, f"{topic}: {route_text(route)}")
        return True

    def route_loop(self):
        """The client's route poll: 10 ms after start, then every pollNameServerInterval."""
        clock, sc = self.clock, self.scenario
        yield clock.timeout(FIRST_ROUTE_POLL_MS)
        while self.alive:
            now = int(clock.now)
            for topic in list(self.impl.subscription_inner):
                self.take_route(topic, now)
            yield clock.timeout(sc.poll_name_server_interval_ms)

    def on_notify(self, now_ms: int) -> None:
        """NOTIFY_CONSUMER_IDS_CHANGED arrived at ``now_ms``: MQClientInstance#rebalanceImmediately."""
        if self.alive:
            self.impl.rebalance_immediately(now_ms)
            wait = self._rebalance_wait  # kick_rebalance, inlined: a big group gets ~n^2 of these
            if wait is not None and not wait.signalled:
                wait.signalled = True
                self.clock.call(0, wait.end)

    def kick_rebalance(self):
        """Wake the rebalance thread (ServiceThread#wakeup): once per wait, further wakeups coalesce."""
        wait = self._rebalance_wait
        if wait is not None and not wait.signalled:
            wait.signalled = True
            self.clock.call(0, wait.end)

    def kick_pull(self):
        if self.alive:
            self.drain_pulls()

    # --- the client's threads ----------------------------------------------
    def _rebalance_wait_next(self, event=None) -> None:
        """The RebalanceService thread's loop head: while alive, wait (ServiceThread#waitForRunning) until the
        service's next run is due or a wakeup comes; a dead consumer's thread ends."""
        clock = self.clock
        if self.alive:
            delay = max(0, self.service.next_run_ms - clock.now)
            wait = self._rebalance_wait = _RebalanceWait(self)
            clock.call(delay, wait.end)
        else:
            clock.call(0, _nothing)  # the thread's end (a finished simpy process is one more event)

    def _rebalance_resume(self, event) -> None:
        """The wait is over: run what is due (RebalanceService#run's body), then wait again."""
        if not self.alive:
            self.clock.call(0, _nothing)
            return
        now = int(self.clock.now)
        ran = self.service.run_due(now)
        if ran is not None:
            recorder = self.recorder
            recorder.counters["rebalances"] += 1
            recorder.log(now, "rebalance", self.cid, "balanced" if ran else "unbalanced")
            self.sync_ownership(now)
            self.kick_pull()
        self._rebalance_wait_next()

    def heartbeat_loop(self):
        """MQClientInstance#startScheduledTask: 1 s after start, then every heartbeatBrokerInterval, forget the
        brokers no route has any more (cleanOfflineBroker), then heartbeat every broker."""
        clock = self.clock
        delay = FIRST_HEARTBEAT_MS
        while self.alive:
            yield clock.timeout(delay)
            delay = self.scenario.heartbeat_interval_ms
            if self.alive:
                routed = self.routed_broker_names()
                self.broker_addrs = {name: ids for name, ids in self.broker_addrs.items() if name in routed}
                self.heartbeat(int(clock.now))

    def persist_loop(self):
        """MQClientInstance#startScheduledTask: persist every offset 10 s after start, then every
        persistConsumerOffsetInterval."""
        clock = self.clock
        delay = FIRST_PERSIST_MS
        while self.alive:
            yield clock.timeout(delay)
            delay = self.scenario.offset_persist_interval_ms
            if self.alive:
                self.impl.offset_store.persist_all(set(self.impl.process_queue_table))

    def lock_loop(self):
        """ConsumeMessageOrderlyService: lockAll 1 s after start, then every lock_renew_interval_ms."""
        clock, recorder, sc = self.clock, self.recorder, self.scenario
        yield clock.timeout(1_000)
        while self.alive:
            now = int(clock.now)
            self.impl.lock_all(now)
            recorder.log(now, "lock", self.cid, "lockAll")
            self.kick_pull()
            yield clock.timeout(sc.lock_renew_interval_ms)

    def drain_pulls(self):
        """PullMessageService: send every due pull request the gates allow; wake again when the next is due."""
        clock, service = self.clock, self.impl.pull_service
        now = int(clock.now)
        service.due(now)
        while self.alive:
            request = service.take()
            if request is None:
                break
            decision = _pull_message_trusted(request, self.impl, now)
            if decision.allowed:
                self.wire.send_pull(self, request, decision.command, now)
        due = service.next_due_ms()
        if self.alive and due is not None and (self.pull_timer_at is None or due < self.pull_timer_at):
            self.pull_timer_at = due
            clock.later(due - now, self._pull_timer)

    def _pull_timer(self):
        if self.pull_timer_at is not None and self.pull_timer_at <= self.clock.now:
            self.pull_timer_at = None
        self.drain_pulls()

    def on_pull_failure(self, request, error):
        """PullCallback#onException: the pull goes out again after pullTimeDelayMillsWhenException."""
        if not self.alive:
            return
        process_pull_exception(request, error, self.impl, int(self.clock.now))
        self.drain_pulls()

    def on_pull_answer(self, request, response):
        """PullCallback: handle the broker's answer and put the request back in circulation."""
        if not self.alive:
            return
        clock = self.clock
        now = int(clock.now)
        status = response.client_pull_status
        if status is None:
            if response.code in _SUBSCRIPTION_REFUSALS:  # the broker's registry lacks this topic, or is behind
                self.recorder.counters[f"pulls refused: {response.code.name}"] += 1
            process_pull_exception(request, BrokerError(response.remark, int(response.code)), self.impl, now)
        else:
            broker_name = request.message_queue.broker_name
            # What MessageDecoder builds; positional (topic, queue_id, queue_offset, body_size, tags,
            # store_timestamp, broker_name, msg_id): keywords cost more than the rest of the call.
            msgs = [
                Message._trusted(
                    m.topic, m.queue_id, m.queue_offset, m.body_size, m.tags, m.store_timestamp, broker_name, m.uniq_key
                )
                for m in response.messages
            ]
            result = PullResult._trusted(
                _PULL_STATUS[status], response.next_begin_offset, response.min_offset, response.max_offset, msgs
            )
            pulled_from = request.next_offset
            outcome = _process_pull_result_trusted(request, result, self.impl, now)
            if self.narrows_subscriptions:
                self.record_filtered(request.message_queue, pulled_from, result, outcome.msgs)
            if outcome.rebalance_immediately:
                self.sync_ownership(now)
                self.kick_rebalance()
            if outcome.msgs:
                if self.orderly:
                    if outcome.dispatch_to_consume:
                        self.submit_orderly(request.message_queue, request.process_queue)
                else:
                    for msgs in _consume_batches(outcome.msgs, self.impl.config.consume_message_batch_max_size):
                        self.pool.submit(ConsumeRequest(self, request.message_queue, request.process_queue, msgs))
        self.drain_pulls()

    def record_filtered(self, mq: MessageQueue, pulled_from: int, result: PullResult, kept: list) -> None:
        """What the tag filters passed over in one answer: the offsets from ``pulled_from`` up to the answer's next
        offset that the broker did not send (PullMessageProcessor filters by the group's subscription, as its
        registry holds it), and those it sent that this consumer dropped (PullAPIWrapper#processPullResult
        filters by its own)."""
        if result.pull_status not in (PullStatus.FOUND, PullStatus.NO_MATCHED_MSG):
            return
        sent = [m.queue_offset for m in result.msg_found_list]
        sent_set = set(sent)
        by_broker = [o for o in range(pulled_from, result.next_begin_offset) if o not in sent_set]
        kept_set = {m.queue_offset for m in kept}
        self.recorder.filtered(mq, by_broker, "broker")
        self.recorder.filtered(mq, [o for o in sent if o not in kept_set], "client")

    def submit_orderly(self, mq, pq) -> None:
        """ConsumeMessageOrderlyService#submitConsumeRequest: a ConsumeRequest for ``mq`` into the consume pool."""
        if self.alive:
            self.pool.submit(OrderlyConsumeRequest(self, mq, pq))

    def try_lock_later_and_reconsume(self, mq, pq) -> None:
        """ConsumeMessageOrderlyService#tryLockLaterAndReconsume's task: lock ``mq``, then submit a request for it
        10 ms later (granted) or 3 s later (refused)."""
        if self.alive:
            delay = self.orderly_service.try_lock_later_and_reconsume(mq, int(self.clock.now))
            self.clock.later(delay, self.submit_orderly, mq, pq)

    # --- Pop mode ------------------------------------------------------------
    def execute_pop_pull_request_later(self, request: PopRequest, delay_ms: int, now_ms: int) -> None:
        """PullMessageService#executePopPullRequestLater: a new assignment's PopRequest starts ``delay_ms`` later
        (RebalanceImpl dispatches it 500 ms after the round)."""
        self.clock.later(delay_ms, self.execute_pop_pull_request_immediately, request)

    def execute_pop_pull_request_immediately(self, request: PopRequest) -> None:
        self.clock.process(self.pop_loop(request))

    def pop_loop(self, request: PopRequest):
        """The PopRequest circulating for one assignment (DefaultMQPushConsumerImpl#popMessage). The broker answers
        at once or holds the pop until a message for it arrives or its 15 s poll time ends (BrokerNode.serve_pop);
        an answer without messages sends the pop out again at once (POLLING_FULL: pullTimeDelayMillsWhenException,
        1 s, later). A pop that fails (its broker is down, or goes down while it holds the pop) is sent again
        pullTimeDelayMillsWhenException later: at once when the connection was refused or closed, after the pop's
        RPC timeout (its poll time plus 10 s, PullAPIWrapper#popAsync) when no answer came."""
        clock, recorder, sc = self.clock, self.recorder, self.scenario
        ppq, mq = request.pop_process_queue, request.message_queue
        broker_name, topic, queue_id = mq.broker_name, mq.topic, mq.queue_id
        broker = self.cluster[broker_name]
        retry_ms = self.impl.config.pull_time_delay_mills_when_exception
        while self.alive and not ppq.dropped:
            ppq.last_pop_timestamp = int(clock.now)  # at every attempt, as popMessage sets it
            if ppq.get_wai_ack_msg_count() > POP_THRESHOLD_FOR_QUEUE:
                yield clock.timeout(PULL_TIME_DELAY_MILLS_WHEN_FLOW_CONTROL)
                continue
            if broker_name not in self.broker_addrs:  # PullAPIWrapper#popAsync: no address, so the route first
                if self.take_route(topic, int(clock.now)):
                    self.sync_ownership(int(clock.now))  # its broker is in this client's route view now
                if broker_name not in self.broker_addrs:  # popAsync throws; popMessage retries later
                    self._log_pop_failure(broker_name, "not in any route")
                    yield clock.timeout(retry_ms)
                    continue
            subscription = self.impl.subscription_inner[topic]
            sent = int(clock.now)
            yield clock.timeout(sc.rpc_latency_ms)
            recorder.pulls += 1
            recorder.counters["pops"] += 1  # sent (pulls counts them too, with the retry topic's pulls)
            if not broker.up:
                yield from self._pop_failed(broker, sent, retry_ms, vanished=broker.silent)
                continue
            self.reach(broker, int(clock.now))
            active = self.channel_active_to(broker)
            call = PopCall(topic, queue_id, subscription.sub_string, sent, active, clock.event())
            result = broker.serve_pop(call)
            if result is None:  # held: the answer comes when the broker wakes the pop, or never (it vanished)
                yield call.waiter | clock.timeout(sent + POP_RPC_TIMEOUT_MS - int(clock.now))
                result = call.waiter.value if call.waiter.triggered else None
                if result is None:
                    yield from self._pop_failed(broker, sent, retry_ms, vanished=True)
                    continue
                if isinstance(result, BrokerUnavailable):  # its connections closed
                    yield from self._pop_failed(broker, sent, retry_ms, vanished=False)
                    continue
            if result.code not in POP_ANSWERS:  # the broker refuses the pop (processPopResponse throws)
                yield from self._pop_failed(broker, sent, retry_ms, vanished=False, why=result.code.name)
                continue
            yield clock.timeout(sc.rpc_latency_ms)
            if not self.alive:
                return
            if not result.messages:  # POLLING_NOT_FOUND: at once; POLLING_FULL: pullTimeDelayMillsWhenException
                if result.code is _POLLING_FULL:
                    yield clock.timeout(retry_ms)
                continue
            kept, dropped = process_pop_result(result.messages, subscription, self.impl.config.max_reconsume_times)
            for unwanted in dropped:  # acked unconsumed, so they never come back
                self.ack_async(broker, unwanted.handle)
            if dropped:
                recorder.counters["filtered by client"] += len(dropped)
            if not kept:  # popped again at once, without waiting
                continue
            ppq.inc_found_msg(len(kept))
            recorder.log(int(clock.now), "pop", self.cid, f"{len(kept)} from {broker_name}")
            for popped in _consume_batches(kept, self.impl.config.consume_message_batch_max_size):
                self.pool.submit(PopConsumeRequest(self, broker, ppq, popped))

    def channel_active_to(self, broker):
        """How ``broker`` tells whether this client's connection is open (Netty's Channel#isActive): until the client
        closes it (a shutdown) or its kernel does (a crash); a vanished host's connection looks open until the
        broker drops its channel (ConsumerManager#scanNotActiveChannel)."""
        group, channel = self.scenario.consumer_group, self.channel(broker)

        def active() -> bool:
            if self.connected:
                return True
            if self.spec.leave is not HOST_LOSS:
                return False
            return broker.consumer_manager.find_channel(group, channel) is not None

        return active

    def ack_async(self, broker, handle) -> None:
        """DefaultMQPushConsumerImpl#ackAsync: ACK_MESSAGE reaches ``broker`` one network delay later. An ack that
        fails (the connection refused now, or closed before the ack arrives) is only logged: the message revives
        after its invisible time."""
        if broker.up:
            self.recorder.counters["acks"] += 1  # sent (what a pull consumer needs no request for)
            self.clock.later(self.scenario.rpc_latency_ms, self._ack_at_broker, broker, handle, broker.starts)
        else:
            self.recorder.counters["acks_failed"] += 1

    def _ack_at_broker(self, broker, handle, starts: int) -> None:
        """The ack reaches ``broker``; one it refuses (the message's queue is past the topic's read queues now,
        say) fails as a lost connection does."""
        if not (broker.up and broker.starts == starts and broker.pop.ack(handle, int(self.clock.now)) is _SUCCESS):
            self.recorder.counters["acks_failed"] += 1

    def _pop_failed(self, broker, sent_ms: int, retry_ms: int, vanished: bool, why: str = "connection closed"):
        """PopCallback#onException: the failure reaches the client (the answer's way back when the connection was
        refused or closed or the broker answered with an error, ``why``; the RPC timeout when the broker vanished:
        no answer ever comes on that connection, even once the broker is back), and the pop goes out again
        ``retry_ms`` later (executePopPullRequestLater)."""
        clock = self.clock
        if vanished:
            yield clock.timeout(max(0, sent_ms + POP_RPC_TIMEOUT_MS - int(clock.now)))
            why = "no answer before the timeout"
        else:
            yield clock.timeout(self.scenario.rpc_latency_ms)
        self._log_pop_failure(broker.name, why)
        yield clock.timeout(retry_ms)

    def _log_pop_failure(self, broker_name: str, why: str) -> None:
        self.recorder.counters["pops_failed"] += 1
        self.recorder.log(int(self.clock.now), "pop failed", self.cid, f"{broker_name}: {why}")


class _RebalanceWait:
    """One wait of a consumer's rebalance thread: it ends when its timer fires or a wakeup comes, whichever is
    processed first (the other then does nothing); a wakeup is signalled at most once per wait.

    The simulator used to run the thread as a simpy process waiting on ``timeout | wake``; this is the same schedule
    with plain calls (:meth:`Clock.call`): a timer, at most one wakeup signal, and the resumption, each an event
    numbered and ordered as simpy's were, so every run is unchanged and a big group's many wakeups cost little.
    """

    __slots__ = ("node", "signalled", "ended")

    def __init__(self, node: ConsumerNode):
        self.node = node
        self.signalled = False
        self.ended = False

    def end(self, event) -> None:
        if not self.ended:
            self.ended = True
            self.node.clock.call(0, self.node._rebalance_resume)


def _nothing(event) -> None:
    """An event that only takes its place in the queue."""


class ConsumeRequest:
    """One pulled batch on its way through the consume pool.

    Mirrors: ConsumeMessageConcurrentlyService.ConsumeRequest (``run`` skips a dropped
    ProcessQueue; the listener takes ``consume_time_ms`` per message; then
    processConsumeResult).
    """

    __slots__ = ("consumer", "mq", "pq", "msgs", "started")

    def __init__(self, consumer: ConsumerNode, mq: MessageQueue, pq, msgs):
        self.consumer, self.mq, self.pq, self.msgs = consumer, mq, pq, msgs
        self.started = 0

    def start(self, now_ms: int) -> int | None:
        """A pool thread takes the request: how long the listener runs, or None if there is nothing to do."""
        if not self.consumer.alive or self.pq.dropped:
            return None
        self.started = now_ms
        return self.consumer.consume_duration(len(self.msgs))

    def finish(self, now_ms: int) -> None:
        consumer = self.consumer
        consumer.recorder.record_batch(
            consumer.cid, consumer.died_at, self.mq, self.msgs, self.started, consumer.clock.now
        )
        if consumer.alive:
            impl = consumer.impl  # a batch of a checked pull result, settled at the clock's time
            _process_consume_result_concurrently_trusted(
                self.pq,
                self.mq,
                self.msgs,
                _CONSUME_SUCCESS,
                impl.offset_store,
                impl.message_model,
                None,
                INT_MAX,
                now_ms,
            )


class PopConsumeRequest:
    """One popped batch on a pool thread: consumed, then each message acked on its broker. A batch whose queue was
    dropped meanwhile is not consumed; one whose invisible time (from its pop) is over when a thread takes it is not
    consumed either, and one whose time ran out while its listener ran is not acked: both are the revive service's.
    Mirrors: ConsumeMessagePopConcurrentlyService.ConsumeRequest#run (``isPopTimeout``), #processConsumeResult"""

    __slots__ = ("consumer", "broker", "ppq", "popped", "started")

    def __init__(self, consumer: ConsumerNode, broker, ppq: PopProcessQueue, popped):
        self.consumer, self.broker, self.ppq, self.popped = consumer, broker, ppq, popped
        self.started = 0

    def is_pop_timeout(self, now_ms: int) -> bool:
        """The batch's invisible time has run out: ``now - popTime >= invisibleTime`` (its first message's)."""
        handle = self.popped[0].handle
        return now_ms - handle.pop_time >= handle.invisible_time

    def start(self, now_ms: int) -> int | None:
        consumer = self.consumer
        if not consumer.alive:
            return None
        if self.ppq.dropped:
            consumer.recorder.counters["pops dropped before consumption"] += len(self.popped)
            return None
        if self.is_pop_timeout(now_ms):
            self.ppq.dec_found_msg(-len(self.popped))
            consumer.recorder.counters["pops timed out before consumption"] += len(self.popped)
            return None
        self.started = now_ms
        return self.consumer.consume_duration(len(self.popped))

    def finish(self, now_ms: int) -> None:
        consumer = self.consumer
        consumer.recorder.record_pop_batch(
            consumer.cid, consumer.died_at, self.popped, self.started, consumer.clock.now
        )
        if not consumer.alive:
            return
        if self.ppq.dropped or self.is_pop_timeout(now_ms):
            self.ppq.dec_found_msg(-len(self.popped))
            why = "dropped" if self.ppq.dropped else "timed out"
            consumer.recorder.counters[f"pops {why} while consumed"] += len(self.popped)
            return
        for item in self.popped:
            consumer.ack_async(self.broker, item.handle)
            self.ppq.ack()


class OrderlyConsumeRequest:
    """One ConsumeRequest of the orderly service on a pool thread.

    Mirrors: ConsumeMessageOrderlyService.ConsumeRequest#run, whose steps the service decides: the request keeps
    its thread while it consumes the queue batch after batch, and lets it go when the queue is empty or dropped,
    or, submitted again later, when the lock must be taken again or after 60 s of continuous consumption. A
    request for a queue whose request runs (the queue's earlier ProcessQueue, say, still in a listener call)
    waits on the queue's monitor, holding its thread, and runs when that request lets the queue go.
    """

    __slots__ = ("consumer", "mq", "pq", "began", "started", "msgs")

    def __init__(self, consumer: ConsumerNode, mq: MessageQueue, pq):
        self.consumer, self.mq, self.pq = consumer, mq, pq
        self.began = self.started = 0
        self.msgs: list = []

    def start(self, now_ms: int) -> int | None | object:
        """A pool thread takes the request: how long its first batch runs, None (nothing to do now), or
        ``WAITING`` (another request holds the queue's monitor: the thread waits, see :meth:`resume`)."""
        consumer = self.consumer
        if not consumer.alive:
            return None
        if not consumer.orderly_service.start(self.mq):
            consumer.orderly_waiting.setdefault(self.mq, deque()).append(self)
            return WAITING
        self.began = now_ms
        return self._turn(now_ms, after_batch=False)

    def resume(self) -> None:
        """The queue's monitor is free: the waiting request runs on the thread it holds (or waits again, if a
        request that came later took the monitor first)."""
        consumer = self.consumer
        now = int(consumer.clock.now)
        duration = None
        if consumer.alive:
            duration = self.start(now)
            if duration is WAITING:
                return
        consumer.pool.resume(self, duration)

    def _release(self) -> None:
        """Let the queue's monitor go; the first request waiting for it runs next (at this instant)."""
        consumer = self.consumer
        consumer.orderly_service.done(self.mq)
        waiting = consumer.orderly_waiting.get(self.mq)
        if waiting:
            consumer.clock.later(0, waiting.popleft().resume)

    def _turn(self, now_ms: int, after_batch: bool) -> int | None:
        consumer, service = self.consumer, self.consumer.orderly_service
        step = service.next_step(self.mq, self.pq, now_ms, self.began, after_batch)
        if step.action == "consume":
            self.msgs, self.started = step.msgs, now_ms
            return consumer.consume_duration(len(step.msgs))
        self._release()
        if step.action == "lock later":
            consumer.clock.later(step.delay_ms, consumer.try_lock_later_and_reconsume, self.mq, self.pq)
        elif step.action == "consume later":  # a new request, submitted after the delay
            consumer.clock.later(step.delay_ms, consumer.submit_orderly, self.mq, self.pq)
        return None

    def finish(self, now_ms: int) -> int | None:
        """The listener returned: settle the batch; then the same thread goes on (how long the next batch runs)
        or lets go (None)."""
        consumer, service = self.consumer, self.consumer.orderly_service
        service.finish(self.pq)
        consumer.recorder.record_batch(consumer.cid, consumer.died_at, self.mq, self.msgs, self.started, now_ms)
        if not consumer.alive:
            self._release()
            return None
        service.process_consume_result(self.mq, self.pq, self.msgs)
        return self._turn(now_ms, after_batch=True)


#: What a request's start() returns when it waits for something else to let it run, holding its thread.
WAITING = object()


class ConsumePool:
    """The consumer's consumeExecutor: ``size`` threads taking requests first-come first-served.

    A request has ``start(now_ms)``, called when a thread takes it, which returns how
    long the thread is busy (None: nothing to do; ``WAITING``: the thread is held until
    the request calls :meth:`resume`), and ``finish(now_ms)``, called when that time is
    up, which returns None (the thread is free) or how much longer the request keeps it
    (an orderly request consuming its next batch).
    """

    def __init__(self, clock: Clock, size: int):
        self.clock, self.size = clock, size
        self.busy = 0
        self.waiting = deque()

    def submit(self, request) -> None:
        if self.waiting or self.busy >= self.size:
            self.waiting.append(request)
        else:
            self._run(request)

    def _run(self, request) -> None:
        duration = request.start(int(self.clock.now))
        if duration is WAITING:  # the thread is held until the request resumes
            self.busy += 1
        elif duration is not None:
            self.busy += 1
            self.clock.later(duration, self._done, request)

    def resume(self, request, duration: int | None) -> None:
        """A request that held its thread while it waited runs now for ``duration``, or lets the thread go."""
        if duration is None:
            self.busy -= 1
            self._next()
        else:
            self.clock.later(duration, self._done, request)

    def _done(self, request) -> None:
        self.busy -= 1
        more = request.finish(int(self.clock.now))
        if more is not None:  # the request keeps its thread
            self.busy += 1
            self.clock.later(more, self._done, request)
            return
        self._next()

    def _next(self) -> None:
        while self.waiting and self.busy < self.size:
            self._run(self.waiting.popleft())


def _consume_batches(msgs, size: int) -> list:
    """``msgs`` cut into consume requests of ``consumeMessageBatchMaxSize`` (default 1), as
    ConsumeMessageConcurrentlyService#submitConsumeRequest (and the Pop service's twin) cut them."""
    if len(msgs) <= size:
        return [msgs]
    return [msgs[start : start + size] for start in range(0, len(msgs), size)]


def _names(mqs) -> str:
    return ", ".join(str(mq) for mq in sorted(mqs))

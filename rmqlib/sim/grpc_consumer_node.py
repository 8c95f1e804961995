"""One push consumer of the rocketmq-clients SDK (``Scenario.client = "GRPC"``) in simulated time.

The consumer talks only to the proxy (:mod:`rmqlib.sim.proxy_node`). What it does, and the Java it mirrors
(apache/rocketmq-clients, java/client/.../impl/):

* at start it sends its settings on the telemetry stream, which registers it with the proxy
  (ClientActivity#processAndWriteClientSettings); then it heartbeats 1 s after start and every 10 s
  (ClientManagerImpl ``HEART_BEAT_*``), each heartbeat registering it again;
* 1 s after start and every 5 s it asks the proxy for its assignment of each topic and makes its process queues
  match (:class:`~rmqlib.client.grpc_push.PushConsumerImpl`); a new process queue starts receiving at once;
* each process queue receives in a loop (ProcessQueueImpl#receiveMessage): a receive asks for what the cache has
  room for (the consumer's 4,096 messages shared among its queues, at most 32), with a 20 s long-polling timeout
  (the proxy's setting, sent at start-up); one that brings messages is followed by another with a new attempt id, an
  empty one by another with the same id; a full cache waits 1 s;
* a receive the proxy answers with an error (its broker is down, say) goes out again 1 s later with the same
  attempt id, 20 ms later when the error is TOO_MANY_REQUESTS (the broker held too many pops of the queue)
  (#onReceiveMessageException);
* a standard group (StandardConsumeService) hands every received message to the consumption pool
  (``consume_threads`` threads, ``consume_time_ms`` each) and acks it when the listener returns; a FIFO group
  (FifoConsumeService, messages without a message group) consumes a batch one message after another, each acked
  before the next starts. A message leaves the cache when its ack's answer is back: OK, or INVALID_RECEIPT_HANDLE
  (final: the client does not try again); any other error sends the ack again 1 s later (#ackMessageLater), for as
  long as the client runs (an ack nobody answers fails at its 3 s deadline first);
* a shutdown (PushConsumerImpl#shutDown) stops scanning and receiving, waits for its receives in flight, lets the
  pool finish what it holds (a FIFO batch's next message is then refused), waits 1 s for the acks, and tells the
  proxy (NotifyClientTermination); a crash stops everything at once, and its connection closes (an answer the proxy
  writes then fails); a lost host stops as well, but its connection looks open, so the proxy's writes go nowhere.
  In both the proxy learns of it only when the client's heartbeats are more than ``channel_expired_ms`` old.

Every listener call succeeds (no retries from failures, no dead-letter queue); the proxy never fails.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from rmqlib.client.grpc_push import (
    ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS,
    HEART_BEAT_INITIAL_DELAY_MS,
    HEART_BEAT_PERIOD_MS,
    LONG_POLLING_TIMEOUT_MS,
    RECEIVING_BACKOFF_DELAY_WHEN_CACHE_IS_FULL_MS,
    REQUEST_TIMEOUT_MS,
    SCAN_ASSIGNMENTS_INITIAL_DELAY_MS,
    SCAN_ASSIGNMENTS_PERIOD_MS,
    SHUTDOWN_ACK_WAIT_MS,
    ProcessQueueImpl,
    PushConsumerImpl,
)
from rmqlib.model import MessageQueue
from rmqlib.proxy import Code
from rmqlib.sim.clock import Clock
from rmqlib.sim.consumer_node import ConsumePool, ConsumerNode
from rmqlib.sim.proxy_node import AckCall, ProxyNode, ReceiveFailed
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.scenario import CRASH, ORDERLY, SHUTDOWN, ConsumerSpec, Scenario

_WAIT_STEP_MS = 10  # how often a shutdown looks again at what it waits for


class GrpcConsumerNode:
    """One gRPC push consumer process: its assignments, process queues, consumption pool and lifecycle."""

    def __init__(
        self,
        spec: ConsumerSpec,
        scenario: Scenario,
        clock: Clock,
        recorder: Recorder,
        proxy: ProxyNode,
        rng: random.Random,
    ):
        self.spec, self.cid = spec, spec.client_id
        self.scenario, self.clock, self.recorder, self.proxy, self.rng = scenario, clock, recorder, proxy, rng
        self.impl = PushConsumerImpl(scenario.consumer_group, self.cid, scenario.push_max_cache_message_count)
        self.pool = ConsumePool(clock, scenario.consume_threads)
        self.consume_time_ms = scenario.consume_time_of(spec)  # its listener's time per message
        self.fifo = scenario.consume_mode is ORDERLY
        self.topics = spec.topics if spec.topics is not None else tuple(scenario.topics)
        self.alive = False  # the process runs
        self.connected = False  # its connection to the proxy is open (a crash closes it; a lost host does not)
        self.running = False  # it scans and receives (a shutdown stops that first)
        self.accepting = False  # its consumption pool takes new work (a shutdown stops that next)
        self.died_at: int | None = None
        self.in_flight = 0  # receives sent and not answered
        self.attempts = 0  # receive attempt ids handed out so far
        jitter = scenario.start_jitter_ms
        self.join_ms = spec.join_ms + (rng.randrange(jitter + 1) if jitter else 0)

    consume_duration = ConsumerNode.consume_duration  # the listener takes as long as a remoting member's

    # --- lifecycle -------------------------------------------------------------------------------------------
    def start(self):
        yield self.clock.timeout(self.join_ms)
        self._register()
        self.clock.process(self.scan_loop())
        if self.spec.leave_ms is not None:
            self.clock.process(self.leave())

    def _register(self) -> None:
        """The process starts: it sends its settings on the telemetry stream it opens, which registers it with the
        proxy, and its heartbeats begin."""
        now = int(self.clock.now)
        self.alive = self.connected = self.running = self.accepting = True
        self.recorder.log(now, "join", self.cid)
        self.proxy.register(self.cid, now)
        self.clock.process(self.heartbeat_loop())

    def heartbeat_loop(self):
        clock = self.clock
        yield clock.timeout(HEART_BEAT_INITIAL_DELAY_MS)
        while self.alive:
            clock.later(self.scenario.rpc_latency_ms, self._heartbeat_arrives)
            yield clock.timeout(HEART_BEAT_PERIOD_MS)

    def _heartbeat_arrives(self) -> None:
        self.proxy.register(self.cid, int(self.clock.now))

    def leave(self):
        clock, recorder = self.clock, self.recorder
        yield clock.timeout(self.spec.leave_ms - clock.now)
        now = int(clock.now)
        how = self.spec.leave
        recorder.log(now, "leave", self.cid, how.value)
        if how is not SHUTDOWN:  # a crash closes its connection; a lost host's looks open to the proxy
            self._stop(now)
            self.connected = how is not CRASH
            return
        yield from self._shut_down()
        self._stop(int(clock.now))
        self.connected = False
        clock.later(self.scenario.rpc_latency_ms, self._terminate_arrives)

    def _shut_down(self):
        """PushConsumerImpl#shutDown up to NotifyClientTermination: no more scans or receives, the receives in
        flight answered, the pool's work done, 1 s for the acks."""
        clock = self.clock
        self.running = False
        deadline = int(clock.now) + REQUEST_TIMEOUT_MS + LONG_POLLING_TIMEOUT_MS  # #waitingReceiveRequestFinished
        while self.in_flight and clock.now < deadline:
            yield clock.timeout(_WAIT_STEP_MS)
        self.accepting = False  # consumptionExecutor.shutdown(), then awaitTerminated
        while self.pool.busy or self.pool.waiting:
            yield clock.timeout(_WAIT_STEP_MS)
        yield clock.timeout(SHUTDOWN_ACK_WAIT_MS)

    def _terminate_arrives(self) -> None:
        self.proxy.terminate(self.cid, int(self.clock.now))

    def _stop(self, now: int) -> None:
        self.alive = self.running = self.accepting = False
        self.died_at = now
        for pq in self.impl.process_queue_table.values():
            pq.drop()
        self.recorder.close_ownership(self.cid, now)

    # --- assignments -----------------------------------------------------------------------------------------
    def scan_loop(self):
        """PushConsumerImpl's scan: ask the proxy for each topic's assignment, sync the process queues."""
        clock = self.clock
        yield clock.timeout(SCAN_ASSIGNMENTS_INITIAL_DELAY_MS)
        while self.running:
            clock.process(self._scan_once())
            yield clock.timeout(SCAN_ASSIGNMENTS_PERIOD_MS)

    def _scan_once(self):
        clock, latency = self.clock, self.scenario.rpc_latency_ms
        yield clock.timeout(latency)
        answers = {topic: self.proxy.query_assignment(topic) for topic in self.topics}
        yield clock.timeout(latency)
        if not self.running:
            return
        table = self.impl.process_queue_table
        for topic, answer in answers.items():
            before = set(table)
            self.impl.scan_assignments(topic, answer)
            for mq in table:
                if mq not in before:
                    clock.process(self.receive_loop(table[mq]))
        self.sync_ownership(int(clock.now))

    def sync_ownership(self, now: int) -> None:
        """Tell the recorder which queues this consumer may receive from now: every queue the broker of an assigned
        queue reads, since the proxy pops queue -1 of that broker whatever queue the client names (a FIFO group's
        assignment lists each read queue; the broker may read more than the proxy's route shows yet)."""
        held: set[MessageQueue] = set()
        if self.alive:
            for mq, pq in self.impl.process_queue_table.items():
                if not pq.dropped:
                    read = self.proxy.brokers[mq.broker_name].topic_config.get(mq.topic, (0, 0))[0]
                    held.update(MessageQueue(mq.topic, mq.broker_name, q) for q in range(read))
        self.recorder.own(self.cid, held, now)

    # --- receiving -------------------------------------------------------------------------------------------
    def _attempt_id(self) -> str:
        self.attempts += 1
        return f"{self.cid}#{self.attempts}"

    def receive_loop(self, pq: ProcessQueueImpl):
        """ProcessQueueImpl#receiveMessage and #onReceiveMessageResult, for as long as the queue is not dropped."""
        clock, recorder = self.clock, self.recorder
        attempt_id = self._attempt_id()
        expression = self.spec.subscription
        while self.running and not pq.dropped:
            threshold = self.impl.cache_message_count_threshold_per_queue()
            if pq.is_cache_full(threshold):
                yield clock.timeout(RECEIVING_BACKOFF_DELAY_WHEN_CACHE_IS_FULL_MS)
                continue
            batch = pq.reception_batch_size(threshold)
            self.in_flight += 1
            recorder.pulls += 1
            try:
                popped = yield from self.proxy.receive(
                    self, pq.mq, expression, batch, attempt_id, LONG_POLLING_TIMEOUT_MS
                )
            except ReceiveFailed as failure:
                self.in_flight -= 1
                if not self.alive:
                    return
                recorder.counters["receives failed"] += 1
                recorder.log(int(clock.now), "receive failed", self.cid, f"{pq.mq.broker_name}: {failure}")
                yield clock.timeout(pq.receive_backoff_ms(failure.code))
                continue  # the same attempt id again
            self.in_flight -= 1
            if not self.alive:
                return
            if not popped:
                continue  # the same attempt id again
            pq.cached += len(popped)
            popped_from = popped[0].handle.broker_name
            recorder.log(int(clock.now), "pop", self.cid, f"{len(popped)} from {popped_from} via the proxy")
            if self.fifo:
                self._consume_in_turn(pq, iter(popped))
            else:
                for item in popped:
                    self._submit(_ConsumeTask(self, pq, item, None))
            attempt_id = self._attempt_id()

    # --- consumption -----------------------------------------------------------------------------------------
    def _submit(self, task: _ConsumeTask) -> None:
        if self.accepting:
            self.pool.submit(task)
        else:  # the executor is shut down: the task is refused, and its message stays unacked in the cache
            self.recorder.counters["consumption refused"] += 1

    def _consume_in_turn(self, pq: ProcessQueueImpl, rest: Iterator) -> None:
        """FifoConsumeService#consumeIteratively: the next message once the last one's ack is answered."""
        item = next(rest, None)
        if item is not None:
            self._submit(_ConsumeTask(self, pq, item, rest))

    def send_ack(self, pq: ProcessQueueImpl, rest: Iterator | None, item) -> None:
        """Ack a consumed message through the proxy; :meth:`ack_answered` runs when its answer is back."""
        self.proxy.ack(self.cid, item.handle, lambda call: self.ack_answered(pq, rest, item, call))

    def ack_answered(self, pq: ProcessQueueImpl, rest: Iterator | None, item, call: AckCall) -> None:
        """ProcessQueueImpl#ackMessage's callback: OK or INVALID_RECEIPT_HANDLE end the ack, and the message leaves
        the cache (#evictCache; a FIFO batch goes on); any other answer sends it again 1 s later."""
        if call.code is not Code.OK and call.code is not Code.INVALID_RECEIPT_HANDLE:
            if self.alive:
                self.recorder.counters["acks retried"] += 1
                self.clock.later(ACK_MESSAGE_FAILURE_BACKOFF_DELAY_MS, self._ack_again, pq, rest, item)
            return
        if call.code is Code.INVALID_RECEIPT_HANDLE:
            self.recorder.counters["acks refused"] += 1
            self.recorder.log(int(self.clock.now), "ack refused", self.cid, item.handle.broker_name)
        pq.cached -= 1
        if rest is not None and self.alive:
            self._consume_in_turn(pq, rest)

    def _ack_again(self, pq: ProcessQueueImpl, rest: Iterator | None, item) -> None:
        if self.alive:
            self.send_ack(pq, rest, item)


class _ConsumeTask:
    """One message on the consumption pool (ConsumeTask): the listener runs, then the message is acked."""

    __slots__ = ("consumer", "pq", "item", "rest", "started")

    def __init__(self, consumer: GrpcConsumerNode, pq: ProcessQueueImpl, item, rest: Iterator | None):
        self.consumer, self.pq, self.item, self.rest = consumer, pq, item, rest
        self.started = 0

    def start(self, now_ms: int) -> int | None:
        if not self.consumer.alive:
            return None
        self.started = now_ms
        return self.consumer.consume_duration(1)

    def finish(self, now_ms: int) -> None:
        consumer = self.consumer
        consumer.recorder.record_popped(consumer.cid, consumer.died_at, self.item, self.started, now_ms)
        if consumer.alive:
            consumer.send_ack(self.pq, self.rest, self.item)


__all__ = ["GrpcConsumerNode"]

"""The network between the nodes: pull requests to a broker and answers back, the broker's notifications, and what
a pop carries (:class:`PopCall`), each way after ``rpc_latency_ms``. A pull to a broker that is down fails (at once
when it refused the connection, after the pull's timeout when it vanished).

The wire knows the nodes by name (brokers) and by channel (consumers); it decides nothing about RocketMQ.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import NamedTuple

from rmqlib.broker import PullMessageRequest, ResponseCode
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.scenario import Scenario

# MQClientAPIImpl#processPopResponse (the Java client's, and the proxy's MQClientAPIExt): a pop answer with any other
# code is thrown as an MQBrokerException
POP_ANSWERS = frozenset(
    (ResponseCode.SUCCESS, ResponseCode.POLLING_FULL, ResponseCode.POLLING_TIMEOUT, ResponseCode.PULL_NOT_FOUND)
)

_TIME_MS, _CLIENT_ID, _CHANNEL = attrgetter("time_ms"), attrgetter("client_id"), attrgetter("channel")
PULL_TIMEOUT_MS = 30_000  # DefaultMQPushConsumerImpl: CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND (a pull's RPC timeout)
# the run's counters for the pulls a slave that serves reads answers: found messages (True) or sent back (False)
_SLAVE_PULL_COUNTERS = {True: "slave_pull_found", False: "slave_pull_retry"}


class BrokerUnavailable(Exception):
    """A call to a broker that is down (connection refused, or no answer before the timeout)."""


class ProxiedPop(NamedTuple):
    """What the proxy's pop asks for, where a remoting pop takes the scenario's settings: its batch size, invisible
    time and poll time, whether it is orderly (a FIFO group's), and the receive's attempt id (a simple consumer's
    receive has none)."""

    max_msg_nums: int
    invisible_time_ms: int
    poll_time_ms: int
    order: bool
    attempt_id: str | None


class PopCall:
    """One POP_MESSAGE as its broker sees it: the topic and queue (-1: the broker chooses) to pop, the member's
    expression, the time the client sent it (its poll time counts from there), the connection it came on, and
    where its answer goes (``waiter``, a simulated event the client waits on while the broker holds the pop)."""

    __slots__ = ("topic", "queue_id", "expression", "born_ms", "channel_active", "waiter", "proxied")

    def __init__(self, topic, queue_id, expression, born_ms, channel_active, waiter, proxied=None):
        self.topic, self.queue_id, self.expression, self.born_ms = topic, queue_id, expression, born_ms
        self.channel_active, self.waiter = channel_active, waiter
        self.proxied: ProxiedPop | None = proxied  # a pop the proxy sends for a gRPC receive, with its own terms

    def answer(self, result) -> None:
        """The broker's answer (a PopResult, or BrokerUnavailable) sets off on its way to the client."""
        if not self.waiter.triggered:
            self.waiter.succeed(result)


class Wire:
    """Carries pulls and notifications. ``brokers``: name -> broker node; ``channels``: channel -> consumer node."""

    def __init__(self, clock: Clock, scenario: Scenario, recorder: Recorder):
        self.clock, self.scenario, self.recorder = clock, scenario, recorder
        self.latency = scenario.rpc_latency_ms
        self.brokers: Mapping = {}
        self.channels: Mapping = {}
        self.pending_pulls: dict[int, tuple] = {}  # opaque -> (consumer, request, sent at, broker node)
        self.next_opaque = 0

    def connect(self, brokers: Mapping, channels: Mapping) -> None:
        self.brokers, self.channels = brokers, channels

    def notify(self, broker_label: str, notes) -> None:
        """NOTIFY_CONSUMER_IDS_CHANGED from a broker to the consumer on each note's channel, in order.

        The broker sends one request per member; all of them travel ``rpc_latency_ms`` and arrive at one instant,
        so they are logged in one go and delivered by one call that hands each connected consumer its own in
        order (the calls it replaces would have run back to back in one batch)."""
        recorder, channels = self.recorder, self.channels
        recorder.counters["notifications"] += len(notes)
        recorder.event_log.extend(
            list(map(_TIME_MS, notes)), "notify", list(map(_CLIENT_ID, notes)), f"from {broker_label}"
        )  # a broker's times are int milliseconds
        woken = [
            consumer
            for consumer in map(channels.get, map(_CHANNEL, notes))
            if consumer is not None and consumer.connected
        ]
        if woken:
            self.clock.later(self.latency, _deliver_notifications, woken, self.clock)

    def send_pull(self, consumer, request, command, now_ms) -> None:
        """PULL_MESSAGE for ``command`` (the pull path's PullCommand), on ``consumer``'s channel to the broker: its
        master, or its slave when the consumer's address table has no master (PullAPIWrapper#pullKernelImpl, which
        also drops the commit-offset flag for a slave)."""
        mq, sc, recorder = command.message_queue, self.scenario, self.recorder
        broker = self.brokers[mq.broker_name]
        commit_offset_enable = command.commit_offset_enable
        if broker.slave is not None:
            broker = consumer.find_broker_in_subscribe(mq.broker_name, False)
            if broker is None:  # pullKernelImpl throws: the pull goes out again later
                error = BrokerUnavailable(f"the broker[{mq.broker_name}] not exist")
                self.clock.later(0, consumer.on_pull_failure, request, error)
                return
            commit_offset_enable = commit_offset_enable and not broker.is_slave
        self.next_opaque = opaque = self.next_opaque + 1
        commit_offset = command.commit_offset if command.commit_offset > 0 else 0
        header = PullMessageRequest._trusted(
            sc.consumer_group,
            mq.topic,
            mq.queue_id,
            command.queue_offset,
            command.max_msg_nums,
            commit_offset_enable,
            commit_offset,
            True,
            sc.suspend_timeout_ms,
            False,
            "*",
            command.sub_version,
            consumer.client_id,
            consumer.channel_names[broker.label],
            opaque,
        )
        if consumer.lost_connections and broker.up:
            consumer.reach(broker, now_ms)
        self.pending_pulls[opaque] = (consumer, request, now_ms, broker)
        recorder.pulls += 1
        if recorder.trace:
            recorder.log(
                now_ms, "pull", consumer.cid, f"{mq.broker_name} {mq.topic}@{mq.queue_id} from {command.queue_offset}"
            )
        self.clock.later(self.latency, self._pull_at_broker, broker, header)

    def _pull_at_broker(self, broker, header) -> None:
        now = int(self.clock.now)
        if not broker.up:
            self._fail_pull(broker, header.opaque)
            return
        if broker.is_slave:
            response = broker.processor.process_request(header, now, True)
            if response.code is ResponseCode.SYSTEM_BUSY:  # slaveReadEnable off: the client tries again a bit later
                self.recorder.log(
                    now, "pull refused", broker.label, f"{header.topic}@{header.queue_id} from {header.client_id}"
                )
            else:  # served from its copy, or sent straight back (PULL_RETRY_IMMEDIATELY): counted, too many to log
                self.recorder.counters[_SLAVE_PULL_COUNTERS[response.code is ResponseCode.SUCCESS]] += 1
            self.answer_pull(response)
            return
        response = broker.processor._process_request_trusted(header, now, True)
        if response is None:
            self.recorder.held += 1
            self.recorder.event_log.append(
                now, "pull held", broker.name, f"{header.topic}@{header.queue_id} from {header.client_id}"
            )
        else:
            self.answer_pull(response)

    def answer_pull(self, response) -> None:
        """A broker's answer to a pull, on its way back to the consumer that sent it."""
        consumer, request, _, _ = self.pending_pulls.pop(response.request.opaque, (None, None, None, None))
        if self.recorder.trace and consumer is not None:
            header = response.request
            self.recorder.log(
                int(self.clock.now),
                "pull answered",
                request.message_queue.broker_name,
                f"to {consumer.cid}: {header.topic}@{header.queue_id} {len(response.messages)} message(s)",
            )
        if consumer is not None:
            self.clock.later(self.latency, consumer.on_pull_answer, request, response)

    def _fail_pull(self, broker, opaque: int) -> None:
        """A pull that reached a broker that is down: refused at once (its answer takes the way back), or,
        for a silent broker, never answered until the pull's RPC timeout."""
        consumer, request, sent_ms, _ = self.pending_pulls.pop(opaque, (None, None, 0, None))
        if consumer is None:  # already failed when the broker went down
            return
        error = BrokerUnavailable(f"pull to {broker.name} failed: broker down")
        now = int(self.clock.now)
        delay = max(0, sent_ms + PULL_TIMEOUT_MS - now) if broker.silent else self.latency
        self.clock.later(delay, consumer.on_pull_failure, request, error)

    def fail_pending_pulls(self, broker) -> None:
        """``broker`` went down: every pull it holds (or that is on its way to it) fails."""
        for opaque in [o for o, (_, _, _, target) in self.pending_pulls.items() if target is broker]:
            self._fail_pull(broker, opaque)


def _deliver_notifications(consumers, clock: Clock) -> None:
    """Each consumer's notification arrives (ClientRemotingProcessor#notifyConsumerIdsChanged), in order."""
    now = int(clock.now)
    for consumer in consumers:
        consumer.on_notify(now)

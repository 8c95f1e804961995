"""Ready-made scenarios. Each returns a ``Scenario``; keyword arguments override any field.

>>> from rmqlib.sim import scenarios
>>> scenarios.crash(rebalance_interval_ms=10_000).rebalance_interval_ms
10000
"""

from __future__ import annotations

from rmqlib.sim.scenario import BrokerOutage, ClientKind, ConsumeMode, ConsumerSpec, LeaveKind, Scenario, TopicChange


def client_ids(count: int, start: int = 1) -> list[str]:
    """``count`` RocketMQ-shaped client ids, ``10.0.0.N@100N``."""
    return [f"10.0.0.{i}@{1000 + i}" for i in range(start, start + count)]


def _group(count: int, start: int = 1, **spec) -> tuple[ConsumerSpec, ...]:
    return tuple(ConsumerSpec(cid, **spec) for cid in client_ids(count, start))


#: Consumers start at random moments within 10 s (as processes of a real deployment do), so their
#: rebalance, heartbeat and persist timers run out of phase; producers start once the group has settled.
SETTLED = dict(start_jitter_ms=10_000, produce_start_ms=12_000)


def _build(name: str, defaults: dict, overrides: dict) -> Scenario:
    return Scenario(**{"name": name, **SETTLED, **defaults, **overrides})


def steady_state(**overrides) -> Scenario:
    """Four consumers, eight queues, nobody joins or leaves: no duplicates, no pauses after start."""
    return _build("steady_state", dict(consumers=_group(4)), overrides)


def scale_out(**overrides) -> Scenario:
    """Two consumers, then two more join at 60 s: queues move to the newcomers."""
    consumers = _group(2) + _group(2, start=3, join_ms=60_000)
    return _build("scale_out", dict(consumers=consumers), overrides)


def scale_in(**overrides) -> Scenario:
    """Four consumers; two shut down gracefully at 60 s (offsets persisted, unregistered)."""
    consumers = _group(2) + _group(2, start=3, leave_ms=60_000, leave=LeaveKind.SHUTDOWN)
    return _build("scale_in", dict(consumers=consumers), overrides)


def crash(**overrides) -> Scenario:
    """Four consumers; one process dies at 60 s. Its connections close, so brokers notify at once."""
    consumers = _group(3) + (ConsumerSpec(client_ids(1, 4)[0], leave_ms=60_000, leave=LeaveKind.CRASH),)
    return _build("crash", dict(consumers=consumers), overrides)


def host_loss(**overrides) -> Scenario:
    """Four consumers; one host vanishes at 60 s. Brokers notice only after the 120 s channel expiry."""
    consumers = _group(3) + (ConsumerSpec(client_ids(1, 4)[0], leave_ms=60_000, leave=LeaveKind.HOST_LOSS),)
    return _build("host_loss", dict(consumers=consumers, duration_ms=240_000, drain_ms=240_000), overrides)


def rolling_restart(**overrides) -> Scenario:
    """Three consumers restarted one after another: each shuts down and comes back with a new instance id."""
    old = [
        ConsumerSpec(cid, leave_ms=40_000 + 30_000 * i, leave=LeaveKind.SHUTDOWN) for i, cid in enumerate(client_ids(3))
    ]
    new = [ConsumerSpec(f"10.0.0.{i + 1}@{2000 + i + 1}", join_ms=45_000 + 30_000 * i) for i in range(3)]
    return _build("rolling_restart", dict(consumers=tuple(old + new), duration_ms=150_000), overrides)


def more_consumers_than_queues(**overrides) -> Scenario:
    """Six consumers, four queues: two consumers sit idle with client-side rebalance."""
    return _build(
        "more_consumers_than_queues",
        dict(brokers=("broker-a",), topics={"TopicTest": 4}, consumers=_group(6)),
        overrides,
    )


def many_topics(**overrides) -> Scenario:
    """Five topics of four queues each and three consumers: every remainder lands on the first consumer."""
    topics = {f"Topic{i}": 4 for i in range(5)}
    return _build("many_topics", dict(brokers=("broker-a",), topics=topics, consumers=_group(3)), overrides)


def orderly_crash(**overrides) -> Scenario:
    """Orderly consumers; one crashes at 60 s holding broker locks that stay until they expire (60 s)."""
    consumers = _group(2) + (ConsumerSpec(client_ids(1, 3)[0], leave_ms=60_000, leave=LeaveKind.CRASH),)
    return _build("orderly_crash", dict(consumers=consumers, consume_mode=ConsumeMode.ORDERLY), overrides)


def orderly_broker_restart(**overrides) -> Scenario:
    """Three orderly consumers; broker-b restarts (down at 70 s, up at 73 s) with an empty lock table and consumer
    registry. Members reconnect at different times, so a round that asks broker-b for the member list can see only
    some of them and lock, on broker-b, queues whose owner still trusts its own lock (30 s): for a while two
    members consume one queue. Whether it happens depends on the seed (which broker each round asks)."""
    return _build(
        "orderly_broker_restart",
        dict(
            consumers=_group(3),
            consume_mode=ConsumeMode.ORDERLY,
            outages=(BrokerOutage("broker-b", 70_000, 73_000),),
        ),
        overrides,
    )


def orderly_slow_listener(**overrides) -> Scenario:
    """Two orderly consumers whose listener calls take 5 s on average (exponential; a queue gets a message every
    20 s), then two more join at 60 s. While locks are refused the members run a round every second, and a round
    gives up a moved queue whose listener call still runs once more than 20 s have passed since the queue's last
    lock renewal (RebalancePushImpl's unlockDelayTimeMills): the new owner then consumes the same message while
    the old call runs. Whether it happens depends on the seed (when the calls run and the locks were renewed)."""
    return _build(
        "orderly_slow_listener",
        dict(
            consumers=_group(2) + _group(2, start=3, join_ms=60_000),
            consume_mode=ConsumeMode.ORDERLY,
            consume_time_ms=5_000.0,
            consume_time_dist="exponential",
            produce_rate_per_queue=0.05,
        ),
        overrides,
    )


def pop_mode(**overrides) -> Scenario:
    """Pop consumers (RocketMQ 5): the broker picks queues, so six consumers share four queues."""
    return _build(
        "pop_mode",
        dict(brokers=("broker-a",), topics={"TopicTest": 4}, consumers=_group(6), consume_mode=ConsumeMode.POP),
        overrides,
    )


def pop_crash(**overrides) -> Scenario:
    """Pop consumers; one crashes at 60.03 s in the middle of a popped batch: the broker revives what it
    never acked into the retry topic once the invisible time (60 s) is over, and another consumer gets it."""
    consumers = _group(3) + (ConsumerSpec(client_ids(1, 4)[0], leave_ms=60_030, leave=LeaveKind.CRASH),)
    return _build(
        "pop_crash",
        dict(
            brokers=("broker-a",),
            topics={"TopicTest": 4},
            consumers=consumers,
            consume_mode=ConsumeMode.POP,
            consume_time_ms=50.0,
        ),
        overrides,
    )


def grpc_crash(**overrides) -> Scenario:
    """The same group and crash as :func:`pop_crash`, as gRPC push consumers through a proxy: the proxy keeps renewing
    what the crashed member held until its heartbeats are 120 s old, so that comes back about two minutes after the
    crash, not after the 60 s invisible time; and the messages its waiting receives got just after it died, which the
    proxy could not write to it, are handed back at once and again two minutes later: consumed twice."""
    return pop_crash(
        **{"name": "grpc_crash", "consume_mode": ConsumeMode.CONCURRENT, "client": ClientKind.GRPC, **overrides}
    )


def grpc_fifo_crash(**overrides) -> Scenario:
    """A FIFO group of gRPC push consumers (``consume_mode`` ORDERLY) on one broker's four queues; one member crashes
    at 60.03 s with a batch out: the broker blocks that batch's queue until the proxy, about two minutes later, stops
    renewing it, and then lends it again from its first unacked message, in order."""
    return pop_crash(
        **{"name": "grpc_fifo_crash", "consume_mode": ConsumeMode.ORDERLY, "client": ClientKind.GRPC, **overrides}
    )


def grpc_broker_outage(**overrides) -> Scenario:
    """:func:`pop_broker_outage` as gRPC push consumers through a proxy. The proxy reads routes from its cache, which
    reloads an entry on the first read more than 20 s after it was written: its pops to broker-b fail until the topic's
    route is reloaded, receives for broker-b then pop broker-a until each member's next assignment scan leaves broker-b
    out, and an ack for a message of broker-b is refused (INVALID_RECEIPT_HANDLE) once the proxy's route of the
    topic named after broker-b has lost it, which the client does not retry: that message comes back after its
    invisible time, once broker-b is up, and is consumed twice. So is the first message acked after broker-b's return,
    because the proxy's route still lacks broker-b then. A FIFO group (``consume_mode`` ORDERLY) keeps each queue in
    order across it, and a refused ack brings back its message and the rest of its batch."""
    return pop_broker_outage(
        **{"name": "grpc_broker_outage", "consume_mode": ConsumeMode.CONCURRENT, "client": ClientKind.GRPC, **overrides}
    )


def grpc_simple_crash(**overrides) -> Scenario:
    """The same group and crash as :func:`pop_crash`, as gRPC simple consumers (``client`` GRPC_SIMPLE): no member
    has an assignment, each receive takes the next queue of the route in turn, and nothing renews what a member
    holds, so what the crashed member held comes back once the 15 s invisible duration it asked for is over."""
    return pop_crash(
        **{"name": "grpc_simple_crash", "consume_mode": ConsumeMode.CONCURRENT, "client": ClientKind.GRPC_SIMPLE,
           **overrides}
    )  # fmt: skip


def grpc_simple_slow_batch(**overrides) -> Scenario:
    """Four gRPC simple consumers start between 40 and 50 s on a backlog of one broker's four queues (1 message/s
    each from 12 s to 60 s) and take 1.2 s per message: a receive of 16 messages takes 19.2 s to work through,
    longer than the 15 s the messages stay invisible, so the last four of every full batch are acked after their
    time has ended: the proxy refuses those acks (the receipt handles have expired), and the broker hands the messages
    out again, to be consumed twice. With ``simple_max_message_num=12`` (14.4 s a batch) none is."""
    return _build(
        "grpc_simple_slow_batch",
        dict(
            brokers=("broker-a",),
            topics={"TopicTest": 4},
            consumers=_group(4, join_ms=40_000),
            client=ClientKind.GRPC_SIMPLE,
            produce_rate_per_queue=1.0,
            consume_time_ms=1_200.0,
            duration_ms=60_000,
            drain_ms=240_000,
        ),
        overrides,
    )


def grpc_simple_change_invisible(**overrides) -> Scenario:
    """:func:`grpc_simple_slow_batch` with an application that calls ``changeInvisibleDuration(message, 15 s)`` before
    processing each message: the first 13 of a batch of 16 start before their 15 s end and get 15 s more, so they are
    acked in time; the change of each later one is refused (its receipt handle has expired), the application skips
    it, and the broker hands it out again. Nothing is consumed twice; as a FIFO group (``consume_mode="ORDERLY"``)
    every queue stays in order."""
    return grpc_simple_slow_batch(
        **{"name": "grpc_simple_change_invisible", "simple_change_invisible": True, **overrides}
    )


def grpc_simple_idle_broker(**overrides) -> Scenario:
    """Four gRPC simple consumers read a topic on two brokers, of which broker-b takes no new messages (its write
    queues set to 0 at the start, as when a broker is drained before it is taken out; its read queues stay), so the
    producers send all 40 messages/s to broker-a. Each member's receives still name broker-b four times in eight,
    and each of those waits out the proxy's 20 s long poll there: the group reads broker-a at a fraction of the rate,
    and the run goes on for 25 minutes after the producers stop, long enough for the last messages, which wait about
    21 minutes. More receiving threads (``simple_threads``) help in proportion; as push consumers (``client="GRPC"``)
    they keep up: each assigned queue receives in its own loop."""
    return _build(
        "grpc_simple_idle_broker",
        dict(
            consumers=_group(4),
            client=ClientKind.GRPC_SIMPLE,
            topic_changes=(TopicChange(1, "broker-b", 4, 0),),
            produce_rate_per_queue=5.0,
            consume_time_ms=10.0,
            drain_ms=1_500_000,
        ),
        overrides,
    )


def pop_broker_outage(**overrides) -> Scenario:
    """Pop consumers over two brokers; broker-b stops at 70 s (its connections close) and is back at 130 s. Pops
    to it fail and go out again 1 s later until the group's assignments leave it out (each broker refreshes its
    copy of the routes every 30 s); acks of messages popped from it just before it stopped fail, so those come back
    after their invisible time (60 s), once it is up, and are consumed again."""
    return _build(
        "pop_broker_outage",
        dict(
            brokers=("broker-a", "broker-b"),
            topics={"TopicTest": 4},
            consumers=_group(6),
            consume_mode=ConsumeMode.POP,
            consume_time_ms=200.0,
            produce_rate_per_queue=2.0,
            outages=(BrokerOutage("broker-b", 70_000, 130_000),),
        ),
        overrides,
    )


def topic_grows(**overrides) -> Scenario:
    """Four consumers; at 60 s an operator raises broker-a's queues of TopicTest from 4 to 8. Each client
    learns the new route at its next route poll (every 30 s), and the new queues wait for the next rebalance."""
    return _build(
        "topic_grows", dict(consumers=_group(4), topic_changes=(TopicChange(60_000, "broker-a", 8, 8),)), overrides
    )


def ordered_topic_grows(**overrides) -> Scenario:
    """:func:`topic_grows` with ordered messages: producers send each message with one of 100 order ids through
    ``SelectMessageQueueByHash`` to four orderly consumers that fall behind (800 ms a message, 2 messages/s on each
    of 8 queues). At the producers' first route poll after the change, most order ids hash to another of the 12
    queues; the consumers come to the new queues only at their own route poll and rebalance, and then consume an
    order's new messages while its older ones still wait in the old queue's backlog: out of order (see
    ``SimResult.out_of_order``). With no backlog (a fast listener) the order holds."""
    return topic_grows(
        **{
            "name": "ordered_topic_grows",
            "order_keys": 100,
            "consume_mode": ConsumeMode.ORDERLY,
            "produce_rate_per_queue": 2.0,
            "consume_time_ms": 800.0,
            "drain_ms": 300_000,
            **overrides,
        }
    )


def broker_joins(**overrides) -> Scenario:
    """Four consumers over two brokers; at 60 s a third broker, broker-c, starts serving TopicTest with 4 queues."""
    return _build(
        "broker_joins", dict(consumers=_group(4), topic_changes=(TopicChange(60_000, "broker-c", 4, 4),)), overrides
    )


def broker_outage(**overrides) -> Scenario:
    """broker-b stops at 70 s and starts again at 130 s. Its connections close, so the name server drops it
    at once; producers send to broker-a meanwhile; broker-b's queues wait, then come back to the group."""
    return _build(
        "broker_outage", dict(consumers=_group(4), outages=(BrokerOutage("broker-b", 70_000, 130_000),)), overrides
    )


def broker_outage_with_slave(**overrides) -> Scenario:
    """broker_outage with a slave beside broker-b's master. While the master is away (70 s to 130 s) the name
    server keeps broker-b's queues in the routes, so no queue moves; the consumers pull them from the slave, which
    refuses every pull, so they stand still until the master is back. Producers send to broker-a meanwhile."""
    return _build(
        "broker_outage_with_slave",
        dict(consumers=_group(4), slaves=("broker-b",), outages=(BrokerOutage("broker-b", 70_000, 130_000),)),
        overrides,
    )


def broker_vanishes(**overrides) -> Scenario:
    """broker-b's host vanishes at 70 s (no connection closes) and never comes back: the name server keeps
    routing to it until its registration is 120 s old, and the messages it holds stay unconsumed."""
    return _build(
        "broker_vanishes",
        dict(consumers=_group(4), outages=(BrokerOutage("broker-b", 70_000, None, silent=True),)),
        overrides,
    )


def mixed_subscriptions(**overrides) -> Scenario:
    """Producers tag TopicTest's messages TagA and TagB in turn; two consumers subscribe to TagA, two to TagB. Each
    broker keeps one subscription for the group, the newest, so most messages are consumed by nobody."""
    consumers = _group(2, subscription="TagA") + _group(2, start=3, subscription="TagB")
    return _build("mixed_subscriptions", dict(consumers=consumers, message_tags=("TagA", "TagB")), overrides)


def mixed_topics(**overrides) -> Scenario:
    """Two topics; two consumers subscribe to TopicTest, two to TopicOrders, in one group. Each heartbeat sets the
    group's topics on a broker to its sender's, which notifies every member: the rounds never stop, pulls of the
    topic a broker's registry lacks are refused, and each topic's queues dealt to the other pair are never read."""
    consumers = _group(2, topics=("TopicTest",)) + _group(2, start=3, topics=("TopicOrders",))
    topics = {"TopicTest": 4, "TopicOrders": 4}
    return _build("mixed_topics", dict(consumers=consumers, topics=topics), overrides)


def shared_client_id(**overrides) -> Scenario:
    """Four consumers, two of them processes on one host that set the same ``instanceName``: both send the client id
    ``10.0.0.1@orders``. The brokers list it twice, so both take the first share, the second share has no owner
    and is never consumed, and every message of the first share is consumed twice."""
    consumers = (
        ConsumerSpec("10.0.0.1@orders"),
        ConsumerSpec("10.0.0.1@orders #2", same_client_id_as="10.0.0.1@orders"),
        ConsumerSpec("10.0.0.2@orders"),
        ConsumerSpec("10.0.0.3@orders"),
    )
    return _build("shared_client_id", dict(consumers=consumers), overrides)


def mixed_strategies(**overrides) -> Scenario:
    """Four consumers halfway through a rolling change of strategy from AVG to AVG_BY_CIRCLE: the two restarted
    first deal the queues like cards, the other two still in blocks. Each computes its share of a different answer,
    so two queues have two owners, whose messages are consumed twice, and two have none."""
    consumers = _group(2, strategy="AVG_BY_CIRCLE") + _group(2, start=3)
    return _build("mixed_strategies", dict(consumers=consumers), overrides)


def slow_member(**overrides) -> Scenario:
    """Four consumers, eight queues; 10.0.0.4's listener takes 2 s a message (``ConsumerSpec.consume_time_ms``), so
    its 20 threads finish 10 messages/s while its two queues bring 20. Every strategy counts queues, not listener
    time: its share stays two queues and their backlog grows for as long as producers run. With ``consume_mode``
    POP the broker hands the other members what it cannot take."""
    consumers = _group(3) + _group(1, start=4, consume_time_ms=2_000)
    return _build("slow_member", dict(consumers=consumers), overrides)


ALL = {
    f.__name__: f
    for f in (
        steady_state,
        scale_out,
        scale_in,
        crash,
        host_loss,
        rolling_restart,
        more_consumers_than_queues,
        many_topics,
        orderly_crash,
        orderly_broker_restart,
        orderly_slow_listener,
        pop_mode,
        pop_crash,
        pop_broker_outage,
        grpc_crash,
        grpc_fifo_crash,
        grpc_broker_outage,
        grpc_simple_crash,
        grpc_simple_slow_batch,
        grpc_simple_change_invisible,
        grpc_simple_idle_broker,
        topic_grows,
        ordered_topic_grows,
        broker_joins,
        broker_outage,
        broker_outage_with_slave,
        broker_vanishes,
        mixed_subscriptions,
        mixed_topics,
        shared_client_id,
        mixed_strategies,
        slow_member,
    )
}

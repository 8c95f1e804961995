"""The producers of a scenario that sends ordered messages (``Scenario.order_keys``).

Each message is sent as ordered messages are, ``producer.send(msg, new SelectMessageQueueByHash(), orderId)``
(DefaultMQProducerImpl#sendSelectImpl): the selector picks one of the producers' current write queues by the order
id's hash, and the send is tried on that queue only. While the queue's broker is down, or refuses the queue (a
route older than the broker's topic config), the send fails: it is counted as ``send_failed`` and never becomes a
message. When the producers' route changes (queues added or removed, a broker gone from it), most order ids hash
to another queue from the next burst on.
"""

from __future__ import annotations

from rmqlib.broker.protocol import ResponseCode
from rmqlib.broker.send_check import _msg_check_trusted
from rmqlib.client.producer import SelectMessageQueueByHash
from rmqlib.sim.broker_node import BODY_SIZE, BrokerNode
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import Scenario


class OrderedProducer:
    """Sends the run's messages in bursts every ``produce_batch_ms``, each topic at the total rate it started with
    (``produce_rate_per_queue`` x its first write queues); message ``n`` of a topic carries order id
    ``n % order_keys`` and the topic's tags in turn."""

    def __init__(self, clock: Clock, scenario: Scenario, routes: Routes, recorder: Recorder, brokers: dict):
        self.clock, self.scenario, self.routes, self.recorder = clock, scenario, routes, recorder
        self.brokers: dict[str, BrokerNode] = brokers
        self.selector = SelectMessageQueueByHash()

    def run(self):
        clock, sc, routes = self.clock, self.scenario, self.routes
        if sc.produce_rate_per_queue <= 0:
            return
        sent = dict.fromkeys(sc.topics, 0)
        rates = {topic: sc.produce_rate_per_queue / 1000.0 * routes.start_queue_counts[topic] for topic in sc.topics}
        yield clock.timeout(sc.produce_start_ms)
        while clock.now < sc.duration_ms:
            yield clock.timeout(min(sc.produce_batch_ms, sc.duration_ms - clock.now))
            now = int(clock.now)
            touched: dict[str, BrokerNode] = {}
            for topic, rate in rates.items():
                due = int((now - sc.produce_start_ms) * rate)
                queues = routes.publish_view.get(topic, [])
                for n in range(sent[topic], due):
                    self.send(topic, n, queues, now, touched)
                sent[topic] = due
            for name in sorted(touched):
                touched[name].store.reput(now)
                touched[name].flush_pull_answers()

    def send(self, topic: str, n: int, queues: list, now: int, touched: dict) -> None:
        """Message ``n`` of ``topic``, sent now to the queue its order id selects, or failed."""
        sc, counters = self.scenario, self.recorder.counters
        if not queues:
            counters["send_failed"] += 1  # no route: "No route info for this topic"
            return
        order_id = n % sc.order_keys
        mq = self.selector.select(queues, None, order_id)
        broker = self.brokers[mq.broker_name]
        if not broker.up or _msg_check_trusted(broker.topic_config, topic, mq.queue_id) is not ResponseCode.SUCCESS:
            counters["send_failed"] += 1
            return
        tag = sc.message_tags[n % len(sc.message_tags)] if sc.message_tags else None
        message_id = self.recorder.new_ordered_message_id(order_id, tag)
        broker.store._put_message_trusted(topic, mq.queue_id, now, BODY_SIZE, tag, str(message_id), now, 0, ())
        touched[broker.name] = broker


__all__ = ["OrderedProducer"]

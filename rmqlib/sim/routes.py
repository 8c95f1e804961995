"""The name server node, and the routes the producers see.

:class:`Routes` holds the name server's table (:class:`rmqlib.namesrv.RouteInfoManager`), runs its scan for
silent brokers, and keeps the producers' view of the write queues, which they poll like any client. A consumer
node polls :attr:`Routes.namesrv` itself (each consumer keeps its own view).
"""

from __future__ import annotations

from rmqlib.client.route import topic_route_data_to_publish_info, topic_route_data_to_subscribe_info
from rmqlib.model import MessageQueue
from rmqlib.namesrv import MASTER_ID, SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS, RouteInfoManager, TopicRouteData
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.scenario import Scenario

FIRST_ROUTE_POLL_MS = 10  # MQClientInstance#startScheduledTask: the first route poll, 10 ms after start


class Routes:
    """The name server and the producers' route view (one view, shared by every producer)."""

    def __init__(self, clock: Clock, scenario: Scenario, recorder: Recorder):
        self.clock, self.scenario, self.recorder = clock, scenario, recorder
        self.namesrv = RouteInfoManager()
        self.publish_view: dict[str, list[MessageQueue]] = {}  # the producers' write queues, per topic
        self.publish_version = 0
        self.start_queue_counts: dict[str, int] = {}
        self.next_send = -1  # TopicPublishInfo#sendWhichQueue: the last queue a redirected send went to

    def start_producers(self) -> None:
        """The producers take their first routes (they start with the run)."""
        self.start_queue_counts = {topic: len(self.publish_queues(topic)) for topic in self.scenario.topics}
        self.take_publish_routes()

    def register(self, broker_name: str, topic_config: dict, now_ms: int, broker_id: int = MASTER_ID) -> None:
        """A broker replica's registration reaches the name server."""
        self.namesrv.register_broker(broker_name, topic_config, now_ms, broker_id=broker_id)
        self.note_routes()

    def has_broker(self, broker_name: str) -> bool:
        """True while some replica of ``broker_name`` is registered."""
        return broker_name in self.namesrv.broker_addr_table

    def master_address(self, broker_name: str) -> str | None:
        """The address of ``broker_name``'s master as the name server has it, or None (what a slave's
        registration is answered with)."""
        data = self.namesrv.broker_addr_table.get(broker_name)
        return None if data is None else dict(data.broker_addrs).get(MASTER_ID)

    def delete_topic(self, topic: str, broker_name: str) -> None:
        """An operator deletes ``topic`` from ``broker_name`` in the name server too (``mqadmin deleteTopic``)."""
        self.namesrv.delete_topic(topic, [broker_name])
        self.note_routes()

    def unregister(self, broker_name: str) -> bool:
        """A master's connection to the name server closed (RouteInfoManager#onChannelDestroy)."""
        removed = self.namesrv.on_channel_destroy(broker_name)
        if removed:
            self.note_routes()
        return removed

    def route(self, topic: str) -> list[MessageQueue] | None:
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
        """Tell the recorder which queues the name server routes now."""
        now = int(self.clock.now)
        for topic in self.scenario.topics:
            self.recorder.routes_now(topic, self.route(topic) or [], now)

    def take_publish_routes(self) -> None:
        """The producers' route poll: take the name server's write queues (a topic it no longer knows keeps
        the old ones, as a failed poll does)."""
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

    def next_send_queue(self, live: list[MessageQueue]) -> MessageQueue:
        """The next of ``live`` for a send retried away from a broker that is down (round robin)."""
        self.next_send = (self.next_send + 1) % len(live)
        return live[self.next_send]

    # --- periodic services -------------------------------------------------------
    def scan_loop(self):
        """RouteInfoManager#scanNotActiveBroker every 5 s: a replica silent for 120 s is unregistered; a broker name
        with no replica left leaves every route."""
        clock = self.clock
        while True:
            yield clock.timeout(SCAN_NOT_ACTIVE_BROKER_INTERVAL_MS)
            for name in self.namesrv.scan_not_active_broker(int(clock.now)):
                if self.has_broker(name):
                    self.recorder.log(int(clock.now), "route reduced", name, "master's registration expired")
                else:
                    self.recorder.log(int(clock.now), "route removed", name, "registration expired")
                self.note_routes()

    def producer_poll_loop(self):
        """The producers' route poll: 10 ms after they start, then every pollNameServerInterval."""
        clock = self.clock
        yield clock.timeout(FIRST_ROUTE_POLL_MS)
        while True:
            before = self.publish_version
            self.take_publish_routes()
            if self.publish_version != before:
                self.recorder.log(
                    int(clock.now),
                    "route",
                    "producers",
                    "; ".join(f"{t}: {len(q)} write queues" for t, q in self.publish_view.items()),
                )
            yield clock.timeout(self.scenario.poll_name_server_interval_ms)


def route_text(route: TopicRouteData) -> str:
    """``broker-a 4r/4w, broker-b 8r/4w (slave only)``: the route's brokers and queue counts, and which brokers have
    no master in it."""
    masterless = {bd.broker_name for bd in route.broker_datas if not bd.has_master()}
    return ", ".join(
        f"{qd.broker_name} {qd.read_queue_nums}r/{qd.write_queue_nums}w"
        + (" (slave only)" if qd.broker_name in masterless else "")
        for qd in route.queue_datas
    )

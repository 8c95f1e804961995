"""An operator's dashboard in simulated time: every ``Scenario.consume_stats_interval_ms`` it asks for the group's
progress as ``mqadmin consumerProgress`` does (:func:`~rmqlib.client.admin.examine_consume_stats`).

It finds the brokers through the name server's route of the group's retry topic, which every broker registers, and
asks each at the address that route offers: the master, or the slave while the route shows no master. A replica
that is down but still routed (a host that vanished) fails the whole poll, as the tool's loop catches nothing;
the poll's answers are then dropped and its error kept (at the poll's instant: Java's call first waits out its
timeout). It names ``Scenario.consume_stats_topic``, or no topic: then each broker answers for the topics the group
has committed offsets of there, so a broadcasting group, which commits none, has no answer at all.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from rmqlib.broker.admin import ConsumeStats, get_consume_stats
from rmqlib.client.admin import examine_consume_stats
from rmqlib.client.api import MQClientError
from rmqlib.namesrv import broker_address
from rmqlib.protocol import MessageModel
from rmqlib.sim.broker_node import BrokerNode
from rmqlib.sim.clock import Clock
from rmqlib.sim.recorder import Recorder
from rmqlib.sim.routes import Routes
from rmqlib.sim.scenario import Scenario
from rmqlib.sim.wire import BrokerUnavailable


class Dashboard:
    """Polls the group's consume stats through the name server's routes and the broker replicas by address."""

    def __init__(
        self,
        clock: Clock,
        scenario: Scenario,
        recorder: Recorder,
        routes: Routes,
        replicas: list[BrokerNode],
        rng: random.Random,
    ):
        self.clock, self.scenario, self.recorder, self.routes, self.rng = clock, scenario, recorder, routes, rng
        self.by_address: Mapping[str, BrokerNode] = {broker_address(r.name, r.broker_id): r for r in replicas}

    def reach(self, addr: str) -> BrokerNode:
        """The replica at ``addr``; one that is down does not answer."""
        replica = self.by_address[addr]
        if not replica.up:
            raise BrokerUnavailable(f"{replica.label} does not answer")
        return replica

    def consumer_connection(self, addr: str, group: str) -> MessageModel | None:
        """GET_CONSUMER_CONNECTION_LIST at ``addr``: the group's message model in that replica's registry, or None
        when it has no member there (AdminBrokerProcessor#getConsumerConnectionList)."""
        info = self.reach(addr).consumer_manager.get_consumer_group_info(group)
        return info.message_model if info is not None and info.get_all_channel() else None

    def run(self):
        while True:
            yield self.clock.timeout(self.scenario.consume_stats_interval_ms)
            self.poll(int(self.clock.now))

    def poll(self, now: int) -> None:
        """One ``mqadmin consumerProgress``: its answers kept, or its error when it failed."""
        sc, recorder = self.scenario, self.recorder
        answers: list[tuple[int, str, ConsumeStats]] = []

        def ask(addr: str, group: str, topic: str | None) -> ConsumeStats:
            replica = self.reach(addr)
            stats = get_consume_stats(
                replica.store,
                replica.name,
                group,
                topic=topic,
                broker_stats_manager=replica.stats,
                consumer_manager=replica.consumer_manager,
            )
            answers.append((now, replica.label, stats))
            return stats

        try:
            route = self.routes.namesrv.pickup_topic_route_data
            topic = sc.consume_stats_topic or None
            examine_consume_stats(sc.consumer_group, route, ask, self.rng, self.consumer_connection, topic)
        except (BrokerUnavailable, MQClientError) as error:
            recorder.consume_stats_errors.append((now, str(error)))
        else:
            recorder.consume_stats.extend(answers)

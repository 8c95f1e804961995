"""Work the simulated consumers of one run share, so that a big group does not repeat identical work per member.

Every real consumer turns the route it took into queues, sorts its queues and the group's client ids, and runs its
strategy for itself, on every rebalance round. In one process a thousand consumers that see the same route and the
same member list would repeat that identical work a thousand times. :class:`SharedViews` does it once per distinct
view and hands each consumer exactly what its own computation would give:

* the readable queues of a route (one frozenset per route version, of the same MessageQueue objects, for everyone:
  :meth:`rmqlib.client.RebalanceImpl.update_topic_subscribe_info` keeps a frozenset as it is, so each consumer's
  table holds the one set, not a copy of its own);
* the sorted queues of a topic (one list per distinct set of queues, found by identity for a shared route set; a
  set whose queue ids overflow Java's 32-bit ``compareTo`` is sorted for each caller, since there TimSort's answer
  depends on the order it is given);
* the sorted client ids (one list per distinct member list);
* a strategy's answer for the whole group (``allocate_all``, once per strategy and view, from the second consumer
  that asks for that view on: the first goes through ``strategy.allocate``, so a view only one consumer sees costs
  no whole-group answer), from which each consumer takes its part; a consumer missing from the answer, or a
  strategy outside :data:`SHAREABLE`, or a view the strategy refuses, goes through ``strategy.allocate`` as before.

The client model takes this object as its ``allocation_cache`` (see :class:`rmqlib.client.RebalanceImpl`); nothing
else in a run changes.
"""

from __future__ import annotations

from rmqlib.client.route import topic_route_data_to_subscribe_info
from rmqlib.model import INT_MAX, MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.namesrv import TopicRouteData
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueConsistentHash,
)

#: Strategies whose ``allocate_all(group, mq_all, cid_all)[cid]`` is ``allocate(group, cid, mq_all, cid_all)`` for
#: every client id of ``cid_all``, and which keep no state between calls.
SHAREABLE = (AllocateMessageQueueAveragely, AllocateMessageQueueAveragelyByCircle, AllocateMessageQueueConsistentHash)
#: How many views' whole-group answers are kept (the oldest goes first): a group that starts together passes through
#: hundreds of member lists, each asked about for a few instants; an answer is a list per member.
MAX_GROUP_ANSWERS = 64
_UNSHARED = object()
_ASKED_ONCE = object()  # a view one consumer has asked about: the next one computes the whole group


class SharedViews:
    """One run's cache of route views, sorted views and whole-group allocations."""

    def __init__(self):
        self._routes: dict[str, tuple[TopicRouteData, frozenset[MessageQueue]]] = {}
        self._mqs: dict[frozenset, list[MessageQueue]] = {}
        self._mqs_of: dict[int, tuple[frozenset, list[MessageQueue]]] = {}  # id of a route set -> (it, sorted)
        self._cids: dict[tuple, list[str]] = {}
        self._held: dict[int, object] = {}  # id -> every list handed out, kept alive so an id names one list
        self._groups: dict[tuple, object] = {}

    def subscribe_queues(self, topic: str, route: TopicRouteData, order) -> frozenset[MessageQueue]:
        """The readable queues of ``route``, as a frozenset built in the order ``order(queues, route)`` gives (a
        new route version: computed; the same version again: the set computed for it)."""
        cached = self._routes.get(topic)
        if cached is not None and not route.topic_route_data_changed(cached[0]):
            return cached[1]
        queues = frozenset(order(topic_route_data_to_subscribe_info(topic, route), route))
        self._routes[topic] = (route, queues)
        return queues

    def sorted_mqs(self, mq_set) -> list[MessageQueue]:
        """``java_sorted_mqs(mq_set)``, once per distinct set (a route set handed out here: found by identity)."""
        mine = self._mqs_of.get(id(mq_set))
        if mine is not None and mine[0] is mq_set:
            return mine[1]
        key = frozenset(mq_set)
        got = self._mqs.get(key)
        if got is None:
            got = java_sorted_mqs(mq_set)
            ids = [mq.queue_id for mq in got]
            if not ids or max(ids) - min(ids) > INT_MAX:
                return got  # overflowing ids: the sort depends on the caller's order, so it is not shared
            self._mqs[key] = got
            self._held[id(got)] = got
        if type(mq_set) is frozenset:  # cannot change: the next caller with this very set finds it by identity
            self._mqs_of[id(mq_set)] = (mq_set, got)
        return got

    def sorted_cids(self, cid_all) -> list[str]:
        """``java_sorted_cids(cid_all)``, once per distinct member list."""
        try:
            key = tuple(cid_all)
            got = self._cids.get(key)
        except TypeError:  # something unhashable: the model's own check names it
            return java_sorted_cids(cid_all)
        if got is None:
            got = self._cids[key] = java_sorted_cids(key)
            self._held[id(got)] = got
        return got

    def allocate(self, strategy, consumer_group: str, current_cid: str, mq_all, cid_all):
        """``strategy.allocate(consumer_group, current_cid, mq_all, cid_all)``, from one whole-group answer when the
        lists are views this cache handed out and the strategy is :data:`SHAREABLE`."""
        if (
            type(strategy) not in SHAREABLE
            or self._held.get(id(mq_all)) is not mq_all
            or self._held.get(id(cid_all)) is not cid_all
        ):
            return strategy.allocate(consumer_group, current_cid, mq_all, cid_all)
        self._held[id(strategy)] = strategy
        key = (id(strategy), consumer_group, id(mq_all), id(cid_all))
        groups = self._groups
        whole = groups.get(key)
        if whole is None:
            groups[key] = _ASKED_ONCE
            if len(groups) > MAX_GROUP_ANSWERS:  # the oldest view goes (asked again, it is computed again)
                del groups[next(iter(groups))]
            return strategy.allocate(consumer_group, current_cid, mq_all, cid_all)
        if whole is _ASKED_ONCE:
            try:
                whole = strategy.allocate_all(consumer_group, mq_all, cid_all)
            except Exception:
                whole = _UNSHARED  # each caller then gets the error its own call raises
            self._groups[key] = whole
        if whole is not _UNSHARED and type(current_cid) is str:
            share = whole.get(current_cid)
            if share is not None:
                return share
        return strategy.allocate(consumer_group, current_cid, mq_all, cid_all)

"""Every design behind one question, "who owns which queue?", measured on the same groups.

A *design* answers for a list of client ids and a list of ``MessageQueue`` (one topic's queues) with an
allocation ``{client id: [queues]}`` (:func:`owners`). The designs:

* RocketMQ's six client-side strategies (:mod:`rmqlib.strategies`, through :func:`rmqlib.allocation.allocate_group`);
* ours (:mod:`rmqlib.designs`): the sticky strategy and consistent hashing with bounded loads;
* RocketMQ 5.x broker-side assignment: the broker's ``QueryAssignmentProcessor`` (:mod:`rmqlib.broker`), in
  PULL mode with AVG, answering each member's ``QUERY_ASSIGNMENT`` from its ``ConsumerManager``;
* Kafka's assignors (:mod:`rmqlib.kafka`): the client-side ``RangeAssignor``, ``RoundRobinAssignor``,
  ``StickyAssignor`` and ``CooperativeStickyAssignor``, and KIP-848's server-side ``uniform`` and
  ``range``. One topic's queues become the partitions ``0..n-1`` of that topic, in RocketMQ's sort order.

Designs that keep what members owned are given the previous answer (``previous``): Kafka's sticky
assignors read it from each member's ``owned_partitions``, KIP-848's from the group coordinator, our
sticky strategy from an agreed memory. :func:`memory_disagreement` shows what happens when memories differ.

Then the measurements: :func:`measure` (imbalance, queues moved when one consumer joins and when one leaves,
for a seeded group), :func:`measured_table` and :func:`design_summary` over groups of 2-64 consumers and
8-256 queues; :func:`simulated_changes` (pause and duplicates after a crash and a scale-out: RocketMQ's
designs through :func:`rmqlib.sim.simulate`, Kafka's protocols through :mod:`rmqlib.sim.kafka_group`, both in
simulated time and counted the same way); and
:func:`view_disagreement` / :func:`broker_assignment_cost` (what the broker sees that clients cannot, and
what asking it costs). Everything is seeded: the same call gives the same numbers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rmqlib.allocation import (
    allocate_group,
    imbalance,
    moved_queues,
    random_cids,
    spread_queues,
)
from rmqlib.allocation import (
    owners as queue_owners,
)
from rmqlib.broker import BrokerConfig, ClientChannelInfo, ConsumerManager, QueryAssignmentProcessor, SubscriptionData
from rmqlib.checks import ArgumentTypeError, check_each, check_int, check_str
from rmqlib.designs.bounded import AllocateMessageQueueConsistentHashBoundedLoad
from rmqlib.designs.sticky import AllocateMessageQueueSticky, sticky_assign
from rmqlib.model import MessageQueue, java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueByConfig,
    AllocateMessageQueueByMachineRoom,
    AllocateMessageQueueConsistentHash,
    Allocation,
    MappingMachineRoomResolver,
)

GROUP = "GID_designs"
TOPIC = "TopicTest"
#: The brokers of the measured topic: two machine rooms (``idc@name``), so the machine-room strategies have
#: rooms to work with; every other design sees two brokers.
BROKERS = ("room1@broker-a", "room2@broker-b")
#: The most consumers and queues one measured group may have (the chapter's grid goes to 64 and 256).
MAX_CONSUMERS = 256
MAX_QUEUES = 1024
#: The most (consumers x queues) pairs one table call measures, summed over its groups, designs and seeds, so that
#: a call stays within seconds (the chapter's grid is about 490,000; every design over the full 2-64 x 8-256 grid
#: about 860,000, some 7 s here).
MAX_TABLE_WORK = 2_000_000


@dataclass(frozen=True)
class Design:
    """One way to share queues: its name, who computes the answer, and where it comes from.

    ``decides``: "every client" (each member computes, from its own view), "elected member" (Kafka's
    classic group leader computes for all), or "broker". ``stateless``: the answer is a function of
    (queues, members) alone, so members whose views agree agree. ``source``: the class or proposal it
    models. ``measured``: whether the tables include it (CONFIG is not a sharing strategy: every member
    gets the list an operator wrote).
    """

    name: str
    label: str
    family: str
    decides: str
    stateless: bool
    source: str
    measured: bool = True


_ROCKETMQ_CLIENT = "RocketMQ client"
_OURS = "ours (not in RocketMQ)"
_ROCKETMQ_BROKER = "RocketMQ 5.x broker"
_KAFKA_CLASSIC = "Kafka classic"
_KAFKA_848 = "Kafka KIP-848"

DESIGNS: dict[str, Design] = {
    d.name: d
    for d in (
        Design("AVG", "RocketMQ AVG", _ROCKETMQ_CLIENT, "every client", True, "AllocateMessageQueueAveragely"),
        Design(
            "AVG_BY_CIRCLE",
            "RocketMQ AVG_BY_CIRCLE",
            _ROCKETMQ_CLIENT,
            "every client",
            True,
            "AllocateMessageQueueAveragelyByCircle",
        ),
        Design(
            "CONSISTENT_HASH",
            "RocketMQ CONSISTENT_HASH",
            _ROCKETMQ_CLIENT,
            "every client",
            True,
            "AllocateMessageQueueConsistentHash (10 virtual nodes)",
        ),
        Design(
            "MACHINE_ROOM",
            "RocketMQ MACHINE_ROOM",
            _ROCKETMQ_CLIENT,
            "every client",
            True,
            "AllocateMessageQueueByMachineRoom (every room)",
        ),
        Design(
            "MACHINE_ROOM_NEARBY-AVG",
            "RocketMQ NEARBY-AVG",
            _ROCKETMQ_CLIENT,
            "every client",
            True,
            "AllocateMachineRoomNearby over AVG (consumers dealt over the rooms)",
        ),
        Design(
            "CONFIG",
            "RocketMQ CONFIG",
            _ROCKETMQ_CLIENT,
            "an operator",
            True,
            "AllocateMessageQueueByConfig (every member configured with every queue)",
            measured=False,
        ),
        Design(
            "STICKY",
            "ours: sticky",
            _OURS,
            "every client",
            False,
            "rmqlib.designs.AllocateMessageQueueSticky (apache/rocketmq-externals#568), agreed memory",
        ),
        Design(
            "CONSISTENT_HASH_BOUNDED",
            "ours: bounded hash",
            _OURS,
            "every client",
            True,
            "rmqlib.designs.AllocateMessageQueueConsistentHashBoundedLoad (apache/rocketmq#1333), epsilon 0.25",
        ),
        Design(
            "BROKER_AVG",
            "RocketMQ broker AVG",
            _ROCKETMQ_BROKER,
            "broker",
            True,
            "QueryAssignmentProcessor.doLoadBalance, PULL mode, AVG",
        ),
        Design(
            "KAFKA_RANGE",
            "Kafka range",
            _KAFKA_CLASSIC,
            "elected member",
            True,
            "org.apache.kafka.clients.consumer.RangeAssignor",
        ),
        Design(
            "KAFKA_ROUNDROBIN",
            "Kafka roundrobin",
            _KAFKA_CLASSIC,
            "elected member",
            True,
            "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        ),
        Design(
            "KAFKA_STICKY",
            "Kafka sticky",
            _KAFKA_CLASSIC,
            "elected member",
            False,
            "org.apache.kafka.clients.consumer.StickyAssignor (KIP-54)",
        ),
        Design(
            "KAFKA_COOPERATIVE_STICKY",
            "Kafka cooperative-sticky",
            _KAFKA_CLASSIC,
            "elected member",
            False,
            "org.apache.kafka.clients.consumer.CooperativeStickyAssignor (KIP-429)",
        ),
        Design(
            "KAFKA_UNIFORM",
            "Kafka uniform (KIP-848)",
            _KAFKA_848,
            "broker",
            False,
            "KIP-848 server-side UniformAssignor (group.consumer.assignors=uniform)",
        ),
        Design(
            "KAFKA_SERVER_RANGE",
            "Kafka range (KIP-848)",
            _KAFKA_848,
            "broker",
            True,
            "KIP-848 server-side RangeAssignor (group.consumer.assignors=range; ignores the previous assignment)",
        ),
    )
}

MEASURED = tuple(name for name, d in DESIGNS.items() if d.measured)
"""The designs the tables measure, in table order."""


def _design(name) -> Design:
    check_str(name, "design")
    found = DESIGNS.get(name)
    if found is None:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {name[:80]!r}")
    return found


def _designs(names, name: str = "designs") -> list[str]:
    return [_design(d).name for d in check_each(names, name, lambda v, label: check_str(v, label), max_len=64)]


def _cid_list(cids, name: str = "cids") -> list[str]:
    cids = check_each(cids, name, lambda v, label: check_str(v, label), max_len=MAX_CONSUMERS)
    if not cids:
        raise ValueError(f"{name} must hold at least one client id")
    return cids


def _mq_list(mqs, name: str = "mqs") -> list[MessageQueue]:
    if isinstance(mqs, (str, bytes, Mapping)) or not isinstance(mqs, Iterable):
        raise ArgumentTypeError(f"{name} must be a list of MessageQueue, got {type(mqs).__name__}")
    mqs = list(mqs)
    if not mqs:
        raise ValueError(f"{name} must hold at least one queue")
    if len(mqs) > MAX_QUEUES:
        raise ValueError(f"{name} must hold at most {MAX_QUEUES} queues, got {len(mqs)}")
    for i, mq in enumerate(mqs):
        if not isinstance(mq, MessageQueue):
            raise ArgumentTypeError(f"{name}[{i}] must be a MessageQueue, got {type(mq).__name__}")
    return java_sorted_mqs(list(dict.fromkeys(mqs)))


def design_queues(count: int, topic: str = TOPIC) -> list[MessageQueue]:
    """``count`` queues of ``topic`` dealt over :data:`BROKERS` (Java-sorted): what every table measures."""
    count = check_int(count, "count", 1, MAX_QUEUES)
    return spread_queues(count, BROKERS, topic)


# --------------------------------------------------------------------------- the adapter


def _room(broker_name: str) -> str:
    return broker_name.split("@", 1)[0] if "@" in broker_name else broker_name


def _rocketmq(design: str, cids: list[str], mqs: list[MessageQueue]) -> Allocation:
    rooms = sorted({_room(mq.broker_name) for mq in mqs})
    if design == "AVG":
        strategy = AllocateMessageQueueAveragely()
    elif design == "AVG_BY_CIRCLE":
        strategy = AllocateMessageQueueAveragelyByCircle()
    elif design == "CONSISTENT_HASH":
        strategy = AllocateMessageQueueConsistentHash(10)
    elif design == "MACHINE_ROOM":
        strategy = AllocateMessageQueueByMachineRoom(rooms)
    elif design == "MACHINE_ROOM_NEARBY-AVG":
        consumer_rooms = {cid: rooms[i % len(rooms)] for i, cid in enumerate(dict.fromkeys(cids))}
        resolver = MappingMachineRoomResolver({mq.broker_name: _room(mq.broker_name) for mq in mqs}, consumer_rooms)
        strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), resolver)
    elif design == "CONFIG":
        strategy = AllocateMessageQueueByConfig(mqs)
    elif design == "CONSISTENT_HASH_BOUNDED":
        strategy = AllocateMessageQueueConsistentHashBoundedLoad(0.25, 10)
    else:  # pragma: no cover - _design() admits only the names above
        raise ValueError(design)
    return allocate_group(strategy, mqs, cids, GROUP)


def broker_side(cids: Sequence[str], mqs: Sequence[MessageQueue], strategy_name: str = "AVG") -> Allocation:
    """Each member's answers to ``QUERY_ASSIGNMENT`` (one per topic of ``mqs``) from one broker that has every
    member registered.

    The broker's ``ConsumerManager`` lists the whole group, so every answer comes from the same list. The broker
    knows AVG and AVG_BY_CIRCLE only; for another ``strategy_name`` it answers nothing (the client would keep its
    old queues), which here is a ValueError.
    Mirrors: broker/.../processor/QueryAssignmentProcessor.java#doLoadBalance (PULL mode)
    """
    cids = _cid_list(cids)
    mqs = _mq_list(mqs)
    check_str(strategy_name, "strategy_name")
    routes: dict[str, list[MessageQueue]] = {}
    for mq in mqs:
        routes.setdefault(mq.topic, []).append(mq)
    subscriptions = [SubscriptionData(topic, "*", 0) for topic in routes]
    manager = ConsumerManager([], BrokerConfig())
    for t, cid in enumerate(dict.fromkeys(cids)):
        manager.register_consumer(
            GROUP,
            ClientChannelInfo(f"ch-{cid}", cid),
            "CONSUME_PASSIVELY",
            "CLUSTERING",
            "CONSUME_FROM_LAST_OFFSET",
            subscriptions,
            False,
            t,
        )
    processor = QueryAssignmentProcessor(manager, routes)
    result: Allocation = {}
    for cid in java_sorted_cids(list(dict.fromkeys(cids))):
        mine: list[MessageQueue] = []
        for topic in routes:
            answer = processor.do_load_balance(topic, GROUP, cid, "CLUSTERING", strategy_name, "PULL", -1)
            if answer is None:
                raise ValueError(
                    f"strategy_name: the broker gives no assignment for {strategy_name[:80]!r} "
                    "(it knows AVG and AVG_BY_CIRCLE)"
                )
            mine += answer
        result[cid] = java_sorted_mqs(mine)
    return result


def _partitions(mqs: list[MessageQueue]) -> tuple[dict[str, int], dict, dict]:
    """(partitions per topic, queue -> TopicPartition, TopicPartition -> queue): queue k of a topic, in
    RocketMQ's sort order, is partition k."""
    from rmqlib.kafka import TopicPartition

    per_topic: dict[str, int] = {}
    to_tp, to_mq = {}, {}
    for mq in mqs:
        k = per_topic.get(mq.topic, 0)
        tp = TopicPartition(mq.topic, k)
        to_tp[mq], to_mq[tp] = tp, mq
        per_topic[mq.topic] = k + 1
    return per_topic, to_tp, to_mq


_KAFKA_CLIENT = {
    "KAFKA_RANGE": "RangeAssignor",
    "KAFKA_ROUNDROBIN": "RoundRobinAssignor",
    "KAFKA_STICKY": "StickyAssignor",
    "KAFKA_COOPERATIVE_STICKY": "CooperativeStickyAssignor",
}
_KAFKA_SERVER = {"KAFKA_UNIFORM": "UniformAssignor", "KAFKA_SERVER_RANGE": "ServerRangeAssignor"}


def kafka_assignor(design: str):
    """A fresh instance of the Kafka assignor model a design name stands for (:mod:`rmqlib.kafka`)."""
    design = _design(design).name
    if design in _KAFKA_CLIENT:
        import rmqlib.kafka as kafka

        return getattr(kafka, _KAFKA_CLIENT[design])()
    if design in _KAFKA_SERVER:
        import rmqlib.kafka.server as server

        return getattr(server, _KAFKA_SERVER[design])()
    raise ValueError(f"design must be a Kafka design ({', '.join([*_KAFKA_CLIENT, *_KAFKA_SERVER])}), got {design!r}")


def _kafka(design: str, cids: list[str], mqs: list[MessageQueue], previous: Mapping | None) -> Allocation:
    from rmqlib.kafka import Subscription

    per_topic, to_tp, to_mq = _partitions(mqs)
    topics = list(per_topic)
    members = list(dict.fromkeys(cids))
    prev = {cid: [to_tp[mq] for mq in (previous or {}).get(cid, ()) if mq in to_tp] for cid in members}
    assignor = kafka_assignor(design)
    if design in _KAFKA_SERVER:
        subscriptions = {cid: Subscription(topics) for cid in members}
        answer = assignor.assign(per_topic, subscriptions, previous={c: p for c, p in prev.items() if p} or None)
    else:
        sticky = design in ("KAFKA_STICKY", "KAFKA_COOPERATIVE_STICKY")
        subscriptions = {
            cid: Subscription(
                topics,
                owned_partitions=tuple(prev[cid]) if sticky else (),
                generation=1 if sticky and prev[cid] else None,
            )
            for cid in members
        }
        answer = assignor.assign(per_topic, subscriptions)
        if design == "KAFKA_COOPERATIVE_STICKY":
            answer = _cooperative_follow_up(assignor, per_topic, topics, answer)
    return {cid: java_sorted_mqs(to_mq[tp] for tp in answer.get(cid, ())) for cid in java_sorted_cids(members)}


def _cooperative_follow_up(assignor, per_topic: Mapping[str, int], topics: list[str], answer: Mapping) -> dict:
    """KIP-429's second round: a cooperative assignment leaves the partitions it takes away unassigned (their
    owners revoke them first); the members then rejoin owning what they kept, and the next assignment hands
    the revoked partitions out. Rounds repeat until every partition has an owner (at most
    ``rmqlib.kafka.protocol.MAX_COOPERATIVE_ROUNDS``)."""
    from rmqlib.kafka import Subscription
    from rmqlib.kafka.protocol import MAX_COOPERATIVE_ROUNDS

    total = sum(per_topic.values())
    for generation in range(2, MAX_COOPERATIVE_ROUNDS + 2):
        if sum(len(tps) for tps in answer.values()) >= total:
            break
        subscriptions = {
            cid: Subscription(topics, owned_partitions=tuple(tps), generation=generation) for cid, tps in answer.items()
        }
        answer = assignor.assign(per_topic, subscriptions)
    return answer


def owners(
    design: str,
    cids: Sequence[str],
    mqs: Sequence[MessageQueue],
    previous: Mapping[str, Sequence[MessageQueue]] | None = None,
) -> Allocation:
    """Who owns which queue under ``design`` (a key of :data:`DESIGNS`), keyed by client id in Java order.

    ``previous`` is the allocation before a change, for the designs that keep what members owned
    (STICKY: the agreed memory; Kafka sticky and cooperative-sticky: each member's ``owned_partitions``;
    KIP-848: the coordinator's current assignment). The others ignore it. For cooperative-sticky the answer is
    the settled one, after the follow-up round(s) that hand out the partitions the first round revoked.
    RocketMQ's designs and ours allocate each topic of ``mqs`` on its own (as ``RebalanceImpl`` does); Kafka's
    assignors see every topic at once.
    """
    design = _design(design).name
    cids = _cid_list(cids)
    mqs = _mq_list(mqs)
    if previous is not None and not isinstance(previous, Mapping):
        raise ArgumentTypeError(f"previous must map client ids to queues or be None, got {type(previous).__name__}")
    if design == "BROKER_AVG":
        return broker_side(cids, mqs)
    if design.startswith("KAFKA_"):
        return _kafka(design, cids, mqs, previous)
    # RocketMQ's designs and ours allocate each topic on its own, as RebalanceImpl.rebalanceByTopic does
    members = java_sorted_cids(list(dict.fromkeys(cids)))
    result: Allocation = {cid: [] for cid in members}
    topics: dict[str, list[MessageQueue]] = {}
    for mq in mqs:
        topics.setdefault(mq.topic, []).append(mq)
    for topic_mqs in topics.values():
        if design == "STICKY":
            kept = {
                cid: [mq for mq in held if mq.topic == topic_mqs[0].topic] for cid, held in (previous or {}).items()
            }
            part = sticky_assign(topic_mqs, members, kept)
        else:
            part = _rocketmq(design, cids, topic_mqs)
        for cid, held in part.items():
            result[cid] += held
    return result


# --------------------------------------------------------------------------- measurements


def _split(allocation: Mapping[str, Sequence[MessageQueue]], mqs: Sequence[MessageQueue]) -> int:
    """Queues that do not have exactly one owner (nobody's, or claimed by two or more)."""
    held = queue_owners(allocation)
    return sum(1 for mq in mqs if len(held.get(mq, ())) != 1)


def measure(design: str, consumers: int, queues: int, seed: int = 0) -> dict:
    """One design on one seeded group: ``imbalance`` (most minus fewest queues), ``moved_out`` (queues whose
    owner changes when one consumer joins), ``moved_in`` (when one, chosen by the seed, leaves), and
    ``peak`` (the most queues on one consumer over the rounded-up fair share ``ceil(queues / consumers)``:
    1.0 for a balanced answer; what a load bound limits),
    ``split`` (queues without exactly one owner, before and after both changes), and
    ``least_out`` / ``least_in``: the fewest any balanced design must move (the newcomer's share; the
    leaver's queues). Client ids are :func:`rmqlib.allocation.random_cids` (random IPs, so a newcomer
    sorts anywhere).
    """
    design = _design(design).name
    consumers = check_int(consumers, "consumers", 2, MAX_CONSUMERS - 1)
    queues = check_int(queues, "queues", 1, MAX_QUEUES)
    seed = check_int(seed, "seed")
    mqs = design_queues(queues)
    grown = random_cids(consumers + 1, seed)
    cids = grown[:consumers]
    leaver = cids[random.Random(seed).randrange(consumers)]
    shrunk = [cid for cid in cids if cid != leaver]
    before = owners(design, cids, mqs)
    after_out = owners(design, grown, mqs, previous=before)
    after_in = owners(design, shrunk, mqs, previous=before)
    return {
        "design": design,
        "consumers": consumers,
        "queues": queues,
        "seed": seed,
        "imbalance": imbalance(before),
        "peak": round(max(map(len, before.values())) / -(-queues // consumers), 3),
        "moved_out": len(moved_queues(before, after_out)),
        "moved_in": len(moved_queues(before, after_in)),
        "least_out": queues // (consumers + 1),
        "least_in": len(before[leaver]),
        "split": _split(before, mqs) + _split(after_out, mqs) + _split(after_in, mqs),
    }


CONSUMER_COUNTS = (2, 4, 8, 16, 32, 64)
QUEUE_COUNTS = (8, 16, 32, 64, 128, 256)


def measured_table(
    designs: Sequence[str] = MEASURED,
    consumers: Sequence[int] = CONSUMER_COUNTS,
    queues: Sequence[int] = QUEUE_COUNTS,
    seeds: Sequence[int] = (0,),
) -> list[dict]:
    """:func:`measure` for every design, group size, queue count and seed: one row each.

    Work is bounded: the sum over groups of consumers x queues (times designs and seeds) is at most
    :data:`MAX_TABLE_WORK`.
    """
    designs = _designs(designs)
    consumers = check_each(
        consumers, "consumers", lambda v, label: check_int(v, label, 2, MAX_CONSUMERS - 1), max_len=64
    )
    queues = check_each(queues, "queues", lambda v, label: check_int(v, label, 1, MAX_QUEUES), max_len=64)
    seeds = check_each(seeds, "seeds", check_int, max_len=64)
    work = sum(c * q for c in consumers for q in queues) * len(seeds) * len(designs)
    if work > MAX_TABLE_WORK:
        raise ValueError(
            f"consumers, queues, seeds and designs: {work} consumer-queue pairs to measure, more than {MAX_TABLE_WORK}"
        )
    return [measure(d, c, q, s) for d in designs for c in consumers for q in queues for s in seeds]


def design_summary(rows: Sequence[Mapping]) -> list[dict]:
    """Per design (in row order): worst imbalance, worst peak load over the average, and queues moved on join and
    leave as a share of all queues (mean over rows) and as a multiple of the fewest possible (sum moved / sum least)."""
    rows = check_each(
        rows,
        "rows",
        lambda v, label: (
            v if isinstance(v, Mapping) else (_ for _ in ()).throw(ArgumentTypeError(f"{label} must be a row (a dict)"))
        ),
    )
    out: dict[str, dict] = {}
    for row in rows:
        d = out.setdefault(
            row["design"],
            {
                "design": row["design"],
                "rows": 0,
                "imbalance": 0,
                "peak": 0.0,
                "out": 0.0,
                "in": 0.0,
                "moved_out": 0,
                "moved_in": 0,
                "least_out": 0,
                "least_in": 0,
                "split": 0,
            },
        )
        d["rows"] += 1
        d["imbalance"] = max(d["imbalance"], row["imbalance"])
        d["peak"] = max(d["peak"], row["peak"])
        d["out"] += row["moved_out"] / row["queues"]
        d["in"] += row["moved_in"] / row["queues"]
        for key in ("moved_out", "moved_in", "least_out", "least_in", "split"):
            d[key] += row[key]
    summary = []
    for name, d in out.items():
        design = DESIGNS[name]
        summary.append(
            {
                "design": design.label,
                "decides": design.decides,
                "stateless": design.stateless,
                "worst imbalance": d["imbalance"],
                "worst peak / fair share": round(d["peak"], 2),
                "moved on join (% of queues)": round(100 * d["out"] / d["rows"], 1),
                "moved on leave (% of queues)": round(100 * d["in"] / d["rows"], 1),
                "join: x fewest": round(d["moved_out"] / max(1, d["least_out"]), 2),
                "leave: x fewest": round(d["moved_in"] / max(1, d["least_in"]), 2),
                "queues without one owner": d["split"],
            }
        )
    return summary


def format_table(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> str:
    """Rows of dicts as a fixed-width text table (what a notebook prints and nbval compares)."""
    rows = list(rows)
    if not rows:
        return ""
    columns = list(columns or rows[0])
    text = [[str(row.get(col, "")) for col in columns] for row in rows]
    widths = [max(len(col), *(len(r[i]) for r in text)) for i, col in enumerate(columns)]
    lines = ["  ".join(col.ljust(w) for col, w in zip(columns, widths))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)) for r in text]
    return "\n".join(line.rstrip() for line in lines)


# --------------------------------------------------------------------------- memories and views


def memory_disagreement(consumers: int = 4, queues: int = 16, rounds: int = 3, memory: str = "own") -> list[dict]:
    """A settled group of ``consumers`` using :class:`AllocateMessageQueueSticky`, then one more joins.

    Round 0 is the settled group (every member started from nothing and computed the same answer). In each
    later round every member runs ``allocate`` again with the grown group. With ``memory="own"`` the old
    members start from what they remember and the newcomer from nothing, so their answers differ; the
    rows count, per round, the queues nobody owns (``unowned``) and those two members own (``doubled``).
    """
    consumers = check_int(consumers, "consumers", 1, MAX_CONSUMERS - 1)
    queues = check_int(queues, "queues", 1, MAX_QUEUES)
    rounds = check_int(rounds, "rounds", 1, 20)
    strategy = AllocateMessageQueueSticky(memory)
    mqs = design_queues(queues)
    grown = random_cids(consumers + 1, 7)
    cids = java_sorted_cids(grown[:consumers])
    rows = []
    for r in range(rounds + 1):
        group = cids if r == 0 else java_sorted_cids(grown)
        answer = {cid: strategy.allocate(GROUP, cid, mqs, group) for cid in group}
        held = queue_owners(answer)
        rows.append(
            {
                "round": r,
                "members": len(group),
                "unowned": sum(1 for mq in mqs if mq not in held),
                "doubled": sum(1 for mq in mqs if len(held.get(mq, ())) > 1),
                "imbalance": imbalance(answer),
            }
        )
    return rows


def view_disagreement(consumers: int = 8, queues: int = 32, stale: int = 2, seed: int = 0) -> dict:
    """One consumer has just joined; ``stale`` of the old members have not yet seen it.

    Client side (AVG), each member allocates from its own member list, so stale members and up-to-date
    members answer for different groups: ``client_split`` counts the queues that then have no owner or
    two. Broker side, every member's ``QUERY_ASSIGNMENT`` is answered from the one broker's
    ``ConsumerManager`` list: ``broker_split`` (always 0 when every member asks the same broker).
    """
    consumers = check_int(consumers, "consumers", 2, MAX_CONSUMERS - 1)
    queues = check_int(queues, "queues", 1, MAX_QUEUES)
    stale = check_int(stale, "stale", 0, consumers)
    seed = check_int(seed, "seed")
    mqs = design_queues(queues)
    grown = random_cids(consumers + 1, seed)
    old = grown[:consumers]
    stale_ids = set(random.Random(seed).sample(old, stale))
    old_view = allocate_group(AllocateMessageQueueAveragely(), mqs, old, GROUP)
    new_view = allocate_group(AllocateMessageQueueAveragely(), mqs, grown, GROUP)
    client = {cid: (old_view if cid in stale_ids else new_view)[cid] for cid in grown}
    broker = broker_side(grown, mqs)
    return {
        "consumers": consumers + 1,
        "queues": queues,
        "stale": stale,
        "client_split": _split(client, mqs),
        "broker_split": _split(broker, mqs),
        "client": client,
        "broker": broker,
    }


def broker_assignment_cost(consumers: int, queues: int, topics: int = 1) -> list[dict]:
    """What one rebalance round costs, client side and broker side, counted from the two code paths.

    Client side (``RebalanceImpl.rebalanceByTopic``): every member asks one broker for the member list
    (``GET_CONSUMER_LIST_BY_GROUP``, one request per subscribed topic) and computes its own share. Broker side
    (``getRebalanceResultFromBroker``): every member sends ``QUERY_ASSIGNMENT`` per topic instead, and the broker
    runs ``doLoadBalance`` for each request, sorting the whole member and queue lists each time. So both sides
    send the same requests and wait the same round trips; what moves is the work (``consumers x topics``
    allocations on the broker instead of one per client) and the decision (the broker knows AVG and
    AVG_BY_CIRCLE only). ``sorted items`` counts the members and queues each side sorts in a round.
    """
    consumers = check_int(consumers, "consumers", 1, 100_000)
    queues = check_int(queues, "queues", 1, MAX_QUEUES)
    topics = check_int(topics, "topics", 1, 10_000)
    per_allocation = consumers + queues
    return [
        {
            "who decides": "every client",
            "requests per round": consumers * topics,
            "allocations on the broker": 0,
            "allocations on each client": topics,
            "sorted items on the broker": 0,
            "strategies": "any (6 + your own)",
        },
        {
            "who decides": "broker (QUERY_ASSIGNMENT)",
            "requests per round": consumers * topics,
            "allocations on the broker": consumers * topics,
            "allocations on each client": 0,
            "sorted items on the broker": consumers * topics * per_allocation,
            "strategies": "AVG, AVG_BY_CIRCLE",
        },
    ]


# --------------------------------------------------------------------------- pauses and duplicates

#: The RocketMQ-side designs the simulator runs, each with a fresh strategy per run (the sticky model keeps
#: memory, so an instance must not outlive its run).
SIMULATED = {
    "RocketMQ AVG": lambda: AllocateMessageQueueAveragely(),
    "RocketMQ CONSISTENT_HASH": lambda: AllocateMessageQueueConsistentHash(10),
    "ours: sticky, own memory": lambda: AllocateMessageQueueSticky("own"),
    "ours: sticky, shared memory": lambda: AllocateMessageQueueSticky("shared"),
    "ours: bounded hash": lambda: AllocateMessageQueueConsistentHashBoundedLoad(0.25, 10),
    "RocketMQ broker-side (Pop)": lambda: AllocateMessageQueueAveragely(),
}
#: Scenario fields a simulated design changes: broker-side assignment is the simulator's Pop mode, where each
#: member asks a broker for its queues (``QueryAssignmentProcessor``, AVG) and pops them.
SIMULATED_FIELDS: dict[str, dict[str, object]] = {"RocketMQ broker-side (Pop)": {"consume_mode": "POP"}}

#: Kafka's three protocols as the comparison runs them, in the simulator (:mod:`rmqlib.sim.kafka_group`):
#: (protocol, assignor design).
KAFKA_PROTOCOLS = {
    "Kafka eager (range)": ("EAGER", "KAFKA_RANGE"),
    "Kafka cooperative (cooperative-sticky)": ("COOPERATIVE", "KAFKA_COOPERATIVE_STICKY"),
    "Kafka KIP-848 (uniform)": ("CONSUMER", "KAFKA_UNIFORM"),
}

CHANGES = ("crash", "scale_out")
#: The run the comparison simulates: 16 queues (8 per broker), light traffic, a settled group before the change
#: at 60 s; producers stop at 80 s and the run goes on to 130 s, long enough for Kafka's 45 s session timeout
#: to hand a crashed member's partitions on.
SIM_DEFAULTS = dict(topics={"TopicTest": 8}, produce_rate_per_queue=1.0, duration_ms=80_000, drain_ms=50_000)


def _scenario(change: str, strategy, overrides: Mapping):
    from rmqlib.sim import scenarios

    build = {"crash": scenarios.crash, "scale_out": scenarios.scale_out}[change]
    return build(**{**SIM_DEFAULTS, **overrides, "strategy": strategy})


def _change_row(design: str, change: str, seed: int, run, at: int) -> dict:
    """One row of :func:`simulated_changes` from a run: what it measured after the change at ``at``."""
    from rmqlib.sim.kafka_group import pauses_after

    pauses = pauses_after(run, at)
    return {
        "design": design,
        "change": change,
        "seed": seed,
        "pause_ms": sum(pauses.values()),
        "longest_ms": max(pauses.values(), default=0),
        "paused": sum(1 for ms in pauses.values() if ms),
        "duplicates": run.duplicates,
        "unconsumed": len(run.lost),
        "moved": run.handovers(after_ms=at),
    }


def simulated_changes(
    seeds: Sequence[int] = (0,),
    designs: Sequence[str] | None = None,
    changes: Sequence[str] = CHANGES,
    kafka: bool | Sequence[str] = True,
    **overrides,
) -> list[dict]:
    """Pause and duplicates after a crash and after a scale-out, one row per design, change and seed.

    Every design runs in the simulator on ``scenarios.crash`` / ``scenarios.scale_out`` (``overrides`` change any
    Scenario field), measured the same way. RocketMQ-side designs (:data:`SIMULATED`) through
    :func:`rmqlib.sim.simulate` (broker-side assignment as Pop mode, :data:`SIMULATED_FIELDS`); Kafka's protocols
    (:data:`KAFKA_PROTOCOLS`; ``kafka=True`` for all, False for none, or a list of their labels) through
    :func:`rmqlib.sim.kafka_group.simulate_kafka_group`, the scenario's consumers as a Kafka group over its
    queues as partitions. Per row: ``pause_ms``, the time queues spent with no owner after the change
    (:meth:`SimResult.pauses`, summed over queues), ``longest_ms`` the longest of those per queue and ``paused``
    how many queues paused at all; ``duplicates`` the deliveries beyond a message's first; ``unconsumed`` the
    messages never consumed by the end; ``moved`` the hand-overs after the change.
    """
    from rmqlib.sim import simulate
    from rmqlib.sim.kafka_group import change_ms, simulate_kafka_group

    seeds = check_each(seeds, "seeds", check_int, max_len=16)
    names = (
        list(SIMULATED)
        if designs is None
        else check_each(designs, "designs", lambda v, label: check_str(v, label), max_len=16)
    )
    for name in names:
        if name not in SIMULATED:
            raise ValueError(f"designs must be among {', '.join(SIMULATED)}, got {name[:80]!r}")
    changes = check_each(changes, "changes", lambda v, label: check_str(v, label), max_len=2)
    for change in changes:
        if change not in CHANGES:
            raise ValueError(f"changes must be among {', '.join(CHANGES)}, got {change[:80]!r}")
    if isinstance(kafka, bool):
        protocols = list(KAFKA_PROTOCOLS) if kafka else []
    else:
        protocols = check_each(kafka, "kafka", lambda v, label: check_str(v, label), max_len=len(KAFKA_PROTOCOLS))
        for label in protocols:
            if label not in KAFKA_PROTOCOLS:
                raise ValueError(f"kafka must be True, False or among {', '.join(KAFKA_PROTOCOLS)}, got {label[:80]!r}")
    rows = []
    for change in changes:
        for name in names:
            for seed in seeds:
                scenario = _scenario(change, SIMULATED[name](), {**overrides, **SIMULATED_FIELDS.get(name, {})})
                rows.append(_change_row(name, change, seed, simulate(scenario, seed=seed), change_ms(scenario)))
        if protocols:
            scenario = _scenario(change, AllocateMessageQueueAveragely(), overrides)
            for label in protocols:
                proto, design = KAFKA_PROTOCOLS[label]
                for seed in seeds:
                    run = simulate_kafka_group(scenario, proto.lower(), kafka_assignor(design), seed=seed)
                    rows.append(_change_row(label, change, seed, run, change_ms(scenario)))
    return rows


def changes_summary(rows: Sequence[Mapping]) -> list[dict]:
    """Mean pause (queue-milliseconds without an owner), longest pause of a queue, queues paused, duplicates,
    unconsumed messages and moved queues per design and change, from :func:`simulated_changes` rows."""
    rows = check_each(
        rows,
        "rows",
        lambda v, label: (
            v if isinstance(v, Mapping) else (_ for _ in ()).throw(ArgumentTypeError(f"{label} must be a row (a dict)"))
        ),
    )
    grouped: dict[tuple, list[Mapping]] = {}
    for row in rows:
        grouped.setdefault((row["design"], row["change"]), []).append(row)
    out = []
    for (design, change), group in grouped.items():
        n = len(group)
        out.append(
            {
                "design": design,
                "change": change,
                "pause (queue-ms)": round(sum(r["pause_ms"] for r in group) / n),
                "longest (ms)": round(sum(r.get("longest_ms", 0) for r in group) / n),
                "paused": round(sum(r.get("paused", 0) for r in group) / n, 1),
                "duplicates": round(sum(r["duplicates"] for r in group) / n, 1),
                "unconsumed": round(sum(r["unconsumed"] for r in group) / n, 1),
                "moved": round(sum(r["moved"] for r in group) / n, 1),
            }
        )
    return out

"""Command line: ``rmqlib allocate`` (like ``mqadmin allocateMQ``, for every strategy), ``rmqlib simulate``,
``rmqlib book`` (open the book in JupyterLab).

Bad arguments print one line on stderr and exit with code 2, never a traceback. Sizes are bounded
(see ``--help`` and the README's "Limits"): the largest group, queue count and ring are those of
:mod:`rmqlib.allocation` (``MAX_CONSUMERS``, ``MAX_QUEUES``, ``MAX_VIRTUAL_NODES``, ``MAX_RING_POINTS``),
so every command answers within seconds or refuses in one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from rmqlib.allocation import (
    MAX_CONSUMERS,
    MAX_NEARBY_DEPTH,
    MAX_QUEUES,
    MAX_RING_POINTS,
    MAX_VIRTUAL_NODES,
    allocate_group,
    idle_consumers,
    imbalance,
    make_cids,
    make_queues,
)
from rmqlib.model import INT_MAX, INT_MIN, MessageQueue
from rmqlib.strategies import STRATEGIES, PrefixMachineRoomResolver, strategy_from_name

MAX_NAME = 255
"""The longest name (broker, client id, room, group, strategy) the command takes: RocketMQ's own limit for names."""
MAX_TOPIC = 127
"""The longest topic name: RocketMQ's ``Validators.TOPIC_MAX_LENGTH``."""
MAX_LISTED = 100_000
"""The most (consumer, queue) pairs one answer may list: CONFIG gives every consumer the whole list
(1,000 consumers x 1,000 queues as JSON took 7 s and 1 GB; 100,000 pairs take under a second)."""
NEARBY = "MACHINE_ROOM_NEARBY-"
_INT = re.compile(r"[+-]?[0-9]+")
# what str.splitlines() breaks a line at: an error message must stay on one line
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

STRATEGY_HELP = {
    "AVG": "contiguous blocks, remainder to the first consumers (the default)",
    "AVG_BY_CIRCLE": "queue j goes to consumer j % consumers",
    "CONSISTENT_HASH": "MD5 ring with --virtual-nodes points per consumer",
    "CONFIG": "every consumer gets --config-queues",
    "MACHINE_ROOM": "only brokers named idc@name with idc in --consumer-idcs",
    "MACHINE_ROOM_NEARBY": "MACHINE_ROOM_NEARBY-<inner>: same-room queues first (room = name before --room-separator)",
}


class UsageError(Exception):
    """A bad command line: reported in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def one_line(text: str) -> str:
    """``text`` with every line break escaped (``\\n``), so that an error message takes one line."""
    for ch in _LINE_BREAKS:
        text = text.replace(ch, ch.encode("unicode_escape").decode("ascii"))
    return text


def _short(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _name(text: str, limit: int = MAX_NAME) -> str:
    """An argparse type: a non-empty name of at most ``limit`` characters."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    if len(text) > limit:
        raise argparse.ArgumentTypeError(f"at most {limit} characters, got {len(text)}")
    return text


def _topic(text: str) -> str:
    return _name(text, MAX_TOPIC)


def _csv(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"empty item in {_short(text)}")
    for item in items:
        if len(item) > MAX_NAME:
            raise argparse.ArgumentTypeError(f"names are at most {MAX_NAME} characters, got one of {len(item)}")
    return items


def _distinct_csv(text: str) -> list[str]:
    items = _csv(text)
    seen: set[str] = set()
    for item in items:
        if item in seen:
            raise argparse.ArgumentTypeError(f"{_short(item)} is named twice")
        seen.add(item)
    return items


def _int_in(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a decimal integer (ASCII digits) in ``minimum..maximum``."""

    def parse(text: str) -> int:
        if not _INT.fullmatch(text.strip()) or len(text) > 40:
            raise argparse.ArgumentTypeError(f"not an integer: {_short(text)}")
        value = int(text)
        if value < minimum or (maximum is not None and value > maximum):
            span = f"in {minimum}..{maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"must be an integer {span}, got {value}")
        return value

    return parse


_positive, _non_negative = _int_in(1), _int_in(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rmqlib", description="RocketMQ consumer rebalance, modelled faithfully.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    alloc = commands.add_parser(
        "allocate",
        help="who owns which queue, for any strategy",
        description="Who owns which queue, for any strategy. Limits: at most "
        f"{MAX_CONSUMERS:,} consumers and {MAX_QUEUES:,} queues (brokers x queues per broker); "
        f"CONSISTENT_HASH at most {MAX_VIRTUAL_NODES:,} virtual nodes per consumer and "
        f"{MAX_RING_POINTS:,} ring points (consumers x virtual nodes); names at most {MAX_NAME} "
        f"characters (topic {MAX_TOPIC}). Anything larger is refused in one line (exit code 2).",
    )
    alloc.add_argument(
        "--topic",
        type=_topic,
        default="TopicTest",
        help=f"topic name, at most {MAX_TOPIC} characters (default TopicTest)",
    )
    alloc.add_argument(
        "--brokers", type=_distinct_csv, default=["broker-a"], help="comma-separated broker names, each named once"
    )
    alloc.add_argument(
        "--queues-per-broker",
        type=_int_in(1, MAX_QUEUES),
        default=4,
        help=f"read queues on each broker (default 4; at most {MAX_QUEUES:,} queues in all)",
    )
    who = alloc.add_mutually_exclusive_group()
    who.add_argument(
        "--consumers",
        type=_int_in(1, MAX_CONSUMERS),
        help=f"number of consumers, 1..{MAX_CONSUMERS:,} (ids 10.0.0.N@100N; default 2)",
    )
    who.add_argument("--cids", type=_csv, help=f"comma-separated client ids (at most {MAX_CONSUMERS:,})")
    alloc.add_argument(
        "--strategy",
        type=_name,
        default="AVG",
        help="AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG, MACHINE_ROOM or "
        f"MACHINE_ROOM_NEARBY-<inner> (at most {MAX_NEARBY_DEPTH} NEARBY prefixes; default AVG)",
    )
    alloc.add_argument(
        "--virtual-nodes",
        type=_int_in(0, MAX_VIRTUAL_NODES),
        default=10,
        help=f"CONSISTENT_HASH points per consumer, 0..{MAX_VIRTUAL_NODES:,} (default 10; "
        f"consumers x virtual nodes at most {MAX_RING_POINTS:,})",
    )
    alloc.add_argument("--consumer-idcs", type=_csv, help="MACHINE_ROOM: rooms this group consumes")
    alloc.add_argument(
        "--config-queues",
        type=_csv,
        help="CONFIG: broker:queueId items (queue ids fit a Java int; every consumer gets the "
        f"whole list, at most {MAX_LISTED:,} consumer-queue pairs in all)",
    )
    alloc.add_argument(
        "--room-separator", type=_name, default="-", help="MACHINE_ROOM_NEARBY: room = name before this (default -)"
    )
    alloc.add_argument(
        "--group", type=_name, default="GID_rmqlib", help=f"consumer group name, at most {MAX_NAME} characters"
    )
    alloc.add_argument("--json", action="store_true", help="print JSON instead of a table")

    commands.add_parser("strategies", help="list the allocation strategies")
    # listed for --help only: main() hands `book` and everything after it to rmqlib.book before argparse runs
    commands.add_parser(
        "book",
        help="open the book in JupyterLab (arguments after it go to jupyter lab)",
        description="Start JupyterLab on the book; --lang zh opens the Chinese edition (and "
        "JupyterLab's Chinese interface, if its language pack is installed: "
        'pip install -e ".[zh]"); other arguments after `book` (e.g. --allow-root) '
        "go to jupyter lab.",
    )

    sim = commands.add_parser(
        "simulate",
        help="run a ready-made scenario in simulated time and summarise it",
        description="Run a ready-made scenario in simulated time and print its summary. Scenario.validate() "
        "states the simulator's limits (simulated span, rates, group size); a --set beyond them is "
        "refused in one line (exit code 2).",
    )
    sim.add_argument(
        "scenario",
        help="steady_state, scale_out, scale_in, crash, host_loss, rolling_restart, more_consumers_than_queues, "
        "many_topics, orderly_crash, orderly_broker_restart, orderly_slow_listener, pop_mode, pop_crash, "
        "pop_broker_outage, grpc_crash, grpc_fifo_crash, grpc_broker_outage, grpc_simple_crash, "
        "grpc_simple_slow_batch, grpc_simple_change_invisible, grpc_simple_idle_broker, topic_grows, "
        "ordered_topic_grows, broker_joins, broker_outage, broker_outage_with_slave, broker_vanishes, "
        "mixed_subscriptions, mixed_topics, "
        "shared_client_id, mixed_strategies or slow_member",
    )
    sim.add_argument("--seed", type=_int_in(0, 2**63 - 1), default=1, help="random seed, 0..2^63-1 (default 1)")
    sim.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        dest="overrides",
        help="override a Scenario field, e.g. --set rebalance_interval_ms=5000 or --set "
        "consume_mode=ORDERLY (repeatable); numbers must be finite, booleans true or false, "
        "message_model and consume_mode a name, brokers, slaves and message_tags comma-separated names, "
        "topics NAME:QUEUES items, QUEUES per broker (e.g. --set topics=TopicTest:8,TopicOrders:4); "
        "consumers, topic_changes and outages cannot be set",
    )
    sim.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def _config_queues(topic: str, items: Sequence[str] | None) -> list[MessageQueue] | None:
    if items is None:
        return None
    queues = []
    for item in items:
        broker, sep, queue_id = item.rpartition(":")
        if not sep or not broker or not re.fullmatch(r"-?[0-9]{1,40}", queue_id):
            raise UsageError(f"rmqlib allocate: --config-queues: expected broker:queueId, got {_short(item)}")
        if not INT_MIN <= int(queue_id) <= INT_MAX:
            raise UsageError(
                f"rmqlib allocate: --config-queues: queue ids must fit a Java int "
                f"({INT_MIN}..{INT_MAX}), got {queue_id}"
            )
        queues.append(MessageQueue(topic, broker, int(queue_id)))
    return queues


def _inner_strategy(name: str, where: str = "rmqlib allocate: --strategy") -> str:
    """The strategy inside the ``MACHINE_ROOM_NEARBY-`` prefixes of ``name`` (at most MAX_NEARBY_DEPTH of them)."""
    depth = 0
    while name.startswith(NEARBY):
        name, depth = name[len(NEARBY) :], depth + 1
        if depth > MAX_NEARBY_DEPTH:
            raise UsageError(f"{where}: at most {MAX_NEARBY_DEPTH} {NEARBY} prefixes")
    return name


def _ranges(ids: list[int]) -> str:
    """``[0,1,2,5]`` -> ``0-2,5``."""
    parts, start = [], None
    for i, q in enumerate(ids):
        if start is None:
            start = q
        if i + 1 == len(ids) or ids[i + 1] != q + 1:
            parts.append(str(start) if start == q else f"{start}-{q}")
            start = None
    return ",".join(parts)


def format_queues(mqs: Sequence[MessageQueue]) -> str:
    """Queues grouped by broker in given order, e.g. ``broker-a:0-3 broker-b:0``."""
    by_broker: dict[str, list[int]] = {}
    for mq in mqs:
        by_broker.setdefault(mq.broker_name, []).append(mq.queue_id)
    return " ".join(f"{broker}:{_ranges(ids)}" for broker, ids in by_broker.items()) or "-"


def _allocate(args: argparse.Namespace) -> str:
    if args.strategy.startswith("MACHINE_ROOM_NEARBY") and "-" not in args.strategy:
        raise UsageError(
            "rmqlib allocate: --strategy MACHINE_ROOM_NEARBY needs an inner strategy, e.g. MACHINE_ROOM_NEARBY-AVG"
        )
    inner = _inner_strategy(args.strategy)
    if len(args.brokers) * args.queues_per_broker > MAX_QUEUES:
        raise UsageError(
            f"rmqlib allocate: --queues-per-broker: {len(args.brokers)} broker(s) x "
            f"{args.queues_per_broker} queues is more than {MAX_QUEUES:,} queues"
        )
    if args.cids is not None and len(args.cids) > MAX_CONSUMERS:
        raise UsageError(f"rmqlib allocate: --cids: at most {MAX_CONSUMERS:,} client ids, got {len(args.cids)}")
    consumers = len(args.cids) if args.cids is not None else (args.consumers or 2)
    if inner == "CONSISTENT_HASH" and consumers * args.virtual_nodes > MAX_RING_POINTS:
        raise UsageError(
            f"rmqlib allocate: --virtual-nodes: {consumers} consumers x {args.virtual_nodes} virtual "
            f"nodes is more than {MAX_RING_POINTS:,} ring points"
        )
    config = _config_queues(args.topic, args.config_queues)
    if inner == "CONFIG" and config is not None:
        distinct = len(set(args.cids)) if args.cids is not None else consumers
        rooms = len(args.brokers) + 1 if inner != args.strategy else 1  # NEARBY hands the list out once a room
        if distinct * len(config) * rooms > MAX_LISTED:
            raise UsageError(
                f"rmqlib allocate: --config-queues: every consumer gets all {len(config)} queues; "
                f"with {distinct} consumers that is more than {MAX_LISTED:,} pairs"
            )
    try:
        strategy = strategy_from_name(
            args.strategy,
            virtual_node_cnt=args.virtual_nodes,
            consumer_idcs=args.consumer_idcs,
            message_queue_list=config,
            resolver=PrefixMachineRoomResolver(args.room_separator),
        )
    except ValueError as error:
        raise UsageError(f"rmqlib allocate: --strategy: {error}") from None
    mqs = make_queues(args.topic, args.brokers, args.queues_per_broker)
    cids = args.cids if args.cids is not None else make_cids(consumers)
    try:
        allocation = allocate_group(strategy, mqs, cids, args.group)
    except ValueError as error:  # what the strategy itself refuses, as Java would throw it
        text = str(error).replace("consumer_idcs is not set", "--consumer-idcs is not set")
        raise UsageError(f"rmqlib allocate: {text}") from None
    if args.json:
        return json.dumps(
            {
                "strategy": strategy.name,
                "topic": args.topic,
                "consumerGroup": args.group,
                "allocation": {
                    cid: [{"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id} for mq in queues]
                    for cid, queues in allocation.items()
                },
            },
            indent=2,
            ensure_ascii=False,
        )
    width = max(len("consumer"), *(len(cid) for cid in allocation))
    lines = [
        f"strategy {strategy.name} | topic {args.topic} | {len(mqs)} queues on {len(args.brokers)} "
        f"broker(s) | {len(allocation)} consumer(s)",
        f"{'consumer':<{width}}  queues  owns",
    ]
    lines += [f"{cid:<{width}}  {len(queues):>6}  {format_queues(queues)}" for cid, queues in allocation.items()]
    idle = idle_consumers(allocation)
    lines.append(f"imbalance (max - min): {imbalance(allocation)} | idle consumers: {len(idle)}")
    return "\n".join(lines)


def _parse_override(item: str, kinds: dict[str, str]) -> tuple[str, object]:
    """``FIELD=VALUE`` -> ``(field, value)``, the value parsed as the field's type (``kinds``: field -> kind)."""
    field, sep, text = item.partition("=")
    if not sep or not field:
        raise UsageError(f"rmqlib simulate: --set: expected FIELD=VALUE, got {_short(item)}")
    if field not in kinds:
        raise UsageError(f"rmqlib simulate: --set: unknown Scenario field {_short(field)}")
    kind = kinds[field]
    where = f"rmqlib simulate: --set {field}"
    if kind == "bool":
        if text.lower() not in ("true", "false"):
            raise UsageError(f"{where}: expected true or false, got {_short(text)}")
        return field, text.lower() == "true"
    if kind == "int":
        if not _INT.fullmatch(text.strip()) or len(text) > 40:
            raise UsageError(f"{where}: expected an integer, got {_short(text)}")
        return field, int(text)
    if kind == "float":
        if _INT.fullmatch(text.strip()) and len(text) <= 40:
            return field, int(text)
        try:
            value = float(text) if text.isascii() and len(text) <= 40 else None
        except ValueError:
            value = None
        if value is None or value != value or value in (float("inf"), float("-inf")):
            raise UsageError(f"{where}: expected a finite number, got {_short(text)}")
        return field, value
    if kind == "strategy":
        if len(text) > MAX_NAME:
            raise UsageError(f"{where}: at most {MAX_NAME} characters, got {len(text)}")
        _inner_strategy(text, where)
        return field, text
    if kind == "enum":  # the Scenario turns a name into the member, or names the field and the names it takes
        if len(text) > MAX_NAME:
            raise UsageError(f"{where}: at most {MAX_NAME} characters, got {len(text)}")
        return field, text
    if kind == "str":
        if len(text) > MAX_NAME:
            raise UsageError(f"{where}: at most {MAX_NAME} characters, got {len(text)}")
        return field, text
    if kind == "names":  # broker names, comma-separated; an empty value is none
        return field, tuple(_names(text, where))
    if kind == "counts":  # topic queue counts, e.g. TopicTest:8,TopicOrders:4
        counts: dict[str, int] = {}
        for item in _names(text, where):
            name, sep, count = item.rpartition(":")
            if not sep or not name or not _INT.fullmatch(count) or len(count) > 40:
                raise UsageError(f"{where}: expected NAME:COUNT items, got {_short(item)}")
            if name in counts:
                raise UsageError(f"{where}: {_short(name)} named twice")
            counts[name] = int(count)
        return field, counts
    raise UsageError(f"{where}: this field ({kind}) cannot be set from the command line; build the Scenario in Python")


def _names(text: str, where: str) -> list[str]:
    """``a,b,c`` -> ``["a", "b", "c"]`` (an empty text: no names); every name non-empty and at most MAX_NAME long."""
    if not text.strip():
        return []
    names = [name.strip() for name in text.split(",")]
    for name in names:
        if not name or len(name) > MAX_NAME:
            raise UsageError(
                f"{where}: expected comma-separated names of 1 to {MAX_NAME} characters, got {_short(text)}"
            )
    return names


def _field_kinds(scenario_class: type[Any]) -> dict[str, str]:
    """Scenario field -> ``bool``, ``int``, ``float``, ``str``, ``enum``, ``strategy`` or the name of another type."""
    hints = typing.get_type_hints(scenario_class)
    kinds = {}
    for field in dataclasses.fields(scenario_class):
        hint = hints.get(field.name)
        if hint in (bool, int, float, str):
            kinds[field.name] = hint.__name__
        elif isinstance(hint, type) and issubclass(hint, Enum):
            kinds[field.name] = "enum"
        elif field.name == "strategy":
            kinds[field.name] = "strategy"
        elif hint == tuple[str, ...]:
            kinds[field.name] = "names"
        elif hint == dict[str, int]:
            kinds[field.name] = "counts"
        else:
            kinds[field.name] = re.sub(r"\b(typing|rmqlib\.sim\.scenario)\.", "", str(hint))
    return kinds


def _simulate(args: argparse.Namespace) -> str:
    # here, not at the top: the command line belongs to the core, which never loads the simulator (or simpy)
    from rmqlib.sim import Scenario, scenarios, simulate

    make = scenarios.ALL.get(args.scenario)
    if make is None:
        raise UsageError(
            f"rmqlib simulate: unknown scenario {_short(args.scenario)}; known: {', '.join(scenarios.ALL)}"
        )
    kinds = _field_kinds(Scenario)
    overrides = dict(_parse_override(item, kinds) for item in args.overrides)
    try:
        scenario = make(**overrides)
        if hasattr(scenario, "validate"):
            scenario.validate()
    except (ValueError, TypeError) as error:
        raise UsageError(f"rmqlib simulate: --set: {error}") from None
    try:
        result = simulate(scenario, seed=args.seed)
    except (ValueError, TypeError) as error:
        raise UsageError(f"rmqlib simulate: {error}") from None
    summary = result.summary()
    if args.json:
        return json.dumps(summary, indent=2)
    width = max(len(key) for key in summary)
    return "\n".join(
        f"{key:<{width}}  {value:.1f}" if isinstance(value, float) else f"{key:<{width}}  {value}"
        for key, value in summary.items()
    )


def _strategies() -> str:
    return "\n".join(f"{name:<20} {STRATEGY_HELP[name]}" for name in STRATEGIES)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["book"] and argv[1:2] not in (["-h"], ["--help"]):
        from rmqlib.book import main as open_book  # starts JupyterLab: loaded only when asked for

        return open_book(argv[1:])  # everything after `book` goes to jupyter lab (argparse would eat options)
    try:
        args = build_parser().parse_args(argv)
        if args.command == "allocate":
            print(_allocate(args))
        elif args.command == "strategies":
            print(_strategies())
        elif args.command == "simulate":
            print(_simulate(args))
        return 0
    except UsageError as error:
        print(one_line(str(error)), file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0
    except (ValueError, TypeError) as error:
        print(one_line(f"rmqlib: {error}"), file=sys.stderr)
        return 2
    except (MemoryError, RecursionError, OverflowError) as error:  # a size the limits above did not foresee
        print(one_line(f"rmqlib: input too large ({type(error).__name__}: {error})"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

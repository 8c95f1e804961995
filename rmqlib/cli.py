"""Command line: ``rmqlib allocate`` (like ``mqadmin allocateMQ``, for every strategy), ``rmqlib simulate``,
``rmqlib book`` (open the book in JupyterLab).

Bad arguments print one line on stderr and exit with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence

from rmqlib.allocation import allocate_group, idle_consumers, imbalance, make_cids, make_queues
from rmqlib.model import MessageQueue
from rmqlib.strategies import STRATEGIES, PrefixMachineRoomResolver, strategy_from_name

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
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def _csv(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"empty item in {text!r}")
    return items


def _int_at_least(minimum: int):
    """An argparse type: an integer >= ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        return value
    return parse


_positive, _non_negative = _int_at_least(1), _int_at_least(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rmqlib", description="RocketMQ consumer rebalance, modelled faithfully.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    alloc = commands.add_parser("allocate", help="who owns which queue, for any strategy")
    alloc.add_argument("--topic", default="TopicTest", help="topic name (default TopicTest)")
    alloc.add_argument("--brokers", type=_csv, default=["broker-a"], help="comma-separated broker names")
    alloc.add_argument("--queues-per-broker", type=_positive, default=4, help="read queues on each broker")
    who = alloc.add_mutually_exclusive_group()
    who.add_argument("--consumers", type=_positive, help="number of consumers (ids 10.0.0.N@100N)")
    who.add_argument("--cids", type=_csv, help="comma-separated client ids")
    alloc.add_argument("--strategy", default="AVG", help="AVG, AVG_BY_CIRCLE, CONSISTENT_HASH, CONFIG, "
                       "MACHINE_ROOM or MACHINE_ROOM_NEARBY-<inner> (default AVG)")
    alloc.add_argument("--virtual-nodes", type=_non_negative, default=10, help="CONSISTENT_HASH points per consumer")
    alloc.add_argument("--consumer-idcs", type=_csv, help="MACHINE_ROOM: rooms this group consumes")
    alloc.add_argument("--config-queues", type=_csv, help="CONFIG: broker:queueId items")
    alloc.add_argument("--room-separator", default="-", help="MACHINE_ROOM_NEARBY: room = name before this")
    alloc.add_argument("--group", default="GID_rmqlib", help="consumer group name")
    alloc.add_argument("--json", action="store_true", help="print JSON instead of a table")

    commands.add_parser("strategies", help="list the allocation strategies")
    # listed for --help only: main() hands `book` and everything after it to rmqlib.book before argparse runs
    commands.add_parser("book", help="open the book in JupyterLab (arguments after it go to jupyter lab)",
                        description="Start JupyterLab on the book; arguments after `book` (e.g. --allow-root) "
                                    "go to jupyter lab.")

    sim = commands.add_parser("simulate", help="run a ready-made scenario in simulated time and summarise it")
    sim.add_argument("scenario", help="steady_state, scale_out, scale_in, crash, host_loss, rolling_restart, "
                     "more_consumers_than_queues, many_topics, orderly_crash or pop_mode")
    sim.add_argument("--seed", type=_non_negative, default=1, help="random seed (default 1)")
    sim.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", dest="overrides",
                     help="override a Scenario field, e.g. --set rebalance_interval_ms=5000 (repeatable)")
    sim.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def _config_queues(topic: str, items: Sequence[str] | None) -> list[MessageQueue] | None:
    if items is None:
        return None
    queues = []
    for item in items:
        broker, sep, queue_id = item.rpartition(":")
        if not sep or not broker or not queue_id.lstrip("-").isdigit():
            raise UsageError(f"rmqlib allocate: --config-queues: expected broker:queueId, got {item!r}")
        queues.append(MessageQueue(topic, broker, int(queue_id)))
    return queues


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


def _allocate(args) -> str:
    if args.strategy.startswith("MACHINE_ROOM_NEARBY") and "-" not in args.strategy:
        raise UsageError("rmqlib allocate: --strategy MACHINE_ROOM_NEARBY needs an inner strategy, "
                         "e.g. MACHINE_ROOM_NEARBY-AVG")
    try:
        strategy = strategy_from_name(args.strategy, virtual_node_cnt=args.virtual_nodes,
                                      consumer_idcs=args.consumer_idcs,
                                      message_queue_list=_config_queues(args.topic, args.config_queues),
                                      resolver=PrefixMachineRoomResolver(args.room_separator))
    except ValueError as error:
        raise UsageError(f"rmqlib allocate: --strategy: {error}") from None
    mqs = make_queues(args.topic, args.brokers, args.queues_per_broker)
    cids = args.cids if args.cids is not None else make_cids(args.consumers or 2)
    allocation = allocate_group(strategy, mqs, cids, args.group)
    if args.json:
        return json.dumps({
            "strategy": strategy.name, "topic": args.topic, "consumerGroup": args.group,
            "allocation": {cid: [{"topic": mq.topic, "brokerName": mq.broker_name, "queueId": mq.queue_id}
                                 for mq in queues] for cid, queues in allocation.items()},
        }, indent=2, ensure_ascii=False)
    width = max(len("consumer"), *(len(cid) for cid in allocation))
    lines = [f"strategy {strategy.name} | topic {args.topic} | {len(mqs)} queues on {len(args.brokers)} "
             f"broker(s) | {len(allocation)} consumer(s)",
             f"{'consumer':<{width}}  queues  owns"]
    lines += [f"{cid:<{width}}  {len(queues):>6}  {format_queues(queues)}" for cid, queues in allocation.items()]
    idle = idle_consumers(allocation)
    lines.append(f"imbalance (max - min): {imbalance(allocation)} | idle consumers: {len(idle)}")
    return "\n".join(lines)


def _parse_override(item: str) -> tuple[str, object]:
    field, sep, text = item.partition("=")
    if not sep or not field:
        raise UsageError(f"rmqlib simulate: --set: expected FIELD=VALUE, got {item!r}")
    lowered = text.lower()
    if lowered in ("true", "false"):
        return field, lowered == "true"
    for kind in (int, float):
        try:
            return field, kind(text)
        except ValueError:
            pass
    return field, text


def _simulate(args) -> str:
    from rmqlib.sim import Scenario, scenarios, simulate

    make = scenarios.ALL.get(args.scenario)
    if make is None:
        raise UsageError(f"rmqlib simulate: unknown scenario {args.scenario!r}; known: {', '.join(scenarios.ALL)}")
    overrides = dict(_parse_override(item) for item in args.overrides)
    known = {f.name for f in dataclasses.fields(Scenario)}
    for field in overrides:
        if field not in known:
            raise UsageError(f"rmqlib simulate: --set: unknown Scenario field {field!r}")
    try:
        scenario = make(**overrides)
    except ValueError as error:
        raise UsageError(f"rmqlib simulate: --set: {error}") from None
    summary = simulate(scenario, seed=args.seed).summary()
    if args.json:
        return json.dumps(summary, indent=2)
    width = max(len(key) for key in summary)
    return "\n".join(f"{key:<{width}}  {value:.1f}" if isinstance(value, float) else f"{key:<{width}}  {value}"
                     for key, value in summary.items())


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
        print(str(error), file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0
    except (ValueError, TypeError) as error:
        print(f"rmqlib: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""How fast does the simulator run? Prints a Markdown table.

One 10-minute scenario (16 consumers, 64 queues on 4 brokers, 500 messages/s in
all), with producers sending bursts every 100 ms (the default: about one message
per queue per burst, so every message has its own pull round trip) and every
1000 ms (several messages per pull), then a sweep of 20 runs (crash scenario,
4 rebalance intervals x 5 seeds) in-process and on a 2-process pool. Each row is
the best of ``--repeat`` runs (a busy machine only ever makes a run slower).

``--against REV ...`` prints a third table instead: the first row's run for the working tree and for each git
revision checked out beside it, in turns (each run in a fresh process, ``--repeat`` rounds), with each one's best
messages/s and its ratio to the working tree's. Measured in one run, on one machine at one time, the ratio holds
when the machine's speed moves from day to day.

``--scaling`` prints a second table instead: the same total load (1,000 messages/s for 60 s, AVG) on
groups of 8 to 1,024 consumers (four queues per consumer), each run in a fresh process, with the cost per
simulated message (CPU time of the run; wall time beside it), its ratio to the smallest group's, and the peak memory
of the process; then a rolling restart in a 1,000-consumer group over 4,000 queues (10 members restarted one after
another). Each row is the run with the least CPU time of ``--repeat``.

    python benchmarks/bench_simulation.py [--quick] [--repeat N] [--scaling | --against REV ...]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from revisions import revisions_beside, run_first_row

from rmqlib.sim import ConsumerSpec, scenarios, simulate, sweep
from rmqlib.sim.scenario import SHUTDOWN


def big_scenario(minutes: int, produce_batch_ms: int):
    consumers = tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}") for i in range(1, 17))
    return scenarios.steady_state(
        brokers=("broker-a", "broker-b", "broker-c", "broker-d"),
        topics={"TopicTest": 16},
        consumers=consumers,
        produce_rate_per_queue=500 / 64,
        duration_ms=minutes * 60_000,
        drain_ms=30_000,
        produce_batch_ms=produce_batch_ms,
    )


GROUP_SIZES = (8, 32, 128, 512, 1_024)


def group_scenario(consumers: int):
    """1,000 messages/s for 60 s over four queues per consumer on four brokers, AVG, a settled start."""
    queues = 4 * consumers
    specs = tuple(ConsumerSpec(f"10.{i // 62_500}.{i // 250 % 250}.{i % 250}@{1000 + i}") for i in range(consumers))
    return scenarios.steady_state(
        brokers=("broker-a", "broker-b", "broker-c", "broker-d"),
        topics={"TopicTest": queues // 4},
        consumers=specs,
        produce_rate_per_queue=1_000 / queues,
        duration_ms=60_000,
        drain_ms=10_000,
    )


def rolling_restart_scenario(consumers: int = 1_000, restarted: int = 10):
    """The load of :func:`group_scenario` on ``consumers`` consumers over ``4 * consumers`` queues; from 20 s on,
    ``restarted`` of them shut down one every 3 s and each comes back 2 s later under a new instance id."""
    base = group_scenario(consumers)
    specs = list(base.consumers)
    for k in range(restarted):
        leave = 20_000 + 3_000 * k
        old = specs[k]
        specs[k] = ConsumerSpec(old.client_id, leave_ms=leave, leave=SHUTDOWN)
        specs.append(ConsumerSpec(f"{old.client_id.split('@')[0]}@{9000 + k}", join_ms=leave + 2_000))
    return scenarios.rolling_restart(
        **{
            **{f: getattr(base, f) for f in ("brokers", "topics", "produce_rate_per_queue", "duration_ms", "drain_ms")},
            "consumers": tuple(specs),
        }
    )


def _one_run(kind: str, consumers: int) -> tuple:
    scenario = group_scenario(consumers) if kind == "group" else rolling_restart_scenario(consumers)
    cpu = time.process_time()
    result = simulate(scenario, seed=1)
    cpu = time.process_time() - cpu
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # Linux: KiB
    return result.produced, len(result.lost), result.wall_seconds, cpu, peak_kib


def scaling_table(sizes=GROUP_SIZES, repeat: int = 1) -> None:
    """Cost per simulated message and peak memory against group size, one fresh process per run; with
    ``repeat`` > 1 each row is the run with the least CPU time. The ratio is of CPU time per message (the
    process's own, which other work on a shared machine inflates far less than it does wall time)."""
    print(
        "| run | consumers | queues | messages | wall s | CPU s | CPU µs per message | vs 8 consumers "
        "| peak memory MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = None
    rows = [("group", n, "steady group") for n in sizes] + [("restart", 1_000, "rolling restart of 10")]
    for kind, consumers, label in rows:
        runs = []
        for _ in range(repeat):
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                runs.append(pool.submit(_one_run, kind, consumers).result())
        produced, lost, wall, cpu, peak_kib = min(runs, key=lambda r: r[3])
        assert lost == 0
        cost = cpu / produced * 1e6
        base = base or cost
        print(
            f"| {label} | {consumers} | {4 * consumers} | {produced} | {wall:.1f} | {cpu:.1f} | {cost:.0f} | "
            f"{cost / base:.1f}x | {peak_kib / 1024:.0f} |",
            flush=True,
        )


def against_table(revs: list[str], minutes: int, repeat: int) -> None:
    """The first row's messages/s for the working tree and each of ``revs``, run in turns, best of ``repeat``."""
    with tempfile.TemporaryDirectory(prefix="rmqlib-against-") as tmp, revisions_beside(revs, Path(tmp)) as trees:
        rates: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(repeat):
            for name, tree in trees.items():  # in turns, so that a slow spell of the machine hits every tree
                done = run_first_row(tree, minutes)
                rates[name].append(float(done.stdout.split("rate ")[1]))
    base = max(rates["working tree"])
    print(f"16 consumers, 64 queues, 500 msg/s, bursts every 100 ms, {minutes} min; {repeat} rounds in turns\n")
    print("| code | messages/s, each round | best | vs working tree |")
    print("|---|---|---:|---:|")
    for name, runs in rates.items():
        print(f"| {name} | {', '.join(f'{r:,.0f}' for r in runs)} | {max(runs):,.0f} | {max(runs) / base:.3f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 simulated minutes instead of 10")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the fastest is reported (default 3)")
    parser.add_argument("--scaling", action="store_true", help="cost per message against group size (8..1,024)")
    parser.add_argument(
        "--against", metavar="REV", nargs="+", help="the first row for these git revisions too, in turns"
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if args.scaling and args.against:
        parser.error("--scaling and --against are separate tables: choose one")
    if args.against:
        against_table(args.against, 2 if args.quick else 10, args.repeat)
        return
    if args.scaling:
        load = ", load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
        print(
            f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores{load}; "
            f"least CPU of {args.repeat}\n"
        )
        scaling_table(repeat=args.repeat)
        return
    minutes = 2 if args.quick else 10
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores; best of {args.repeat}\n"
    )
    print("| run | simulated | messages | wall s | messages/s | log events/s | simpy events/s | pulls |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for batch in (100, 1000):
        result = min(
            (simulate(big_scenario(minutes, batch), seed=1) for _ in range(args.repeat)), key=lambda r: r.wall_seconds
        )
        assert result.lost == []
        wall = result.wall_seconds
        print(
            f"| 16 consumers, 64 queues, 500 msg/s, bursts every {batch} ms | {minutes} min | {result.produced} | "
            f"{wall:.2f} | {result.produced / wall:,.0f} | {result.counters['events'] / wall:,.0f} | "
            f"{result.counters['simpy_events'] / wall:,.0f} | {result.counters['pulls']} |"
        )

    base = scenarios.crash()
    values = [5_000, 10_000, 20_000, 40_000]
    seeds = [1, 2, 3, 4, 5]
    for label, workers in (("in-process", None), ("2-process pool", 2)):
        best = None
        for _ in range(args.repeat):
            executor = ProcessPoolExecutor(workers) if workers else None
            start = time.perf_counter()
            rows = sweep(base, "rebalance_interval_ms", values, seeds, executor=executor, progress=False)
            wall = time.perf_counter() - start
            if executor is not None:
                executor.shutdown()
            best = wall if best is None else min(best, wall)
        produced = sum(r["produced"] for r in rows)
        print(
            f"| sweep of {len(rows)} crash runs, {label} | {len(rows)} x {base.end_ms // 60_000} min | {produced} | "
            f"{best:.2f} | {produced / best:,.0f} | - | - | {sum(r['pulls'] for r in rows)} |"
        )


if __name__ == "__main__":
    main()

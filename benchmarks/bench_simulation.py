"""How fast does the simulator run? Prints a Markdown table.

One 10-minute scenario (16 consumers, 64 queues on 4 brokers, 500 messages/s in
all), with producers sending bursts every 100 ms (the default) and every
1000 ms, then a sweep of 20 runs (crash scenario, 4 rebalance intervals x 5
seeds) in-process and on a 2-process pool.

    python benchmarks/bench_simulation.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor

from rmqlib.sim import ConsumerSpec, scenarios, simulate, sweep


def big_scenario(minutes: int, produce_batch_ms: int):
    consumers = tuple(ConsumerSpec(f"10.0.0.{i}@{1000 + i}") for i in range(1, 17))
    return scenarios.steady_state(brokers=("broker-a", "broker-b", "broker-c", "broker-d"), topics={"TopicTest": 16},
                                  consumers=consumers, produce_rate_per_queue=500 / 64,
                                  duration_ms=minutes * 60_000, drain_ms=30_000, produce_batch_ms=produce_batch_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 simulated minutes instead of 10")
    args = parser.parse_args()
    minutes = 2 if args.quick else 10
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores\n")
    print("| run | simulated | messages | wall s | messages/s | simpy events/s | pulls |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for batch in (100, 1000):
        result = simulate(big_scenario(minutes, batch), seed=1)
        assert result.lost == []
        print(f"| 16 consumers, 64 queues, 500 msg/s, bursts every {batch} ms | {minutes} min | {result.produced} | "
              f"{result.wall_seconds:.1f} | {result.produced / result.wall_seconds:,.0f} | "
              f"{result.counters['simpy_events'] / result.wall_seconds:,.0f} | {result.counters['pulls']} |")

    base = scenarios.crash()
    values = [5_000, 10_000, 20_000, 40_000]
    seeds = [1, 2, 3, 4, 5]
    for label, make in (("in-process", lambda: None), ("2-process pool", lambda: ProcessPoolExecutor(2))):
        executor = make()
        start = time.perf_counter()
        rows = sweep(base, "rebalance_interval_ms", values, seeds, executor=executor, progress=False)
        wall = time.perf_counter() - start
        if executor is not None:
            executor.shutdown()
        produced = sum(r["produced"] for r in rows)
        print(f"| sweep of {len(rows)} crash runs, {label} | {len(rows)} x {base.end_ms // 60_000} min | {produced} | "
              f"{wall:.1f} | {produced / wall:,.0f} | - | {sum(r['pulls'] for r in rows)} |")


if __name__ == "__main__":
    main()

"""How fast does the Kafka group model (rmqlib.sim.kafka_group) run, next to the RocketMQ simulator? Prints a
Markdown table.

For groups of 4 to 64 consumers (four partitions each, 10 messages/s per partition, 80 s of traffic and 50 s of
drain, one consumer joining at 60 s), each protocol's run and a RocketMQ run (AVG) of the same scenario: seconds
of wall time (best of ``--repeat``), simulated messages, and microseconds per message.

    python benchmarks/bench_kafka_group.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import time

from rmqlib.sim import ConsumerSpec, scenarios, simulate
from rmqlib.sim.kafka_group import simulate_kafka_group


def scenario(consumers: int):
    specs = tuple(ConsumerSpec(f"10.0.{i // 250}.{i % 250}@{1000 + i}") for i in range(consumers))
    specs += (ConsumerSpec("10.0.9.1@9001", join_ms=60_000),)
    return scenarios.steady_state(
        consumers=specs,
        topics={"TopicTest": 2 * consumers},
        produce_rate_per_queue=10.0,
        duration_ms=80_000,
        drain_ms=50_000,
    )


def best(run, repeat: int) -> tuple[float, int]:
    times, produced = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        produced = run().produced
        times.append(time.perf_counter() - start)
    return min(times), produced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="groups of 4 and 16 only")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = (4, 16) if args.quick else (4, 16, 64)
    print("| consumers | run | seconds | messages | us per message |")
    print("|---:|---|---:|---:|---:|")
    for size in sizes:
        sc = scenario(size)
        runs = {
            protocol: (lambda p=protocol, sc=sc: simulate_kafka_group(sc, p, seed=0))
            for protocol in ("eager", "cooperative", "consumer")
        }
        runs["RocketMQ AVG (rmqlib.sim.simulate)"] = lambda sc=sc: simulate(sc, seed=0)
        for name, run in runs.items():
            seconds, produced = best(run, args.repeat)
            print(f"| {size} | {name} | {seconds:.2f} | {produced} | {1e6 * seconds / max(1, produced):.1f} |")


if __name__ == "__main__":
    main()

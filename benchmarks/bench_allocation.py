"""How fast is a whole group's allocation? Prints a Markdown table.

For 1024 queues and 16/64/256 consumers x 10/100/1000 virtual nodes it times
``allocate_group`` (one ring for the group) against calling ``allocate`` once
per consumer, as a real group does (every member builds the whole ring), and
against a bare loop that MD5-hashes every ring and queue key. Caches are
cleared before every timed run, so each figure is a cold start. Then it checks
the slider-sized cases (<= 256 queues, <= 64 consumers, <= 200 virtual nodes).

    python benchmarks/bench_allocation.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import time
from functools import partial

from rmqlib.allocation import allocate_group, make_cids, make_queues
from rmqlib.hashring import clear_hash_cache
from rmqlib.model import java_sorted_cids, java_sorted_mqs
from rmqlib.strategies import (
    AllocateMessageQueueAveragely,
    AllocateMessageQueueAveragelyByCircle,
    AllocateMessageQueueConsistentHash,
)


def best_of(repeat: int, run) -> float:
    """Fastest of ``repeat`` cold runs, in seconds."""
    times = []
    for _ in range(repeat):
        clear_hash_cache()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def per_consumer_loop(strategy, mqs, cids):
    mqs, cids = java_sorted_mqs(mqs), java_sorted_cids(cids)
    return {cid: strategy.allocate("GID_bench", cid, mqs, cids) for cid in cids}


def bare_md5(keys):
    for key in keys:
        int.from_bytes(hashlib.md5(key.encode("utf-8")).digest()[:4], "big")


def queues(n: int):
    per_broker = 128 if n >= 128 else n
    return make_queues("TopicBench", [f"broker-{i}" for i in range(n // per_broker)], per_broker)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="cold runs per figure; the best is shown")
    parser.add_argument("--quick", action="store_true", help="skip the 256-consumer rows")
    args = parser.parse_args()

    mqs = queues(1024)
    print(f"Python {platform.python_version()} on {platform.machine()}; 1024 queues; best of {args.repeat} cold runs\n")
    print(
        "| strategy | consumers | vnodes | allocate_group ms | per-consumer loop ms | loop / group | bare MD5 ms "
        "| group / MD5 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for consumers in (16, 64) if args.quick else (16, 64, 256):
        cids = make_cids(consumers)
        for vnodes in (10, 100, 1000):
            strategy = AllocateMessageQueueConsistentHash(vnodes)
            group = best_of(args.repeat, partial(allocate_group, strategy, mqs, cids))
            loop = best_of(
                1 if consumers * vnodes >= 25_600 else args.repeat, partial(per_consumer_loop, strategy, mqs, cids)
            )
            keys = [f"{cid}-{i}" for cid in cids for i in range(vnodes)] + [str(mq) for mq in mqs]
            md5 = best_of(args.repeat, partial(bare_md5, keys))
            print(
                f"| CONSISTENT_HASH | {consumers} | {vnodes} | {group * 1e3:.1f} | {loop * 1e3:.1f} | "
                f"{loop / group:.0f}x | {md5 * 1e3:.1f} | {group / md5:.2f}x |"
            )
        for strategy in (AllocateMessageQueueAveragely(), AllocateMessageQueueAveragelyByCircle()):
            group = best_of(args.repeat, partial(allocate_group, strategy, mqs, cids))
            loop = best_of(args.repeat, partial(per_consumer_loop, strategy, mqs, cids))
            print(
                f"| {strategy.name} | {consumers} | - | {group * 1e3:.1f} | {loop * 1e3:.1f} | "
                f"{loop / group:.0f}x | - | - |"
            )

    print("\nSlider-sized worst case (goal: every one under 20 ms, cold):\n")
    print("| strategy | queues | consumers | vnodes | allocate_group ms |")
    print("|---|---:|---:|---:|---:|")
    small = queues(256)
    for strategy in (
        AllocateMessageQueueAveragely(),
        AllocateMessageQueueAveragelyByCircle(),
        AllocateMessageQueueConsistentHash(200),
    ):
        took = best_of(args.repeat, partial(allocate_group, strategy, small, make_cids(64)))
        vnodes = getattr(strategy, "virtual_node_cnt", "-")
        print(f"| {strategy.name} | 256 | 64 | {vnodes} | {took * 1e3:.1f} |")


if __name__ == "__main__":
    main()

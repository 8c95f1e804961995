"""How much work does the simulator do per message? Instructions counted by valgrind, not seconds.

On a shared machine wall and even CPU times move by half from one run to the next; the number of machine
instructions a run executes does not (callgrind counts the same total with the other core busy). This prints
instructions per simulated message for the benchmark's first scenario (16 consumers, 64 queues, 500 msg/s in
bursts every 100 ms: ``bench_simulation.big_scenario``) in the working tree and, with ``--against REV ...``, in
other git revisions checked out beside it, with the ratios. Each count is the difference between a 3-minute
and a 1-minute run, so Python's start, the imports and the scenario's set-up cancel out; string hashing is
seeded (``PYTHONHASHSEED=0``), so that sets and dicts of strings are laid out alike in every run.

Needs valgrind (Debian: ``apt-get install valgrind``); about ten minutes on two cores.

    python benchmarks/bench_instructions.py [--against REV ...]
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from revisions import revisions_beside, run_first_row

SHORT_MIN, LONG_MIN = 1, 3


def count(tree: Path, minutes: int, scratch: Path) -> tuple[int, int]:
    """(instructions, messages) of one run of ``minutes`` simulated minutes with ``tree``'s rmqlib."""
    out = scratch / f"callgrind-{tree.name}-{minutes}.out"  # valgrind's profile, kept out of the tree
    done = run_first_row(tree, minutes, prefix=("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"))
    collected = re.search(r"Collected : (\d+)", done.stderr)
    produced = re.search(r"produced (\d+)", done.stdout)
    if collected is None or produced is None:
        raise RuntimeError(f"valgrind gave no count for {tree}:\n{done.stderr[-2000:]}")
    return int(collected.group(1)), int(produced.group(1))


def per_message(short: tuple[int, int], long: tuple[int, int]) -> tuple[float, int]:
    """Instructions per message between the short and the long run (start-up and set-up cancel out), and
    the number of messages that difference covers."""
    (i_short, m_short), (i_long, m_long) = short, long
    return (i_long - i_short) / (m_long - m_short), m_long - m_short


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", nargs="*", default=[], help="git revisions to count as well")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        parser.exit(2, "bench_instructions: valgrind is not installed (Debian: apt-get install valgrind)\n")
    with tempfile.TemporaryDirectory(prefix="rmqlib-instructions-") as tmp:
        scratch = Path(tmp)
        with revisions_beside(args.against, scratch) as trees, ThreadPoolExecutor(2) as pool:
            # valgrind runs one thread; two at a time on two cores
            runs = {
                name: [pool.submit(count, tree, minutes, scratch) for minutes in (SHORT_MIN, LONG_MIN)]
                for name, tree in trees.items()
            }
            rows = {name: per_message(*(run.result() for run in pair)) for name, pair in runs.items()}
    base = rows["working tree"][0]
    print(f"instructions per simulated message, {LONG_MIN}-minute run minus {SHORT_MIN}-minute run (valgrind)\n")
    print("| code | messages counted | instructions per message | vs working tree |")
    print("|---|---:|---:|---:|")
    for name, (per, messages) in rows.items():
        print(f"| {name} | {messages} | {per:,.0f} | {per / base:.3f}x |")


if __name__ == "__main__":
    main()

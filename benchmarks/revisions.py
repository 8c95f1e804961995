"""Other git revisions checked out beside the working tree, for benchmarks that compare code in one run.

    with revisions_beside(["6cdaa08"], scratch) as trees:  # {"working tree": ROOT, "6cdaa08": scratch/against-0}
        done = run_first_row(trees["6cdaa08"], minutes=10)

Each revision is a detached ``git worktree`` under ``scratch``, removed when the block ends, whatever happened.
:func:`run_first_row` runs ``bench_simulation``'s first row with a tree's own rmqlib: it starts in that tree's
folder with ``PYTHONPATH`` set to it (``python -c`` puts the current folder first on ``sys.path``, so a run started
elsewhere imports another rmqlib), and fails if the run imported any other.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the first row of bench_simulation (16 consumers, 64 queues, 500 msg/s in bursts every 100 ms) for ``minutes``
FIRST_ROW = """import sys
sys.path.insert(0, "benchmarks")
import rmqlib
from bench_simulation import big_scenario
from rmqlib.sim import simulate
print("rmqlib", rmqlib.__file__)
result = simulate(big_scenario({minutes}, 100), seed=1)
assert result.lost == []
print("produced", result.produced)
print("rate", result.produced / result.wall_seconds)
"""


@contextlib.contextmanager
def revisions_beside(revs: Sequence[str], scratch: Path) -> Iterator[dict[str, Path]]:
    """The working tree and each of ``revs`` checked out under ``scratch``: name -> folder."""
    trees = {"working tree": ROOT}
    try:
        for k, rev in enumerate(revs):
            tree = scratch / f"against-{k}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
            trees[rev] = tree
        yield trees
    finally:
        for tree in trees.values():
            if tree != ROOT:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)


def run_first_row(tree: Path, minutes: int, prefix: Sequence[str] = ()) -> subprocess.CompletedProcess[str]:
    """Run the first row with ``tree``'s rmqlib (string hashing seeded), under ``prefix`` (e.g. valgrind); its
    output has lines ``produced N`` and ``rate R`` (messages per wall second)."""
    done = subprocess.run(
        [*prefix, sys.executable, "-c", FIRST_ROW.format(minutes=minutes)],
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0"),
        capture_output=True,
        text=True,
        check=True,
    )
    if f"rmqlib {tree}{os.sep}" not in done.stdout:
        raise RuntimeError(f"the run for {tree} imported another rmqlib:\n{done.stdout}")
    return done

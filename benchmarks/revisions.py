"""Other git revisions checked out beside the working tree, for benchmarks that compare code in one run.

    with revisions_beside(["6cdaa08"], scratch) as trees:  # {"working tree": ROOT, "6cdaa08": scratch/against-0}
        ...

Each revision is a detached ``git worktree`` under ``scratch``, removed when the block ends, whatever happened.
A run of a tree must start in that tree's folder with ``PYTHONPATH`` set to it (see :func:`tree_env`): ``python -c``
puts the current folder first on ``sys.path``, so a run started elsewhere imports another rmqlib.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def tree_env(tree: Path) -> dict[str, str]:
    """The environment of a run of ``tree``'s rmqlib: its folder on the path, string hashing seeded."""
    return dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")


def check_imported(tree: Path, printed: str) -> None:
    """Fail unless the run's output names ``tree``'s rmqlib (a line ``rmqlib <its __file__>``)."""
    if f"rmqlib {tree}{os.sep}" not in printed:
        raise RuntimeError(f"the run for {tree} imported another rmqlib:\n{printed}")

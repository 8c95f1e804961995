"""CI step: the notebooks as committed are stored small and clean.

    python tools/check_committed_notebooks.py            # the notebooks in git's HEAD
    python tools/check_committed_notebooks.py --worktree # the files on disk instead

A reader who runs a chapter and saves it changes the file on disk (outputs, widget state), and
that is fine; what is committed must not carry that. So this reads each notebook from the commit
(``git show HEAD:<path>``), not from the work tree, and checks: under 1 MB; no widget state and no
plotly figure or plotly.js; a ``# NBVAL_CHECK_OUTPUT`` cell keeps its text outputs and every other
code cell none; the kernel metadata JupyterLab writes on opening (so opening does not mark it dirty);
each committed ``exercises/student`` notebook is what ``python -m rmqlib.exercises`` makes of its
committed source.
Prints one line per problem and exits 1 if there is any; ``.ci/run`` calls it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ("chapters/*.ipynb", "exercises/*/*.ipynb")
MAX_BYTES = 1_000_000
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
FORBIDDEN_TEXT = {
    "application/vnd.jupyter.widget-state+json": "widget state",
    "application/vnd.jupyter.widget-view+json": "a widget view output",
    "application/vnd.plotly.v1+json": "a plotly figure output",
    "Plotly.newPlot": "inline plotly.js",
    "plotly.js v": "inline plotly.js",
    "window.PlotlyConfig": "inline plotly.js",
}


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def problems(text: str) -> list[str]:
    """What is wrong with one stored notebook (its JSON text); empty when it is clean."""
    found = []
    if len(text.encode("utf-8")) >= MAX_BYTES:
        found.append(f"{len(text.encode('utf-8'))} bytes (limit {MAX_BYTES})")
    found += [f"holds {what} ({needle!r})" for needle, what in FORBIDDEN_TEXT.items() if needle in text]
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as error:
        return found + [f"not JSON: {error}"]
    metadata = nb.get("metadata", {})
    if "widgets" in metadata:
        found.append("widget state in the notebook metadata")
    if metadata.get("kernelspec") != KERNELSPEC:
        found.append(f"kernelspec {metadata.get('kernelspec')!r}, want {KERNELSPEC!r} (what JupyterLab writes)")
    if metadata.get("language_info", {}).get("name") != "python":
        found.append("language_info.name is not 'python'")
    for i, cell in enumerate(nb.get("cells", [])):
        if "widgets" in cell.get("metadata", {}):
            found.append(f"cell {i}: widget state in the cell metadata")
        if cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs", [])
        if _source(cell).startswith(CHECK_MARK):
            if not outputs:
                found.append(f"cell {i}: marked {CHECK_MARK} but has no stored output (nbval would compare nothing)")
            if any(o.get("output_type") not in ("stream", "execute_result") for o in outputs):
                found.append(f"cell {i}: a checked cell keeps an output that is not text")
        elif outputs:
            found.append(f"cell {i}: keeps outputs but is not marked {CHECK_MARK}")
    return found


def committed_notebooks(worktree: bool = False) -> dict[str, str]:
    """``{path: text}`` for every book and exercise notebook, from HEAD (or from disk with ``worktree``)."""
    if worktree:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                for pattern in PATTERNS for p in sorted(ROOT.glob(pattern))}
    tree = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    names = [name for name in tree if any(fnmatch.fnmatchcase(name, pattern) for pattern in PATTERNS)]
    return {name: subprocess.run(["git", "show", f"HEAD:{name}"], cwd=ROOT, capture_output=True, check=True,
                                 timeout=60).stdout.decode("utf-8") for name in names}


def stale_students(notebooks: dict[str, str]) -> list[str]:
    """Student notebooks that differ from what the generator makes of their sources (all as given)."""
    from rmqlib import exercises

    with tempfile.TemporaryDirectory() as tmp:
        source, student = Path(tmp, "source"), Path(tmp, "student")
        source.mkdir()
        for path, text in notebooks.items():
            if path.startswith("exercises/source/"):
                (source / Path(path).name).write_text(text, encoding="utf-8")
        fresh = {f"exercises/student/{p.name}": p.read_text(encoding="utf-8")
                 for p in exercises.generate(source, student)}
    committed = {path: text for path, text in notebooks.items() if path.startswith("exercises/student/")}
    return [f"{path}: stale or missing: run python -m rmqlib.exercises"
            for path in sorted(fresh.keys() | committed.keys()) if fresh.get(path) != committed.get(path)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worktree", action="store_true", help="check the files on disk, not the commit")
    args = parser.parse_args(argv)
    notebooks = committed_notebooks(args.worktree)
    if len(notebooks) < 12:
        print(f"only {len(notebooks)} notebooks found: is this the repository?", file=sys.stderr)
        return 1
    bad = [f"{path}: {problem}" for path, text in notebooks.items() for problem in problems(text)]
    bad += stale_students(notebooks)
    for line in bad:
        print(line)
    print(f"{len(notebooks)} committed notebooks checked, {len(bad)} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

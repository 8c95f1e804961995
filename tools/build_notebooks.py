"""Execute book notebooks in place and strip them for committing.

    python tools/build_notebooks.py chapters/06_when_a_rebalance_runs.ipynb [more.ipynb ...]

Each notebook is executed top to bottom with the current Python environment
(``pip install -e '.[test]'`` first), then stripped the way the hygiene tests
want it: a code cell starting with ``# NBVAL_CHECK_OUTPUT`` keeps its text
outputs (stream and ``text/plain`` results, which nbval compares; consecutive chunks of one stream joined), every other
cell loses its outputs and execution count, and widget state is dropped, so no
plotly.js or widget JSON is ever committed. Cell ids are made deterministic.

Chapter authors who generate a notebook from Python can use :func:`md`,
:func:`code` and :func:`build` (``build(path, cells)`` writes and executes).
Exit status: 0 when every notebook ran, 1 if one raised (it is then left
unchanged on disk).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
# what JupyterLab writes on opening with the ipykernel kernel, so that opening a notebook does not mark it dirty
KERNEL = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def md(source: str):
    """A markdown cell (surrounding blank lines removed)."""
    return new_markdown_cell(source.strip("\n"))


def code(source: str, **metadata):
    """A code cell; keyword arguments go into the cell metadata (e.g. ``nbgrader={...}``)."""
    cell = new_code_cell(source.strip("\n"))
    if metadata:
        cell.metadata.update(metadata)
    return cell


def _joined_streams(outputs):
    """One stream output where the kernel sent several in a row to the same stream: how the text arrived in chunks
    depends on timing, and the stored notebook should not (nor should a reader see one printout as two blocks)."""
    joined = []
    for out in outputs:
        last = joined[-1] if joined else None
        if last is not None and out.output_type == last.output_type == "stream" and last.name == out.name:
            last.text += out.text
        else:
            joined.append(out)
    return joined


def strip(nb):
    """Keep text outputs of ``# NBVAL_CHECK_OUTPUT`` cells only; drop widget state and execution metadata."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("widgets", None)
        if cell.cell_type != "code":
            continue
        if cell.source.startswith(CHECK_MARK):
            cell.outputs = _joined_streams([o for o in cell.outputs if o.output_type in ("stream", "execute_result")])
            for out in cell.outputs:
                if out.output_type == "execute_result":
                    out.data = {k: v for k, v in out.data.items() if k == "text/plain"}
                    out.metadata = {}
        else:
            cell.outputs = []
            cell.execution_count = None
    return nb


def execute(nb, cwd: Path = ROOT, timeout: int = 300) -> float:
    """Run every cell (kernel ``python3``, working directory ``cwd``); return the seconds it took."""
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i:03d}"
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
    return time.perf_counter() - start


def build_in_place(path: Path) -> float:
    """Execute ``path`` and overwrite it stripped; return the execution time."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    seconds = execute(nb)
    strip(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return seconds


def build(path, cells, metadata: dict | None = None) -> float:
    """Write a new notebook made of ``cells`` to ``path``, executed and stripped."""
    nb = new_notebook(cells=cells, metadata=dict(metadata or KERNEL))
    seconds = execute(nb)
    strip(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    print(f"{path}: executed in {seconds:.1f} s")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Execute notebooks in place and strip them for committing.")
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    status = 0
    for path in args.notebooks:
        try:
            seconds = build_in_place(path)
        except Exception as exc:  # report and go on with the others
            print(
                f"{path}: FAILED ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})",
                file=sys.stderr,
            )
            status = 1
            continue
        print(f"{path}: executed in {seconds:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Build the book as a static HTML site: ``python -m rmqlib.site build``.

Steps (docs/site.md):

1. execute every notebook of ``chapters/`` with nbclient, in a temporary copy,
   with ``RMQLIB_STATIC=1`` so that plotly figures render as HTML without
   plotly.js and :func:`rmqlib.viz.show_panel` returns the kernel-free slider
   figure instead of the ipywidgets panel. A failing cell stops the build
   (exit code 1) with the notebook path, the cell number and the error;
   the repository's notebooks are never written;
2. copy the student exercise notebooks (``exercises/student``) as they are:
   they contain ``raise NotImplementedError()`` for the reader to replace, so
   they are published unexecuted;
3. run Sphinx + myst-nb (alabaster theme, no network) over the staging
   directory into ``site/_build/html``; plotly.js is copied from the plotly
   wheel once, to ``_static/plotly.min.js``.

Needs the ``site`` extra: ``pip install -e ".[site]"``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "site-src"
DEFAULT_OUT = ROOT / "site" / "_build" / "html"
DEFAULT_STAGE = ROOT / "site" / "_build" / "src"

_SETUP_SOURCE = "import rmqlib.viz.static as _rmqlib_static\n_rmqlib_static.use_static_renderer()\ndel _rmqlib_static"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_NOTE = ("<p class='rmqlib-widget-note'>Interactive widget: it needs a running kernel. "
                "Open this notebook in JupyterLab to use it.</p>")


class SiteBuildError(RuntimeError):
    """The site cannot be built; the message names the notebook and cell when one failed."""


@dataclass
class Executed:
    path: Path
    seconds: float
    error: str | None = None


def _cell_number_of_error(nb) -> int | None:
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", ()):
            if out.get("output_type") == "error":
                return i
    return None


def execute_notebook(src: Path, dest: Path, timeout: int = 600, kernel_name: str = "python3") -> Executed:
    """Execute ``src`` (in a copy of its folder's context) and write the executed notebook to ``dest``.

    Returns an :class:`Executed` whose ``error`` names the failing cell (1-based, as
    counted in the notebook's cell list, markdown included) and the exception.
    """
    # the site extra's packages (pip install -e ".[site]"), loaded only when a build runs
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    os.environ["RMQLIB_STATIC"] = "1"
    dest.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    nb = nbformat.read(src, as_version=4)
    run = copy.deepcopy(nb)
    run.cells.insert(0, nbformat.v4.new_code_cell(_SETUP_SOURCE))
    # the kernel talks over local sockets (IPC), not TCP: ipykernel then has no plain-text transport to warn about
    ipc_dir = tempfile.TemporaryDirectory(prefix="rmqlib-kernel-")
    km = KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(Path(ipc_dir.name) / "kernel"))
    client = NotebookClient(run, km=km, timeout=timeout, kernel_name=kernel_name, allow_errors=False,
                            store_widget_state=False, resources={"metadata": {"path": str(dest.parent)}})
    error = None
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError, DeadKernelError, RuntimeError) as exc:
        index = _cell_number_of_error(run)
        if index is None:  # timeout or dead kernel: the first cell without outputs after the last executed one
            index = next((i for i, c in enumerate(run.cells) if c.cell_type == "code"
                          and c.get("execution_count") is None), len(run.cells))
        if index == 0:
            where = "the site's setup cell (import rmqlib.viz.static)"
        else:
            cell = run.cells[index] if index < len(run.cells) else None
            first = (cell.source.strip().splitlines() or [""])[0] if cell is not None else ""
            # index counts the setup cell at 0, so it is the 1-based position in the reader's notebook
            where = f"cell {index} of {len(nb.cells)} (1-based, markdown included; first line: {first[:80]!r})"
        summary = getattr(exc, "ename", type(exc).__name__)
        evalue = getattr(exc, "evalue", None) or str(exc).strip().splitlines()[-1:] or [""]
        if isinstance(evalue, list):
            evalue = evalue[0]
        error = f"{src.relative_to(ROOT) if src.is_relative_to(ROOT) else src}: {where} failed: {summary}: {evalue}"
    finally:  # the kernel manager is ours, not nbclient's: stop the kernel ourselves
        if km.has_kernel:
            km.shutdown_kernel()
        ipc_dir.cleanup()
    run.cells.pop(0)
    for cell in run.cells:
        for out in cell.get("outputs", ()):
            data = out.get("data")
            if data and _WIDGET_VIEW in data:
                out["data"] = {"text/html": _WIDGET_NOTE, "text/plain": data.get("text/plain", "")}
    run.metadata.pop("widgets", None)
    nbformat.write(run, dest)
    return Executed(src, time.monotonic() - start, error)


def _execute_job(args):
    try:
        return execute_notebook(*args)
    except Exception as exc:  # a notebook that cannot even be read or started still names itself
        return Executed(args[0], 0.0, f"{args[0]}: {type(exc).__name__}: {exc}")


def plotly_js_path() -> Path:
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise SiteBuildError(f"plotly.js not found in the plotly package at {path}")
    return path


def stage(stage_dir: Path, chapters: list[Path], exercises: list[Path], jobs: int, timeout: int,
          log=print) -> list[Executed]:
    """Fill ``stage_dir`` with conf, index, static files and the executed notebooks."""
    if stage_dir.exists():
        shutil.rmtree(stage_dir)
    shutil.copytree(CONF_DIR, stage_dir)
    (stage_dir / "_static").mkdir(exist_ok=True)
    shutil.copy2(plotly_js_path(), stage_dir / "_static" / "plotly.min.js")
    (stage_dir / "exercises").mkdir(parents=True)
    for path in exercises:
        shutil.copy2(path, stage_dir / "exercises" / path.name)
    jobs_list = [(path, stage_dir / "chapters" / path.name, timeout) for path in chapters]
    results: list[Executed] = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for result in pool.map(_execute_job, jobs_list):
            status = "FAILED" if result.error else "ok"
            log(f"  executed {result.path.relative_to(ROOT) if result.path.is_relative_to(ROOT) else result.path}"
                f" in {result.seconds:5.1f} s  {status}")
            results.append(result)
    return results


def build(out: Path = DEFAULT_OUT, stage_dir: Path = DEFAULT_STAGE, chapters: list[Path] | None = None,
          exercises: list[Path] | None = None, jobs: int = 2, timeout: int = 600, log=print) -> Path:
    """Execute, stage and render the book; return ``out`` (holding ``index.html``).

    Raises :class:`SiteBuildError` naming every notebook and cell that failed, or when Sphinx fails.
    """
    try:
        from sphinx.cmd.build import build_main
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SiteBuildError('Sphinx and myst-nb are needed: pip install -e ".[site]"') from exc
    chapters = sorted((ROOT / "chapters").glob("*.ipynb")) if chapters is None else list(chapters)
    exercises = sorted((ROOT / "exercises" / "student").glob("*.ipynb")) if exercises is None else list(exercises)
    if not chapters:
        raise SiteBuildError("no chapter notebooks to build")
    t0 = time.monotonic()
    log(f"executing {len(chapters)} chapter notebook(s) with RMQLIB_STATIC=1 ({jobs} at a time)")
    results = stage(Path(stage_dir), chapters, exercises, jobs, timeout, log)
    failures = [r.error for r in results if r.error]
    if failures:
        raise SiteBuildError("notebook execution failed:\n  " + "\n  ".join(failures))
    t1 = time.monotonic()
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    log(f"rendering with Sphinx into {out}")
    status = build_main(["-b", "html", "-q", "-E", "-d", str(Path(stage_dir) / ".doctrees"), str(stage_dir), str(out)])
    if status != 0:
        raise SiteBuildError(f"sphinx-build failed with exit code {status}")
    log(f"site built in {time.monotonic() - t0:.1f} s (execution {t1 - t0:.1f} s): {out / 'index.html'}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rmqlib.site", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute the chapters and build the HTML site")
    b.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    b.add_argument("--stage", type=Path, default=None, help="staging directory (default: <out>/../src)")
    b.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    b.add_argument("--timeout", type=int, default=600, help="seconds one cell may run (default 600)")
    b.add_argument("notebooks", nargs="*", type=Path, help="chapter notebooks to build (default: all of chapters/)")
    args = parser.parse_args(argv)
    stage_dir = args.stage or Path(args.out).resolve().parent / "src"
    chapters = [p.resolve() for p in args.notebooks] or None
    try:
        build(args.out, stage_dir, chapters, jobs=args.jobs, timeout=args.timeout)
    except SiteBuildError as exc:
        print(f"site build failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run a scenario over a grid of parameter values and seeds; return a tidy table.

Every run is independent and deterministic, so a sweep gives the same rows
whichever executor runs it: in-process (the default), a
``concurrent.futures.ProcessPoolExecutor`` on the local cores, or a
dask.distributed ``Client.get_executor()`` on a cluster. Rows come back in
grid order (values, then seeds), never in completion order.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from numbers import Real

from tqdm.auto import tqdm

from rmqlib.checks import ArgumentTypeError, check_bool, check_str
from rmqlib.sim.engine import simulate
from rmqlib.sim.scenario import Scenario


def run_one(
    scenario: Scenario, seed: int, fixed: Mapping | None = None, extra: Mapping[str, Callable] | None = None
) -> dict:
    """Simulate once; the row is ``{**fixed, **summary(), name: fn(result) for extra}``.

    A top-level function, so a process pool can pickle it (``extra`` functions
    must then be top-level functions too).
    """
    result = simulate(scenario, seed=seed)
    row = {**(fixed or {}), **result.summary()}
    for name, fn in (extra or {}).items():
        row[name] = fn(result)
    return row


def _run_grid(jobs: list, executor: Executor | None, description: str, progress: bool, extra) -> list[dict]:
    """Run ``(scenario, seed, fixed)`` jobs in-process or on ``executor``; rows in job order."""
    bar = _progress_bar(len(jobs), description, progress)
    try:
        if executor is None:
            pending = ((lambda job=job: run_one(*job, extra)) for job in jobs)
        else:
            futures = [executor.submit(run_one, *job, extra) for job in jobs]
            pending = (future.result for future in futures)  # job order, whatever order they finish in
        rows = []
        for get in pending:
            rows.append(get())
            bar.update(1)
        return rows
    finally:
        bar.close()


def sweep(
    scenario: Scenario,
    parameter: str,
    values: Sequence,
    seeds: Iterable[int] = (0, 1, 2),
    *,
    executor: Executor | None = None,
    progress: bool = True,
    label: Callable[[object], object] | None = None,
) -> list[dict]:
    """One row per (value, seed): ``{parameter: value, **SimResult.summary()}``.

    ``parameter`` is any Scenario field (for example ``"rebalance_interval_ms"``,
    ``"strategy"`` or ``"long_polling"``); every value is validated before
    anything runs. ``label`` turns a value into what the table shows (default:
    the value itself, or a strategy's ``name``). A progress bar (tqdm.auto, a
    widget in JupyterLab) shows completed runs unless ``progress=False``.

    >>> from rmqlib.sim import scenarios
    >>> rows = sweep(scenarios.steady_state(duration_ms=20_000, drain_ms=20_000),
    ...              "rebalance_interval_ms", [10_000, 20_000], seeds=[1], progress=False)
    >>> [(r["rebalance_interval_ms"], r["lost"]) for r in rows]
    [(10000, 0), (20000, 0)]
    """
    if not isinstance(scenario, Scenario):
        raise ArgumentTypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    check_str(parameter, "parameter")
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError("values must be a non-empty list")
    check_bool(progress, "progress")
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError("seeds must be a non-empty list of ints")
    label = label or _default_label
    jobs = [
        (scenario.replace(**{parameter: value}), seed, {parameter: label(value)}) for value in values for seed in seeds
    ]
    return _run_grid(jobs, executor, f"{scenario.name}: {parameter}", progress, None)


def run_variants(
    variants: Mapping[object, Scenario],
    seeds: Iterable[int] = (0, 1, 2),
    column: str = "variant",
    extra: Mapping[str, Callable] | None = None,
    *,
    executor: Executor | None = None,
    progress: bool = False,
) -> list[dict]:
    """Every named scenario with every seed; one row per run: ``{column: name, **summary(), **extra}``.

    ``extra`` maps a column name to a function of the SimResult (e.g.
    ``{"hand-overs": SimResult.handovers}``). Rows come in (variant, seed) order.
    """
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError("seeds must be a non-empty list of ints")
    for name, scenario in variants.items():
        if not isinstance(scenario, Scenario):
            raise ValueError(f"variants[{name!r}] must be a Scenario, got {type(scenario).__name__}")
    jobs = [(scenario, seed, {column: name}) for name, scenario in variants.items() for seed in seeds]
    return _run_grid(jobs, executor, f"{len(variants)} variants", progress, extra)


def sweep_values(rows: Sequence[Mapping], x: str, y: str, group: str | None = None) -> dict:
    """``{group: {x value: [y of every seed]}}`` in row order (group None -> key ``""``)."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise ArgumentTypeError(f"rows must be a list of rows (dicts), got {type(rows).__name__}")
    rows = list(rows)
    for name, column in (("x", x), ("y", y)) + ((("group", group),) if group is not None else ()):
        check_str(column, name)
        missing = [i for i, row in enumerate(rows) if not isinstance(row, Mapping) or column not in row]
        if missing:
            raise ValueError(
                f"{name}: no column {column!r} in row {missing[0]}"
                + (
                    f" (it has {', '.join(map(str, rows[missing[0]]))})"
                    if isinstance(rows[missing[0]], Mapping)
                    else " (not a dict)"
                )
            )
    out: dict = {}
    for row in rows:
        g = "" if group is None else row[group]
        out.setdefault(g, {}).setdefault(row[x], []).append(row[y])
    return out


def sweep_stats(rows: Sequence[Mapping], x: str, y: str, group: str | None = None) -> dict:
    """``{group: {x value: (min, mean, max)}}`` over seeds: the spread a sweep figure draws (``y`` numeric)."""
    for by_x in sweep_values(rows, x, y, group).values():
        for ys in by_x.values():
            for value in ys:
                if isinstance(value, bool) or not isinstance(value, Real):
                    raise ArgumentTypeError(f"y: column {y!r} must hold numbers, got {value!r}")
    return {
        g: {v: (min(ys), statistics.fmean(ys), max(ys)) for v, ys in by_x.items()}
        for g, by_x in sweep_values(rows, x, y, group).items()
    }


def _default_label(value):
    name = getattr(value, "name", None)
    return name if isinstance(name, str) and not isinstance(value, str) else value


def _progress_bar(total: int, description: str, enabled: bool) -> tqdm:
    # the static site (RMQLIB_STATIC set, see rmqlib.viz.static.is_static) has no kernel to drive a widget bar
    static = os.environ.get("RMQLIB_STATIC", "").strip().lower() not in ("", "0", "false", "no")
    return tqdm(total=total, desc=description, disable=not enabled or static, leave=False)

"""Run a scenario over a grid of parameter values and seeds; return a tidy table.

Every run is independent and deterministic, so a sweep gives the same rows
whichever executor runs it: in-process (the default), a
``concurrent.futures.ProcessPoolExecutor`` on the local cores, or a
dask.distributed ``Client.get_executor()`` on a cluster. Rows come back in
grid order (values, then seeds), never in completion order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor

from rmqlib.sim.engine import simulate
from rmqlib.sim.scenario import Scenario


def run_one(scenario: Scenario, seed: int, parameter: str | None = None, value=None) -> dict:
    """Simulate once and return the summary row (a top-level function, so process pools can pickle it)."""
    row = simulate(scenario, seed=seed).summary()
    if parameter is not None:
        row = {parameter: value, **row}
    return row


def sweep(scenario: Scenario, parameter: str, values: Sequence, seeds: Iterable[int] = (0, 1, 2), *,
          executor: Executor | None = None, progress: bool = True,
          label: Callable[[object], object] | None = None) -> list[dict]:
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
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError("values must be a non-empty list")
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError("seeds must be a non-empty list of ints")
    label = label or _default_label
    grid = [(scenario.replace(**{parameter: value}), seed, label(value)) for value in values for seed in seeds]

    bar = _progress_bar(len(grid), f"{scenario.name}: {parameter}", progress)
    try:
        if executor is None:
            rows = []
            for sc, seed, shown in grid:
                rows.append(run_one(sc, seed, parameter, shown))
                bar.update(1)
            return rows
        futures = [executor.submit(run_one, sc, seed, parameter, shown) for sc, seed, shown in grid]
        rows = []
        for future in futures:  # grid order, whatever order they finish in
            rows.append(future.result())
            bar.update(1)
        return rows
    finally:
        bar.close()


def _default_label(value):
    name = getattr(value, "name", None)
    return name if isinstance(name, str) and not isinstance(value, str) else value


def _progress_bar(total: int, description: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not enabled, leave=False)

"""Run the points of a sweep in parallel: `run_sweep`.

The backend is a local process pool unless `dask` names a Dask cluster ("local" for a LocalCluster,
or a scheduler address such as "tcp://10.0.0.5:8786"); see engine.service.sweep.backends. Each point is
measured in its worker (engine.service.sweep.outcome.evaluate); outcomes stream back as they complete and
`progress(outcome, done, total)` is called in this process for each, so a caller can store or print
them at once. A point that raises, or whose worker dies, is a failed outcome; the others finish. The
simulation is deterministic, so the KPIs do not depend on the backend or the number of workers.
Workers start from a fresh interpreter (forkserver, or Dask's spawned processes), which imports the
caller's main module again: a script that runs a sweep needs the `if __name__ == "__main__":` guard.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import pandas as pd

from engine.service.sweep.backends import Tables, dask_outcomes, local_outcomes
from engine.service.sweep.outcome import SweepOutcome, evaluate, failed

Progress = Callable[[SweepOutcome, int, int], None]


def default_workers() -> int:
    """os.cpu_count(), at least 1."""
    return os.cpu_count() or 1


def iter_sweep(points: Sequence, tables: tuple[pd.DataFrame, pd.DataFrame, dict], *, workers: int | None = None,
               dask: str | None = None, task=evaluate, fail=failed) -> Iterator:
    """The outcome of every point (engine.service.sweep.grid.Point, already windowed) as each completes.
    `tables`: (jobs, fleet, {prices, regions, carbon, teams}) as engine.cli.common.tables gives;
    `task(point, jobs, fleet, world_tables)` and `fail(point, message)` as engine.service.sweep.backends says
    (default: a sweep point's evaluation)."""
    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if not points:
        return iter(())
    shipped = Tables(*tables)
    if dask is None:
        return local_outcomes(points, shipped, workers, task, fail)
    return dask_outcomes(points, shipped, workers, dask, task, fail)


def run_sweep(points: Sequence, tables: tuple[pd.DataFrame, pd.DataFrame, dict], *, workers: int | None = None,
              dask: str | None = None, progress: Progress | None = None) -> list[SweepOutcome]:
    """Every point's outcome, in index order; `progress(outcome, done, total)` as each arrives.
    workers: processes (default os.cpu_count()); dask: None (local pool), "local" or an address."""
    outcomes = []
    for outcome in iter_sweep(points, tables, workers=workers, dask=dask):
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome, len(outcomes), len(points))
    return sorted(outcomes, key=lambda outcome: outcome.index)

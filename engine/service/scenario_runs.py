"""Several scenarios' runs at once: `meridian compare`'s scenarios in parallel on the sweep's backends.

`run_scenarios_on(...)` gives what engine.service.compare.run_scenarios gives (a Run per scenario, in the
given order, and the defaults their world KPIs relied on), running each scenario (engine.service.compare
`run_one`, and `with_world` when the fleet is priced) as a task of engine.service.sweep: a local process pool
of `workers` processes, or a Dask cluster. The dataset's tables travel to each worker once; each Run comes
back whole. Every run is deterministic, so the runs and their KPIs do not depend on the backend, the number
of workers or the order the scenarios finish in; `progress(done, total, run, seconds)` is called in that
order, as each arrives. A scenario that cannot run raises the same ScenarioError or Unusable as in one
process; one whose worker died raises RuntimeError naming it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.compare import Run, Unusable, assumed_of, priced, run_one, run_scenarios, with_world, world_of

if TYPE_CHECKING:
    from engine.analysis.runs.cost import CostAssumptions


@dataclass(frozen=True)
class ScenarioTask:
    """One scenario, as a worker runs it: its position, and what to compute."""

    index: int
    scenario: Scenario
    assumptions: CostAssumptions | None
    costed: bool
    strand: bool


@dataclass(frozen=True)
class ScenarioRun:
    """A ScenarioTask's outcome: its Run and the seconds it took, or the error that stopped it (`kind`:
    "scenario", "unusable" or "failed": the exception to raise again in the caller's process)."""

    index: int
    run: Run | None
    seconds: float = 0.0
    error: str | None = None
    kind: str = ""

    def raise_if_failed(self) -> None:
        if self.error is None:
            return
        if self.kind == "scenario":
            raise ScenarioError(self.error)
        raise Unusable(self.error) if self.kind == "unusable" else RuntimeError(self.error)


def run_task(task: ScenarioTask, jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict) -> ScenarioRun:
    """One scenario's run (and its world KPIs when costed), in a sweep worker."""
    began = time.perf_counter()
    tables = world_of(world_tables)
    try:
        run = run_one(task.scenario, jobs, fleet, tables, task.strand)
        if task.costed:
            run = with_world(run, fleet, tables, task.assumptions)
    except ScenarioError as exc:
        return ScenarioRun(task.index, None, error=str(exc), kind="scenario")
    except Unusable as exc:
        return ScenarioRun(task.index, None, error=str(exc), kind="unusable")
    return ScenarioRun(task.index, run, time.perf_counter() - began)


def failed_task(task: ScenarioTask, message: str) -> ScenarioRun:
    """A task whose worker died, or whose Run could not travel back."""
    return ScenarioRun(task.index, None, error=f"{task.scenario.name}: {message}", kind="failed")


def run_scenarios_on(scenarios: list[Scenario], jobs: pd.DataFrame, fleet: pd.DataFrame,
                     world_tables: dict[str, pd.DataFrame], assumptions: CostAssumptions | None = None,
                     world: bool | None = None, strand: bool = True,
                     progress: Callable[[int, int, Run, float], None] | None = None,
                     workers: int | None = None, dask: str | None = None) -> tuple[list[Run], list[str]]:
    """engine.service.compare.run_scenarios with the scenarios in parallel (module docstring); `workers`:
    local processes (None: one per core), `dask`: "local" or a scheduler address. One scenario, or one
    worker without Dask, runs in this process."""
    if dask is None and (len(scenarios) < 2 or workers == 1):
        return run_scenarios(scenarios, jobs, fleet, world_tables, assumptions, world, strand, progress)
    from engine.service.sweep.runner import iter_sweep  # its process pools: only for scenarios in parallel

    costed = priced(fleet, world_tables.get("prices")) if world is None else world
    tasks = [ScenarioTask(i, scenario, assumptions, costed, strand) for i, scenario in enumerate(scenarios)]
    out: dict[int, Run] = {}
    with closing(iter_sweep(tasks, (jobs, fleet, world_tables), workers=workers, dask=dask, task=run_task,
                            fail=failed_task)) as finished:   # a failure stops the pool at once
        for done in finished:
            done.raise_if_failed()
            out[done.index] = done.run
            if progress is not None:
                progress(len(out), len(tasks), done.run, done.seconds)
    runs = [out[i] for i in range(len(tasks))]
    return runs, assumed_of(runs)

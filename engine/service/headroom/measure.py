"""Load headroom and fleet compaction of scenarios against a baseline, at the baseline's service level.

`measure(baseline, candidates, tables, ...)`:
1. Replay the baseline on the dataset as it is (its window; scale 1) and take the service level
   from it (engine.service.headroom.service.from_baseline), or from a file's targets.
2. For the baseline and every candidate: a demand search per seed (the load headroom: the largest
   demand scale at which the scenario holds the level; seeds resample the demand differently) and
   one fleet search (the smallest fleet, every pool scaled alike in whole nodes, that holds it with
   the demand as it is); engine.service.headroom.tasks. The searches run in parallel on local processes or
   a Dask cluster (engine.service.sweep's backends), `progress(done, total, outcome)` as each finishes.
3. Per scenario: the load headroom (mean over seeds, and the spread), its ratio to the baseline's
   (seed by seed, then mean and spread: "serves +X % more work at the same service level"), the
   fleet it needs and the GPUs it saves against today's fleet (compaction_gpus; negative when it
   needs more) and against the baseline's own smallest fleet (saved_gpus), in dollars a year at
   `gpu_capex_usd` amortised over `amortisation_years` (the report's assumptions).
Finished searches are kept in this process (keyed by the tables' content, the scenario, seed, level
and tolerance): asking again, from a page or the report, costs nothing. With a ledger they are also
stored in the database as each finishes, so a run killed midway keeps them and the same request
resumes from them (engine.service.headroom.ledger). `with_headroom` does it for
the runs engine.service.compare.run_scenarios made, the first the baseline.
"""
from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import pandas as pd

from engine.scenario.spec import Scenario
from engine.service.compare import Run, Unusable
from engine.service.headroom import DEFAULT_SEEDS, service
from engine.service.headroom.search import DEFAULT_TOLERANCE
from engine.service.headroom.tasks import DEMAND, FLEET, SearchOutcome, SearchTask, failed_search, run_search
from engine.service.run import run_scenario
from engine.service.sweep.runner import iter_sweep
from engine.world.facts import World

GPU_CAPEX_USD = 30_000.0      # the report's default price of one GPU (engine.service.report.assumptions)
AMORTISATION_YEARS = 3.0      # and the years it is written off over
CACHE_SIZE = 512
_CACHE: OrderedDict = OrderedDict()


class HeadroomError(ValueError):
    """A search that cannot run (no jobs in the window, a scenario that fails); the message says why."""


@dataclass(frozen=True)
class ScenarioHeadroom:
    """One scenario's figures (see the module docstring); per-seed values in seed order."""

    name: str
    load_headroom: float
    load_headroom_by_seed: tuple[float, ...]
    load_headroom_ratio: float
    ratio_by_seed: tuple[float, ...]
    fleet_gpus: float
    needed_gpus: float
    compaction_gpus: float
    saved_gpus: float
    compaction_usd_per_year: float
    saved_usd_per_year: float
    monotone: bool
    bounded: bool
    evaluations: int
    searches: tuple[SearchOutcome, ...]

    @property
    def load_headroom_min(self) -> float:
        return min(self.load_headroom_by_seed)

    @property
    def load_headroom_max(self) -> float:
        return max(self.load_headroom_by_seed)

    @property
    def limited_by(self) -> str:
        """What broke the level just above the load headroom (a workload class, or the guaranteed-
        inference misses): in each demand search, the failing point nearest above its answer; the
        commonest over the seeds, the first seed's on a tie ("" when no search failed)."""
        found = []
        for outcome in self.searches:
            if outcome.kind == DEMAND and outcome.search is not None:
                above = [p for p in outcome.search.points if not p.held and p.x > outcome.search.value]
                if above:
                    found.append(min(above, key=lambda p: p.x).worst)
        return max(found, key=found.count) if found else ""

    def kpis(self) -> dict[str, float]:
        """The headline KPIs of this scenario (units in the names)."""
        return {"load_headroom": self.load_headroom, "load_headroom_min": self.load_headroom_min,
                "load_headroom_max": self.load_headroom_max, "load_headroom_ratio": self.load_headroom_ratio,
                "load_headroom_ratio_min": min(self.ratio_by_seed), "load_headroom_ratio_max": max(self.ratio_by_seed),
                "needed_gpus": self.needed_gpus, "compaction_gpus": self.compaction_gpus,
                "compaction_usd_per_year": self.compaction_usd_per_year, "saved_gpus": self.saved_gpus,
                "saved_usd_per_year": self.saved_usd_per_year}


@dataclass(frozen=True)
class HeadroomReport:
    """Every scenario's headroom (the baseline first) at one service level."""

    level: service.ServiceLevel
    scenarios: tuple[ScenarioHeadroom, ...]
    seeds: tuple[int, ...]
    tolerance: float
    window_utc: tuple[pd.Timestamp, pd.Timestamp]
    jobs: int
    elapsed_s: float

    @property
    def baseline(self) -> ScenarioHeadroom:
        return self.scenarios[0]

    def of(self, name: str) -> ScenarioHeadroom:
        return next(s for s in self.scenarios if s.name == name)

    def table(self) -> pd.DataFrame:
        """One row per scenario: name and its KPIs."""
        return pd.DataFrame([{"scenario": s.name, **s.kpis()} for s in self.scenarios])


Progress = Callable[[int, int, SearchOutcome], None]


class Ledger(Protocol):
    """Finished searches kept beyond this process, by search_key (engine.service.headroom.ledger)."""

    def found(self, keys: list[str]) -> dict[str, SearchOutcome]: ...

    def keep(self, key: str, outcome: SearchOutcome) -> None: ...


def measure(baseline: Scenario, candidates: list[Scenario], jobs: pd.DataFrame, fleet: pd.DataFrame,
            world_tables: dict, *, seeds: int = DEFAULT_SEEDS, tolerance: float = DEFAULT_TOLERANCE,
            slo_file=None, workers: int | None = None, dask: str | None = None, progress: Progress | None = None,
            gpu_capex_usd: float = GPU_CAPEX_USD, amortisation_years: float = AMORTISATION_YEARS,
            baseline_result=None, ledger: Ledger | None = None) -> HeadroomReport:
    """See the module docstring. The scenarios come windowed (engine.service.compare.first_days); names differ.
    `baseline_result`: the baseline's run on the dataset as it is, when the caller has it already.
    `ledger`: where finished searches are kept beyond this process (engine.service.headroom.ledger)."""
    started = time.perf_counter()
    if seeds < 1:
        raise HeadroomError(f"seeds must be at least 1, got {seeds}")
    scenarios = [baseline, *candidates]
    names = [s.name for s in scenarios]
    if len(set(names)) != len(names):
        raise HeadroomError(f"scenario names must differ, got {', '.join(names)}")
    if baseline_result is None:
        world = World(world_tables["regions"], world_tables["prices"], world_tables["carbon"],
                      teams=world_tables.get("teams"))
        baseline_result = run_scenario(baseline, jobs, fleet, world)
    base_run = baseline_result
    if not len(base_run.jobs):
        raise HeadroomError("no jobs in the chosen window")
    level = service.from_file(slo_file, base_run) if slo_file else service.from_baseline(base_run)
    seed_list = tuple(baseline.seed + k for k in range(seeds))
    tasks = [SearchTask(0, kind, scenario, seed, level, tolerance)
             for scenario in scenarios
             for kind, seed in [*((DEMAND, s) for s in seed_list), (FLEET, scenario.seed)]]
    tasks = [replace(task, index=i) for i, task in enumerate(tasks)]
    outcomes = _outcomes(tasks, jobs, fleet, world_tables, workers, dask, progress, ledger)
    failed = [o for o in outcomes if o.error]
    if failed:
        raise HeadroomError(f"{failed[0].scenario}: {failed[0].error}")
    figures = _figures(scenarios, tasks, outcomes, jobs, fleet, gpu_capex_usd / amortisation_years)
    origin = pd.Timestamp(base_run.origin_utc)
    return HeadroomReport(level, figures, seed_list, tolerance,
                          (origin, origin + pd.Timedelta(seconds=float(base_run.window_s))), len(base_run.jobs),
                          time.perf_counter() - started)


def _outcomes(tasks, jobs, fleet, world_tables, workers, dask, progress, ledger) -> list[SearchOutcome]:
    """Every task's outcome in task order: cached or kept ones at once, the rest on the backend."""
    digest = _digest(jobs, fleet, world_tables)
    keys = [(digest, task.kind, repr(task.scenario), task.seed, repr(task.level), task.tolerance) for task in tasks]
    done = {i: replace(_CACHE[key], index=i) for i, key in enumerate(keys) if key in _CACHE}
    if ledger is not None:
        kept = ledger.found([search_key(keys[i]) for i in range(len(tasks)) if i not in done])
        done.update({i: replace(kept[search_key(key)], index=i) for i, key in enumerate(keys)
                     if i not in done and search_key(key) in kept})
    todo = [task for task in tasks if task.index not in done]
    count = 0
    for outcome in done.values():
        count += 1
        if progress is not None:
            progress(count, len(tasks), outcome)
    for outcome in iter_sweep(todo, (jobs, fleet, world_tables), workers=workers, dask=dask, task=run_search,
                              fail=failed_search):
        done[outcome.index] = outcome
        count += 1
        if outcome.error is None:
            _CACHE[keys[outcome.index]] = outcome
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
            if ledger is not None:
                ledger.keep(search_key(keys[outcome.index]), outcome)
        if progress is not None:
            progress(count, len(tasks), outcome)
    return [done[i] for i in range(len(tasks))]


def search_key(key: tuple) -> str:
    """The digest a search is kept under: sha256 of its inputs (tables' content, kind, scenario, seed,
    level, tolerance)."""
    return hashlib.sha256(repr(key).encode()).hexdigest()


def _digest(jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict) -> str:
    h = hashlib.sha256()
    for frame in (jobs, fleet, *(world_tables[k] for k in sorted(world_tables))):
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
        h.update(",".join(map(str, frame.columns)).encode())
    return h.hexdigest()


def _figures(scenarios, tasks, outcomes, jobs, fleet, usd_per_gpu_year) -> tuple[ScenarioHeadroom, ...]:
    by = {(t.scenario.name, t.kind, t.seed): o for t, o in zip(tasks, outcomes)}
    base_demand = None
    base_needed = None
    out = []
    for scenario in scenarios:
        demand = [o for (name, kind, _), o in by.items() if name == scenario.name and kind == DEMAND]
        fleet_search = by[(scenario.name, FLEET, scenario.seed)]
        values = tuple(o.search.value for o in demand)
        if base_demand is None:
            base_demand = values
        ratios = tuple(v / b if b > 0 else np.nan for v, b in zip(values, base_demand))
        today = float(scenario.apply(jobs.iloc[:0], fleet)[1]["gpus"].sum())
        needed = fleet_search.gpus.get(fleet_search.search.value, today)
        if base_needed is None:
            base_needed = needed
        searches = (*demand, fleet_search)
        out.append(ScenarioHeadroom(
            scenario.name, float(np.mean(values)), values, float(np.nanmean(ratios)), ratios, today, needed,
            today - needed, base_needed - needed, (today - needed) * usd_per_gpu_year,
            (base_needed - needed) * usd_per_gpu_year,
            all(o.search.monotone for o in searches), any(o.search.bounded for o in searches),
            sum(o.search.evaluations for o in searches), searches))
    return tuple(out)


@dataclass(frozen=True)
class HeadroomOptions:
    """How `with_headroom` searches (`measure`'s keyword arguments)."""

    seeds: int = DEFAULT_SEEDS
    tolerance: float = DEFAULT_TOLERANCE
    slo_file: str | None = None
    workers: int | None = None
    dask: str | None = None
    progress: Progress | None = None
    gpu_capex_usd: float = GPU_CAPEX_USD
    amortisation_years: float = AMORTISATION_YEARS
    ledger: Ledger | None = None


def with_headroom(runs: list[Run], jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict,
                  options: HeadroomOptions = HeadroomOptions()) -> tuple[list[Run], HeadroomReport]:
    """(the runs with their headroom KPIs appended and `headroom` set, the HeadroomReport): every run's
    load headroom and compaction at the first run's service level. Raises engine.service.compare.Unusable."""
    try:
        report = measure(runs[0].scenario, [r.scenario for r in runs[1:]], jobs, fleet, world_tables,
                         seeds=options.seeds, tolerance=options.tolerance, slo_file=options.slo_file,
                         workers=options.workers, dask=options.dask, progress=options.progress,
                         gpu_capex_usd=options.gpu_capex_usd, amortisation_years=options.amortisation_years,
                         baseline_result=runs[0].result, ledger=options.ledger)
    except (HeadroomError, service.ServiceLevelError) as exc:
        raise Unusable(str(exc)) from None
    return [replace(run, kpis={**run.kpis, **report.of(run.scenario.name).kpis()},
                    headroom=report.of(run.scenario.name)) for run in runs], report

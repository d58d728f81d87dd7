"""Run scenarios over one dataset's tables and compute every KPI `meridian compare` prints.

One code path for `meridian simulate`, `meridian compare` and the executive report
(engine.service.report), so that their numbers reconcile. Per scenario: the simulation result, its KPIs
(engine.analysis.runs.sim_metrics.kpis, with fairness, the resource matching of
engine.analysis.runs.matching when its jobs carry workload classes, and the home work waiting at a
working-day start of engine.analysis.runs.handoff.day_start_kpis), and, when the fleet is priced (any GPU type but
"cpu", or an SWF log's processors whose prices the dataset gives: see `priced`) or asked for, the cost, carbon and residency KPIs
(engine.analysis.runs.world_kpis.world_report on the fleet the scenario ran on and the dataset's world
tables with the scenario's region edits), and its stranded capacity: GPU-hours idle while a waiting
job could have used them, in the same region, elsewhere, or in fragments (engine.analysis.runs.stranded).
engine.service.headroom.measure.with_headroom adds each run's load headroom and fleet compaction against the
first run's service level.

`first_days` sets the window the dashboard's "first N days" uses: jobs submitted in
[first submit, first submit + N days), unless a scenario has its own [workload] window; with
[predictive_scaling] the N days start `weeks` whole weeks later (its forecast learns from those).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pandas as pd

from engine.analysis.runs.handoff import day_start_kpis
from engine.analysis.runs.matching import matching_kpis
from engine.analysis.runs.sim_metrics import kpis
from engine.analysis.runs.stranded import Stranded, stranded
from engine.core.units import CPU_TYPES
from engine.scenario.spec import Scenario
from engine.service.run import prepared, run_prepared
from engine.sim.output.result import SimulationResult
from engine.sim.state.workload import build_workload
from engine.world.facts import World

if TYPE_CHECKING:  # the cost and carbon modules load with the first priced run (`with_world`)
    from engine.analysis.runs.cost import CostAssumptions
    from engine.analysis.runs.world_kpis import WorldReport

WORLD_TABLES = ("prices", "regions", "carbon", "teams")


class Unusable(ValueError):
    """Input the commands or the report cannot use (an unreadable trace, an unknown dataset, a fleet or
    residency tag the world KPIs reject); the CLI prints it on stderr and exits with code 2."""


@dataclass(frozen=True)
class Run:
    """One scenario's run: kpis in `meridian compare`'s order and units (sim KPIs, the resource-matching
    KPIs when its jobs carry classes, the stranded-capacity KPIs, then the world KPIs when computed, world_kpis.KPI_KEYS, then the headroom KPIs when
    measured); world: the cost and carbon reports behind the world KPIs (None when not computed);
    fleet: the fleet it ran on (the dataset's with the scenario's edits); jobs: the jobs it ran (the
    dataset's with the scenario's workload edits and predictions); stranded: its stranded
    capacity over time and by region (None: not computed); headroom: its load headroom and
    compaction (None: not measured)."""

    scenario: Scenario
    kpis: dict[str, float]
    result: SimulationResult
    world: WorldReport | None
    fleet: pd.DataFrame
    stranded: Stranded | None = None
    headroom: object = field(default=None)
    jobs: pd.DataFrame | None = field(default=None, repr=False)  # the jobs it ran (the scenario's edits applied)


def first_days(scenarios: list[Scenario], jobs: pd.DataFrame, days: float | None) -> list[Scenario]:
    """The scenarios restricted to jobs submitted in the first `days` days (None or 0: unchanged);
    a scenario with its own start_utc or end_utc keeps it."""
    if not days or not len(jobs):
        return list(scenarios)
    first = pd.to_datetime(jobs["submit_utc"]).min()
    windowed = []
    for s in scenarios:
        start = s.window_start(jobs) or first  # predictive scaling's starts after the weeks it forecasts from
        windowed.append(s if s.start_utc is not None or s.end_utc is not None
                        else replace(s, start_utc=start, end_utc=start + pd.Timedelta(days=float(days))))
    return windowed


UNPRICED = ("a CPU log's processors have no prices unless the dataset gives them (a prices table for GPU type "
            "'cpu'), so its dollars are not computed; its capacity, waits and fairness are (meridian compare, headroom)")


def priced(fleet: pd.DataFrame, prices: pd.DataFrame | None = None) -> bool:
    """Whether the fleet's dollars are computed: it has GPUs that prices and power apply to, or it is a CPU
    log's processors (gpu_type "cpu") whose prices the dataset gives (`prices` rows for that type not marked
    assumed): a CPU log is never priced from the default price book."""
    types = fleet["gpu_type"].dropna().astype(str) if "gpu_type" in fleet else pd.Series([], dtype=str)
    if not len(fleet):
        return False
    if not set(types.str.lower()) <= CPU_TYPES:
        return True
    if prices is None or not len(prices) or "gpu_type" not in prices:
        return False
    given = prices[~prices["assumed"].fillna(False).astype(bool)] if "assumed" in prices else prices
    return bool(set(given["gpu_type"].dropna().astype(str).str.lower()) & CPU_TYPES)


def run_scenarios(scenarios: list[Scenario], jobs: pd.DataFrame, fleet: pd.DataFrame,
                  world_tables: dict[str, pd.DataFrame], assumptions: CostAssumptions | None = None,
                  world: bool | None = None, strand: bool = True,
                  progress: Callable[[int, int, Run, float], None] | None = None) -> tuple[list[Run], list[str]]:
    """([Run per scenario, in order], the defaults the world KPIs relied on, each once), one after the other
    in this process (engine.service.scenario_runs runs them in parallel).
    `world_tables`: {prices, regions, carbon, teams} (empty tables allowed); `world`: compute the cost,
    carbon and residency KPIs (None: when the fleet is priced); `strand`: the stranded capacity;
    `progress(done, total, run, seconds)` after each scenario.
    Raises Unusable when the world KPIs cannot be computed, ScenarioError for a scenario that cannot run."""
    tables = world_of(world_tables)
    costed = priced(fleet, world_tables.get("prices")) if world is None else world
    out = []
    for scenario in scenarios:
        began = time.perf_counter()
        run = run_one(scenario, jobs, fleet, tables, strand)
        if costed:
            run = with_world(run, fleet, tables, assumptions)
        out.append(run)
        if progress is not None:
            progress(len(out), len(scenarios), run, time.perf_counter() - began)
    return out, assumed_of(out)


def assumed_of(runs: list[Run]) -> list[str]:
    """The defaults the runs' world KPIs relied on, each once, in order."""
    return list(dict.fromkeys(note for run in runs if run.world is not None for note in run.world.assumed))


def world_of(world_tables: dict[str, pd.DataFrame]) -> World:
    """The World of a dataset's {prices, regions, carbon, teams} tables."""
    return World(world_tables["regions"], world_tables["prices"], world_tables["carbon"],
                 teams=world_tables.get("teams"))


def run_one(scenario: Scenario, jobs: pd.DataFrame, fleet: pd.DataFrame, tables: World,
            strand: bool = True) -> Run:
    """One scenario's run with its simulation, resource-matching and day-start KPIs and (`strand`) its stranded capacity; no world KPIs
    (`with_world` adds them)."""
    edited, ran_jobs, ran_fleet = prepared(scenario, jobs, fleet, tables)
    workload = build_workload(ran_jobs, ran_fleet)
    result = run_prepared(scenario, edited, workload)
    values = {**kpis(result), **matching_kpis(result, ran_fleet), **day_start_kpis(result, edited)}
    idle = stranded(result, workload, edited.regions) if strand else None
    if idle is not None:
        values = {**values, **idle.kpis()}
    return Run(scenario, values, result, None, ran_fleet, idle, jobs=ran_jobs)


def with_world(run: Run, fleet: pd.DataFrame, tables: World, assumptions: CostAssumptions | None = None) -> Run:
    """`run` with its cost, carbon and residency report and KPIs, on the jobs and fleet it ran on and
    the dataset's world (`tables`, on the dataset's `fleet`) with the scenario's region edits. Raises
    Unusable when they cannot be computed."""
    from engine.analysis.runs.world_kpis import world_report

    scenario = run.scenario
    edited = scenario.world(tables, fleet)
    try:
        report = world_report(run.result, run.fleet, edited.prices, edited.regions, edited.carbon, assumptions,
                              jobs=run.jobs, data=edited.data)
    except ValueError as exc:
        raise Unusable(f"{scenario.name}: cannot compute cost, carbon and residency: {exc}") from None
    return replace(run, kpis={**run.kpis, **report.kpis}, world=report)

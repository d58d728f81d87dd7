"""Run scenarios over one dataset's tables and compute every KPI `meridian compare` prints.

One code path for `meridian simulate`, `meridian compare` and the executive report
(engine.report), so that their numbers reconcile. Per scenario: the simulation result, the KPIs
(engine.analysis.sim_metrics.kpis, with fairness), `effective_capacity_ratio` (served GPU-hours /
the same under home-only FIFO: the default policies, the scenario's workload and fleet edits and
seed), and the cost, carbon and residency KPIs (engine.analysis.world_kpis.world_report on the fleet
the scenario ran on and the dataset's world tables with the scenario's region edits).

`first_days` sets the window the dashboard's "first N days" uses: jobs submitted in
[first submit, first submit + N days), unless a scenario has its own [workload] window.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pandas as pd

from engine.analysis.cost import CostAssumptions
from engine.analysis.sim_metrics import effective_capacity_ratio, kpis
from engine.analysis.world_kpis import WorldReport, world_report
from engine.predict.features import zones_of
from engine.scenario import DEFAULTS, Scenario
from engine.sim.result import SimulationResult
from engine.sim.world import World

WORLD_TABLES = ("prices", "regions", "carbon", "teams")


class Unusable(Exception):
    """Input the commands or the report cannot use (an unreadable trace, an unknown dataset, a fleet or
    residency tag the world KPIs reject); the CLI prints it on stderr and exits with code 2."""


@dataclass(frozen=True)
class Run:
    """One scenario's run: kpis in `meridian compare`'s order and units (sim KPIs, then
    effective_capacity_ratio, then world_kpis.KPI_KEYS); world: the cost and carbon reports behind
    the world KPIs; fleet: the fleet it ran on (the dataset's with the scenario's edits)."""

    scenario: Scenario
    kpis: dict[str, float]
    result: SimulationResult
    world: WorldReport
    fleet: pd.DataFrame


def first_days(scenarios: list[Scenario], jobs: pd.DataFrame, days: float | None) -> list[Scenario]:
    """The scenarios restricted to jobs submitted in the first `days` days (None or 0: unchanged);
    a scenario with its own start_utc or end_utc keeps it."""
    if not days or not len(jobs):
        return list(scenarios)
    start = pd.to_datetime(jobs["submit_utc"]).min()
    end = start + pd.Timedelta(days=float(days))
    return [s if s.start_utc is not None or s.end_utc is not None else replace(s, start_utc=start, end_utc=end)
            for s in scenarios]


def run_scenarios(scenarios: list[Scenario], jobs: pd.DataFrame, fleet: pd.DataFrame,
                  world_tables: dict[str, pd.DataFrame],
                  assumptions: CostAssumptions | None = None,
                  capacity_baseline: bool = True) -> tuple[list[Run], list[str]]:
    """([Run per scenario, in order], the defaults the world KPIs relied on, each once).
    `world_tables`: {prices, regions, carbon, teams} (empty tables allowed). capacity_baseline=False
    skips the home-only FIFO runs behind effective_capacity_ratio (then NaN), which can double the
    time of a scenario (sweeps and capacity plans leave it out). Raises Unusable when the world KPIs
    cannot be computed, ScenarioError for a scenario that cannot run."""
    tables = World(world_tables["regions"], world_tables["prices"], world_tables["carbon"],
                   teams=world_tables.get("teams"))
    out, assumed, baselines = [], {}, {}
    for scenario in scenarios:
        result = scenario.run(jobs, fleet, tables)
        values = kpis(result)
        ratio = _capacity_ratio(scenario, values, jobs, fleet, tables, baselines) if capacity_baseline else math.nan
        edited = scenario.world(tables, fleet)
        ran_jobs, ran_fleet = scenario.apply(jobs, fleet, zones_of(edited.regions))
        try:
            report = world_report(result, ran_fleet, edited.prices, edited.regions, edited.carbon, assumptions,
                                  jobs=ran_jobs)
        except ValueError as exc:
            raise Unusable(f"{scenario.name}: cannot compute cost, carbon and residency: {exc}") from None
        assumed.update(dict.fromkeys(report.assumed))
        out.append(Run(scenario, {**values, "effective_capacity_ratio": ratio, **report.kpis}, result, report,
                       ran_fleet))
    return out, list(assumed)


def _capacity_ratio(scenario: Scenario, values: dict, jobs, fleet, world: World, baselines: dict) -> float:
    """Served GPU-hours against home-only FIFO (the default policies) with the same workload and
    fleet edits and seed; the baseline runs once per distinct set of edits, and not at all when an
    earlier scenario was exactly that baseline (its KPIs are reused: the run is deterministic)."""
    baseline = replace(scenario, name="home-only FIFO", timer_s=0.0,
                       policies={family: (key, {}) for family, key in DEFAULTS.items()})
    key = (baseline.start_utc, baseline.end_utc, baseline.load_scale, baseline.growth, baseline.fleet_edits,
           baseline.seed)
    if baseline.policies == scenario.policies:
        if replace(scenario, name=baseline.name) == baseline:
            baselines.setdefault(key, values)
        return effective_capacity_ratio(values, values)
    if key not in baselines:
        baselines[key] = kpis(baseline.run(jobs, fleet, world))
    return effective_capacity_ratio(values, baselines[key])

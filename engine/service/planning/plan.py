"""The cheapest fleet that meets the SLOs: integer program, then simulation, then refinement.

1. Window: the last `days` of the data (by submit time), demand x `growth` (the scenario's seeded
   resampling, engine.scenario.demand). The simulation starts `warmup_days` earlier so queues
   are not empty at the start; jobs submitted in the warm-up load the fleet but are not scored.
2. Demand: the hour-of-week profile of GPUs busy per (region, gpu_type) if every job started at
   submit (engine.service.planning.demand), split into firm work and flexible work that may wait.
3. Integer program (engine.service.planning.fleet_milp): reserved, spot and on-demand nodes per pool at
   the least weekly cost that serve the profile x each pool's headroom (1 at first).
4. Check: the window replayed on that fleet under the plan's scenario (default FCFS + EASY +
   cheapest-tier placement, spot reclaimed at the plan's rate) and each class's p95 wait
   (censored: never-started jobs wait to the end, engine.analysis.runs.slo) set against its target.
5. Refine: every pool where some class's p95 wait misses its target gets headroom x (1 + step);
   back to 3. Once a fleet meets every target, up to TRIM_ROUNDS more rounds trim it: each pool's
   headroom goes to the geometric mean of the cheapest passing round's and the last failing
   round's (bisection), kept when it still passes. At most `max_iterations` rounds in all.
6. Compact: the cheapest fleet that met every target, every (region, GPU type, tier) pool scaled
   down alike in whole nodes, to the smallest that still meets every target under the plan's
   policies (the simulation-checked compaction of engine.service.headroom: bracketing, then bisection to
   COMPACT_TOLERANCE); a smaller fleet that passes is one more round, "compacted". The integer program
   knows nothing of routing or backfilling, so this is where a better policy gets its smaller fleet.
The cheapest fleet that met every target is the recommendation; its cost is what the simulation
paid (reserved every hour, spot and on-demand by use), annualised. Today's fleet runs the same
check for comparison.

The integer program is optimal for its demand model; the recommendation is the cheapest fleet the
simulation accepted along the headroom path and its compaction, not proven to be the cheapest such fleet.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.analysis.runs.slo import class_waits, slo_table
from engine.scenario.edits import edit_fleet, scaled_fleet_edits
from engine.scenario.spot import SpotModel
from engine.service.compare import run_scenarios
from engine.service.headroom.search import Point, largest_passing
from engine.service.planning.demand import demand_profile
from engine.service.planning.fleet_build import fleet_gpus, gpu_pools, planned_fleet, pool_options, tier_ordered
from engine.service.planning.fleet_milp import FleetPlan, optimise_fleet
from engine.service.planning.settings import PlanError, PlanSettings

DAY = pd.Timedelta(days=1)
TRIM_ROUNDS = 2  # rounds after the first fleet that meets every target, trimming its headroom
COMPACT_TOLERANCE = 0.02  # the compaction's bisection stops when its bracket is this narrow


@dataclass(frozen=True)
class FleetCheck:
    """One fleet replayed on the plan's window: slo (engine.analysis.runs.slo.slo_table), waits per class
    and per (home_region, gpu_type, workload_class) pool, the run's KPIs (sim and world, `meridian
    compare`'s keys) and the fleet's GPUs per pool and tier."""

    label: str
    fleet: pd.DataFrame
    gpus: pd.DataFrame
    slo: pd.DataFrame
    waits: pd.DataFrame
    pool_waits: pd.DataFrame
    kpis: dict

    @property
    def met(self) -> bool:
        return bool(self.slo["met"].all())

    @property
    def cost_usd_per_year(self) -> float:
        return float(self.kpis["cost_usd_per_year"])


@dataclass(frozen=True)
class Iteration:
    """One round: the headroom per pool it planned with, the integer program's plan and the check;
    `compacted`: for the compaction round, the factor its pools were scaled by (the plan is the
    round it compacted's)."""

    number: int
    headroom: dict
    plan: FleetPlan
    check: FleetCheck
    missed_pools: tuple
    compacted: float | None = None


@dataclass(frozen=True)
class PlanResult:
    growth: float
    start_utc: pd.Timestamp
    end_utc: pd.Timestamp
    settings: PlanSettings
    today: FleetCheck
    iterations: tuple[Iteration, ...]
    notes: tuple[str, ...]

    @property
    def recommended(self) -> Iteration | None:
        """The cheapest round (simulated cost) whose fleet met every target (None: none did)."""
        met = [it for it in self.iterations if it.check.met]
        return min(met, key=lambda it: it.check.cost_usd_per_year) if met else None

    @property
    def best(self) -> Iteration:
        """The recommendation, or else the last round (the closest the plan got)."""
        return self.recommended or self.iterations[-1]


def plan_window(jobs: pd.DataFrame, settings: PlanSettings) -> tuple[pd.Timestamp, pd.Timestamp]:
    """[start, end): the last `days` days of submits (end just after the last submit)."""
    submit = pd.to_datetime(jobs["submit_utc"])
    if not len(submit):
        raise PlanError("the dataset has no jobs to plan for")
    end = submit.max() + pd.Timedelta(seconds=1)
    return max(end - settings.days * DAY, submit.min()), end


def check_fleet(label: str, fleet: pd.DataFrame, jobs: pd.DataFrame, world_tables: dict, settings: PlanSettings,
                growth: float, start: pd.Timestamp, end: pd.Timestamp) -> FleetCheck:
    """Replay the plan window (with warm-up) on `fleet` and measure the SLOs."""
    scenario = check_scenario(settings, growth, start, end)
    (run,), _ = run_scenarios([scenario], jobs, fleet, world_tables, world=True, strand=False)
    result = run.result
    since = (start - pd.to_datetime(result.origin_utc)).total_seconds()
    ran = scenario.apply(jobs, fleet)[0]
    gpu_type = dict(zip(ran["job_id"].astype(str), ran["gpu_type"]))
    typed = replace(result, jobs=result.jobs.assign(gpu_type=result.jobs["job_id"].astype(str).map(gpu_type)))
    waits = class_waits(result, since_s=since)
    pool_waits = class_waits(typed, since_s=since, by=("home_region", "gpu_type", "workload_class"))
    return FleetCheck(label, fleet, fleet_gpus(fleet), slo_table(waits, settings.slo_h), waits, pool_waits, run.kpis)


def check_scenario(settings: PlanSettings, growth: float, start: pd.Timestamp, end: pd.Timestamp):
    """The plan's scenario on its window: warm-up included, demand x growth, spot reclaimed at the
    plan's rate unless the scenario sets its own [spot]."""
    scenario = settings.scenario
    spot = scenario.spot if scenario.spot.enabled else SpotModel(settings.spot_interruptions_per_node_hour)
    return replace(scenario, name=f"{scenario.name} x{growth:g}", start_utc=start - settings.warmup_days * DAY,
                   end_utc=end, growth=growth * scenario.growth, spot=spot)


def plan_fleet(jobs: pd.DataFrame, fleet: pd.DataFrame, world_tables: dict, settings: PlanSettings,
               growth: float, progress: Callable[[str], None] | None = None) -> PlanResult:
    """Run the planning loop (module docstring) on a dataset's jobs, fleet and world tables."""
    say = progress or (lambda message: None)
    if not growth > 0 or not math.isfinite(growth):
        raise PlanError(f"growth must be a positive number, got {growth!r}")
    start, end = plan_window(jobs, settings)
    pools = gpu_pools(fleet)
    profile = demand_profile(jobs, flexible_classes=settings.flexible_classes, growth=growth, start=start, end=end)
    planned = {(r, g) for r, g in zip(pools["region"], pools["gpu_type"])}
    notes = [f"no {g} nodes in {r} today: its jobs' demand is left out of the plan"
             for r, g in profile.pools if (r, g) not in planned]
    keep = [i for i, pool in enumerate(profile.pools) if pool in planned]
    profile = replace(profile, pools=tuple(profile.pools[i] for i in keep), firm=profile.firm[keep],
                      flexible=profile.flexible[keep])
    options = pool_options(pools, world_tables["prices"], settings, _widest_gangs(jobs, start, end))
    say(f"today's fleet: replaying {settings.days:g} days x{growth:g}")
    today = check_fleet("today", tier_ordered(fleet), jobs, world_tables, settings, growth, start, end)
    headroom = {pool: 1.0 for pool in planned}
    iterations = []
    low: dict = {}  # per pool, the headroom of the last round that missed (a trim stays above it)
    for number in range(1, settings.max_iterations + 1):
        try:
            plan = optimise_fleet(profile, options, max_defer_h=settings.defer_hours,
                                  headroom=np.array([headroom[(o.region, o.gpu_type)] for o in options]))
        except ValueError as exc:  # no fleet within the caps serves the demand
            raise PlanError(f"round {number}: {exc}") from None
        say(f"round {number}: integer program ${plan.weekly_cost_usd:,.0f}/week; simulating")
        check = check_fleet(f"round {number}", planned_fleet(pools, plan), jobs, world_tables, settings, growth,
                            start, end)
        missed = _missed(check, settings)
        iterations.append(Iteration(number, dict(headroom), plan, check, tuple(sorted(missed))))
        met = [it for it in iterations if it.check.met]
        if not met:
            low = dict(headroom)
            for pool in missed or planned:
                headroom[pool] *= 1.0 + settings.headroom_step
            continue
        if not low or number - met[0].number >= TRIM_ROUNDS:
            break
        if not check.met:
            low = {pool: max(low[pool], headroom[pool]) for pool in low}
        high = min(met, key=lambda it: it.check.cost_usd_per_year).headroom
        headroom = {pool: math.sqrt(low[pool] * high[pool]) if high[pool] > low[pool] else high[pool]
                    for pool in high}
    best = PlanResult(growth, start, end, settings, today, tuple(iterations), ()).recommended
    if best is not None:
        say(f"compacting round {best.number}'s fleet under the plan's policies")
        compacted = _compact(best, len(iterations) + 1, jobs, world_tables, settings, growth, start, end)
        if compacted is not None:
            iterations.append(compacted)
    return PlanResult(growth, start, end, settings, today, tuple(iterations), tuple(notes))


def _compact(best: Iteration, number: int, jobs: pd.DataFrame, world_tables: dict, settings: PlanSettings,
             growth: float, start: pd.Timestamp, end: pd.Timestamp) -> Iteration | None:
    """Step 6: `best`'s fleet scaled down to the smallest factor that still meets every target (None
    when no smaller fleet does)."""
    fleet = tier_ordered(best.check.fleet)
    checks: dict[tuple, FleetCheck] = {}

    def holds(x: float) -> Point:
        edits = scaled_fleet_edits(fleet, 1.0 / x)
        if edits not in checks:
            scaled = fleet
            for edit in edits:
                scaled = edit_fleet(scaled, edit)
            checks[edits] = check_fleet(f"round {number}", scaled, jobs, world_tables, settings, growth, start, end)
        return Point(x, x >= 1.0 and checks[edits].met)   # never larger than the fleet it compacts
    found = largest_passing(holds, COMPACT_TOLERANCE)
    edits = scaled_fleet_edits(fleet, 1.0 / found.value)
    if found.value <= 1.0 or not edits or not checks[edits].met:
        return None
    check = checks[edits]
    return Iteration(number, dict(best.headroom), best.plan, check, (), 1.0 / found.value)


def _missed(check: FleetCheck, settings: PlanSettings) -> set:
    """(region, gpu_type) pools where some class with a target waits longer than it at p95."""
    waits = check.pool_waits
    target = waits["workload_class"].map(settings.slo_h)
    late = waits[target.notna() & (waits["wait_p95_s"] / 3600.0 > target + 1e-9)]
    return set(zip(late["home_region"], late["gpu_type"]))


def _widest_gangs(jobs: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> dict[tuple[str, str], int]:
    """The most nodes any job in the window asks for, per (region, gpu_type)."""
    submit = pd.to_datetime(jobs["submit_utc"])
    window = jobs[(submit >= start) & (submit < end)]
    widest = window.groupby(["region", "gpu_type"])["nodes"].max()
    return {key: int(value) for key, value in widest.items()}

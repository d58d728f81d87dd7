"""Run one scenario on a dataset's tables: the code path of every simulation the product shows.

The scenario's [[region]] edits apply to the dataset's world, its workload and fleet edits and its
runtime predictions to the tables (engine.scenario.spec.Scenario.apply), and the simulator replays
the result (engine.sim.simulator). On a slice (the scenario's end_utc before the data's end) the
measurement window ends at the slice's end, compressed by load_scale like the submits: a slice's
utilisation and idle hours are measured over its own span, not up to its last job's end.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from engine.predict.features import zones_of
from engine.predict.scaling_fit import fitted_scaling
from engine.scenario.spec import Scenario
from engine.sim.output.result import SimulationResult
from engine.sim.simulator import simulate
from engine.sim.state.workload import Workload, build_workload
from engine.world.facts import World


def run_scenario(scenario: Scenario, jobs: pd.DataFrame, fleet: pd.DataFrame,
                 world: World | None = None) -> SimulationResult:
    """Simulate the dataset's jobs and fleet (schema tables) under `scenario`; `world` (the dataset's
    regions, prices and carbon tables, unedited) informs routing, with the scenario's region edits."""
    edited, jobs, fleet = prepared(scenario, jobs, fleet, world)
    return run_prepared(scenario, edited, build_workload(jobs, fleet))


def prepared(scenario: Scenario, jobs: pd.DataFrame, fleet: pd.DataFrame,
             world: World | None = None) -> tuple[World, pd.DataFrame, pd.DataFrame]:
    """(the world with the scenario's region edits, the jobs and the fleet it runs): what a run and the
    analysis of it (stranded capacity, cost) both need, prepared once (predictions and [experiments] jobs
    included)."""
    edited = scenario.world(world or World(), fleet)
    ran_jobs, ran_fleet = scenario.apply(jobs, fleet, zones_of(edited.regions))
    edited, ran_jobs = scenario.with_experiments(edited, jobs, ran_jobs, ran_fleet)
    if scenario.elastic.model == "fitted":  # serial fractions fitted from the dataset's jobs (engine.predict.scaling_fit)
        edited = replace(edited, elastic=fitted_scaling(scenario.elastic, jobs, scenario.window_start(jobs)))
    return scenario.scaled(edited, jobs, ran_jobs, ran_fleet), ran_jobs, ran_fleet


def run_prepared(scenario: Scenario, world: World, workload: Workload) -> SimulationResult:
    """Simulate `workload` (built from `prepared`'s tables) under `scenario` in its edited `world`."""
    return simulate(measured(scenario, workload), scenario.build_policies(), scenario.seed, scenario.name,
                    scenario.timer_s, world, scenario.sharing(world))


def measured(scenario: Scenario, workload: Workload) -> Workload:
    """`workload` with its measurement window ending at the scenario's end_utc (see the module docstring)."""
    if scenario.end_utc is None or not len(workload):
        return workload
    span = (scenario.end_utc - workload.origin_utc).total_seconds() / scenario.load_scale
    return replace(workload, observed_end_s=min(workload.observed_end_s, max(span, 0.0)))

"""What live follow-the-sun's hand-offs moved and cost in a run under [handoff]
(engine.sim.processes.handoff). A run without a `handoffs` table has none of these.

A move's lost GPU-hours are the checkpoint, transfer and restart seconds x the GPUs the job held
(the time the job made no progress because it moved); its moved GPU-hours are the work it had left
at the move x those GPUs (a job moved twice counts twice).

`day_start_wait` measures what the hand-off is for, on any run (with or without [handoff], so a
scenario can be compared with its baseline): the home work waiting at a working-day start, i.e. the
jobs waiting in their home region (region = home_region) at some working-day start of their calendar
inside the window (submitted at or before it, not started by it, not turned away), and their mean
wait before their first start (to giving up for a job withdrawn, to the window's end for one never
started), each job counted once. A job's calendar is its home region's (engine.world.day_starts),
or under `calendar = "team"` its team's when the teams table lists the team
(engine.world.team_hours). It needs the world's calendars, which `kpis` does not see: `day_start_kpis`
gives it as the catalogue's "day_start" KPIs, which engine.service.compare adds to every run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.held import horizon_s
from engine.core.reasons import REASONS, TURNED_AWAY
from engine.sim.output.result import SimulationResult
from engine.world.day_starts import DayStarts
from engine.world.facts import World
from engine.world.team_hours import job_calendars


def handoff_kpis(result: SimulationResult) -> dict[str, float]:
    """handoff_moves, handoff_jobs, handoff_lost_gpu_hours and handoff_moved_gpu_hours over the whole
    run; {} for a run without hand-offs turned on."""
    table = result.handoffs
    if table is None:
        return {}
    return {"handoff_moves": len(table), "handoff_jobs": int(table["row"].nunique()),
            "handoff_lost_gpu_hours": float(table["lost_gpu_hours"].sum()),
            "handoff_moved_gpu_hours": float(table["moved_gpu_hours"].sum())}


def day_start_wait(result: SimulationResult, world: World) -> tuple[int, float]:
    """(jobs, mean wait in seconds) of the home work waiting at a working-day start (the module
    docstring); (0, 0.0) when there is none, as other KPIs of no jobs are."""
    jobs = result.jobs
    horizon = horizon_s(result)
    names = sorted(set(jobs["home_region"].unique()))
    homes = pd.Categorical(jobs["home_region"], categories=names).codes.astype(np.int64)
    teams = jobs["team"] if "team" in jobs else [""] * len(jobs)
    calendars, index = _calendars(world, teams, homes, names)
    turned_away = [REASONS[code] for code in TURNED_AWAY]
    home = (jobs["region"] == jobs["home_region"]).to_numpy() & ~jobs["reason"].isin(turned_away).to_numpy()
    start = jobs["start_s"].fillna(np.inf).to_numpy(np.float64)
    submit = jobs["submit_s"].to_numpy(np.float64)
    counted = np.zeros(len(jobs), bool)
    origin = result.origin_utc.value / 1e9
    for k, calendar in enumerate(calendars):
        mine = np.flatnonzero(home & (index == k))
        starts = np.append(DayStarts(calendar, origin).between(0.0, horizon), np.inf)
        first = starts[np.searchsorted(starts, submit[mine], side="left")]  # the first day start at or after submit
        counted[mine[first < start[mine]]] = True
    if not counted.any():
        return 0, 0.0
    wait = jobs["wait_s"].to_numpy(np.float64)[counted]
    wait = np.where(np.isnan(wait), horizon - submit[counted], wait)  # never started: waits to W
    return int(counted.sum()), float(wait.mean())


def _calendars(world: World, teams, homes: np.ndarray, names: list[str]) -> tuple[list, np.ndarray]:
    """`job_calendars` of the jobs (their teams, their homes' indices into `names`), asked once per distinct
    (team, home) pair, in the order the jobs first name them, so the calendars come in the same order."""
    team_code, team_names = pd.factorize(teams, use_na_sentinel=False)
    pair_code, pairs = pd.factorize(team_code.astype(np.int64) * max(len(names), 1) + homes)
    calendars, index = job_calendars(world, [team_names[p // max(len(names), 1)] for p in pairs],
                                     [int(p % max(len(names), 1)) for p in pairs], names)
    return calendars, np.asarray(index, np.int64)[pair_code]


def day_start_kpis(result: SimulationResult, world: World) -> dict[str, float]:
    """day_start_wait_jobs and day_start_wait_mean_s (`day_start_wait`; the mean is 0 without such jobs)."""
    waiting, mean_s = day_start_wait(result, world)
    return {"day_start_wait_jobs": waiting, "day_start_wait_mean_s": mean_s}

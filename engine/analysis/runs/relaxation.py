"""What the router's constraint relaxation cost (engine.policies.constraints): KPIs of a run whose
routing policy relaxes soft constraints, and its relaxations per constraint and per team for the
What-if page. A run without a `relaxations` table has none of these.

A job is *relaxed* when at least one soft constraint was relaxed for it; a job *moved* when it ran (or
waits) outside its home region.
"""
from __future__ import annotations

import pandas as pd

from engine.core.reasons import SOFT_CONSTRAINTS
from engine.policies.constraints import COST_UNITS
from engine.sim.output.result import SimulationResult


def kpi_key(constraint: str) -> str:
    """The KPI counting the jobs that had `constraint` relaxed: relaxed_<name>_jobs."""
    return f"relaxed_{constraint.replace('-', '_')}_jobs"


def relaxation_kpis(result: SimulationResult) -> dict[str, float]:
    """jobs_relaxed, relaxations, the jobs relaxed per constraint, jobs_moved_region and the egress
    dollars of the data-locality relaxations; {} for a run that relaxes nothing."""
    table = result.relaxations
    if table is None:
        return {}
    jobs = result.jobs
    values = {"jobs_relaxed": int(table["row"].nunique()), "relaxations": len(table)}
    for constraint in SOFT_CONSTRAINTS:
        values[kpi_key(constraint)] = int(table.loc[table["constraint"] == constraint, "row"].nunique())
    values["jobs_moved_region"] = int((jobs["region"] != jobs["home_region"]).sum())
    values["relaxed_egress_usd"] = float(table.loc[table["constraint"] == "data-locality", "cost"].sum())
    return values


def by_constraint(result: SimulationResult) -> pd.DataFrame:
    """One row per soft constraint (all five, in SOFT_CONSTRAINTS order): constraint, jobs (relaxed for
    it), share (of the run's jobs), cost (summed over the known costs), cost_unit, mean_cost (per job
    relaxed with a known cost), unknown (relaxations whose cost is unknown: a latency without a pair, a
    service without a runtime request)."""
    table = result.relaxations if result.relaxations is not None else _empty()
    rows = []
    for constraint in SOFT_CONSTRAINTS:
        mine = table[table["constraint"] == constraint]
        jobs, cost, known = int(mine["row"].nunique()), float(mine["cost"].sum()), int(mine["cost"].notna().sum())
        rows.append({"constraint": constraint, "jobs": jobs, "share": jobs / max(len(result.jobs), 1),
                     "cost": cost, "cost_unit": COST_UNITS[constraint], "mean_cost": cost / known if known else 0.0,
                     "unknown": len(mine) - known})
    return pd.DataFrame(rows)


def by_team(result: SimulationResult) -> pd.DataFrame:
    """One row per team with jobs in the run: team, jobs, jobs_relaxed, share_relaxed, then the jobs relaxed
    per constraint (one column each, named as the constraint), and jobs_moved_region; sorted by jobs
    relaxed, most first, then team."""
    jobs = result.jobs
    table = result.relaxations if result.relaxations is not None else _empty()
    teams = jobs.groupby("team", sort=True).size().rename("jobs").to_frame()
    teams["jobs_relaxed"] = table.groupby("team")["row"].nunique().reindex(teams.index, fill_value=0)
    teams["share_relaxed"] = teams["jobs_relaxed"] / teams["jobs"]
    for constraint in SOFT_CONSTRAINTS:
        mine = table[table["constraint"] == constraint]
        teams[constraint] = mine.groupby("team")["row"].nunique().reindex(teams.index, fill_value=0)
    moved = jobs["region"] != jobs["home_region"]
    teams["jobs_moved_region"] = moved.groupby(jobs["team"]).sum().reindex(teams.index, fill_value=0)
    teams = teams.reset_index().astype({c: "int64" for c in ("jobs_relaxed", *SOFT_CONSTRAINTS, "jobs_moved_region")})
    return teams.sort_values(["jobs_relaxed", "team"], ascending=[False, True], kind="stable").reset_index(drop=True)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({"row": pd.Series([], dtype="int64"), "team": pd.Series([], dtype="str"),
                         "constraint": pd.Series([], dtype="str"), "cost": pd.Series([], dtype="float64")})

"""The jobs of a scenario's [experiments] table, sized from the forecast idle capacity (engine.scenario.experiments
says how), and the plan a run reports against (`ExperimentPlan`: each team's gap, what was planned to fill it).

`GAP_COLUMNS`, one row per team and GPU type it sized for: team, region, gpu_type, off_hours (hours of the
window the team is off work), gap_gpu_hours (its share of the forecast idle GPU-hours of the type in them),
planned_gpu_hours (the GPUs x duration_h of its jobs), jobs (experiment jobs generated) and multi_node_jobs
(those of them that take 2 or more whole nodes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from engine.core.errors import ScenarioError
from engine.predict.demand_forecast import WEEK_H, hourly_demand, seasonal_forecast
from engine.scenario.experiments import Experiments
from engine.world.calendar import Calendar

GAP_COLUMNS = ["team", "region", "gpu_type", "off_hours", "gap_gpu_hours", "planned_gpu_hours", "jobs", "multi_node_jobs"]
JITTER_S = 300.0  # a job's submit: its hour's start plus up to 5 minutes
HOUR = pd.Timedelta(hours=1)


@dataclass(frozen=True)
class ExperimentPlan:
    """What [experiments] planned for the window [start_utc, end_utc): `gaps` (GAP_COLUMNS) and the generated
    job ids with each one's team and GPU type."""

    start_utc: pd.Timestamp
    end_utc: pd.Timestamp
    gaps: pd.DataFrame
    job_ids: tuple[str, ...]
    job_teams: tuple[str, ...]
    job_types: tuple[str, ...]


def add_experiments(spec: Experiments, world, history: pd.DataFrame, jobs: pd.DataFrame, fleet: pd.DataFrame,
                    start: pd.Timestamp, end: pd.Timestamp | None, seed: int, name: str) -> tuple[object, pd.DataFrame]:
    """(`world` (engine.world.facts.World) with the plan, `jobs` (the ones the run replays) with the experiment
    jobs) for the window from `start` to `end` (None: the last submit of `jobs`)."""
    if end is None:
        end = pd.to_datetime(jobs["submit_utc"]).max() if len(jobs) else start
    added, plan = plan_experiments(spec, history, fleet, world.teams, start, end, seed, name)
    return replace(world, experiments=plan), pd.concat([jobs, added], ignore_index=True) if len(added) else jobs


def plan_experiments(spec: Experiments, history: pd.DataFrame, fleet: pd.DataFrame, teams: pd.DataFrame | None,
                     start: pd.Timestamp, end: pd.Timestamp, seed: int, name: str) -> tuple[pd.DataFrame, ExperimentPlan]:
    """(the experiment jobs as jobs-table rows, the plan) for the window [start, end) (see
    engine.scenario.experiments). `history`: the dataset's jobs (those before `start` are the forecast's);
    `fleet`: the one the run uses; `teams`: the dataset's teams table."""
    settings = spec.settings
    start = start.floor("h")
    hours = max(int(math.ceil((end - start) / HOUR)), 0)
    submits = pd.to_datetime(history["submit_utc"])
    first = submits.min() if len(history) else start
    weeks = int((start - first) // pd.Timedelta(hours=WEEK_H)) if first < start else 0
    if weeks < 1:
        raise ScenarioError(f"{name}: [experiments] forecasts idle capacity from the weeks before [workload] start_utc; "
                            f"the data has less than 7 days before {start:%Y-%m-%d %H:%M}")
    homes = _homes(spec.teams, teams, fleet, name, spec.sizing == "per-type")
    before = history[submits < start]
    since = start - pd.Timedelta(hours=WEEK_H * weeks)
    instants = ((pd.date_range(start, periods=hours, freq="h") - pd.Timestamp(0)) / pd.Timedelta(seconds=1)).to_numpy(
        np.float64)  # epoch seconds of each hour's start
    sharing = pd.Series([region for region, _, _ in homes.values()]).value_counts()
    idle: dict[tuple, np.ndarray] = {}
    rng = np.random.default_rng(seed)
    rows, gaps, ids, owners, types = [], [], [], [], []
    span = int(math.ceil(settings.duration_h - 1e-9))
    for team in spec.teams:
        region, gpu_types, calendar = homes[team]
        off = ~calendar.at_work(instants) if hours else np.zeros(0, bool)
        k = 0
        for gpu_type in gpu_types:
            if (region, gpu_type) not in idle:
                idle[region, gpu_type] = _idle(before, fleet, region, gpu_type, since, start, hours, settings)
            share = idle[region, gpu_type] / int(sharing[region])
            node = _node(fleet, region, gpu_type)
            planned = _fill(off, settings.fill_share * share, span, settings, float(node["gpus"]))
            for h, nodes, gpus in planned:
                k += 1
                ids.append(f"exp-{team}-{k:05d}")
                owners.append(team)
                types.append(gpu_type)
                submit = start + pd.Timedelta(hours=h) + pd.Timedelta(seconds=float(rng.uniform(0.0, JITTER_S)))
                rows.append(_row(ids[-1], team, str(rng.choice(spec.kinds)), submit, region, gpu_type, settings, node,
                                 nodes, gpus))
            gaps.append([team, region, gpu_type, int(off.sum()), float(share[off].sum()),
                         sum(g for _, _, g in planned) * settings.duration_h, len(planned),
                         sum(n > 1 for _, n, _ in planned)])
    plan = ExperimentPlan(start, end, pd.DataFrame(gaps, columns=GAP_COLUMNS), tuple(ids), tuple(owners), tuple(types))
    return pd.DataFrame(rows), plan


def _fill(off: np.ndarray, cap: np.ndarray, span: int, settings, node_gpus: float) -> list[tuple[int, int, float]]:
    """(hour, nodes, GPUs) of each job planned under `cap` (engine.scenario.experiments: multi-node batches of
    whole nodes of `node_gpus` first, with max_nodes >= 2, then single-node jobs of `gpus`)."""
    used, out = np.zeros(len(cap)), []
    for h in range(len(cap) - span + 1):
        if not off[h:h + span].all():
            continue
        room = (cap[h:h + span] - used[h:h + span]).min()
        while settings.max_nodes >= 2 and node_gpus > 0 and room >= 2 * node_gpus - 1e-9:
            nodes = min(settings.max_nodes, int(np.floor(room / node_gpus + 1e-9)))
            out.append((h, nodes, nodes * node_gpus))
            used[h:h + span] += nodes * node_gpus
            room -= nodes * node_gpus
        count = int(np.floor(room / settings.gpus + 1e-9)) if settings.gpus <= node_gpus else 0
        if count > 0:
            used[h:h + span] += count * settings.gpus
            out += [(h, 1, float(settings.gpus))] * count
    return out


def _homes(names: tuple[str, ...], teams: pd.DataFrame | None, fleet: pd.DataFrame,
           name: str, per_type: bool = False) -> dict[str, tuple[str, list[str], Calendar]]:
    """team -> (home region, its GPU types: the one with the most GPUs installed there, or with `per_type` every
    one, most GPUs first, its calendar)."""
    table = teams.set_index(teams["team"].astype(str)) if teams is not None and "team" in teams else pd.DataFrame()
    out = {}
    for team in names:
        if team not in table.index or "home_region" not in table or pd.isna(table.at[team, "home_region"]):
            raise ScenarioError(f"{name}: [experiments] team {team!r} has no home_region in the dataset's teams table"
                                f"{'; its teams: ' + ', '.join(sorted(table.index)) if len(table) else ''}")
        region = str(table.at[team, "home_region"])
        there = fleet[fleet["region"].astype(str) == region]
        if there.empty:
            raise ScenarioError(f"{name}: [experiments] team {team!r}'s home region {region!r} is not in the fleet")
        by_type = there.groupby(there["gpu_type"].astype(str))["gpus"].sum()
        ranked = sorted(by_type.index, key=lambda t: (-by_type[t], t))
        out[team] = (region, ranked if per_type else ranked[:1],
                     Calendar.from_team(table.loc[team].to_dict() | {"team": team}))
    return out


def _idle(before: pd.DataFrame, fleet: pd.DataFrame, region: str, gpu_type: str, since: pd.Timestamp,
          start: pd.Timestamp, hours: int, settings) -> np.ndarray:
    """Forecast idle GPUs of `gpu_type` in `region` per hour from `start`: installed - forecast demand, >= 0."""
    mine = before[(before["region"].astype(str) == region) & (before["gpu_type"].astype(str) == gpu_type)]
    forecast = seasonal_forecast(hourly_demand(mine, since, start), hours, settings.weeks, settings.demand_quantile)
    installed = float(fleet.loc[(fleet["region"].astype(str) == region) & (fleet["gpu_type"].astype(str) == gpu_type),
                                "gpus"].sum())
    return np.maximum(installed - forecast, 0.0)


def _node(fleet: pd.DataFrame, region: str, gpu_type: str) -> pd.Series:
    """The first node of `gpu_type` in `region` (its GPUs, CPUs and memory size the experiment jobs)."""
    return fleet[(fleet["region"].astype(str) == region) & (fleet["gpu_type"].astype(str) == gpu_type)].iloc[0]


def _row(job_id: str, team: str, kind: str, submit: pd.Timestamp, region: str, gpu_type: str, settings,
         node: pd.Series, nodes: int, gpus: float) -> dict:
    """One experiment job as a jobs-table row; CPUs and memory per GPU those of `node`."""
    per_gpu = gpus / max(float(node["gpus"]), 1.0)
    run = pd.Timedelta(hours=settings.duration_h)
    return {"job_id": job_id, "user_name": f"{team}-experiments", "team": team, "project": f"{team}-experiments",
            "workload_class": kind, "priority": 0.0, "submit_utc": submit, "start_utc": submit, "end_utc": submit + run,
            "gpus": float(gpus), "gpu_type": gpu_type, "cpus": float(node.get("cpus", 0.0)) * per_gpu,
            "memory_gib": float(node.get("memory_gib", 0.0)) * per_gpu, "nodes": nodes, "region": region,
            "status": "completed", "requested_runtime_s": run.total_seconds()}

"""Series and lookups over a `SimulationResult` for comparing scenarios (What-if page, reports).

region_series: each region's busy and idle GPUs and queue length sampled on a regular grid of the
run (the region's last timeline sample at or before a grid point).
fleet_series: the same summed over regions, with utilisation (0-1).
wait_ecdf: the empirical CDF of waits (seconds) of started jobs per workload class.
why_waited: one job's submit, start, wait, reason and its decisions from the log.
kpi_comparison, group_comparison: KPIs and per-group measures of several runs side by side.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.sim_metrics import GROUP_COLUMNS, by_group
from engine.sim.output.result import SimulationResult

DEFAULT_POINTS = 600


def region_series(result: SimulationResult, points: int = DEFAULT_POINTS) -> pd.DataFrame:
    """time_s, time_utc, region, busy_gpus, idle_gpus (region capacity - busy), queue_length: each
    region's latest timeline sample at `points` evenly spaced instants from 0 to the last timeline
    sample (before its first sample, or without any, a region is idle with an empty queue); every
    region of the timeline or of the capacity, sorted by region, then time."""
    timeline = result.timeline
    columns = ["time_s", "time_utc", "region", "busy_gpus", "idle_gpus", "queue_length"]
    if timeline.empty:
        return pd.DataFrame(columns=columns)
    grid = np.linspace(0.0, float(timeline["time_s"].max()), max(2, points))
    samples = {region: rows.sort_values("time_s", kind="stable") for region, rows in timeline.groupby("region")}
    frames = []
    for region in sorted(set(samples) | set(result.capacity_gpus)):
        rows = samples.get(region, timeline.iloc[:0])
        at = np.searchsorted(rows["time_s"].to_numpy(np.float64), grid, side="right") - 1
        seen = at >= 0
        busy, queue = np.zeros(len(grid)), np.zeros(len(grid))
        busy[seen] = rows["busy_gpus"].to_numpy(np.float64)[at[seen]]
        queue[seen] = rows["queue_length"].to_numpy(np.float64)[at[seen]]
        capacity = float(result.capacity_gpus.get(region, 0.0))
        frames.append(pd.DataFrame({"time_s": grid, "region": region, "busy_gpus": busy,
                                    "idle_gpus": capacity - busy, "queue_length": queue}))
    series = pd.concat(frames, ignore_index=True)
    series.insert(1, "time_utc", result.origin_utc + pd.to_timedelta(series["time_s"], unit="s"))
    return series[columns]


def fleet_series(result: SimulationResult, points: int = DEFAULT_POINTS) -> pd.DataFrame:
    """time_s, time_utc, busy_gpus, idle_gpus (fleet GPUs - busy), utilization (busy / fleet GPUs,
    0-1), queue_length: region_series summed over regions at each instant."""
    columns = ["time_s", "time_utc", "busy_gpus", "idle_gpus", "utilization", "queue_length"]
    regions = region_series(result, points)
    if regions.empty:
        return pd.DataFrame(columns=columns)
    fleet = regions.groupby(["time_s", "time_utc"], sort=True)[["busy_gpus", "queue_length"]].sum().reset_index()
    capacity = float(sum(result.capacity_gpus.values()))
    fleet["idle_gpus"] = capacity - fleet["busy_gpus"]
    fleet["utilization"] = fleet["busy_gpus"] / capacity if capacity > 0 else 0.0
    return fleet[columns]


def wait_ecdf(result: SimulationResult, column: str = "workload_class") -> pd.DataFrame:
    """workload_class (or `column`), wait_s, fraction: the share of the class's started jobs that
    waited at most wait_s, one row per distinct wait (sorted by class, then wait)."""
    started = result.jobs[result.jobs["started"]]
    frames = []
    for key, group in started.groupby(column, sort=True):
        waits = np.sort(group["wait_s"].to_numpy(np.float64))
        values, counts = np.unique(waits, return_counts=True)
        frames.append(pd.DataFrame({column: key, "wait_s": values, "fraction": np.cumsum(counts) / len(waits)}))
    if not frames:
        return pd.DataFrame(columns=[column, "wait_s", "fraction"])
    return pd.concat(frames, ignore_index=True)


def longest_waits(result: SimulationResult, limit: int = 500) -> list[str]:
    """Job ids, longest wait first (jobs that never ran first of all), then by job id."""
    jobs = result.jobs.assign(_wait=result.jobs["wait_s"].fillna(np.inf))
    jobs = jobs.sort_values(["_wait", "job_id"], ascending=[False, True], kind="stable")
    return [str(j) for j in jobs["job_id"].head(limit)]


def why_waited(result: SimulationResult, job_id: str) -> dict | None:
    """{job_id, region, workload_class, gpus, submit_utc, start_utc, wait_s, reason, decisions} for
    `job_id` (None if the run has no such job); decisions: time_utc, decision, sorted by time."""
    jobs = result.jobs[result.jobs["job_id"].astype(str) == str(job_id)]
    if jobs.empty:
        return None
    job = jobs.iloc[0]
    log = result.decisions[result.decisions["job_id"].astype(str) == str(job_id)]
    log = log.sort_values("time_s", kind="stable")
    decisions = pd.DataFrame({"time_utc": result.origin_utc + pd.to_timedelta(log["time_s"].to_numpy(), unit="s"),
                              "decision": log["decision"].to_numpy()})

    def utc(seconds):
        return None if pd.isna(seconds) else result.origin_utc + pd.Timedelta(seconds=float(seconds))

    return {"job_id": str(job["job_id"]), "region": job["region"], "workload_class": job["workload_class"],
            "gpus": float(job["gpus"]), "submit_utc": utc(job["submit_s"]), "start_utc": utc(job["start_s"]),
            "wait_s": None if pd.isna(job["wait_s"]) else float(job["wait_s"]), "reason": job["reason"],
            "decisions": decisions}


def kpi_comparison(runs: list[tuple[str, dict[str, float]]]) -> pd.DataFrame:
    """KPIs side by side, the first run the baseline: index kpi (every KPI of any run, in order of
    first appearance); a column per scenario with its value and, for every other scenario,
    "<name> Δ" (value - baseline) and "<name> Δ%" (relative, percent; NaN where the baseline is 0
    or lacks the KPI)."""
    if not runs:
        return pd.DataFrame()
    keys = list(dict.fromkeys(key for _, values in runs for key in values))
    base_name, base = runs[0]
    table = pd.DataFrame({base_name: pd.Series(base, dtype=np.float64).reindex(keys)})
    for name, values in runs[1:]:
        value = pd.Series(values, dtype=np.float64).reindex(table.index)
        delta = value - table[base_name]
        table[name] = value
        table[f"{name} Δ"] = delta
        table[f"{name} Δ%"] = np.where(table[base_name] != 0, 100 * delta / table[base_name].where(
            table[base_name] != 0), np.nan)
    table.index.name = "kpi"
    return table


def group_comparison(runs: list[tuple[str, SimulationResult]], column: str = "workload_class") -> pd.DataFrame:
    """sim_metrics.by_group of every run stacked: `column`, scenario, then the group measures; rows
    by group value, then in run order (so a group's scenarios sit together)."""
    frames = [by_group(result, column).assign(scenario=name, _run=i) for i, (name, result) in enumerate(runs)]
    if not frames:
        return pd.DataFrame(columns=[column, "scenario", *GROUP_COLUMNS])
    table = pd.concat(frames, ignore_index=True).sort_values([column, "_run"], kind="stable")
    return table[[column, "scenario", *GROUP_COLUMNS]].reset_index(drop=True)

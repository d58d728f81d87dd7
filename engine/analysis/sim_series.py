"""Series and lookups over a `SimulationResult` for comparing scenarios (What-if page, reports).

fleet_series: the whole fleet's busy GPUs, utilisation (0-1) and queue length sampled on a regular
grid of the run (each region's last sample before a grid point, summed over regions).
wait_ecdf: the empirical CDF of waits (seconds) of started jobs per workload class.
why_waited: one job's submit, start, wait, reason and its decisions from the log.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.result import SimulationResult

DEFAULT_POINTS = 600


def fleet_series(result: SimulationResult, points: int = DEFAULT_POINTS) -> pd.DataFrame:
    """time_s, time_utc, busy_gpus, utilization (busy / fleet GPUs, 0-1), queue_length at `points`
    evenly spaced instants from 0 to the last timeline sample."""
    timeline = result.timeline
    columns = ["time_s", "time_utc", "busy_gpus", "utilization", "queue_length"]
    if timeline.empty:
        return pd.DataFrame(columns=columns)
    grid = np.linspace(0.0, float(timeline["time_s"].max()), max(2, points))
    busy = np.zeros(len(grid))
    queue = np.zeros(len(grid))
    for _, rows in timeline.groupby("region", sort=True):
        rows = rows.sort_values("time_s", kind="stable")
        at = np.searchsorted(rows["time_s"].to_numpy(np.float64), grid, side="right") - 1
        seen = at >= 0
        busy[seen] += rows["busy_gpus"].to_numpy(np.float64)[at[seen]]
        queue[seen] += rows["queue_length"].to_numpy(np.float64)[at[seen]]
    capacity = float(sum(result.capacity_gpus.values()))
    return pd.DataFrame({
        "time_s": grid, "time_utc": result.origin_utc + pd.to_timedelta(grid, unit="s"), "busy_gpus": busy,
        "utilization": busy / capacity if capacity > 0 else np.zeros(len(grid)), "queue_length": queue,
    })


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
    """KPIs side by side, the first run the baseline: index kpi; a column per scenario with its value
    and, for every other scenario, "<name> Δ" (value - baseline) and "<name> Δ%" (relative, percent;
    NaN where the baseline is 0)."""
    if not runs:
        return pd.DataFrame()
    base_name, base = runs[0]
    table = pd.DataFrame({base_name: pd.Series(base, dtype=np.float64)})
    for name, values in runs[1:]:
        value = pd.Series(values, dtype=np.float64).reindex(table.index)
        delta = value - table[base_name]
        table[name] = value
        table[f"{name} Δ"] = delta
        table[f"{name} Δ%"] = np.where(table[base_name] != 0, 100 * delta / table[base_name].where(
            table[base_name] != 0), np.nan)
    table.index.name = "kpi"
    return table

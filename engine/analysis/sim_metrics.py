"""KPIs of a `SimulationResult` (engine.sim.result).

Utilisation is allocation-based: GPU-seconds held by jobs inside the measurement window / (fleet
GPUs x window), 0-1. The window runs from the first submit (time 0) to the input data's observed
end (`SimulationResult.window_s`, the span the Overview measures); idle GPU-hours are over the same
window. Without a window (window_s = 0) it ends at the last job end. `makespan_s` stays the time
of the last job end, which may lie past the window. Waits count
started jobs only, in seconds. Bounded slowdown per finished job is
max(1, (wait + run) / max(run, tau_s)) with tau_s = 10 s by default. Throughput is finished jobs
per hour of makespan.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.result import SimulationResult

DEFAULT_TAU_S = 10.0


def _quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q)) if len(values) else 0.0


def wait_stats(wait_s: np.ndarray) -> dict[str, float]:
    """Mean, p50, p95 and p99 of waits, seconds (0 for no jobs)."""
    return {"wait_mean_s": float(wait_s.mean()) if len(wait_s) else 0.0,
            "wait_p50_s": _quantile(wait_s, 0.5), "wait_p95_s": _quantile(wait_s, 0.95),
            "wait_p99_s": _quantile(wait_s, 0.99)}


def kpis(result: SimulationResult, tau_s: float = DEFAULT_TAU_S) -> dict[str, float]:
    """The KPI dictionary `meridian simulate --json` prints; units in the names. utilization and
    idle_gpu_hours are over the measurement window [0, window_s]; the rest over all finished jobs."""
    jobs = result.jobs
    done = jobs[jobs["started"] & jobs["end_s"].notna()]
    wait, run = done["wait_s"].to_numpy(np.float64), done["run_s"].to_numpy(np.float64)
    makespan = float(done["end_s"].max()) if len(done) else 0.0
    capacity = float(sum(result.capacity_gpus.values()))
    window = result.window_s if result.window_s > 0 else makespan
    inside = np.clip(done["end_s"].to_numpy(np.float64), 0.0, window) - \
        np.clip(done["start_s"].to_numpy(np.float64), 0.0, window)
    busy_gpu_s = float((done["gpus_allocated"].to_numpy(np.float64) * inside).sum())
    available_gpu_s = capacity * window
    slowdown = np.maximum(1.0, (wait + run) / np.maximum(run, tau_s)) if len(done) else np.zeros(0)
    failed = done["failed"].to_numpy(bool)
    return {
        "utilization": busy_gpu_s / available_gpu_s if available_gpu_s > 0 else 0.0,
        "idle_gpu_hours": (available_gpu_s - busy_gpu_s) / 3600.0,
        **wait_stats(wait),
        "avg_bounded_slowdown": float(slowdown.mean()) if len(slowdown) else 0.0,
        "makespan_s": makespan,
        "jobs_completed": int((~failed).sum()),
        "jobs_failed": int(failed.sum()),
        "jobs_not_run": int((~jobs["started"]).sum()),
        "throughput_jobs_per_hour": len(done) / (makespan / 3600.0) if makespan > 0 else 0.0,
    }


def waits_by(result: SimulationResult, column: str = "workload_class") -> pd.DataFrame:
    """Wait statistics per value of `column` (workload_class or team): jobs, mean, p50, p95, p99 s."""
    started = result.jobs[result.jobs["started"]]
    rows = [{column: key, "jobs": len(group), **wait_stats(group["wait_s"].to_numpy(np.float64))}
            for key, group in started.groupby(column, sort=True)]
    return pd.DataFrame(rows, columns=[column, "jobs", "wait_mean_s", "wait_p50_s", "wait_p95_s", "wait_p99_s"])


def wait_reasons(result: SimulationResult) -> pd.DataFrame:
    """How many jobs ended up with each reason (why they waited or never ran), most common first."""
    counts = result.jobs["reason"].value_counts()
    frame = counts.rename_axis("reason").reset_index(name="jobs")
    return frame.sort_values(["jobs", "reason"], ascending=[False, True], kind="stable").reset_index(drop=True)

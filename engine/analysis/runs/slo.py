"""Queue waits against service-level objectives (SLOs), the measure capacity planning sizes a fleet by.

`class_waits` gives per-group wait statistics in which a job that never started counts as waiting
until the run's end (the later of the measurement window's end and the last job end): censored
waits, so that a fleet too small to start some work can never look fast. `since_s` leaves out
jobs submitted before it (a warm-up period whose jobs still load the fleet but are not scored).

An SLO is a target for the p95 wait of a workload class, in hours; `slo_table` sets measured waits
against targets: margin = target - measured (negative: missed).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.held import horizon_s
from engine.sim.output.result import SimulationResult

WAIT_COLUMNS = ("jobs", "started", "wait_mean_s", "wait_p50_s", "wait_p95_s", "wait_p99_s")


def censored_waits(result: SimulationResult) -> np.ndarray:
    """Seconds each job waited before its first start; a job whose user gave up, until it left; other
    never-started jobs wait until the run's end."""
    jobs = result.jobs
    ends = jobs["end_s"].to_numpy(np.float64)
    finite = ends[np.isfinite(ends)]
    end = max(horizon_s(result), float(finite.max()) if len(finite) else 0.0)
    submit = jobs["submit_s"].to_numpy(np.float64)
    waited = jobs["wait_s"].to_numpy(np.float64)
    return np.where(np.isfinite(waited), waited, np.maximum(end - submit, 0.0))


def class_waits(result: SimulationResult, since_s: float = 0.0,
                by: tuple[str, ...] = ("workload_class",)) -> pd.DataFrame:
    """One row per value of the `by` columns of result.jobs (sorted), over jobs submitted at or after
    `since_s`: jobs, started, and the mean, p50, p95 and p99 of their censored waits in seconds."""
    jobs = result.jobs
    keep = jobs["submit_s"].to_numpy(np.float64) >= since_s
    frame = jobs.loc[keep, list(by) + ["started"]].assign(wait=censored_waits(result)[keep])
    rows = []
    for key, group in frame.groupby(list(by), sort=True):
        wait = group["wait"].to_numpy()
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))), "jobs": len(group),
                     "started": int(group["started"].sum()), "wait_mean_s": float(wait.mean()),
                     **{f"wait_p{q}_s": float(np.quantile(wait, q / 100)) for q in (50, 95, 99)}})
    return pd.DataFrame(rows, columns=[*by, *WAIT_COLUMNS])


def slo_table(waits: pd.DataFrame, targets_h: dict[str, float]) -> pd.DataFrame:
    """For each workload class with a target: target_p95_h, p95_h (measured, censored), margin_h
    (target - measured) and met. A class with a target but no jobs meets it with its whole target as
    margin; classes without a target are left out."""
    measured = dict(zip(waits["workload_class"], waits["wait_p95_s"] / 3600.0))
    rows = []
    for name, target in sorted(targets_h.items()):
        p95 = float(measured.get(name, 0.0))
        rows.append({"workload_class": name, "target_p95_h": float(target), "p95_h": p95,
                     "margin_h": float(target) - p95, "met": p95 <= float(target) + 1e-9})
    return pd.DataFrame(rows, columns=["workload_class", "target_p95_h", "p95_h", "margin_h", "met"])

"""Queue waits: how long started jobs waited between submission and start, by workload class.

wait_h = (start_utc - submit_utc) in hours for every job that started; a start recorded before
its submission counts as 0. Quantiles use linear interpolation between order statistics
(numpy's default), so p50 of [1, 2, 3, 4] is 2.5 hours.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.vocabulary import WORKLOAD_CLASSES

SUMMARY_COLUMNS = ["workload_class", "jobs_started", "mean_wait_h", "p50_wait_h", "p95_wait_h", "p99_wait_h"]
ECDF_POINTS = 101


def job_waits(jobs: pd.DataFrame) -> pd.DataFrame:
    """workload_class, job_id, wait_h for the jobs that started, in the input's order."""
    started = jobs[jobs["start_utc"].notna()]
    wait_h = (pd.to_datetime(started["start_utc"]) - pd.to_datetime(started["submit_utc"])) / pd.Timedelta(hours=1)
    out = pd.DataFrame({
        "workload_class": started["workload_class"].astype(str).to_numpy(),
        "job_id": started["job_id"].astype(str).to_numpy(),
        "wait_h": np.maximum(wait_h.to_numpy(dtype=float), 0.0),
    })
    return out


def class_order(classes) -> list[str]:
    """Distinct workload classes in the canonical order of engine.core.vocabulary, unknown names last."""
    rank = {c: i for i, c in enumerate(WORKLOAD_CLASSES)}
    return sorted(pd.unique(np.asarray(classes, dtype=object)), key=lambda c: (rank.get(c, len(rank)), c))


def _by_class(waits: pd.DataFrame) -> list[tuple[str, np.ndarray]]:
    groups = {cls: w.to_numpy(dtype=float) for cls, w in waits.groupby("workload_class")["wait_h"]}
    return [(cls, groups[cls]) for cls in class_order(list(groups))]


def wait_summary(waits: pd.DataFrame) -> pd.DataFrame:
    """One row per workload class: jobs started, mean, p50, p95 and p99 wait in hours."""
    rows = []
    for cls, w in _by_class(waits):
        p50, p95, p99 = np.quantile(w, [0.5, 0.95, 0.99])
        rows.append((cls, len(w), float(w.mean()), float(p50), float(p95), float(p99)))
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def overall_p95_wait_h(waits: pd.DataFrame) -> float:
    """95th percentile of every started job's wait, in hours (NaN when no job started)."""
    return float(np.quantile(waits["wait_h"], 0.95)) if len(waits) else float("nan")


def wait_ecdf(waits: pd.DataFrame, points: int = ECDF_POINTS) -> pd.DataFrame:
    """The empirical distribution of waits per class as `points` quantiles: class, share, wait_h.

    share runs from 0 to 1; wait_h is the wait that this share of the class's jobs did not
    exceed. A compact stand-in for every job's wait when drawing an ECDF.
    """
    shares = np.linspace(0.0, 1.0, points)
    parts = []
    for cls, w in _by_class(waits):
        parts.append(pd.DataFrame({"workload_class": cls, "share": shares, "wait_h": np.quantile(w, shares)}))
    if not parts:
        return pd.DataFrame(columns=["workload_class", "share", "wait_h"])
    return pd.concat(parts, ignore_index=True)

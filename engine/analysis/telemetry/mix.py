"""The job mix: how many jobs and GPU-hours each workload class accounts for.

gpu_hours(job) = gpus x (end_utc - start_utc) in hours; a running job counts up to the dataset's
last instant, a job that never started counts 0. Shares are percentages of the column totals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.waits import class_order

MIX_COLUMNS = ["workload_class", "jobs", "jobs_pct", "gpu_hours", "gpu_hours_pct"]


def job_mix(jobs: pd.DataFrame, data_end_utc: pd.Timestamp) -> pd.DataFrame:
    """One row per workload class present in `jobs`, in the canonical class order."""
    start = pd.to_datetime(jobs["start_utc"])
    end = pd.to_datetime(jobs["end_utc"]).fillna(pd.Timestamp(data_end_utc))
    hours = ((end - start) / pd.Timedelta(hours=1)).to_numpy(dtype=float, na_value=np.nan)
    gpu_hours = np.where(np.isnan(hours), 0.0, np.maximum(hours, 0.0)) * jobs["gpus"].to_numpy(dtype=float)
    frame = pd.DataFrame({"workload_class": jobs["workload_class"].astype(str).to_numpy(), "gpu_hours": gpu_hours})
    out = frame.groupby("workload_class").agg(jobs=("gpu_hours", "size"), gpu_hours=("gpu_hours", "sum"))
    out = out.reindex(class_order(out.index)).reset_index()
    out["jobs_pct"] = 100.0 * out["jobs"] / out["jobs"].sum()
    total = out["gpu_hours"].sum()
    out["gpu_hours_pct"] = 100.0 * out["gpu_hours"] / total if total > 0 else 0.0
    return out[MIX_COLUMNS]

"""Submit-time features of jobs: one function for training rows and for rows to predict.

`features(jobs, tz)` takes the schema's jobs table (sample_data/README.md) and returns one row
per job, aligned with the input (same index), holding only what was known when the job was
submitted:

| column | meaning |
|---|---|
| user, team, workload_class, queue | categoricals as text ("" when missing); coded only when a model is fitted |
| log_gpus, log_nodes | ln(1 + GPUs), ln(1 + nodes) (GPUs = processors for SWF logs); NaN when unknown |
| log_request_s | ln(max(requested runtime, 1 s)); NaN when the job has no request |
| submit_hour, submit_weekday | local hour 0-23 and weekday 0 (Monday)-6 of the submit in `tz` (UTC when None) |
| user_finished | how many of the user's jobs had finished (end <= this submit) with a known runtime |
| log_user_last2_s | ln of the mean of the user's last two finished runtimes (Tsafrir et al.); NaN when none |
| log_user_median_s | ln of the median of the user's last `recent` finished runtimes; NaN when none |
| user_fail_rate | share failed or cancelled among the user's last `recent` finished jobs; NaN when none |
| user_last_failed | 1 when the user's most recently finished job failed or was cancelled, else 0; NaN when none |

"Finished" means end <= this job's submit (engine/predict/history.py): a job submitted earlier
but still running adds nothing, so perturbing anything that happens after a time T leaves the
features of jobs submitted before T unchanged. Runtimes are end - start in seconds, floored at
1 s before any logarithm.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.predict.history import FinishedBefore

CATEGORICAL = ("user", "team", "workload_class", "queue")
NUMERIC = ("log_gpus", "log_nodes", "log_request_s", "submit_hour", "submit_weekday",
           "user_finished", "log_user_last2_s", "log_user_median_s", "user_fail_rate", "user_last_failed")
COLUMNS = CATEGORICAL + NUMERIC
FAILED_STATUSES = ("failed", "cancelled")
# Final states: the job's outcome is known (running and pending jobs have none yet).
OUTCOME_STATUSES = ("completed", "failed", "cancelled", "preempted")
RECENT_JOBS = 10
MIN_RUNTIME_S = 1.0


def features(jobs: pd.DataFrame, tz: str | None = None, recent: int = RECENT_JOBS) -> pd.DataFrame:
    """The submit-time feature table of `jobs` (columns `COLUMNS`, index of `jobs`).

    `recent`: how many of the user's most recently finished jobs the median and failure rate use.
    """
    submit = seconds(jobs["submit_utc"])
    end = seconds(jobs["end_utc"])
    run = runtime_s(jobs)
    user = pd.factorize(jobs["user_name"])[0]
    ran = FinishedBefore.build(user, submit, end, np.isfinite(run))
    floored = np.maximum(run, MIN_RUNTIME_S)
    ended = FinishedBefore.build(user, submit, end, has_outcome(jobs))
    outcome = failed(jobs).astype(np.float64)
    local = _local(jobs["submit_utc"], tz)
    out = {name: _text(jobs, column) for name, column in
           zip(CATEGORICAL, ("user_name", "team", "workload_class", "queue"))}
    out.update({
        "log_gpus": np.log1p(_number(jobs, "gpus")),
        "log_nodes": np.log1p(_number(jobs, "nodes")),
        "log_request_s": np.log(np.maximum(_number(jobs, "requested_runtime_s"), MIN_RUNTIME_S)),
        "submit_hour": local.dt.hour.to_numpy(dtype=np.float64),
        "submit_weekday": local.dt.day_of_week.to_numpy(dtype=np.float64),
        "user_finished": ran.count.astype(np.float64),
        "log_user_last2_s": np.log(ran.rolling(floored, user, 2, "mean")),
        "log_user_median_s": ran.rolling(np.log(floored), user, recent, "median"),
        "user_fail_rate": ended.rolling(outcome, user, recent, "mean"),
        "user_last_failed": ended.rolling(outcome, user, 1, "mean"),
    })
    return pd.DataFrame(out, index=jobs.index)


def seconds(times: pd.Series) -> np.ndarray:
    """Naive-UTC timestamps -> float seconds since the epoch, NaN for missing."""
    stamps = pd.to_datetime(times)
    return (stamps - pd.Timestamp(0)).dt.total_seconds().to_numpy(dtype=np.float64, na_value=np.nan)


def runtime_s(jobs: pd.DataFrame) -> np.ndarray:
    """end - start in seconds; NaN unless both are known and end >= start."""
    run = seconds(jobs["end_utc"]) - seconds(jobs["start_utc"])
    return np.where(run >= 0, run, np.nan)


def failed(jobs: pd.DataFrame) -> np.ndarray:
    """True where the job failed or was cancelled."""
    return jobs["status"].isin(FAILED_STATUSES).to_numpy()


def has_outcome(jobs: pd.DataFrame) -> np.ndarray:
    """True where the job reached a final state and its end is known."""
    return jobs["status"].isin(OUTCOME_STATUSES).to_numpy() & jobs["end_utc"].notna().to_numpy()


def _local(times: pd.Series, tz: str | None) -> pd.Series:
    stamps = pd.to_datetime(times).dt.tz_localize("UTC")
    return stamps.dt.tz_convert(tz) if tz else stamps


def _text(jobs: pd.DataFrame, column: str) -> np.ndarray:
    if column not in jobs:
        return np.full(len(jobs), "", dtype=object)
    return jobs[column].astype(object).where(jobs[column].notna(), "").astype(str).to_numpy(dtype=object)


def _number(jobs: pd.DataFrame, column: str) -> np.ndarray:
    if column not in jobs:
        return np.full(len(jobs), np.nan)
    return pd.to_numeric(jobs[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)

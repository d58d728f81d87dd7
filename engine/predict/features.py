"""Submit-time features of jobs: one function for training rows and for rows to predict.

`features(jobs, tz)` takes the schema's jobs table (sample_data/README.md) and returns one row
per job, aligned with the input (same index), holding only what was known when the job was
submitted. `tz` is the local time of the submit hour and weekday: one IANA zone for every job, a
mapping region -> IANA zone (each job in its own region's time; `zones_of(regions)` builds it from
the regions table; regions not in the mapping, and jobs without a region, use UTC), or None (UTC):

| column | meaning |
|---|---|
| user, team, workload_class, queue | categoricals as text ("" when missing, and team "" when every job's team is its user); coded only when a model is fitted |
| log_gpus, log_nodes | ln(1 + GPUs), ln(1 + nodes) (GPUs = processors for SWF logs); NaN when unknown |
| log_request_s | ln(max(requested runtime, 1 s)); NaN when the job has no request |
| submit_hour, submit_weekday | local hour 0-23 and weekday 0 (Monday)-6 of the submit in `tz` |
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

from collections.abc import Mapping

import numpy as np
import pandas as pd

from engine.predict.history import FinishedBefore

TimeZones = str | Mapping[str, str] | None

CATEGORICAL = ("user", "team", "workload_class", "queue")
NUMERIC = ("log_gpus", "log_nodes", "log_request_s", "submit_hour", "submit_weekday",
           "user_finished", "log_user_last2_s", "log_user_median_s", "user_fail_rate", "user_last_failed")
COLUMNS = CATEGORICAL + NUMERIC
FAILED_STATUSES = ("failed", "cancelled")
# Final states: the job's outcome is known (running and pending jobs have none yet).
OUTCOME_STATUSES = ("completed", "failed", "cancelled", "preempted")
RECENT_JOBS = 10
MIN_RUNTIME_S = 1.0


def features(jobs: pd.DataFrame, tz: TimeZones = None, recent: int = RECENT_JOBS) -> pd.DataFrame:
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
    hour, weekday = _local_hour_weekday(jobs, tz)
    out = {name: _text(jobs, column) for name, column in
           zip(CATEGORICAL, ("user_name", "team", "workload_class", "queue"))}
    if (out["team"] == out["user"]).all():   # each job's team is its user (an SWF log without groups): no news
        out["team"] = np.full(len(jobs), "", dtype=object)
    out.update({
        "log_gpus": np.log1p(_number(jobs, "gpus")),
        "log_nodes": np.log1p(_number(jobs, "nodes")),
        "log_request_s": np.log(np.maximum(_number(jobs, "requested_runtime_s"), MIN_RUNTIME_S)),
        "submit_hour": hour,
        "submit_weekday": weekday,
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


def zones_of(regions: pd.DataFrame | None) -> dict[str, str]:
    """region -> IANA time zone from the schema's regions table (empty when there is none)."""
    if regions is None or not len(regions) or "timezone" not in regions:
        return {}
    known = regions.dropna(subset=["region", "timezone"])
    return dict(zip(known["region"].astype(str), known["timezone"].astype(str)))


def _local_hour_weekday(jobs: pd.DataFrame, tz: TimeZones) -> tuple[np.ndarray, np.ndarray]:
    """Local hour and weekday of each submit (float, NaN when the submit is unknown)."""
    stamps = pd.to_datetime(jobs["submit_utc"]).dt.tz_localize("UTC")
    zone = pd.Series(tz if isinstance(tz, str) else "UTC", index=jobs.index, dtype=object)
    if isinstance(tz, Mapping) and "region" in jobs:
        zone = jobs["region"].map(tz).where(lambda z: z.notna(), "UTC")
    hour = np.full(len(jobs), np.nan)
    weekday = np.full(len(jobs), np.nan)
    for name in pd.unique(zone.to_numpy(dtype=object)):
        rows = (zone == name).to_numpy()
        local = stamps[rows].dt.tz_convert(name)
        hour[rows] = local.dt.hour.to_numpy(dtype=np.float64, na_value=np.nan)
        weekday[rows] = local.dt.day_of_week.to_numpy(dtype=np.float64, na_value=np.nan)
    return hour, weekday


def _text(jobs: pd.DataFrame, column: str) -> np.ndarray:
    if column not in jobs:
        return np.full(len(jobs), "", dtype=object)
    return jobs[column].astype(object).where(jobs[column].notna(), "").astype(str).to_numpy(dtype=object)


def _number(jobs: pd.DataFrame, column: str) -> np.ndarray:
    if column not in jobs:
        return np.full(len(jobs), np.nan)
    return pd.to_numeric(jobs[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)

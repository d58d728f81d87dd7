"""Features that tell workload classes apart in a log without labels (engine/predict/classify.py).

Only what an SWF log also has: size, run time, requested time, submit times and users. Never the
queue, QoS, priority, project, GPU type or team: an SWF log lacks them, and in the sample the queue
names the class outright (train, serve, dev, batch, hpo), so a model reading it would learn nothing
that carries to another log. Classifying a whole finished log is retrospective, so a job's own run
time and its user's aggregates over the whole log count; no label is ever read.

| column | meaning |
|---|---|
| size_pct | the job's size (GPUs, or processors in an SWF log) as its percentile rank within the log, 0-1 |
| smallest | 1 when the job asks for at most one GPU (processor), else 0 |
| log_run_s | ln(run time in s, floored at 1 s); NaN when it never ran or still runs |
| log_request_s | ln(requested time in s, floored at 1 s); NaN without a request |
| log_request_ratio | ln(request / run time); NaN when either is unknown |
| submit_hour, submit_weekday | local hour and weekday of the submit (engine/predict/features.py) |
| log_gap_s | ln(1 + seconds since the same user's previous submit); NaN for a user's first job |
| log_burst | ln(1 + the same user's other submits within `BURST_S` either side of this one) |
| log_same_size_hour | ln(1 + the same user's other submits of the same size within an hour either side) |
| log_user_jobs | ln(the user's jobs in the log) |
| user_size_pct | the median size_pct of the user's jobs |
| log_user_run_s | the median log_run_s of the user's jobs (NaN when none ran) |
| user_hour_share | the largest share of the user's jobs submitted in one local hour of the day (a nightly pipeline: near 1) |
| user_weekend_share | share of the user's jobs submitted on a local Saturday or Sunday |
| user_finished, log_user_median_s, user_fail_rate | the user's history at the submit (engine/predict/features.py) |

Rows of jobs without a user get NaN for every user feature.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.predict.features import MIN_RUNTIME_S, TimeZones, features, runtime_s, seconds

BURST_S = 600.0
HOUR_S = 3600.0
HISTORY = ("user_finished", "log_user_median_s", "user_fail_rate")
COLUMNS = ("size_pct", "smallest", "log_run_s", "log_request_s", "log_request_ratio", "submit_hour",
           "submit_weekday", "log_gap_s", "log_burst", "log_same_size_hour", "log_user_jobs", "user_size_pct",
           "log_user_run_s", "user_hour_share", "user_weekend_share", *HISTORY)


def class_features(jobs: pd.DataFrame, tz: TimeZones = None) -> pd.DataFrame:
    """One row per job of `jobs` (the schema's jobs table), columns `COLUMNS`, index of `jobs`."""
    base = features(jobs, tz)
    size = pd.to_numeric(jobs["gpus"], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    run = runtime_s(jobs)
    request = pd.to_numeric(jobs.get("requested_runtime_s", pd.Series(np.nan, index=jobs.index)),
                            errors="coerce").to_numpy(np.float64, na_value=np.nan)
    request = np.where(request > 0, request, np.nan)
    out = pd.DataFrame(index=jobs.index)
    out["size_pct"] = pd.Series(size).rank(pct=True, method="average").to_numpy()
    out["smallest"] = np.where(np.isfinite(size), (size <= 1.0).astype(np.float64), np.nan)
    out["log_run_s"] = np.log(np.maximum(run, MIN_RUNTIME_S))
    out["log_request_s"] = np.log(np.maximum(request, MIN_RUNTIME_S))
    out["log_request_ratio"] = out["log_request_s"] - out["log_run_s"]
    out["submit_hour"] = base["submit_hour"].to_numpy()
    out["submit_weekday"] = base["submit_weekday"].to_numpy()
    rhythm = _rhythm(jobs["user_name"], seconds(jobs["submit_utc"]), size)
    for name, values in rhythm.items():
        out[name] = values
    users = _per_user(jobs["user_name"], out)
    for name in users.columns:
        out[name] = users[name].to_numpy()
    for name in HISTORY:
        out[name] = base[name].to_numpy()
    return out[list(COLUMNS)]


def _rhythm(user: pd.Series, submit: np.ndarray, size: np.ndarray) -> dict[str, np.ndarray]:
    """log_gap_s, log_burst and log_same_size_hour, by binary search within each user's submits."""
    code = pd.factorize(user.astype(object).where(user.notna(), None))[0]
    n = len(code)
    gap, burst, same = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    known = (code >= 0) & np.isfinite(submit)
    rows = np.flatnonzero(known)
    order = rows[np.lexsort((rows, submit[rows], code[rows]))]
    starts = np.flatnonzero(np.r_[True, code[order][1:] != code[order][:-1]]) if len(order) else np.zeros(0, int)
    for first, last in zip(starts, np.r_[starts[1:], len(order)]):
        mine = order[first:last]
        times = submit[mine]
        gap[mine] = np.r_[np.nan, np.log1p(np.diff(times))]
        burst[mine] = np.log1p(np.searchsorted(times, times + BURST_S, "right")
                               - np.searchsorted(times, times - BURST_S, "left") - 1)
        for value in np.unique(size[mine][np.isfinite(size[mine])]):
            alike = mine[size[mine] == value]
            at = submit[alike]
            same[alike] = np.log1p(np.searchsorted(at, at + HOUR_S, "right")
                                   - np.searchsorted(at, at - HOUR_S, "left") - 1)
    return {"log_gap_s": gap, "log_burst": burst, "log_same_size_hour": same}


def _per_user(user: pd.Series, rows: pd.DataFrame) -> pd.DataFrame:
    """Each row's user aggregates over the whole log (NaN for rows without a user)."""
    key = user.astype(object).where(user.notna(), None)
    frame = rows[["size_pct", "log_run_s", "submit_hour", "submit_weekday"]].assign(user=key.to_numpy())
    groups = frame.dropna(subset=["user"]).groupby("user", sort=True)
    hours = frame.dropna(subset=["user", "submit_hour"])
    peak = hours.groupby(["user", "submit_hour"]).size().groupby(level=0).max() / hours.groupby("user").size()
    stats = pd.DataFrame({
        "log_user_jobs": np.log(groups.size()),
        "user_size_pct": groups["size_pct"].median(),
        "log_user_run_s": groups["log_run_s"].median(),
        "user_hour_share": peak,
        "user_weekend_share": groups["submit_weekday"].apply(lambda d: float((d >= 5).mean())),
    })
    return stats.reindex(frame["user"].to_numpy())

"""Jobs tables for the predictor tests: hand-built rows and a seeded synthetic log with signal."""
from __future__ import annotations

import numpy as np
import pandas as pd

T0 = pd.Timestamp("2026-03-02")  # a Monday, 00:00 UTC


def row(user, submit, start=None, end=None, status="completed", request=None, gpus=1, team="t", queue="q"):
    """One jobs-table row; times in seconds after T0 (None = unknown)."""
    at = lambda s: pd.NaT if s is None else T0 + pd.Timedelta(seconds=s)  # noqa: E731
    return dict(user_name=user, team=team, workload_class="training", queue=queue, submit_utc=at(submit),
                start_utc=at(start), end_utc=at(end), gpus=gpus, nodes=1, status=status,
                requested_runtime_s=request)


def table(rows) -> pd.DataFrame:
    jobs = pd.DataFrame(rows)
    for column in ("submit_utc", "start_utc", "end_utc"):
        jobs[column] = pd.to_datetime(jobs[column]).astype("datetime64[s]")
    jobs["requested_runtime_s"] = pd.to_numeric(jobs["requested_runtime_s"]).astype(np.float64)
    return jobs


def synthetic(n=4000, users=40, seed=0) -> pd.DataFrame:
    """A log in submit order where each user has a typical runtime, request habit and failure rate.

    Runtimes are lognormal around the user's typical runtime (x 4 for 8-GPU jobs), requests are
    2-10 x the typical runtime rounded up to the hour (runs never exceed them), failing users fail
    often and their failed jobs end early. Starts follow submits by up to 30 minutes.
    """
    rng = np.random.default_rng(seed)
    typical = np.exp(rng.uniform(np.log(60), np.log(36_000), users))
    habit = rng.uniform(2, 10, users)
    fail_p = np.where(rng.random(users) < 0.3, 0.6, 0.05)
    who = rng.integers(0, users, n)
    gpus = np.where(rng.random(n) < 0.3, 8, 1)
    submit = np.cumsum(rng.exponential(600, n)).round()
    start = submit + rng.integers(0, 1800, n)
    request = np.ceil(typical[who] * habit[who] * np.where(gpus == 8, 4, 1) / 3600) * 3600
    run = np.minimum(typical[who] * np.where(gpus == 8, 4, 1) * rng.lognormal(0, 0.4, n), request)
    fails = rng.random(n) < fail_p[who]
    run = np.where(fails, run * rng.uniform(0.05, 0.5, n), run).round()
    return table([row(f"u{who[i]}", submit[i], start[i], start[i] + run[i],
                      "failed" if fails[i] else "completed", request[i], int(gpus[i]),
                      team=f"t{who[i] % 5}", queue="big" if gpus[i] == 8 else "small") for i in range(n)])


def perturb_after(jobs: pd.DataFrame, cutoff: pd.Timestamp, seed=1) -> pd.DataFrame:
    """Every job submitted at or after `cutoff` gets a new runtime and status, and every end after
    `cutoff` moves (anything that happens after the cutoff changes)."""
    rng = np.random.default_rng(seed)
    out = jobs.copy()
    late = (out["submit_utc"] >= cutoff).to_numpy()
    new_run = pd.to_timedelta(rng.integers(1, 100_000, len(out)), unit="s")
    out.loc[late, "end_utc"] = out.loc[late, "start_utc"] + new_run[late]
    out.loc[late, "status"] = rng.choice(["completed", "failed", "cancelled"], int(late.sum()))
    ends_late = (out["end_utc"] > cutoff).to_numpy() & ~late
    out.loc[ends_late, "end_utc"] = out.loc[ends_late, "end_utc"] + pd.Timedelta(hours=5)
    out.loc[ends_late, "status"] = "failed"
    return out


def queued_log(queued: int = 40) -> pd.DataFrame:
    """The synthetic log (20 users, 1,200 jobs) on one region "eu", its last `queued` jobs still pending
    at the end, with measured GPU use: the 8-GPU jobs of even-numbered users touched only 2 GPUs."""
    jobs = synthetic(n=1200, users=20)
    jobs = jobs.assign(job_id=[f"j{i:04d}" for i in range(len(jobs))], region="eu", gpu_type="A", priority=0)
    last = jobs.index[-queued:]
    jobs.loc[last, ["start_utc", "end_utc"]] = pd.NaT
    jobs.loc[last, "status"] = "pending"
    wasteful = (jobs["gpus"] == 8) & (jobs["user_name"].str[1:].astype(int) % 2 == 0)
    jobs["gpus_used_max"] = np.where(wasteful, 2.0, jobs["gpus"])
    jobs["gpu_util_pct"] = np.where(wasteful, 20.0, 70.0)
    jobs.loc[last, ["gpus_used_max", "gpu_util_pct"]] = np.nan
    return jobs

"""More or less of the same demand: `scale_demand(jobs, scale, seed)` resamples a dataset's jobs so
that `scale` times as many arrive, with each region's daily and weekly shape and the job mix kept.

Jobs are grouped into strata by (region, UTC hour of the week, workload class, team). Stratum k of
n_k jobs gets t_k jobs, rounded systematically: with the strata in that order and one random offset
u in [0, 1) (seeded), t_k = floor(scale x N_k + u) - floor(scale x N_(k-1) + u), N_k the jobs of
strata 1..k. Each t_k is scale x n_k in expectation, and any run of consecutive strata (a region's
hour, a region) gets its scaled total within one job, so each region's hour-of-week profile, every
class and every team scale by `scale` up to that rounding:
- scale < 1 (thinning): t of the stratum's jobs are kept, chosen at random without replacement;
- scale > 1 (inflation): every job is kept and t - n more are added, each a copy of a job of the
  same stratum drawn at random (with replacement), submitted at a uniformly random second of the
  donor's own clock hour (so the copy stays in its stratum, its week and its day), with all its
  recorded times (start, end, deadline) shifted alike; a copy's id is "<donor id>+r<k>".
Time is never compressed (that would move work across the hours of the day and destroy the time-zone
pattern follow-the-sun depends on). scale = 1 returns the jobs unchanged; the same jobs, scale and
seed give the same result.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

TIME_COLUMNS = ("submit_utc", "start_utc", "end_utc", "deadline_utc")
STRATA = ("region", "hour", "workload_class", "team")
HOUR_S = 3600.0
STREAM = 4211  # the resampler's own random stream: other seeded choices of a scenario are unaffected


def hour_of_week(submit: pd.Series) -> np.ndarray:
    """UTC hour of the week of each submit time, 0 (Monday 00:00) to 167."""
    times = pd.to_datetime(submit)
    return (times.dt.day_of_week * 24 + times.dt.hour).to_numpy(np.int64)


def strata(jobs: pd.DataFrame) -> np.ndarray:
    """The stratum of each job, numbered in the order of STRATA (region, hour of week, class, team)."""
    columns = {c: (hour_of_week(jobs["submit_utc"]) if c == "hour" else
                   jobs[c].fillna("").astype(str).to_numpy() if c in jobs else np.full(len(jobs), ""))
               for c in STRATA}
    return pd.DataFrame(columns).groupby(list(STRATA), sort=True).ngroup().to_numpy(np.int64)


def scale_demand(jobs: pd.DataFrame, scale: float, seed: int = 0) -> pd.DataFrame:
    """`scale` times the jobs, stratum by stratum (see the module docstring)."""
    if scale == 1.0 or not len(jobs):
        return jobs
    if not scale > 0:
        raise ValueError(f"the demand scale must be positive, got {scale}")
    rng = np.random.default_rng([seed, STREAM])
    stratum = strata(jobs)
    counts = np.bincount(stratum)
    reach = np.floor(scale * np.cumsum(counts) + rng.random()).astype(np.int64)
    target = np.diff(reach, prepend=0)
    if scale < 1.0:
        return jobs[_kept(stratum, target, rng)].copy()
    return pd.concat([jobs, _copies(jobs, stratum, target - counts, rng)], ignore_index=True)


def _kept(stratum: np.ndarray, target: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A mask keeping `target[k]` random jobs of each stratum k."""
    draw = rng.random(len(stratum))
    order = np.lexsort((draw, stratum))   # by stratum, then at random within it
    first = np.searchsorted(stratum[order], np.arange(len(target)))
    rank = np.empty(len(stratum), np.int64)
    rank[order] = np.arange(len(stratum)) - first[stratum[order]]
    return rank < target[stratum]


def _copies(jobs: pd.DataFrame, stratum: np.ndarray, extra: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """`extra[k]` copies of random jobs of stratum k, each submitted in its donor's clock hour."""
    order = np.argsort(stratum, kind="stable")
    counts = np.bincount(stratum, minlength=len(extra))
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    wanted = np.repeat(np.arange(len(extra)), extra)
    donors = order[first[wanted] + np.floor(rng.random(len(wanted)) * counts[wanted]).astype(np.int64)]
    copies = jobs.iloc[donors].reset_index(drop=True)  # a fresh index: a donor may give several copies
    submit = pd.to_datetime(copies["submit_utc"])
    moved = submit.dt.floor("h") + pd.to_timedelta(rng.random(len(copies)) * HOUR_S, unit="s")
    shift = (moved - submit).to_numpy()
    for column in TIME_COLUMNS:
        if column in copies:
            copies[column] = pd.to_datetime(copies[column]) + shift
    seen = pd.Series(donors).groupby(donors).cumcount().to_numpy() + 1
    suffix = np.char.add("+r", seen.astype(str)).astype(object)
    copies["job_id"] = copies["job_id"].astype(str).to_numpy(object) + suffix
    return copies

"""Right-sizing: jobs that held more GPUs than they used, from per-job measured GPU use.

Input is the jobs table as the telemetry store returns it, with the optional measured columns
`gpu_util_pct` (mean utilisation of the job's GPUs over its run, percent 0-100) and `gpus_used_max`
(the most of its GPUs busy at once). A job *ran* when it started, holds GPUs and ran for a positive
time; it is *measured* when it ran and has `gpus_used_max` (or, with `mean_fallback`,
`gpu_util_pct`). Jobs that are not measured are skipped, and counted in the totals.

Per measured job (g = gpus, p = gpus_used_max, u = gpu_util_pct, k = nodes, 1 when unknown):

  mean-equivalent GPUs   m = g x u / 100                                  (NaN without u)
  need                   n = max(p, m) x (1 + headroom_pct / 100)         basis "peak"
                         n = m x (1 + headroom_pct / 100) without p       basis "mean" (mean_fallback)
  recommended GPUs       r = g for a fractional job (g < 1 or gpu_milli < 1000): a share is not cut;
                         else the smallest size the job's shape allows that holds n, between 1 and g:
                           n <= g / k (fits one of its nodes):  ceil(n) whole GPUs
                           n >  g / k (a multi-node gang):      ceil(n / (g / k)) whole nodes of g / k GPUs
  run hours              h = (end_utc, or `as_of` for a job still running) - start_utc
  GPU-hours              g x h          freed GPU-hours   (g - r) x h
  freed_usd              (g - r) x h x the price of (region, gpu_type, options.tier) in USD per GPU-hour:
                         the dataset's prices table, completed from the default price book
                         (`price_assumed`); NaN when no prices table is given
  over_asking            r < g

The peak is already a maximum over the run, so the default headroom is 0; on small jobs any
headroom rounds up a whole GPU (a peak of 1 GPU with 10 % headroom needs 2). Sizing by the mean
(basis "mean") cannot see bursts above it; such rows are marked so a reader can weigh them.

Per team and per user (`by_team`, `by_user`), over measured jobs: jobs, over_asking, gpu_hours,
freed_gpu_hours, freed_pct = 100 x freed / the group's GPU-hours, freed_pct_of_all = 100 x freed /
all measured GPU-hours (adds up over groups to the total freed_pct), freed_usd, and gpu_util_pct =
100 x sum(m x h) / sum(g x h) over the group's jobs with u (GPU-hour-weighted mean utilisation).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.analysis.telemetry.activity import job_window, normalise_keys
from engine.analysis.telemetry.idle import price_table
from engine.core.sizing import recommended_gpus
from engine.core.vocabulary import TIERS

HOUR = pd.Timedelta(hours=1)
UNKNOWN = "(unknown)"
JOB_COLUMNS = ["job_id", "user_name", "team", "workload_class", "region", "gpu_type", "status", "nodes", "gpus",
               "gpus_used_max", "gpu_util_pct", "gpus_used_mean", "basis", "need_gpus", "recommended_gpus",
               "gpus_freed", "run_h", "gpu_hours", "freed_gpu_hours", "usd_per_gpu_hour", "price_assumed",
               "freed_usd", "over_asking"]
GROUP_COLUMNS = ["jobs", "over_asking", "gpu_hours", "freed_gpu_hours", "freed_pct", "freed_pct_of_all",
                 "freed_usd", "gpu_util_pct"]


@dataclass(frozen=True)
class RightSizeOptions:
    """How recommendations are made and priced."""

    headroom_pct: float = field(default=0.0, metadata={
        "help": "GPUs kept above the measured need, in percent of it (10: room for a 10 % higher peak)"})
    mean_fallback: bool = field(default=True, metadata={
        "help": "size jobs without a measured peak by their mean-equivalent GPUs (bursts above the mean unseen)"})
    tier: str = field(default="on-demand", metadata={
        "help": "pricing tier of the freed GPU-hours (on-demand: what renting them would have cost)"})

    def __post_init__(self) -> None:
        if not self.headroom_pct >= 0:
            raise ValueError(f"headroom_pct must be >= 0, got {self.headroom_pct!r}")
        if self.tier not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(TIERS)}, got {self.tier!r}")


@dataclass(frozen=True)
class RightSizing:
    """jobs: one row per measured job (JOB_COLUMNS), most freed GPU-hours first; by_team: team +
    GROUP_COLUMNS; by_user: user_name, team + GROUP_COLUMNS (both most freed first); totals: jobs,
    ran, measured, measured_pct (of ran), measured_by_mean, over_asking, over_asking_pct (of
    measured), gpu_hours, freed_gpu_hours, freed_pct, freed_usd (NaN without prices),
    price_assumed (1.0 when any freed dollar rests on an assumed price, else 0.0)."""

    jobs: pd.DataFrame
    by_team: pd.DataFrame
    by_user: pd.DataFrame
    totals: dict[str, float]


def _column(jobs: pd.DataFrame, name: str, default) -> pd.Series:
    return jobs[name] if name in jobs else pd.Series(default, index=jobs.index)


def _prices(frame: pd.DataFrame, prices: pd.DataFrame | None, tier: str) -> tuple[np.ndarray, np.ndarray]:
    """(USD per GPU-hour, price assumed) of each row's (region, gpu_type) at `tier`."""
    if prices is None:
        return np.full(len(frame), np.nan), np.zeros(len(frame), dtype=bool)
    keys = normalise_keys(frame[["region", "gpu_type"]])
    book = price_table(prices, keys)
    book = book[book["tier"] == tier].drop_duplicates(["region", "gpu_type"])
    priced = keys.merge(book, on=["region", "gpu_type"], how="left")
    return priced["usd_per_gpu_hour"].to_numpy(float), priced["price_assumed"].fillna(False).to_numpy(bool)


def _summary(jobs: pd.DataFrame, keys: list[str], all_gpu_hours: float) -> pd.DataFrame:
    used = jobs.assign(mean_gpu_hours=jobs["gpus_used_mean"] * jobs["run_h"],
                       util_gpu_hours=jobs["gpu_hours"].where(jobs["gpus_used_mean"].notna()))
    out = used.groupby(keys, as_index=False, sort=True).agg(
        jobs=("job_id", "size"), over_asking=("over_asking", "sum"), gpu_hours=("gpu_hours", "sum"),
        freed_gpu_hours=("freed_gpu_hours", "sum"), freed_usd=("freed_usd", lambda s: s.sum(min_count=1)),
        mean_gpu_hours=("mean_gpu_hours", "sum"), util_gpu_hours=("util_gpu_hours", "sum"))
    with np.errstate(divide="ignore", invalid="ignore"):
        out["freed_pct"] = np.where(out["gpu_hours"] > 0, 100.0 * out["freed_gpu_hours"] / out["gpu_hours"], 0.0)
        out["freed_pct_of_all"] = 100.0 * out["freed_gpu_hours"] / all_gpu_hours if all_gpu_hours > 0 else 0.0
        out["gpu_util_pct"] = np.where(out["util_gpu_hours"] > 0,
                                       100.0 * out["mean_gpu_hours"] / out["util_gpu_hours"], np.nan)
    out["over_asking"] = out["over_asking"].astype(np.int64)
    out = out.sort_values(["freed_gpu_hours"] + keys, ascending=[False] + [True] * len(keys), kind="stable")
    return out[keys + GROUP_COLUMNS].reset_index(drop=True)


def rightsize(jobs: pd.DataFrame, prices: pd.DataFrame | None = None, options: RightSizeOptions | None = None,
              as_of: pd.Timestamp | None = None) -> RightSizing:
    """Recommended GPU counts and what they would have freed (see the module docstring).

    prices: the dataset's prices table (region, gpu_type, tier, usd_per_gpu_hour, assumed), or None
    for no dollars. as_of: where a job still running is taken to stop (default: the jobs' last
    instant, as the rest of the analysis takes it).
    """
    options = options or RightSizeOptions()
    if as_of is None and len(jobs):
        as_of = job_window(jobs).data_end_utc
    start = pd.to_datetime(_column(jobs, "start_utc", pd.NaT))
    end = pd.to_datetime(_column(jobs, "end_utc", pd.NaT)).fillna(pd.Timestamp(as_of) if as_of is not None else pd.NaT)
    run_h = ((end - start) / HOUR).to_numpy(float, na_value=np.nan)
    gpus = pd.to_numeric(_column(jobs, "gpus", np.nan), errors="coerce").to_numpy(float)
    peak = pd.to_numeric(_column(jobs, "gpus_used_max", np.nan), errors="coerce").to_numpy(float)
    util = pd.to_numeric(_column(jobs, "gpu_util_pct", np.nan), errors="coerce").to_numpy(float)
    ran = (run_h > 0) & (gpus > 0)
    by_mean = ran & np.isnan(peak) & ~np.isnan(util) & options.mean_fallback
    measured = (ran & ~np.isnan(peak)) | by_mean

    frame = jobs.loc[measured]
    g, p, u, h = gpus[measured], peak[measured], util[measured], run_h[measured]
    mean = g * u / 100.0
    need = np.fmax(p, mean) * (1.0 + options.headroom_pct / 100.0)
    nodes = pd.to_numeric(_column(frame, "nodes", 1), errors="coerce").fillna(1).to_numpy(float)
    milli = pd.to_numeric(_column(frame, "gpu_milli", 1000), errors="coerce").fillna(1000).to_numpy(float)
    recommended = recommended_gpus(g, need, nodes, (g < 1) | (milli < 1000))
    freed_h = (g - recommended) * h
    out = pd.DataFrame({
        "job_id": _column(frame, "job_id", "").astype(str).to_numpy(),
        "user_name": _column(frame, "user_name", None).fillna(UNKNOWN).astype(str).to_numpy(),
        "team": _column(frame, "team", None).fillna(UNKNOWN).astype(str).to_numpy(),
        "workload_class": _column(frame, "workload_class", "unknown").astype(str).to_numpy(),
        "region": _column(frame, "region", None).to_numpy(object),
        "gpu_type": _column(frame, "gpu_type", None).to_numpy(object),
        "status": _column(frame, "status", None).to_numpy(object),
        "nodes": nodes, "gpus": g, "gpus_used_max": p, "gpu_util_pct": u, "gpus_used_mean": mean,
        "basis": np.where(np.isnan(p), "mean", "peak"), "need_gpus": need, "recommended_gpus": recommended,
        "gpus_freed": g - recommended, "run_h": h, "gpu_hours": g * h, "freed_gpu_hours": freed_h,
        "over_asking": recommended < g,
    })
    out["usd_per_gpu_hour"], out["price_assumed"] = _prices(out, prices, options.tier)
    out["freed_usd"] = freed_h * out["usd_per_gpu_hour"]
    out = out.sort_values(["freed_gpu_hours", "job_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return RightSizing(jobs=out[JOB_COLUMNS], by_team=_summary(out, ["team"], float(out["gpu_hours"].sum())),
                       by_user=_summary(out, ["user_name", "team"], float(out["gpu_hours"].sum())),
                       totals=_totals(out, len(jobs), int(ran.sum()), prices is not None))


def _totals(out: pd.DataFrame, jobs: int, ran: int, priced: bool) -> dict[str, float]:
    measured = len(out)
    gpu_hours, freed = float(out["gpu_hours"].sum()), float(out["freed_gpu_hours"].sum())
    over = int(out["over_asking"].sum())
    return {
        "jobs": float(jobs), "ran": float(ran), "measured": float(measured),
        "measured_pct": 100.0 * measured / ran if ran else 0.0,
        "measured_by_mean": float((out["basis"] == "mean").sum()),
        "over_asking": float(over), "over_asking_pct": 100.0 * over / measured if measured else 0.0,
        "gpu_hours": gpu_hours, "freed_gpu_hours": freed,
        "freed_pct": 100.0 * freed / gpu_hours if gpu_hours > 0 else 0.0,
        "freed_usd": float(out["freed_usd"].sum()) if priced else float("nan"),
        "price_assumed": float((out["price_assumed"] & (out["freed_gpu_hours"] > 0)).any()),
    }

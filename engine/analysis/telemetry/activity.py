"""Turn telemetry rows into weighted intervals the analysis integrates.

Jobs become GPU allocations: a started job holds `gpus` GPUs from start_utc to end_utc; a
running job (no end) holds them until the dataset's last instant; pending jobs hold nothing.
Utilisation samples become step functions: each sample's busy and total units hold from its
timestamp until the next sample of the same series.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.window import Window
from engine.core.vocabulary import DEFAULT_REGION

UNKNOWN_GPU = "unknown"
MAX_HOLD_SPACINGS = 2.0  # a sample never holds longer than this many typical sample spacings


def normalise_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Missing regions become the default region, missing GPU types 'unknown' (as strings)."""
    out = frame.copy()
    out["region"] = out["region"].astype(object).fillna(DEFAULT_REGION).astype(str)
    if "gpu_type" in out:
        out["gpu_type"] = out["gpu_type"].astype(object).fillna(UNKNOWN_GPU).astype(str)
    return out


def _key(values: pd.Series, missing: str) -> pd.Categorical:
    """A categorical copy of a key column with `missing` for NULLs (cheap to group by)."""
    codes = pd.Categorical(values)
    if codes.isna().any():
        if missing not in codes.categories:
            codes = codes.add_categories([missing])
        codes = codes.fillna(missing)
    return codes


def job_window(jobs: pd.DataFrame) -> Window:
    """Whole UTC hours from the earliest submit/start to the latest end/start/submit."""
    first = pd.concat([jobs["submit_utc"], jobs["start_utc"]]).min()
    last = pd.concat([jobs["end_utc"], jobs["start_utc"], jobs["submit_utc"]]).max()
    return Window.covering(first, last)


def job_intervals(jobs: pd.DataFrame, window: Window) -> pd.DataFrame:
    """One row per started job: region, gpu_type, start_h, end_h, gpus.

    start_h / end_h are hours since the window start; a job without end_utc ends at
    window.data_end_utc. Jobs that never started or hold no GPUs are left out.
    """
    start_h = window.to_hours(jobs["start_utc"])
    end_h = window.to_hours(jobs["end_utc"])
    end_h = np.where(np.isnan(end_h), window.to_hours(pd.Series([window.data_end_utc]))[0], end_h)
    gpus = jobs["gpus"].to_numpy(dtype=float)
    keep = ~np.isnan(start_h) & (end_h > start_h) & (gpus > 0)
    return pd.DataFrame({
        "region": _key(jobs["region"], DEFAULT_REGION)[keep],
        "gpu_type": _key(jobs["gpu_type"], UNKNOWN_GPU)[keep],
        "start_h": start_h[keep],
        "end_h": end_h[keep],
        "gpus": gpus[keep],
    })


def sample_weights(samples: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(busy, total) units per sample.

    busy and total as given when both are present; otherwise busy = util_pct / 100 * total;
    with neither busy nor total, busy = util_pct / 100 of a total of 1. Rows that allow none
    of these come back as NaN.
    """
    busy = samples["busy"].to_numpy(dtype=float, na_value=np.nan)
    total = samples["total"].to_numpy(dtype=float, na_value=np.nan)
    share = samples["util_pct"].to_numpy(dtype=float, na_value=np.nan) / 100.0
    given = ~np.isnan(busy) & ~np.isnan(total)
    share_of_total = np.isnan(busy) & ~np.isnan(total) & ~np.isnan(share)
    share_only = np.isnan(busy) & np.isnan(total) & ~np.isnan(share)
    cases = [given, share_of_total, share_only]
    return (np.select(cases, [busy, share * total, share], np.nan),
            np.select(cases, [total, total, np.ones_like(total)], np.nan))


def sample_intervals(samples: pd.DataFrame) -> tuple[pd.DataFrame, Window, str]:
    """Step intervals from utilisation samples: (region, start_h, end_h, busy, total), window, unit.

    A series is one (region, cluster, node, unit). Each sample holds until the series' next
    sample, but at most MAX_HOLD_SPACINGS x the series' median spacing (a longer gap is missing
    data and counts neither as busy nor as capacity); the last sample holds one median spacing.
    Only the most common unit is kept (busy nodes and busy GPUs cannot be added up).
    """
    unit = samples["unit"].value_counts().sort_index().idxmax()
    frame = normalise_keys(samples[samples["unit"] == unit])
    frame["cluster"] = frame["cluster"].fillna("")
    frame["node"] = frame["node"].fillna("")
    frame = frame.sort_values(["region", "cluster", "node", "ts_utc"], kind="stable").reset_index(drop=True)
    series = frame.groupby(["region", "cluster", "node"], sort=False)
    ts = pd.to_datetime(frame["ts_utc"])
    spacing_h = ((series["ts_utc"].shift(-1) - ts) / pd.Timedelta(hours=1)).to_numpy(dtype=float, na_value=np.nan)
    median_h = pd.Series(spacing_h).groupby(series.ngroup()).transform("median").to_numpy()
    fallback = np.nanmedian(spacing_h) if np.isfinite(spacing_h).any() else 1.0
    median_h = np.where(np.isnan(median_h), fallback, median_h)
    hold_h = np.where(np.isnan(spacing_h), median_h, np.minimum(spacing_h, MAX_HOLD_SPACINGS * median_h))
    window = Window.covering(ts.min(), (ts + pd.to_timedelta(hold_h * 3600.0, unit="s")).max())
    start_h = window.to_hours(ts)
    busy, total = sample_weights(frame)
    keep = ~np.isnan(busy) & ~np.isnan(total) & (hold_h > 0)
    intervals = pd.DataFrame({
        "region": frame["region"].to_numpy()[keep],
        "start_h": start_h[keep],
        "end_h": (start_h + hold_h)[keep],
        "busy": busy[keep],
        "total": total[keep],
    })
    return intervals, window, str(unit)

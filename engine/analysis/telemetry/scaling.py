"""Where predictive scaling would have helped: per region and local hour of the day, capacity that
was short on most days, or idle on almost all of them.

Input: the Time zones analysis's hourly table (engine.analysis.telemetry.timezones: per region and whole UTC
hour, capacity_gpus, queued_gpu_hours, idle_gpu_hours, local_hour). Each hour bin is given its
region's local day. For every region and local hour h:
  short_days   = share of the local days on which GPUs waited in the queue during hour h;
  add_gpus     = the median queued GPUs at h over those days (GPUs a scaled-up fleet would have had
                 to add at that hour to serve the queue; capped at what waited);
  idle_days    = share of the days on which nothing waited at h;
  release_gpus = the 10th percentile of idle GPUs at h over all days (idle on 90 % of days: capacity
                 that could have been released, or lent, at that hour).
A suggestion is a run of consecutive local hours (wrapping midnight) where short_days >= SHORT_SHARE
("add") or where idle_days >= IDLE_SHARE and release_gpus >= MIN_GPUS ("release"); its GPUs are the
median of add_gpus (or the minimum of release_gpus) over the run, and gpu_hours_per_day = GPUs x hours.
Only regions with at least MIN_DAYS local days are judged. A recorded history shows what its own
scheduler did: a region short at 10:00 on most days is where capacity bought or borrowed for those
hours would have cut waits.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

SHORT_SHARE = 0.5   # GPUs waited at that hour on at least half of the days
IDLE_SHARE = 0.9    # nothing waited at that hour on at least 90 % of the days
MIN_GPUS = 1.0      # smaller suggestions are noise
MIN_DAYS = 3
COLUMNS = ["region", "action", "local_start_hour", "local_end_hour", "gpus", "gpu_hours_per_day", "days_share",
           "sentence"]


def _local_day(hourly: pd.DataFrame) -> np.ndarray:
    """The local calendar day of each bin: its UTC start shifted by the region's whole-hour offset."""
    utc_hour = hourly["bin_start_utc"].dt.hour.to_numpy()
    offset = (hourly["local_hour"].to_numpy() - utc_hour + 12) % 24 - 12
    local = hourly["bin_start_utc"] + pd.to_timedelta(offset, unit="h")
    return local.dt.floor("D").to_numpy()


def _runs(flags: np.ndarray) -> list[list[int]]:
    """Maximal runs of True hours 0-23, a run across midnight joined into one."""
    runs, current = [], []
    for hour in range(24):
        if flags[hour]:
            current.append(hour)
        elif current:
            runs.append(current)
            current = []
    if current:
        if runs and runs[0][0] == 0 and len(current) < 24:
            runs[0] = current + runs[0]
        else:
            runs.append(current)
    return runs


def _sentence(region: str, action: str, hours: list[int], gpus: float, share: float) -> str:
    span = f"{hours[0]:02d}:00-{(hours[-1] + 1) % 24:02d}:00 local"
    if action == "add":
        return (f"{region}: about {gpus:,.0f} more GPUs {span} would have served the queue that built up "
                f"then on {share:.0%} of days.")
    return f"{region}: {gpus:,.0f} GPUs sat idle {span} on {share:.0%} of days; they could be released or lent."


def suggestions(hourly: pd.DataFrame) -> pd.DataFrame:
    """COLUMNS, one row per suggestion, by region then local start hour (see the module docstring)."""
    if hourly.empty:
        return pd.DataFrame(columns=COLUMNS)
    frame = hourly.assign(day=_local_day(hourly), queued=hourly["queued_gpu_hours"].to_numpy(float),
                          idle=hourly["idle_gpu_hours"].to_numpy(float))
    rows = []
    for region, part in frame.groupby("region", sort=True):
        if part["day"].nunique() < MIN_DAYS:
            continue
        by_hour = part.groupby("local_hour")
        short = by_hour["queued"].apply(lambda q: float((q > 1e-9).mean())).reindex(range(24), fill_value=0.0)
        add = by_hour["queued"].apply(lambda q: float(q[q > 1e-9].median()) if (q > 1e-9).any() else 0.0
                                      ).reindex(range(24), fill_value=0.0)
        idle_days = 1.0 - short
        release = by_hour["idle"].quantile(0.1).reindex(range(24), fill_value=0.0)
        for action, flags, size, share in (
                ("add", (short >= SHORT_SHARE).to_numpy() & (add >= MIN_GPUS).to_numpy(), add, short),
                ("release", (idle_days >= IDLE_SHARE).to_numpy() & (release >= MIN_GPUS).to_numpy(), release,
                 idle_days)):
            for hours in _runs(flags):
                gpus = float(np.median(size.to_numpy()[hours]) if action == "add" else size.to_numpy()[hours].min())
                days = float(share.to_numpy()[hours].mean())
                rows.append({"region": region, "action": action, "local_start_hour": hours[0],
                             "local_end_hour": (hours[-1] + 1) % 24, "gpus": gpus,
                             "gpu_hours_per_day": gpus * len(hours), "days_share": days,
                             "sentence": _sentence(region, action, hours, gpus, days)})
    return pd.DataFrame(rows, columns=COLUMNS)

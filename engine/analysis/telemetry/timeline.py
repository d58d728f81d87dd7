"""Utilisation over time per region, hourly or daily (UTC).

utilisation_pct(bin, region) = 100 x busy_unit_hours / capacity_unit_hours, where both are sums
over the region's GPU types (or sampled series) and over the hours in the bin.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

TIMELINE_COLUMNS = ["region", "bin_start_utc", "busy_unit_hours", "capacity_unit_hours", "utilisation_pct"]
FREQUENCIES = {"hourly": "h", "daily": "D"}


def utilisation_pct(busy, capacity) -> np.ndarray:
    """100 x busy / capacity, NaN where there is no capacity."""
    busy = np.asarray(busy, dtype=float)
    capacity = np.asarray(capacity, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(capacity > 0, 100.0 * busy / capacity, np.nan)


def utilisation_timeline(region_bins: pd.DataFrame, freq: str = "hourly") -> pd.DataFrame:
    """Region bins on UTC hour edges -> one row per region and hour (or UTC day)."""
    if freq not in FREQUENCIES:
        raise ValueError(f"freq must be one of {sorted(FREQUENCIES)}")
    if region_bins.empty:
        return pd.DataFrame(columns=TIMELINE_COLUMNS)
    frame = region_bins.assign(bin_start_utc=pd.to_datetime(region_bins["bin_start_utc"]).dt.floor(
        FREQUENCIES[freq]))
    out = frame.groupby(["region", "bin_start_utc"], as_index=False)[
        ["busy_unit_hours", "capacity_unit_hours"]].sum()
    out["utilisation_pct"] = utilisation_pct(out["busy_unit_hours"], out["capacity_unit_hours"])
    return out[TIMELINE_COLUMNS].sort_values(["region", "bin_start_utc"]).reset_index(drop=True)


def fleet_timeline(timeline: pd.DataFrame) -> pd.DataFrame:
    """All regions together: per bin, busy and capacity summed over regions, then utilisation_pct."""
    columns = TIMELINE_COLUMNS[1:]
    if timeline.empty:
        return pd.DataFrame(columns=columns)
    out = timeline.groupby("bin_start_utc", as_index=False)[["busy_unit_hours", "capacity_unit_hours"]].sum()
    out["utilisation_pct"] = utilisation_pct(out["busy_unit_hours"], out["capacity_unit_hours"])
    return out[columns]

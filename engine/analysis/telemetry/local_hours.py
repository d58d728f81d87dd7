"""Local hours of a region over a run: where the local hour changes, DST included."""
from __future__ import annotations

import numpy as np
import pandas as pd


def _utc(stamp) -> pd.Timestamp:
    stamp = pd.Timestamp(stamp)
    return stamp.tz_convert("UTC") if stamp.tzinfo else stamp.tz_localize("UTC")


def local_hour_bins(origin_utc, horizon_s: float, timezone: str) -> tuple[np.ndarray, np.ndarray]:
    """(edges, hours): cut points in seconds from `origin_utc` (naive = UTC) from 0 to horizon_s,
    at every change of the local hour in `timezone`, and the local hour (0-23) of each piece."""
    start = _utc(origin_utc)
    grid = pd.date_range(start.floor("15min"), start + pd.Timedelta(seconds=horizon_s), freq="15min")
    turns = (grid[grid.tz_convert(timezone).minute == 0] - start).total_seconds().to_numpy(np.float64)
    edges = np.unique(np.concatenate(([0.0], turns[(turns > 0) & (turns < horizon_s)], [horizon_s])))
    hours = (start + pd.to_timedelta(edges[:-1], unit="s")).tz_convert(timezone).hour.to_numpy(np.int64)
    return edges, hours

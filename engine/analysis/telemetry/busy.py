"""Busy and capacity unit-hours per time bin.

busy_gpu_hours(bin, region, gpu_type) = integral over the bin of the GPUs allocated to that
region's jobs of that type (see `intervals.integrate`); capacity_gpu_hours = capacity_gpus x the
bin's length in hours. Region-level bins (`region_bins`) add GPU types up; they are the common
input of the utilisation timeline and the hour-of-week heat map, whether they come from jobs or
from utilisation samples (where busy and capacity are the integrals of the sampled busy and
total units).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.window import Window
from engine.core.intervals import integrate, overlap_hours

REGION_BIN_COLUMNS = ["region", "bin_start_utc", "bin_hours", "busy_unit_hours", "capacity_unit_hours"]


def integrate_groups(intervals: pd.DataFrame, keys: list[str], weight: str, edges: np.ndarray) -> pd.DataFrame:
    """Integral of `weight` per group of `keys` and per bin: columns keys + bin + weight.

    `bin` k is [edges[k], edges[k+1]). Groups come out sorted by key, bins in time order.
    """
    n_bins = len(edges) - 1
    labels, values = [], []
    for key, rows in intervals.groupby(keys, sort=True, observed=True):
        labels.append(key if isinstance(key, tuple) else (key,))
        values.append(integrate(rows["start_h"].to_numpy(), rows["end_h"].to_numpy(), rows[weight].to_numpy(), edges))
    out = {k: np.repeat(np.array([label[i] for label in labels], dtype=object), n_bins) for i, k in enumerate(keys)}
    out["bin"] = np.tile(np.arange(n_bins), len(labels))
    out[weight] = np.concatenate(values) if values else np.zeros(0)
    return pd.DataFrame(out)


def hourly_by_type(intervals: pd.DataFrame, cap: pd.DataFrame, window: Window) -> pd.DataFrame:
    """Per UTC hour and (region, gpu_type) of the capacity table: busy and capacity GPU-hours.

    Columns: region, gpu_type, bin_start_utc, busy_gpu_hours, capacity_gpu_hours. Every pair
    in `cap` gets every hour of the window (busy 0 where nothing ran).
    """
    edges = window.hour_edges()
    n_bins = len(edges) - 1
    busy = integrate_groups(intervals, ["region", "gpu_type"], "gpus", edges)
    grid = pd.DataFrame({
        "region": np.repeat(cap["region"].to_numpy(), n_bins),
        "gpu_type": np.repeat(cap["gpu_type"].to_numpy(), n_bins),
        "bin": np.tile(np.arange(n_bins), len(cap)),
        "capacity_gpu_hours": np.repeat(cap["capacity_gpus"].to_numpy(dtype=float), n_bins),
    })
    out = grid.merge(busy, on=["region", "gpu_type", "bin"], how="left")
    out["busy_gpu_hours"] = out.pop("gpus").fillna(0.0).astype(float)
    out["bin_start_utc"] = window.start_utc + pd.to_timedelta(out.pop("bin"), unit="h")
    return out[["region", "gpu_type", "bin_start_utc", "busy_gpu_hours", "capacity_gpu_hours"]]


def _bins_frame(region: str, edges: np.ndarray, window: Window, busy, capacity) -> pd.DataFrame:
    return pd.DataFrame({
        "region": region,
        "bin_start_utc": window.to_utc(edges[:-1]),
        "bin_hours": np.diff(edges),
        "busy_unit_hours": busy,
        "capacity_unit_hours": capacity,
    })


def job_region_bins(intervals: pd.DataFrame, region_gpus: pd.Series, window: Window,
                    edges_for) -> pd.DataFrame:
    """Region-level bins from job allocations; `edges_for(region)` gives that region's bins.

    busy = integral of the region's allocated GPUs; capacity = region GPUs x bin hours.
    """
    parts = []
    grouped = dict(tuple(intervals.groupby("region", sort=True)))
    for region, gpus in region_gpus.sort_index().items():
        edges = edges_for(region)
        rows = grouped.get(region, intervals.iloc[:0])
        busy = integrate(rows["start_h"], rows["end_h"], rows["gpus"], edges)
        capacity = float(gpus) * overlap_hours(edges, 0.0, window.hours)
        parts.append(_bins_frame(region, edges, window, busy, capacity))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=REGION_BIN_COLUMNS)


def sample_region_bins(intervals: pd.DataFrame, window: Window, edges_for) -> pd.DataFrame:
    """Region-level bins from utilisation samples: busy and capacity are the integrals of the
    sampled busy and total units over each bin."""
    parts = []
    for region, rows in intervals.groupby("region", sort=True):
        edges = edges_for(region)
        busy = integrate(rows["start_h"], rows["end_h"], rows["busy"], edges)
        capacity = integrate(rows["start_h"], rows["end_h"], rows["total"], edges)
        parts.append(_bins_frame(region, edges, window, busy, capacity))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=REGION_BIN_COLUMNS)

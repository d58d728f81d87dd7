"""Headline numbers of the Overview page, each traceable to one formula.

utilisation_pct      = 100 x sum(busy unit-hours) / sum(capacity unit-hours), all regions and hours
idle_unit_hours      = sum over regions, GPU types and UTC hours of max(capacity - busy, 0)
p95_wait_h           = 95th percentile of (start - submit) over every started job, in hours
capacity_units       = GPUs (or nodes) in the fleet; for sampled data the time-averaged total

The Overview's dollars are not telemetry KPIs: see engine.analysis.telemetry.idle.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Kpis:
    """Headline figures for one dataset. NaN means 'not available for this data'."""

    utilisation_pct: float
    idle_unit_hours: float
    p95_wait_h: float
    jobs: int
    capacity_units: float
    unit: str                 # "gpus" or "nodes": what busy and capacity count
    start_utc: pd.Timestamp   # first instant in the data
    end_utc: pd.Timestamp     # last instant in the data
    window_days: float        # length of the whole-hour analysis window
    capacity_source: str      # fleet | inferred | mixed | samples


def headline(region_bins: pd.DataFrame, idle_by_type: pd.DataFrame, *, p95_wait_h: float, jobs: int,
             capacity_units: float, unit: str, window, capacity_source: str) -> Kpis:
    """Assemble the KPIs from the region-level UTC-hour bins and the idle table."""
    busy = float(region_bins["busy_unit_hours"].sum())
    capacity = float(region_bins["capacity_unit_hours"].sum())
    return Kpis(
        utilisation_pct=100.0 * busy / capacity if capacity > 0 else float("nan"),
        idle_unit_hours=float(idle_by_type["idle_gpu_hours"].sum()),
        p95_wait_h=p95_wait_h,
        jobs=int(jobs),
        capacity_units=float(capacity_units),
        unit=unit,
        start_utc=window.data_start_utc,
        end_utc=window.data_end_utc,
        window_days=window.days,
        capacity_source=capacity_source,
    )

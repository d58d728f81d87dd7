"""Headline numbers of the Overview page, each traceable to one formula.

utilisation_pct      = 100 x sum(busy unit-hours) / sum(capacity unit-hours), all regions and hours
idle_unit_hours      = sum over regions, GPU types and UTC hours of max(capacity - busy, 0)
idle_usd             = sum of idle GPU-hours x price of the tier the capacity is bought at
idle_usd_per_month   = idle_usd / window_days x 30.4375 (the mean month of the Gregorian calendar)
p95_wait_h           = 95th percentile of (start - submit) over every started job, in hours
capacity_units       = GPUs (or nodes) in the fleet; for sampled data the time-averaged total
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

DAYS_PER_MONTH = 30.4375


@dataclass(frozen=True)
class Kpis:
    """Headline figures for one dataset. NaN means 'not available for this data'."""

    utilisation_pct: float
    idle_unit_hours: float
    idle_usd: float
    idle_usd_per_month: float
    p95_wait_h: float
    jobs: int
    capacity_units: float
    unit: str                 # "gpus" or "nodes": what busy and capacity count
    start_utc: pd.Timestamp   # first instant in the data
    end_utc: pd.Timestamp     # last instant in the data
    window_days: float        # length of the whole-hour analysis window
    capacity_source: str      # fleet | inferred | mixed | samples
    price_source: str         # dataset | assumed | partly assumed | none


def per_month(amount: float, days: float) -> float:
    """Scale an amount observed over `days` days to a mean calendar month."""
    return amount / days * DAYS_PER_MONTH if days > 0 else float("nan")


def price_source(idle_by_tier: pd.DataFrame, priced: bool) -> str:
    """Where the idle dollars' prices came from: the dataset, the default price book, or both."""
    if not priced or idle_by_tier.empty:
        return "none"
    assumed = idle_by_tier["price_assumed"].astype(bool)
    if assumed.all():
        return "assumed"
    return "partly assumed" if assumed.any() else "dataset"


def headline(region_bins: pd.DataFrame, idle_by_type: pd.DataFrame, *, p95_wait_h: float, jobs: int,
             capacity_units: float, unit: str, window, capacity_source: str, price_source: str) -> Kpis:
    """Assemble the KPIs from the region-level UTC-hour bins and the idle table."""
    busy = float(region_bins["busy_unit_hours"].sum())
    capacity = float(region_bins["capacity_unit_hours"].sum())
    idle_usd = float(idle_by_type["idle_usd"].sum(min_count=1)) if not idle_by_type.empty else float("nan")
    return Kpis(
        utilisation_pct=100.0 * busy / capacity if capacity > 0 else float("nan"),
        idle_unit_hours=float(idle_by_type["idle_gpu_hours"].sum()),
        idle_usd=idle_usd,
        idle_usd_per_month=per_month(idle_usd, window.days) if not np.isnan(idle_usd) else float("nan"),
        p95_wait_h=p95_wait_h,
        jobs=int(jobs),
        capacity_units=float(capacity_units),
        unit=unit,
        start_utc=window.data_start_utc,
        end_utc=window.data_end_utc,
        window_days=window.days,
        capacity_source=capacity_source,
        price_source=price_source,
    )

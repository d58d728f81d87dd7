"""Idle GPU-hours by region and GPU type, and the price table the cost reports complete.

idle_gpu_hours(region, type) = sum over UTC hours h of max(capacity_gpu_hours_h - busy_gpu_hours_h, 0)
(an hour that is over-allocated counts as 0 idle, never negative).

What idle GPUs cost is not computed here: the telemetry says how many GPUs of a type were busy, not
which pricing tier's, so the dollars come from a run that places every job on a node
(engine.analysis.runs.cost; the Overview prices the recorded baseline's replay).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.activity import normalise_keys
from engine.analysis.telemetry.timeline import utilisation_pct
from engine.world.pricebook import default_price_rows

TYPE_IDLE_COLUMNS = ["region", "gpu_type", "busy_gpu_hours", "capacity_gpu_hours", "idle_gpu_hours",
                     "utilisation_pct"]


def idle_by_type(hourly: pd.DataFrame) -> pd.DataFrame:
    """Busy, capacity and idle GPU-hours and utilisation (%) per (region, gpu_type) from the hourly bins
    (region, gpu_type, busy_gpu_hours, capacity_gpu_hours per hour): TYPE_IDLE_COLUMNS."""
    frame = hourly.assign(idle_gpu_hours=np.maximum(
        hourly["capacity_gpu_hours"] - hourly["busy_gpu_hours"], 0.0))
    per_type = frame.groupby(["region", "gpu_type"], as_index=False)[
        ["busy_gpu_hours", "capacity_gpu_hours", "idle_gpu_hours"]].sum()
    per_type["utilisation_pct"] = utilisation_pct(per_type["busy_gpu_hours"], per_type["capacity_gpu_hours"])
    return per_type[TYPE_IDLE_COLUMNS].sort_values(["region", "gpu_type"]).reset_index(drop=True)


def price_table(prices: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """usd_per_gpu_hour and assumed per (region, gpu_type, tier), completed from the price book."""
    have = normalise_keys(prices[["region", "gpu_type", "tier", "usd_per_gpu_hour", "assumed"]]) \
        if not prices.empty else pd.DataFrame(columns=["region", "gpu_type", "tier", "usd_per_gpu_hour", "assumed"])
    known = set(zip(have["region"], have["gpu_type"], have["tier"]))
    extra = [row for region, gpu_type in pairs[["region", "gpu_type"]].drop_duplicates().itertuples(index=False)
             for row in default_price_rows(region, gpu_type) if (region, gpu_type, row["tier"]) not in known]
    table = pd.concat([have, pd.DataFrame(extra)], ignore_index=True) if extra else have
    table["assumed"] = table["assumed"].astype(bool)
    return table.rename(columns={"assumed": "price_assumed"})

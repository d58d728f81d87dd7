"""Idle GPU-hours and what they cost, by region, GPU type and pricing tier.

idle_gpu_hours(region, type) = sum over UTC hours h of max(capacity_gpu_hours_h - busy_gpu_hours_h, 0)
(an hour that is over-allocated counts as 0 idle, never negative).
The idle hours of a (region, type) are split over the tiers its fleet rows name (reserved,
on-demand, spot) in proportion to each tier's GPUs, since the data does not say which GPUs sat
idle; inferred capacity is on-demand.
idle_usd = idle_gpu_hours(tier) x usd_per_gpu_hour(region, type, tier) from the dataset's prices
table; a missing price comes from the default price book. Either way a price flagged `assumed`
marks the dollars as resting on an assumption. Reserved idle is money paid for nothing;
on-demand and spot idle is what the provisioned but unused capacity costs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.activity import normalise_keys
from engine.analysis.telemetry.timeline import utilisation_pct
from engine.world.pricebook import default_price_rows

TIER_IDLE_COLUMNS = ["region", "gpu_type", "tier", "capacity_gpus", "idle_gpu_hours",
                     "usd_per_gpu_hour", "price_assumed", "idle_usd"]
TYPE_IDLE_COLUMNS = ["region", "gpu_type", "capacity_gpus", "busy_gpu_hours", "capacity_gpu_hours",
                     "idle_gpu_hours", "utilisation_pct", "idle_usd", "price_assumed"]


def idle_by_type_hours(hourly: pd.DataFrame) -> pd.DataFrame:
    """Busy, capacity and idle GPU-hours per (region, gpu_type) from the hourly bins."""
    frame = hourly.assign(idle_gpu_hours=np.maximum(
        hourly["capacity_gpu_hours"] - hourly["busy_gpu_hours"], 0.0))
    return frame.groupby(["region", "gpu_type"], as_index=False)[
        ["busy_gpu_hours", "capacity_gpu_hours", "idle_gpu_hours"]].sum()


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


def idle_costs(hourly: pd.DataFrame, tiers: pd.DataFrame, prices: pd.DataFrame,
               priced: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(idle per region, type and tier with dollars; idle per region and type).

    `hourly` has region, gpu_type, busy_gpu_hours, capacity_gpu_hours per hour; `tiers` has
    capacity_gpus per (region, gpu_type, tier). With priced=False (capacity not in GPUs) the
    dollar columns are NaN.
    """
    per_type = idle_by_type_hours(hourly)
    split = tiers.merge(per_type[["region", "gpu_type", "idle_gpu_hours"]], on=["region", "gpu_type"], how="inner")
    type_gpus = split.groupby(["region", "gpu_type"])["capacity_gpus"].transform("sum")
    split["idle_gpu_hours"] = split["idle_gpu_hours"] * split["capacity_gpus"] / type_gpus
    if priced:
        split = split.merge(price_table(prices, split), on=["region", "gpu_type", "tier"], how="left")
        split["idle_usd"] = split["idle_gpu_hours"] * split["usd_per_gpu_hour"]
    else:
        split = split.assign(usd_per_gpu_hour=np.nan, price_assumed=False, idle_usd=np.nan)
    by_tier = split[TIER_IDLE_COLUMNS].sort_values(["region", "gpu_type", "tier"]).reset_index(drop=True)
    money = by_tier.groupby(["region", "gpu_type"], as_index=False).agg(
        capacity_gpus=("capacity_gpus", "sum"), idle_usd=("idle_usd", lambda s: s.sum(min_count=1)),
        price_assumed=("price_assumed", "any"))
    by_type = per_type.merge(money, on=["region", "gpu_type"], how="left")
    by_type["utilisation_pct"] = utilisation_pct(by_type["busy_gpu_hours"], by_type["capacity_gpu_hours"])
    return by_tier, by_type[TYPE_IDLE_COLUMNS].sort_values(["region", "gpu_type"]).reset_index(drop=True)

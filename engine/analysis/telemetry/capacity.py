"""GPU capacity per (region, GPU type): from the fleet table, or inferred from the jobs.

capacity_gpus = sum of the fleet rows' `gpus` for that region and GPU type
                (capacity_source = "fleet").
For a (region, GPU type) the fleet does not list (or when the dataset has no fleet at all):
capacity_gpus = ceil(peak concurrent allocation of its jobs) (capacity_source = "inferred"),
the smallest whole number of GPUs that could have run the recorded jobs; such capacity is
taken to be on-demand, since nothing says it was reserved.
"""
from __future__ import annotations

import math

import pandas as pd

from engine.analysis.telemetry.activity import UNKNOWN_GPU, normalise_keys
from engine.core.intervals import peak_concurrency

CAPACITY_COLUMNS = ["region", "gpu_type", "capacity_gpus", "capacity_source"]
TIER_COLUMNS = ["region", "gpu_type", "tier", "capacity_gpus"]
INFERRED_TIER = "on-demand"
_ROUNDING = 1e-9  # fractional GPUs summed in floating point may overshoot a whole number by this


def fleet_tiers(fleet: pd.DataFrame) -> pd.DataFrame:
    """GPUs per (region, gpu_type, tier) from the fleet table."""
    if fleet.empty:
        return pd.DataFrame(columns=TIER_COLUMNS)
    frame = normalise_keys(fleet[["region", "gpu_type", "tier", "gpus"]])
    out = frame.groupby(["region", "gpu_type", "tier"], as_index=False)["gpus"].sum()
    out = out.rename(columns={"gpus": "capacity_gpus"})
    out["capacity_gpus"] = out["capacity_gpus"].astype(float)
    return out[out["capacity_gpus"] > 0].sort_values(["region", "gpu_type", "tier"]).reset_index(drop=True)


def spread_unknown_types(intervals: pd.DataFrame, tiers: pd.DataFrame) -> pd.DataFrame:
    """Give jobs without a GPU type the GPU types of their region's fleet.

    A job of type 'unknown' in a region whose fleet lists GPU types (but no 'unknown' type) is
    split over those types in proportion to their capacity: it holds gpus * share_t of type t.
    Other jobs are returned unchanged.
    """
    if tiers.empty or intervals.empty:
        return intervals
    by_type = tiers.groupby(["region", "gpu_type"], as_index=False)["capacity_gpus"].sum()
    typed_regions = set(by_type.loc[by_type["gpu_type"] == UNKNOWN_GPU, "region"])
    by_type["share"] = by_type["capacity_gpus"] / by_type.groupby("region")["capacity_gpus"].transform("sum")
    movable = (intervals["gpu_type"] == UNKNOWN_GPU) & intervals["region"].isin(
        set(by_type["region"]) - typed_regions)
    if not movable.any():
        return intervals
    spread = intervals[movable].drop(columns="gpu_type").merge(
        by_type[["region", "gpu_type", "share"]], on="region", how="inner")
    spread["gpus"] = spread["gpus"] * spread.pop("share")
    out = pd.concat([intervals[~movable], spread[intervals.columns]], ignore_index=True)
    return out.astype({"region": "category", "gpu_type": "category"})


def capacity(tiers: pd.DataFrame, intervals: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(capacity per region and GPU type, capacity per region, GPU type and tier).

    `tiers` comes from `fleet_tiers`; `intervals` are job allocations (after
    `spread_unknown_types`). Pairs only the jobs know get inferred on-demand capacity.
    """
    fleet_cap = tiers.groupby(["region", "gpu_type"], as_index=False)["capacity_gpus"].sum()
    fleet_cap["capacity_source"] = "fleet"
    known = set(zip(fleet_cap["region"], fleet_cap["gpu_type"]))
    inferred = []
    for (region, gpu_type), rows in intervals.groupby(["region", "gpu_type"], sort=True):
        if (region, gpu_type) in known:
            continue
        peak = peak_concurrency(rows["start_h"], rows["end_h"], rows["gpus"])
        inferred.append((region, gpu_type, float(math.ceil(peak - _ROUNDING)), "inferred"))
    extra = pd.DataFrame(inferred, columns=CAPACITY_COLUMNS)
    extra = extra[extra["capacity_gpus"] > 0]
    parts = [f for f in (fleet_cap[CAPACITY_COLUMNS], extra) if not f.empty]
    cap = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CAPACITY_COLUMNS)
    cap["capacity_gpus"] = cap["capacity_gpus"].astype(float)
    cap = cap.sort_values(["region", "gpu_type"]).reset_index(drop=True)
    extra_tiers = extra.drop(columns="capacity_source").assign(tier=INFERRED_TIER)[TIER_COLUMNS]
    tier_parts = [f for f in (tiers, extra_tiers) if not f.empty]
    all_tiers = pd.concat(tier_parts, ignore_index=True) if tier_parts else pd.DataFrame(columns=TIER_COLUMNS)
    all_tiers = all_tiers.sort_values(["region", "gpu_type", "tier"]).reset_index(drop=True)
    return cap, all_tiers


def capacity_source(cap: pd.DataFrame) -> str:
    """'fleet', 'inferred', or 'mixed' when some pairs come from each."""
    sources = set(cap["capacity_source"]) if not cap.empty else {"inferred"}
    return sources.pop() if len(sources) == 1 else "mixed"


def region_capacity(cap: pd.DataFrame) -> pd.Series:
    """Total GPUs per region (index: region)."""
    return cap.groupby("region")["capacity_gpus"].sum().astype(float) if not cap.empty else pd.Series(
        dtype=float, index=pd.Index([], name="region"))


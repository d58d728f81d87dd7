"""From a fleet table to the integer program's pools, and from its answer back to a fleet table.

A pool is a (region, gpu_type) of the fleet. Its node shape (GPUs, CPUs, memory per node) is the
most common one among today's nodes of the pool; prices come from the dataset's prices table,
completed from the default price book (engine.analysis.telemetry.idle.price_table). A planned fleet is
built from today's nodes of each pool as templates: per pool its reserved nodes first, then spot,
then on-demand (so the lowest-index gang placement, like cheapest-tier placement, uses committed
capacity first), named `<cluster>-plan-<tier>-<n>`, in racks of four.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.idle import price_table
from engine.core.fleet_view import TIER_RANK
from engine.service.planning.fleet_milp import FleetPlan, PoolOptions
from engine.service.planning.settings import PlanSettings

TIERS = ("reserved", "spot", "on-demand")
RACK_NODES = 4


def gpu_pools(fleet: pd.DataFrame) -> pd.DataFrame:
    """One row per (region, gpu_type) with GPUs: gpus_per_node and the template node of its most
    common shape, and today's GPUs per tier (reserved_gpus, spot_gpus, on_demand_gpus)."""
    nodes = fleet[fleet["gpus"] > 0]
    rows = []
    for (region, gpu_type), group in nodes.groupby(["region", "gpu_type"], sort=True):
        shape = group.groupby("gpus").size().sort_index().idxmax()
        template = group[group["gpus"] == shape].iloc[0]
        today = group.groupby("tier")["gpus"].sum()
        rows.append({"region": region, "gpu_type": gpu_type, "gpus_per_node": int(shape), "template": template,
                     **{_column(tier): float(today.get(tier, 0.0)) for tier in TIERS}})
    return pd.DataFrame(rows)


def pool_options(pools: pd.DataFrame, prices: pd.DataFrame, settings: PlanSettings,
                 min_nodes: dict[tuple[str, str], int]) -> list[PoolOptions]:
    """The integer program's options per pool: prices per tier, the spot cap (spot_max_share of the
    pool's GPUs today, at least one node when the share is positive), today's reserved nodes as a
    floor when keep_reserved, and `min_nodes` (the widest gang job's nodes) as the smallest pool."""
    book = price_table(prices, pools[["region", "gpu_type"]].assign(tier="reserved"))
    price = {(r, g, t): float(p) for r, g, t, p in book[["region", "gpu_type", "tier", "usd_per_gpu_hour"]]
             .itertuples(index=False)}
    options = []
    for row in pools.itertuples(index=False):
        key = (row.region, row.gpu_type)
        today = row.reserved_gpus + row.spot_gpus + row.on_demand_gpus
        spot_cap = 0.0 if settings.spot_max_share <= 0 else max(settings.spot_max_share * today, row.gpus_per_node)
        options.append(PoolOptions(
            region=row.region, gpu_type=row.gpu_type, gpus_per_node=row.gpus_per_node,
            reserved_usd=price[(*key, "reserved")], on_demand_usd=price[(*key, "on-demand")],
            spot_usd=price[(*key, "spot")], max_spot_gpus=spot_cap,
            min_reserved_nodes=int(row.reserved_gpus // row.gpus_per_node) if settings.keep_reserved else 0,
            spot_efficiency=settings.spot_efficiency, min_nodes=int(min_nodes.get(key, 0))))
    return options


def planned_fleet(pools: pd.DataFrame, plan: FleetPlan) -> pd.DataFrame:
    """The fleet table of `plan`: per pool its reserved, spot and on-demand nodes, cloned from the
    pool's template node."""
    index = {pool: i for i, pool in enumerate(plan.pools)}
    counts = {"reserved": plan.reserved_nodes, "spot": plan.spot_nodes, "on-demand": plan.on_demand_nodes}
    frames = []
    for row in pools.itertuples(index=False):
        i = index.get((row.region, row.gpu_type))
        if i is None:
            continue
        template = row.template
        for tier in TIERS:
            n = int(counts[tier][i])
            if not n:
                continue
            nodes = pd.DataFrame([template] * n).reset_index(drop=True)
            nodes["tier"] = tier
            nodes["node"] = [f"{template['cluster']}-plan-{tier}-{k + 1}" for k in range(n)]
            frames.append(nodes)
    fleet = pd.concat(frames, ignore_index=True)
    fleet["rack"] = [f"{c}-plan-r{k // RACK_NODES:03d}" for c, k in
                     zip(fleet["cluster"], fleet.groupby("cluster").cumcount())]
    return fleet


def tier_ordered(fleet: pd.DataFrame) -> pd.DataFrame:
    """Today's fleet with each cluster's nodes in tier order (reserved, spot, on-demand; stable), so
    that it runs under the same rules as a planned fleet."""
    rank = fleet["tier"].map(TIER_RANK).fillna(0)
    region_order = {r: i for i, r in enumerate(dict.fromkeys(fleet["region"]))}
    keys = pd.DataFrame({"region": fleet["region"].map(region_order), "cluster": fleet["cluster"], "rank": rank,
                         "pos": np.arange(len(fleet))})
    return fleet.iloc[keys.sort_values(["region", "cluster", "rank", "pos"]).index].reset_index(drop=True)


def _column(tier: str) -> str:
    return tier.replace("-", "_") + "_gpus"


def fleet_gpus(fleet: pd.DataFrame) -> pd.DataFrame:
    """GPUs per region, gpu_type and tier (a tier a pool lacks is 0)."""
    table = fleet[fleet["gpus"] > 0].pivot_table(index=["region", "gpu_type"], columns="tier", values="gpus",
                                                 aggfunc="sum", fill_value=0)
    table = table.reindex(columns=list(TIERS), fill_value=0).reset_index()
    table.columns.name = None
    table["total"] = table[list(TIERS)].sum(axis=1)
    return table

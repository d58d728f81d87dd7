"""The world of the sample company: regions, prices, carbon, fleet and teams.

Everything here is fixed data (no randomness); `fleet_frame(scale)` multiplies node
counts by the scale factor. Prices are USD per GPU-hour, carbon intensity is grams of
CO2-equivalent per kWh by local hour, egress is USD per GB leaving the region.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Region:
    name: str
    timezone: str              # IANA name
    country: str               # ISO 3166 alpha-2
    jurisdiction: str          # legal area for data residency
    egress_usd_per_gb: float
    price_factor: float        # regional multiplier on the list price
    reserved_factor: float     # reserved price / on-demand price
    spot_factor: float         # spot price / on-demand price
    carbon: tuple[float, ...]  # 24 values, g CO2e per kWh by local hour


@dataclass(frozen=True)
class Pool:
    """All nodes of one GPU type in one region (one `cluster`)."""

    region: str
    gpu_type: str
    nodes: tuple[tuple[int, int], ...]   # (node count at scale 1, GPUs per node)
    tiers: tuple[float, float]           # share of nodes reserved, on-demand; the rest is spot
    nodes_per_rack: int

    @property
    def cluster(self) -> str:
        return f"{self.region}-{self.gpu_type.lower()}"


@dataclass(frozen=True)
class Team:
    name: str
    timezone: str
    work_start_hour: int       # local hour the working day starts
    work_end_hour: int         # local hour it ends
    working_days: str          # "Mon-Fri" or "Sun-Thu"
    holiday_country: str       # ISO code understood by the holidays package
    home_region: str
    share_weight: float


def _carbon(base: float, solar: float = 0.0, evening: float = 0.0, night: float = 0.0) -> tuple[float, ...]:
    """24 hourly intensities: a base level, a midday solar dip, an evening peak, a night change."""
    hours = np.arange(24)
    curve = (base
             - solar * np.exp(-0.5 * ((hours - 13.0) / 2.5) ** 2)
             + evening * np.exp(-0.5 * ((hours - 19.5) / 1.8) ** 2)
             + night * np.exp(-0.5 * ((hours - 3.0) / 2.5) ** 2))
    return tuple(round(float(v), 1) for v in curve)


REGIONS = (
    Region("us-east", "America/New_York", "US", "US", 0.09, 1.00, 0.58, 0.32, _carbon(390, 40, 45, -25)),
    Region("us-west", "America/Los_Angeles", "US", "US", 0.09, 1.05, 0.60, 0.36, _carbon(260, 170, 70, -10)),
    Region("eu-west", "Europe/Dublin", "IE", "EU", 0.085, 1.12, 0.62, 0.38, _carbon(310, 30, 70, -40)),
    Region("eu-north", "Europe/Stockholm", "SE", "EU", 0.08, 1.08, 0.60, 0.34, _carbon(35, 4, 9, -4)),
    Region("me-central", "Asia/Riyadh", "SA", "SA", 0.11, 1.18, 0.65, 0.42, _carbon(560, 30, 60, -30)),
    Region("ap-south", "Asia/Kolkata", "IN", "IN", 0.10, 0.92, 0.55, 0.30, _carbon(710, 70, 40, 10)),
    Region("ap-northeast", "Asia/Tokyo", "JP", "JP", 0.12, 1.15, 0.63, 0.40, _carbon(470, 80, 50, -20)),
)

# USD per GPU-hour, on-demand list price before the regional factor.
LIST_PRICE = {"H100": 4.00, "A100": 2.60, "L4": 0.80}
GPU_SPEC = {  # per GPU: CPUs and GiB of host memory that come with it
    "H100": (24, 240.0),
    "A100": (16, 120.0),
    "L4": (12, 48.0),
}

POOLS = (
    Pool("us-east", "H100", ((22, 8),), (0.75, 0.15), 4),
    Pool("us-east", "A100", ((16, 8),), (0.70, 0.20), 4),
    Pool("us-east", "L4", ((8, 8),), (0.60, 0.20), 8),
    Pool("us-west", "H100", ((28, 8),), (0.80, 0.10), 4),
    Pool("us-west", "L4", ((6, 8), (4, 4)), (0.60, 0.25), 8),
    Pool("eu-west", "A100", ((16, 8),), (0.70, 0.20), 4),
    Pool("eu-west", "L4", ((12, 4),), (0.65, 0.20), 8),
    Pool("eu-north", "H100", ((16, 8),), (0.80, 0.10), 4),
    Pool("me-central", "H100", ((8, 8),), (0.75, 0.25), 4),
    Pool("me-central", "L4", ((6, 4),), (0.70, 0.30), 8),
    Pool("ap-south", "A100", ((12, 8),), (0.70, 0.15), 4),
    Pool("ap-south", "L4", ((6, 8),), (0.60, 0.20), 8),
    Pool("ap-northeast", "H100", ((12, 8),), (0.75, 0.15), 4),
    Pool("ap-northeast", "L4", ((8, 4),), (0.65, 0.20), 8),
)

TEAMS = (
    Team("foundation", "America/Los_Angeles", 9, 18, "Mon-Fri", "US", "us-west", 3.0),
    Team("ads-ranking", "America/Los_Angeles", 9, 17, "Mon-Fri", "US", "us-west", 1.5),
    Team("llm-research", "America/New_York", 9, 18, "Mon-Fri", "US", "us-east", 2.5),
    Team("data-platform", "America/New_York", 8, 17, "Mon-Fri", "US", "us-east", 1.0),
    Team("search", "America/New_York", 9, 18, "Mon-Fri", "US", "us-east", 1.5),
    Team("vision", "Europe/Dublin", 9, 18, "Mon-Fri", "IE", "eu-west", 2.0),
    Team("eu-assistant", "Europe/Berlin", 9, 17, "Mon-Fri", "DE", "eu-west", 1.5),
    Team("speech", "Europe/Stockholm", 8, 17, "Mon-Fri", "SE", "eu-north", 2.0),
    Team("arabic-nlp", "Asia/Riyadh", 8, 17, "Sun-Thu", "SA", "me-central", 1.5),
    Team("india-platform", "Asia/Kolkata", 10, 19, "Mon-Fri", "IN", "ap-south", 1.5),
    Team("recsys-apac", "Asia/Tokyo", 9, 18, "Mon-Fri", "JP", "ap-northeast", 1.5),
    Team("robotics", "Asia/Tokyo", 10, 19, "Mon-Fri", "JP", "ap-northeast", 1.0),
)

REGION_BY_NAME = {r.name: r for r in REGIONS}
TEAM_BY_NAME = {t.name: t for t in TEAMS}


def pool(region: str, gpu_type: str) -> Pool:
    for candidate in POOLS:
        if candidate.region == region and candidate.gpu_type == gpu_type:
            return candidate
    raise KeyError(f"no {gpu_type} pool in {region}")


def scaled_node_sizes(p: Pool, scale: float) -> list[int]:
    """GPUs per node of every node of pool `p` at `scale` (at least one node)."""
    sizes: list[int] = []
    for count, gpus in p.nodes:
        sizes += [gpus] * max(0, int(math.floor(count * scale + 0.5)))
    return sizes or [p.nodes[0][1]]


def regions_frame() -> pd.DataFrame:
    return pd.DataFrame([{"region": r.name, "timezone": r.timezone, "country": r.country,
                          "jurisdiction": r.jurisdiction, "egress_usd_per_gb": r.egress_usd_per_gb}
                         for r in REGIONS])


def prices_frame() -> pd.DataFrame:
    """Every GPU type in every region (also where the fleet has none: prices to rent there)."""
    rows = []
    for r in REGIONS:
        for gpu_type, list_price in LIST_PRICE.items():
            on_demand = list_price * r.price_factor
            for tier, factor in (("reserved", r.reserved_factor), ("on-demand", 1.0), ("spot", r.spot_factor)):
                rows.append({"region": r.name, "gpu_type": gpu_type, "tier": tier,
                             "usd_per_gpu_hour": round(on_demand * factor, 4), "assumed": False})
    return pd.DataFrame(rows)


def carbon_frame() -> pd.DataFrame:
    return pd.DataFrame([{"region": r.name, "local_hour": h, "g_co2e_per_kwh": r.carbon[h]}
                         for r in REGIONS for h in range(24)])


def teams_frame() -> pd.DataFrame:
    return pd.DataFrame([{"team": t.name, "timezone": t.timezone, "work_start_hour": t.work_start_hour,
                          "work_end_hour": t.work_end_hour, "working_days": t.working_days,
                          "holiday_country": t.holiday_country, "home_region": t.home_region,
                          "share_weight": t.share_weight} for t in TEAMS])


def fleet_frame(scale: float) -> pd.DataFrame:
    """One row per node; the first nodes of a pool are reserved, then on-demand, then spot."""
    rows = []
    for p in POOLS:
        sizes = scaled_node_sizes(p, scale)
        n = len(sizes)
        n_reserved = max(1, int(round(n * p.tiers[0])))
        n_on_demand = min(n - n_reserved, int(round(n * p.tiers[1])))
        cpus_per_gpu, gib_per_gpu = GPU_SPEC[p.gpu_type]
        for i, gpus in enumerate(sizes):
            tier = "reserved" if i < n_reserved else "on-demand" if i < n_reserved + n_on_demand else "spot"
            rows.append({"region": p.region, "cluster": p.cluster, "node": f"{p.cluster}-n{i:04d}",
                         "gpu_type": p.gpu_type, "gpus": gpus, "cpus": float(gpus * cpus_per_gpu),
                         "memory_gib": gpus * gib_per_gpu, "rack": f"{p.cluster}-r{i // p.nodes_per_rack:03d}",
                         "tier": tier})
    return pd.DataFrame(rows)

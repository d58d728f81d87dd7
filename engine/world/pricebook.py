"""Default GPU prices, used when telemetry brings none (every use is marked `assumed`).

On-demand list prices are typical 2026 cloud prices in USD per GPU-hour; spot and
reserved are expressed as multipliers of on-demand. Edit here or import a prices table.
"""
from __future__ import annotations

ON_DEMAND_USD_PER_GPU_HOUR = {
    "H100": 4.00,
    "H200": 4.80,
    "B200": 6.50,
    "A100": 2.60,
    "A10": 1.00,
    "L40S": 1.60,
    "L4": 0.80,
    "V100": 2.20,
    "T4": 0.50,
    "P100": 1.20,
    "G2": 1.20,
    "G3": 1.60,
    "cpu": 0.05,          # one processor slot of a CPU cluster (SWF logs)
    "unknown": 2.50,
}
TIER_MULTIPLIER = {"on-demand": 1.0, "reserved": 0.6, "spot": 0.35}


def on_demand_price(gpu_type: str | None) -> float:
    key = (gpu_type or "unknown").upper()
    for name, price in ON_DEMAND_USD_PER_GPU_HOUR.items():
        if key.startswith(name.upper()):
            return price
    return ON_DEMAND_USD_PER_GPU_HOUR["unknown"]


def default_price_rows(region: str, gpu_type: str) -> list[dict]:
    """Price rows for one (region, GPU type), one per tier, flagged as assumed."""
    base = on_demand_price(gpu_type)
    return [
        {"region": region, "gpu_type": gpu_type, "tier": tier,
         "usd_per_gpu_hour": round(base * mult, 4), "assumed": True}
        for tier, mult in TIER_MULTIPLIER.items()
    ]

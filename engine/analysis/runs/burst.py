"""Cloud burst capacity in a finished run's figures: the rentals of the reactive pools
(engine.sim.processes.burst, `result.burst`) and of predictive scaling
(engine.sim.processes.forecast_scaling, `result.scaling`), together (`rentals`).

A rented node is billed from `rented_s` (cloud instances bill while they boot) and usable from
`up_s`, both until `returned_s` (NaN: still rented when the run ended, so to the window's end W).
Inside the measurement window [0, W] seconds:

  billed GPU-seconds  = sum of gpus x (min(returned, W) - max(rented, 0)), at least 0
  usable GPU-seconds  = sum of gpus x (min(returned, W) - max(up, 0)), at least 0

Utilisation counts usable burst GPU-seconds as capacity next to the installed fleet's
(engine.analysis.runs.sim_metrics); cost bills the billed ones at the rental's price
(engine.analysis.runs.cost), so a burst node's idle dollars are billed minus used GPU-hours x price.
Pools of one region and GPU type at different prices are billed at their GPU-hour-weighted price.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.output.result import SimulationResult
from engine.sim.processes.burst import BURST_TIER

NODE_COLUMNS = ["region", "node", "gpu_type", "gpus", "tier"]


def rentals(result: SimulationResult) -> pd.DataFrame | None:
    """Every rental of the run, reactive and predictive (None when it had neither)."""
    tables = [t for t in (result.burst, result.scaling) if t is not None and len(t)]
    if not tables:
        return result.burst if result.burst is not None else result.scaling
    return tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)


def _seconds(burst: pd.DataFrame, horizon: float, since: str) -> np.ndarray:
    end = np.clip(burst["returned_s"].fillna(horizon).to_numpy(np.float64), 0.0, horizon)
    begin = np.clip(burst[since].fillna(horizon).to_numpy(np.float64), 0.0, horizon)
    return np.maximum(end - begin, 0.0) * burst["gpus"].to_numpy(np.float64)


def usable_gpu_s(result: SimulationResult, horizon: float) -> float:
    """GPU-seconds of burst capacity up inside [0, horizon] (0 without rentals)."""
    rented = rentals(result)
    if rented is None or not len(rented):
        return 0.0
    return float(_seconds(rented, horizon, "up_s").sum())


def billed(result: SimulationResult, horizon: float) -> pd.DataFrame:
    """region, gpu_type, tier ("burst"), gpu_hours_paid, usd_per_gpu_hour: the billed GPU-hours
    inside [0, horizon] per (region, GPU type); empty without rentals."""
    columns = ["region", "gpu_type", "tier", "gpu_hours_paid", "usd_per_gpu_hour"]
    rented = rentals(result)
    if rented is None or not len(rented):
        return pd.DataFrame(columns=columns)
    hours = _seconds(rented, horizon, "rented_s") / 3600.0
    burst = rented.assign(gpu_hours_paid=hours, usd=hours * rented["usd_per_gpu_hour"].to_numpy(np.float64),
                          tier=BURST_TIER)
    out = burst.groupby(["region", "gpu_type", "tier"], as_index=False).agg(
        gpu_hours_paid=("gpu_hours_paid", "sum"), usd=("usd", "sum"), usd_per_gpu_hour=("usd_per_gpu_hour", "first"),
        prices=("usd_per_gpu_hour", "nunique"))
    paid = out["gpu_hours_paid"].to_numpy(np.float64)
    weighted = np.divide(out["usd"].to_numpy(np.float64), paid, out=np.zeros_like(paid), where=paid > 0)
    mixed = (out["prices"].to_numpy() > 1) & (paid > 0)
    out["usd_per_gpu_hour"] = np.where(mixed, weighted, out["usd_per_gpu_hour"].to_numpy(np.float64))
    return out[columns]


def nodes(result: SimulationResult) -> pd.DataFrame:
    """region, node, gpu_type, gpus, tier of every node the run rented (for cost and carbon)."""
    rented = rentals(result)
    if rented is None or not len(rented):
        return pd.DataFrame(columns=NODE_COLUMNS)
    rented = rented.drop_duplicates(["region", "node"]).assign(tier=BURST_TIER)
    return rented[NODE_COLUMNS].assign(gpus=lambda f: f["gpus"].astype(np.float64)).reset_index(drop=True)

"""Cloud burst capacity in a finished run's figures (the rentals of engine.sim.processes.burst).

A rented node is billed from `rented_s` (cloud instances bill while they boot) and usable from
`up_s`, both until `returned_s` (NaN: still rented when the run ended, so to the window's end W).
Inside the measurement window [0, W] seconds:

  billed GPU-seconds  = sum of gpus x (min(returned, W) - max(rented, 0)), at least 0
  usable GPU-seconds  = sum of gpus x (min(returned, W) - max(up, 0)), at least 0

Utilisation counts usable burst GPU-seconds as capacity next to the installed fleet's
(engine.analysis.runs.sim_metrics); cost bills the billed ones at the rental's price
(engine.analysis.runs.cost), so a burst node's idle dollars are billed minus used GPU-hours x price.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.output.result import SimulationResult
from engine.sim.processes.burst import BURST_TIER

NODE_COLUMNS = ["region", "node", "gpu_type", "gpus", "tier"]


def _seconds(result: SimulationResult, horizon: float, since: str) -> np.ndarray:
    burst = result.burst
    end = np.clip(burst["returned_s"].fillna(horizon).to_numpy(np.float64), 0.0, horizon)
    begin = np.clip(burst[since].fillna(horizon).to_numpy(np.float64), 0.0, horizon)
    return np.maximum(end - begin, 0.0) * burst["gpus"].to_numpy(np.float64)


def usable_gpu_s(result: SimulationResult, horizon: float) -> float:
    """GPU-seconds of burst capacity up inside [0, horizon] (0 without rentals)."""
    if result.burst is None or not len(result.burst):
        return 0.0
    return float(_seconds(result, horizon, "up_s").sum())


def billed(result: SimulationResult, horizon: float) -> pd.DataFrame:
    """region, gpu_type, tier ("burst"), gpu_hours_paid, usd_per_gpu_hour: the billed GPU-hours
    inside [0, horizon] per (region, GPU type); empty without rentals."""
    columns = ["region", "gpu_type", "tier", "gpu_hours_paid", "usd_per_gpu_hour"]
    if result.burst is None or not len(result.burst):
        return pd.DataFrame(columns=columns)
    burst = result.burst.assign(gpu_hours_paid=_seconds(result, horizon, "rented_s") / 3600.0, tier=BURST_TIER)
    return burst.groupby(["region", "gpu_type", "tier"], as_index=False).agg(
        gpu_hours_paid=("gpu_hours_paid", "sum"), usd_per_gpu_hour=("usd_per_gpu_hour", "first"))[columns]


def nodes(result: SimulationResult) -> pd.DataFrame:
    """region, node, gpu_type, gpus, tier of every node the run rented (for cost and carbon)."""
    if result.burst is None or not len(result.burst):
        return pd.DataFrame(columns=NODE_COLUMNS)
    rented = result.burst.drop_duplicates(["region", "node"]).assign(tier=BURST_TIER)
    return rented[NODE_COLUMNS].assign(gpus=lambda f: f["gpus"].astype(np.float64)).reset_index(drop=True)

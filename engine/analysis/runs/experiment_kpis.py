"""How much of the forecast idle gap a scenario's [experiments] filled, as flat KPIs from the run's
`experiments` table (engine.sim.processes.experiment_fill); {} for a run without one. `fill_by_type` gives
the same gap and fill per region and GPU type.

  experiments_jobs                 experiment jobs generated (engine.scenario.experiment_plan)
  experiments_gap_gpu_hours        the teams' shares of the forecast idle GPU-hours in their off-hours
  experiments_planned_gpu_hours    the GPUs x duration_h of the jobs: what the generator sized to fill
  experiments_filled_gpu_hours     GPU-hours the experiment jobs held inside the window
  experiments_fill_share           filled / gap (0 without a gap)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.output.result import SimulationResult

FILL_COLUMNS = ["region", "gpu_type", "gap_gpu_hours", "planned_gpu_hours", "ran_gpu_hours", "fill_share", "jobs",
                "multi_node_jobs"]

KPI_KEYS = ("experiments_jobs", "experiments_gap_gpu_hours", "experiments_planned_gpu_hours",
            "experiments_filled_gpu_hours", "experiments_fill_share")


def experiment_kpis(result: SimulationResult) -> dict[str, float]:
    """KPI_KEYS -> float for a run with an experiments table ({} without one)."""
    table = result.experiments
    if table is None:
        return {}
    gap, filled = float(table["gap_gpu_hours"].sum()), float(table["ran_gpu_hours"].sum())
    return {"experiments_jobs": float(table["jobs"].sum()), "experiments_gap_gpu_hours": gap,
            "experiments_planned_gpu_hours": float(table["planned_gpu_hours"].sum()),
            "experiments_filled_gpu_hours": filled, "experiments_fill_share": filled / gap if gap > 0 else 0.0}


def fill_by_type(result: SimulationResult) -> pd.DataFrame:
    """How much of the gap was filled per region and GPU type (FILL_COLUMNS): the experiments table's teams
    summed, fill_share = ran / gap (0 without a gap); empty without an experiments table."""
    table = result.experiments
    if table is None or table.empty:
        return pd.DataFrame(columns=FILL_COLUMNS)
    out = table.groupby(["region", "gpu_type"], sort=True)[
        ["gap_gpu_hours", "planned_gpu_hours", "ran_gpu_hours", "jobs", "multi_node_jobs"]].sum().reset_index()
    gap = out["gap_gpu_hours"].to_numpy(float)
    out["fill_share"] = np.divide(out["ran_gpu_hours"].to_numpy(float), gap, out=np.zeros(len(gap)), where=gap > 0)
    return out[FILL_COLUMNS]

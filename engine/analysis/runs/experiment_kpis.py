"""How much of the forecast idle gap a scenario's [experiments] filled, as flat KPIs from the run's
`experiments` table (engine.sim.processes.experiment_fill); {} for a run without one.

  experiments_jobs                 experiment jobs generated (engine.scenario.experiment_plan)
  experiments_gap_gpu_hours        the teams' shares of the forecast idle GPU-hours in their off-hours
  experiments_planned_gpu_hours    gpus x duration_h x jobs: what the generator sized to fill
  experiments_filled_gpu_hours     GPU-hours the experiment jobs held inside the window
  experiments_fill_share           filled / gap (0 without a gap)
"""
from __future__ import annotations

from engine.sim.output.result import SimulationResult

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

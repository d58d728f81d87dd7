"""What live follow-the-sun's hand-offs moved and cost in a run under [handoff]
(engine.sim.processes.handoff). A run without a `handoffs` table has none of these.

A move's lost GPU-hours are the checkpoint, transfer and restart seconds x the GPUs the job held
(the time the job made no progress because it moved); its moved GPU-hours are the work it had left
at the move x those GPUs (a job moved twice counts twice).
"""
from __future__ import annotations

from engine.sim.output.result import SimulationResult


def handoff_kpis(result: SimulationResult) -> dict[str, float]:
    """handoff_moves, handoff_jobs, handoff_lost_gpu_hours and handoff_moved_gpu_hours over the whole
    run; {} for a run without hand-offs turned on."""
    table = result.handoffs
    if table is None:
        return {}
    return {"handoff_moves": len(table), "handoff_jobs": int(table["row"].nunique()),
            "handoff_lost_gpu_hours": float(table["lost_gpu_hours"].sum()),
            "handoff_moved_gpu_hours": float(table["moved_gpu_hours"].sum())}

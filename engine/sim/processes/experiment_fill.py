"""How much of the forecast idle gap a scenario's [experiments] filled (engine.scenario.experiment_plan made
the jobs before the run): no events; the `experiments` result table when the world carries a plan.

`experiments` (a result table): the plan's GAP_COLUMNS per team and GPU type, then ran_gpu_hours (GPU-hours
its experiment jobs of that type held inside the plan's window [start_utc, end_utc), however late they
started) and fill_share (ran_gpu_hours / gap_gpu_hours; 0 for no gap).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.processes.base import WorldProcess


class ExperimentFill(WorldProcess):
    """The experiments table of a run whose world has an [experiments] plan (engine.world.facts.World.experiments)."""

    result_fields = ("experiments",)

    def __init__(self, run, plan) -> None:
        self.run, self.plan = run, plan

    @classmethod
    def attach(cls, run) -> ExperimentFill | None:
        plan = getattr(run.world, "experiments", None) if run.world is not None else None
        return None if plan is None else cls(run, plan)

    def result(self) -> dict[str, object]:
        run, plan, w = self.run, self.plan, self.run.w
        origin = w.origin_utc
        low, high = ((t - origin).total_seconds() for t in (plan.start_utc, plan.end_utc))
        key_of = dict(zip(plan.job_ids, zip(plan.job_teams, plan.job_types)))
        rows = np.flatnonzero(np.isin(w.job_id.astype(str), list(plan.job_ids)))
        start, end = run.start[rows], np.where(np.isnan(run.end[rows]), high, run.end[rows])
        held = w.gpus[rows] * np.maximum(np.minimum(end, high) - np.maximum(start, low), 0.0) / 3600.0
        held = np.nan_to_num(held)  # never started: none
        keys = [key_of[i] for i in w.job_id[rows].astype(str)]
        ran = pd.Series(held).groupby([[t for t, _ in keys], [g for _, g in keys]]).sum().to_dict() if len(rows) else {}
        table = plan.gaps.copy()
        table["ran_gpu_hours"] = [float(ran.get(key, 0.0)) for key in zip(table["team"], table["gpu_type"])]
        gap = table["gap_gpu_hours"].to_numpy(float)
        table["fill_share"] = np.divide(table["ran_gpu_hours"].to_numpy(float), gap, out=np.zeros(len(gap)),
                                        where=gap > 0)
        return {"experiments": table}

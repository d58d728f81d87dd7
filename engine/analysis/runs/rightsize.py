"""What right-sizing at submit ([rightsize], engine.scenario.rightsize) gave and cost a run. A run
without it has none of these.

Per job of the run's jobs table (gpus: asked; sized_gpus: first given; end_s - start_s: first start
to end, hours h): a job is *sized* when sized_gpus < gpus.
  rightsized_jobs              sized jobs
  gpus_saved_at_submit         sum over sized jobs of gpus - sized_gpus (GPUs not handed out at submit)
  sized_freed_gpu_hours        sum of (gpus - sized_gpus) x h over sized jobs that ended without an
                               out-of-memory restart (GPU-hours their requests would have held idle)
  oom_restarts                 out-of-memory restarts (jobs given less than their measured peak)
  oom_lost_gpu_hours           the GPUs they held x the running lost before each failure
  net_freed_gpu_hours          sized_freed_gpu_hours - oom_lost_gpu_hours
With memory sized too ([rightsize] memory = true; asked_memory_gib, sized_memory_gib: first given):
  memory_sized_jobs            jobs given less memory than they asked for
  gib_saved_at_submit          sum over them of asked_memory_gib - sized_memory_gib
  sized_freed_gib_hours        sum of (asked - given) GiB x h over them that ended without a restart
  oom_memory_restarts          restarts of jobs whose memory was short (their GPUs may have been short too)
  oom_lost_gib_hours           the memory restarted jobs held x the running lost
The wait change is the run's wait_mean_s against the same scenario without [rightsize] (`against`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.output.result import SimulationResult

_EPS = 1e-9


def rightsize_kpis(result: SimulationResult) -> dict[str, float]:
    """The module docstring's KPIs; {} for a run without right-sizing."""
    jobs = result.jobs
    if "sized_gpus" not in jobs:
        return {}
    gpus, given = jobs["gpus"].to_numpy(np.float64), jobs["sized_gpus"].to_numpy(np.float64)
    sized = given < gpus - _EPS
    restarted = jobs["oom_restarts"].to_numpy() > 0
    hours = ((jobs["end_s"] - jobs["start_s"]) / 3600.0).to_numpy(np.float64)
    kept = sized & ~restarted & np.isfinite(hours)
    freed = float(((gpus - given) * hours)[kept].sum())
    lost = float(jobs["oom_lost_gpu_hours"].sum())
    out = {"rightsized_jobs": int(sized.sum()), "gpus_saved_at_submit": float((gpus - given)[sized].sum()),
           "sized_freed_gpu_hours": freed, "oom_restarts": int(jobs["oom_restarts"].sum()),
           "oom_lost_gpu_hours": lost, "net_freed_gpu_hours": freed - lost}
    if "sized_memory_gib" in jobs:
        asked, got = jobs["asked_memory_gib"].to_numpy(np.float64), jobs["sized_memory_gib"].to_numpy(np.float64)
        small = got < asked - _EPS
        out.update(memory_sized_jobs=int(small.sum()), gib_saved_at_submit=float((asked - got)[small].sum()),
                   sized_freed_gib_hours=float(((asked - got) * hours)[small & ~restarted & np.isfinite(hours)].sum()),
                   oom_memory_restarts=int(jobs["oom_for_memory"].sum()),
                   oom_lost_gib_hours=float(jobs["oom_lost_gib_hours"].sum()))
    return out


def against(result: SimulationResult, baseline: SimulationResult, retrospective: dict[str, float]) -> dict:
    """A right-sized run beside the same scenario without [rightsize] and the retrospective right-sizing
    of the same jobs (engine.analysis.telemetry.rightsize totals): its KPIs, wait_change_s and
    jct_change_s (mean, right-sized - baseline), and the share of the retrospective GPU-hours its net
    frees (NaN when the retrospective frees none)."""
    mine, base = result.jobs, baseline.jobs
    out = dict(rightsize_kpis(result))
    out["wait_change_s"] = float(np.nanmean(mine["wait_s"]) - np.nanmean(base["wait_s"]))
    out["jct_change_s"] = float(_jct(mine) - _jct(base))
    retro = float(retrospective["freed_gpu_hours"])
    out.update(retrospective_over_asking=int(retrospective["over_asking"]), retrospective_freed_gpu_hours=retro,
               retrospective_freed_usd=float(retrospective["freed_usd"]),
               net_share_of_retrospective=out["net_freed_gpu_hours"] / retro if retro > 0 else float("nan"))
    return out


def _jct(jobs: pd.DataFrame) -> float:
    done = jobs[jobs["end_s"].notna()]
    return float((done["end_s"] - done["submit_s"]).mean()) if len(done) else float("nan")

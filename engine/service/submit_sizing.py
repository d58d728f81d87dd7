"""Right-sizing at submit (engine.predict.gpu_need) against the retrospective right-sizing
(engine.analysis.telemetry.rightsize), on the same later jobs (issue 27, item 4, first part).

Split: the time-ordered 70/30 split of the predictors (engine.predict.evaluate.TimeSplit): the model
learns from the measured jobs that had ended by the cutoff; the test jobs are the later jobs that
ran, ended and were measured (`gpus_used_max`). On them:
- retrospective: `rightsize` (peak basis, no headroom) sizes each job to its measured peak, known
  only after the run: the most that right-sizing can free (`retrospective_freed_gpu_hours`);
- at submit: each job is sized by the same rule (`recommended_gpus`: whole GPUs on one node, whole
  nodes of a gang, shares not cut) to the predicted need. A job given fewer GPUs than its measured
  peak is *undersized*: it would run out of memory and be restarted with its request. Its cost is
  counted at the worst case, the whole run at the smaller size lost (`lost_gpu_hours`), since the
  telemetry does not say when the peak came. `net_freed_gpu_hours` = GPU-hours freed on the jobs
  sized well - lost_gpu_hours; `net_share_of_retrospective` = net / retrospective.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.telemetry.rightsize import recommended_gpus, rightsize
from engine.predict.evaluate import TRAIN_SHARE, TimeSplit
from engine.predict.features import zones_of
from engine.predict.gpu_need import NeedModel, NeedSettings, used_share

_EPS = 1e-9


def submit_sizing(jobs: pd.DataFrame, regions: pd.DataFrame | None = None, settings: NeedSettings = NeedSettings(),
                  train_share: float = TRAIN_SHARE) -> dict:
    """The comparison of the module docstring as a JSON-ready dict (GPU-hours, jobs, shares 0-1)."""
    tz = zones_of(regions)
    split = TimeSplit.of(jobs, train_share)
    ended = pd.to_datetime(jobs["end_utc"]).notna().to_numpy() & pd.to_datetime(jobs["start_utc"]).notna().to_numpy()
    test = split.test & ended & np.isfinite(used_share(jobs))
    retro = rightsize(jobs[test])
    table = retro.jobs.set_index("job_id").loc[jobs.loc[test, "job_id"].astype(str)]
    model = NeedModel(settings).fit(jobs, tz, split.train)
    predicted = model.predict(jobs, tz, test)
    milli = pd.to_numeric(jobs.loc[test, "gpu_milli"], errors="coerce").fillna(1000).to_numpy(float) \
        if "gpu_milli" in jobs else np.full(int(test.sum()), 1000.0)
    g, h, peak = table["gpus"].to_numpy(float), table["run_h"].to_numpy(float), table["need_gpus"].to_numpy(float)
    at_submit = recommended_gpus(g, predicted, table["nodes"].to_numpy(float), (g < 1) | (milli < 1000))
    short = at_submit < peak - _EPS
    freed_ok = float(((g - at_submit) * h)[~short].sum())
    lost = float((at_submit * h)[short].sum())
    retro_freed = float(retro.totals["freed_gpu_hours"])
    return {
        "cutoff_utc": split.cutoff_utc, "quantile": settings.quantile, "jobs_test": int(test.sum()),
        "gpu_hours": float(retro.totals["gpu_hours"]),
        "retrospective_over_asking": int(retro.totals["over_asking"]), "retrospective_freed_gpu_hours": retro_freed,
        "resized_at_submit": int((at_submit < g).sum()), "undersized_jobs": int(short.sum()),
        "undersized_share": float(short.mean()) if len(short) else 0.0,
        "freed_sized_well_gpu_hours": freed_ok, "lost_gpu_hours": lost, "net_freed_gpu_hours": freed_ok - lost,
        "net_share_of_retrospective": (freed_ok - lost) / retro_freed if retro_freed > 0 else float("nan"),
    }

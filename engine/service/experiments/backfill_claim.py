"""The runtime-prediction claim ("ML runtime prediction cuts job completion time by 31 %") on a public
log, with the SC'15 protocol (backfill): shortest-first EASY seeing Meridian's walk-forward runtime
predictions with the doubling corrector (easy++-learned) against the same order and backfilling seeing
the users' requested times (easy-sjbf), both in the pyss-compatible mode on the filtered log.

Measures: mean job completion time (wait + run, s) and average bounded slowdown (tau 10 s), each with
the 95 % paired bootstrap interval of its cut over the jobs (engine.service.experiments.bootstrap; the
runs are deterministic, so the spread is the jobs', not the seeds'). The Claims page shows these rows
from the committed fidelity record beside the sample's own measurement.
"""
from __future__ import annotations

import numpy as np

from engine.service.experiments import backfill
from engine.service.experiments.backfill_trace import PyssTrace
from engine.service.experiments.bootstrap import paired_cut_interval

REQUESTS, PREDICTED, MODE = "easy-sjbf", "easy++-learned", "pyss"
COLUMNS = ["log", "jobs", "requests", "predicted", "mode", "jct_requests_s", "jct_predicted_s", "jct_low",
           "jct_high", "slowdown_requests", "slowdown_predicted", "slowdown_low", "slowdown_high", "model_fit_s"]


def _measures(trace: PyssTrace, name: str, learned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    start, _ = backfill.replay(trace, name, MODE, learned=learned)
    wait, run = (start - trace.submit_s).astype(np.float64), trace.run_s.astype(np.float64)
    return wait + run, backfill.bounded_slowdown(wait, run)


def claim_row(log: str, trace: PyssTrace, learned: np.ndarray, fit_s: float) -> dict:
    """One row of COLUMNS: both runs' mean JCT and average bounded slowdown, and the intervals of the cuts."""
    jct_req, bsld_req = _measures(trace, REQUESTS, learned)
    jct_pred, bsld_pred = _measures(trace, PREDICTED, learned)
    jct_low, jct_high = paired_cut_interval(jct_req, jct_pred)
    bsld_low, bsld_high = paired_cut_interval(bsld_req, bsld_pred)
    return {"log": log, "jobs": len(trace), "requests": REQUESTS, "predicted": PREDICTED, "mode": MODE,
            "jct_requests_s": float(jct_req.mean()), "jct_predicted_s": float(jct_pred.mean()),
            "jct_low": jct_low, "jct_high": jct_high, "slowdown_requests": float(bsld_req.mean()),
            "slowdown_predicted": float(bsld_pred.mean()), "slowdown_low": bsld_low, "slowdown_high": bsld_high,
            "model_fit_s": round(fit_s, 1)}

"""The runtime-prediction claim on the public logs, from the committed fidelity record: one row per log
(backfill_claim's measurement) with its cut in mean job completion time, its interval, the bounded
slowdown beside it and the Claims page's verdict rule (claims.verdict)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.service.experiments.claims import CLAIMS, verdict

CLAIM = next(c for c in CLAIMS if c.key == "runtime-prediction")
COLUMNS = ["log", "jobs", "mean JCT, requests", "with predictions", "JCT change", "95 % interval", "bounded slowdown",
           "slowdown 95 %", "verdict"]


def _pct(share: float) -> str:
    return f"{round(100 * share, 1) + 0:+.1f} %"   # + 0: no "-0.0 %"


def _range(low: float, high: float) -> str:
    return f"{_pct(low)[:-2]} to {_pct(high)}"   # "-20.6 to -15.4 %"


def log_rows(prediction: pd.DataFrame | None) -> pd.DataFrame:
    """COLUMNS, one row per log of the record's prediction table (empty for records without one). Changes
    are signed (a cut shows as a negative change); intervals are the paired bootstrap's over the jobs."""
    rows = []
    for r in (prediction if prediction is not None else pd.DataFrame()).itertuples(index=False):
        cut = 1 - r.jct_predicted_s / r.jct_requests_s if r.jct_requests_s else np.nan
        slowdown_cut = 1 - r.slowdown_predicted / r.slowdown_requests if r.slowdown_requests else np.nan
        rows.append({"log": r.log, "jobs": f"{int(r.jobs):,}", "mean JCT, requests": f"{r.jct_requests_s / 3600:,.2f} h",
                     "with predictions": f"{r.jct_predicted_s / 3600:,.2f} h", "JCT change": _pct(-cut),
                     "95 % interval": _range(-r.jct_high, -r.jct_low),
                     "bounded slowdown": f"{r.slowdown_requests:,.2f} to {r.slowdown_predicted:,.2f} "
                                         f"({_pct(-slowdown_cut)})",
                     "slowdown 95 %": _range(-r.slowdown_high, -r.slowdown_low),
                     "verdict": verdict(CLAIM, cut)})
    return pd.DataFrame(rows, columns=COLUMNS)

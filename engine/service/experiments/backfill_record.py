"""The SC'15 backfilling experiment as the fidelity record holds it (benchmarks/fidelity_record.py): every
recorded scheduler in both modes on every log, and the runtime-prediction claim on each log."""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from engine.service.experiments.backfill import RECORD_COLUMNS, RECORDED_SCHEDULERS, TRACES, compare, run_table
from engine.service.experiments.backfill_claim import COLUMNS as CLAIM_COLUMNS
from engine.service.experiments.backfill_claim import claim_row
from engine.service.experiments.backfill_learned import walk_forward
from engine.service.experiments.backfill_trace import load_pyss_trace


def record_tables(shared: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every RECORDED_SCHEDULERS in both modes on every log of TRACES under `shared`, compared
    (backfill.compare), and the runtime-prediction claim per log (backfill_claim.claim_row). The
    walk-forward model is fitted once per log; its seconds are the claim row's model_fit_s."""
    rows, claims = [], []
    for log, relative in TRACES.items():
        trace = load_pyss_trace(Path(shared) / relative)
        t0 = time.perf_counter()
        learned = walk_forward(trace).predicted_s
        fit_s = time.perf_counter() - t0
        rows += [{"log": log, "jobs": len(trace), "processors": trace.processors, "scheduler": r["scheduler"],
                  "mode": r["mode"], "ours": r["avg_bounded_slowdown"], "published": r["published"],
                  "seconds": r["seconds"], "mean_jct_s": r["mean_jct_s"]}
                 for r in run_table(trace, RECORDED_SCHEDULERS, learned=learned)]
        claims.append(claim_row(log, trace, learned, fit_s))
    return compare(pd.DataFrame(rows, columns=RECORD_COLUMNS)), pd.DataFrame(claims, columns=CLAIM_COLUMNS)

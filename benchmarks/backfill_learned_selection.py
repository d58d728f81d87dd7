"""How easy++-learned's two settings were chosen, on KTH-SP2 alone (never on CTC-SP2 or SDSC-BLUE).

Every schedule quantile of the walk-forward runtime model (0.3-0.9) with every corrector (request, double,
tsafrir), pyss-compatible mode, average bounded slowdown (tau 10 s). The rule: the quantile with the lowest
mean over the correctors, then the corrector with the lowest mean over the quantiles (marginal means, since
single cells move by several points from one setting to the next). Prints the grid, the means, the choice
and the seconds of the model fits per quantile.

    .venv/bin/python benchmarks/backfill_learned_selection.py [--shared ../shared]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.service.experiments import backfill, backfill_learned  # noqa: E402
from engine.service.experiments.backfill_predict import CORRECTORS, Predictor  # noqa: E402
from engine.service.experiments.backfill_sim import Scheduler, simulate  # noqa: E402
from engine.service.experiments.backfill_trace import load_pyss_trace  # noqa: E402

QUANTILES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    trace = load_pyss_trace(args.shared / backfill.TRACES["KTH-SP2"])
    rows = []
    for q in QUANTILES:
        settings = dataclasses.replace(backfill_learned.SETTINGS, schedule_quantile=q)
        walk = backfill_learned.walk_forward(trace, settings=settings)
        given = tuple(int(v) for v in walk.predicted_s)
        for name, corrector in CORRECTORS.items():
            start = simulate(trace.submit_s, trace.run_s, trace.requested_s, trace.procs, trace.user,
                             trace.processors, Scheduler(Predictor("given", given), corrector, True), "pyss")
            wait = (start - trace.submit_s).astype(float)
            rows.append({"quantile": q, "corrector": name, "fit_s": round(walk.train_seconds, 1),
                         "bsld": round(float(backfill.bounded_slowdown(wait, trace.run_s.astype(float)).mean()), 2)})
    grid = pd.DataFrame(rows)
    print(grid.pivot(index="quantile", columns="corrector", values="bsld").to_string())
    by_quantile = grid.groupby("quantile")["bsld"].mean()
    by_corrector = grid.groupby("corrector")["bsld"].mean()
    print("mean over correctors:", by_quantile.round(2).to_dict())
    print("mean over quantiles:", by_corrector.round(2).to_dict())
    print(f"chosen: quantile {by_quantile.idxmin()}, corrector {by_corrector.idxmin()}")
    print("fit seconds per quantile:", grid.groupby("quantile")["fit_s"].first().to_dict())
    return 0


if __name__ == "__main__":
    sys.exit(main())

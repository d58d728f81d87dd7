"""EASY backfilling with predicted runtimes against EASY with the users' requests, on real SWF logs.

For CTC-SP2 and HPC2N (../shared/traces/swf/): the runtime model trains on the first 70 % of
submits; both scenarios replay the remaining 30 % (FCFS + EASY, first-fit; the same window, the
same true runtimes), the candidate seeing the model's P50 (and P90) instead of the request.
Prints mean bounded slowdown (tau 10 s), utilisation, mean and p95 wait and the wall time.

    .venv/bin/python benchmarks/bench_predict_whatif.py [--shared DIR]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.analysis.sim_metrics import kpis
from engine.scenario import TRAIN_SHARE, Scenario
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format

LOGS = ("CTC-SP2-1996-3.1-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    for name in LOGS:
        path = Path(args.shared) / "traces" / "swf" / name
        data = path.read_bytes()
        batch = parser_for(detect_format(path.name, data))(data, str(path), ImportOptions())
        jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
        cut = pd.to_datetime(jobs["submit_utc"]).quantile(TRAIN_SHARE)
        base = Scenario.from_dict({"name": "easy", "policies": {"backfill": {"key": "easy"}},
                                   "workload": {"start_utc": str(cut)}})
        for label, scenario in (("requests", base),
                                ("predicted P50", replace(base, runtime_source="predicted", runtime_quantile="p50")),
                                ("predicted P90", replace(base, runtime_source="predicted", runtime_quantile="p90"))):
            started = time.perf_counter()
            values = kpis(scenario.run(jobs, fleet))
            print(f"{name:30s} {label:14s} jobs {int(values.get('jobs', 0)) if 'jobs' in values else '':>7} "
                  f"bsld {values['avg_bounded_slowdown']:8.2f}  util {values['utilization']:.4f}  "
                  f"wait mean {values['wait_mean_s'] / 3600:6.2f} h  p95 {values['wait_p95_s'] / 3600:6.2f} h  "
                  f"({time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()

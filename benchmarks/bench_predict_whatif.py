"""What the predictors are worth to the scheduler, on real SWF logs.

For CTC-SP2 and HPC2N (../shared/traces/swf/): the models train on the first 70 % of submits;
every scenario replays the remaining 30 % (FCFS + EASY, first-fit; the same window, the same true
runtimes). The scheduler sees the users' requests, the runtime model's P50 or P90 (a job that
outlives its prediction is then expected at its request), and, with the fail-fast order, each
job's predicted failure probability (likely failures start first). Prints mean bounded slowdown
(tau 10 s), utilisation, mean and p95 wait, the mean wait of the jobs that failed or were
cancelled (how soon their users heard), and the wall time.

    .venv/bin/python benchmarks/bench_predict_whatif.py [--shared DIR] [--logs CTC HPC2N]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.runtime import TRAIN_SHARE
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format

LOGS = {"CTC": "CTC-SP2-1996-3.1-cln.swf.gz", "HPC2N": "HPC2N-2002-2.2-cln.swf.gz"}


def scenarios(cut: pd.Timestamp) -> list[tuple[str, Scenario]]:
    base = Scenario.from_dict({"name": "easy", "policies": {"backfill": {"key": "easy"}},
                               "workload": {"start_utc": str(cut)}})
    fail_fast = Scenario.from_dict({"name": "fail-fast", "policies": {"order": "fail-fast", "backfill": "easy"},
                                    "workload": {"start_utc": str(cut)}, "runtime": {"failure": True}})
    return [("requests", base),
            ("predicted P50", replace(base, runtime_source="predicted", runtime_quantile="p50")),
            ("predicted P90", replace(base, runtime_source="predicted", runtime_quantile="p90")),
            ("requests, fail-fast", fail_fast),
            ("P50, fail-fast", replace(fail_fast, runtime_source="predicted", runtime_quantile="p50"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--logs", nargs="+", default=list(LOGS), choices=list(LOGS))
    args = parser.parse_args()
    for short in args.logs:
        path = Path(args.shared) / "traces" / "swf" / LOGS[short]
        data = path.read_bytes()
        batch = parser_for(detect_format(path.name, data))(data, str(path), ImportOptions())
        jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
        cut = pd.to_datetime(jobs["submit_utc"]).quantile(TRAIN_SHARE)
        failed_ids = set(jobs.loc[jobs["status"].isin(["failed", "cancelled"]), "job_id"])
        for label, scenario in scenarios(cut):
            started = time.perf_counter()
            result = run_scenario(scenario, jobs, fleet)
            values = kpis(result)
            ran = result.jobs
            wait = ran["start_s"] - ran["submit_s"]
            failed_wait = wait[ran["job_id"].isin(failed_ids)].mean()
            print(f"{short:6s} {label:20s} bsld {values['avg_bounded_slowdown']:8.2f}  util {values['utilization']:.4f}  "
                  f"wait mean {values['wait_mean_s'] / 3600:6.2f} h  p95 {values['wait_p95_s'] / 3600:6.2f} h  "
                  f"failed-job wait {failed_wait / 3600:6.2f} h  ({time.perf_counter() - started:.1f} s)", flush=True)


if __name__ == "__main__":
    main()

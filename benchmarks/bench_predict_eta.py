"""Wait-time ETA backtest (engine.service.eta_backtest) on CTC-SP2, HPC2N and the sample data.

Per dataset: the runtime model trains on the first 70 % of submits; `--snapshots` instants of the
rest are drawn (seeded); the first half calibrates, the second half is scored against the actual
starts. Prints the coverage of the 80 % interval (raw replay, conformal-calibrated, learned
correction, naive baseline), its median width, the mean absolute log error of the point, and the
seconds per query; then one ETA query at the busiest of 200 instants of the test part (the model
given, fitted at that instant), and the time to fit that model. `--predicted` lets the replayed
policies see the model's P50 instead of the users' requests.

    .venv/bin/python benchmarks/bench_predict_eta.py [--shared DIR] [--snapshots 40] [--samples 40]
        [--only ctc|hpc2n|sample] [--predicted] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from engine.predict.evaluate import TimeSplit
from engine.predict.features import seconds, zones_of
from engine.service.eta import DEFAULT_SCENARIO, SAMPLES, eta, fit_runtime_model
from engine.service.eta_backtest import SNAPSHOTS, backtest
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle

LOGS = {"ctc": "CTC-SP2-1996-3.1-cln.swf.gz", "hpc2n": "HPC2N-2002-2.2-cln.swf.gz"}


def load(name: str, shared: Path):
    """(jobs, fleet, tz) of a dataset."""
    if name == "sample":
        tables = read_bundle().tables
        return tables["jobs"], tables["fleet"], zones_of(tables["regions"])
    path = shared / "traces" / "swf" / LOGS[name]
    batch = parse_swf(path.read_bytes(), path.name, ImportOptions())
    return batch.tables["jobs"], batch.tables["fleet"], batch.tables["regions"]["timezone"].iloc[0]


def busiest(jobs: pd.DataFrame, count: int = 200) -> pd.Timestamp:
    """The instant with the most pending jobs among `count` evenly spaced ones in the test part."""
    submit, start = seconds(jobs["submit_utc"]), seconds(jobs["start_utc"])
    end = seconds(jobs["end_utc"])
    grid = np.linspace(TimeSplit.of(jobs).cutoff_s, np.nanmax(submit), count)
    waiting = [int(((submit <= t) & ~(start <= t) & ~(end <= t)).sum()) for t in grid]
    return pd.Timestamp(round(float(grid[int(np.argmax(waiting))])), unit="s")


def line(label: str, figures: dict) -> str:
    return (f"  {label:11s} coverage {figures['coverage']:.3f}  width {figures['width_h']:8.1f} h  "
            f"MALE {figures['male']:.3f}  jobs {figures['jobs']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--snapshots", type=int, default=SNAPSHOTS)
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--only", choices=("ctc", "hpc2n", "sample"))
    parser.add_argument("--predicted", action="store_true", help="policies see the model's P50")
    parser.add_argument("--json", help="write the reports to this file")
    args = parser.parse_args()
    scenario = replace(DEFAULT_SCENARIO, runtime_source="predicted") if args.predicted else DEFAULT_SCENARIO
    reports = {}
    for name in ([args.only] if args.only else ["ctc", "hpc2n", "sample"]):
        jobs, fleet, tz = load(name, Path(args.shared))
        began = time.perf_counter()
        report = backtest(jobs, fleet, scenario, samples=args.samples, snapshots=args.snapshots, tz=tz)
        total = time.perf_counter() - began
        print(f"{name}: {len(jobs)} jobs, cutoff {report['cutoff_utc']}, {report['snapshots']} snapshots "
              f"({report['calibration_snapshots']} calibrate), {report['jobs_scored']} scored "
              f"({report['distinct_jobs_scored']} distinct), {report['jobs_never_started']} never started; "
              f"{report['seconds_per_query']:.2f} s per query, backtest {total:.0f} s", flush=True)
        for label in ("raw", "calibrated", "learned", "baseline"):
            print(line(label, report[label]), flush=True)
        at = busiest(jobs)
        began = time.perf_counter()
        model = fit_runtime_model(jobs, at, tz)
        fitted = time.perf_counter() - began
        began = time.perf_counter()
        table = eta(jobs, fleet, at, scenario, model=model, samples=args.samples, tz=tz)
        query = time.perf_counter() - began
        print(f"  busiest instant {at}: {len(table)} pending, ETA query {query:.1f} s "
              f"(model fit {fitted:.1f} s)", flush=True)
        reports[name] = {**report, "busy_instant_utc": str(at), "busy_pending": len(table),
                         "busy_query_s": query, "model_fit_s": fitted, "backtest_s": total}
    if args.json:
        Path(args.json).write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()

"""Benchmark: What-if runs on the sample data, with the router (issues 3 and 4).

Every bundled scenario over the What-if page's default window (the jobs submitted in the first 7
days) and over the whole sample, with the sample's regions, prices and carbon tables (so routing
scenarios route). Target (issue 3, point 8 and issue 4, Speed): a What-if run on the sample data
at most 5 s, and routing must not make it slower than that. Prints wall-clock seconds of
`Scenario.run` and the jobs moved to another region.

    .venv/bin/python benchmarks/bench_whatif.py [--whole]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--whole", action="store_true", help="also run every scenario over the whole sample")
    opts = args.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(Path(folder) / "bench.duckdb")
        ensure_sample(store)
        jobs, fleet, world = store.jobs("sample"), store.fleet("sample"), World.of_dataset(store, "sample")
        store.close()
    start = pd.Timestamp(jobs["submit_utc"].min())
    windows = [("first 7 days", {"start_utc": start, "end_utc": start + pd.Timedelta(days=7)})]
    if opts.whole:
        windows.append(("whole sample", {}))
    for label, window in windows:
        print(label)
        for path in sorted(SCENARIOS.glob("*.toml")):
            scenario = replace(Scenario.load(path), **window)  # keeps every edit the file makes
            began = time.perf_counter()
            result = run_scenario(scenario, jobs, fleet, world)
            seconds = time.perf_counter() - began
            k = kpis(result)
            moved = int((result.jobs["region"] != result.jobs["home_region"]).sum())
            print(f"  {scenario.name:24s} {seconds:6.2f} s  {len(result.jobs):7,} jobs  moved {moved:6,}  "
                  f"utilization {k['utilization']:.4f}  wait p95 {k['wait_p95_s']:9,.0f} s  "
                  f"served {k['served_gpu_hours']:11,.0f} GPU-h  slowdown {k['avg_bounded_slowdown']:6.2f}  "
                  f"gave up {k['jobs_gave_up']:5,}")


if __name__ == "__main__":
    main()

"""Benchmark: the discrete-event simulator (issue 3, point 8).

1. FCFS (no backfilling, first-fit) and FCFS + EASY over the whole HPC2N log (202,871 jobs),
   parsed in memory by the SWF importer: 240 one-slot nodes, a job of p processors is a gang of
   p whole nodes. Target: at most 10 s each.
2. The bundled fifo.toml and easy-backfill.toml scenarios on the sample data (92,340 jobs on 180
   GPU nodes, loaded from a fresh DuckDB file). Target: at most 5 s each.

Prints wall-clock seconds of the simulation alone (parsing and loading are timed separately)
and jobs per second.

    .venv/bin/python benchmarks/bench_simulator.py [--skip-hpc2n] [--skip-sample]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store

REPO = Path(__file__).resolve().parents[1]
HPC2N = REPO.parent / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
SCENARIOS = REPO / "sample_data" / "scenarios"


def timed(scenario: Scenario, jobs, fleet) -> None:
    began = time.perf_counter()
    result = run_scenario(scenario, jobs, fleet)
    seconds = time.perf_counter() - began
    k = kpis(result)
    print(f"  {scenario.name:15s} {seconds:7.2f} s  {len(result.jobs) / seconds:9,.0f} jobs/s  "
          f"utilization {k['utilization']:.4f}  wait p50 {k['wait_p50_s']:,.0f} s  "
          f"avg bounded slowdown {k['avg_bounded_slowdown']:.2f}")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--skip-hpc2n", action="store_true")
    args.add_argument("--skip-sample", action="store_true")
    opts = args.parse_args()
    fifo, easy = (Scenario.load(SCENARIOS / f"{name}.toml") for name in ("fifo", "easy-backfill"))
    if not opts.skip_hpc2n:
        began = time.perf_counter()
        batch = parse_swf(HPC2N.read_bytes(), HPC2N.name, ImportOptions())
        jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
        print(f"HPC2N: {len(jobs):,} jobs, {len(fleet)} nodes, parsed in {time.perf_counter() - began:.2f} s")
        easy_first_fit = Scenario.from_dict({"name": "fcfs+easy", "policies": {"backfill": {"key": "easy"}}})
        for scenario in (fifo, easy_first_fit):
            timed(scenario, jobs, fleet)
    if not opts.skip_sample:
        with tempfile.TemporaryDirectory() as folder:
            store = Store.open(Path(folder) / "bench.duckdb")
            ensure_sample(store)
            jobs, fleet = store.jobs("sample"), store.fleet("sample")
            store.close()
        print(f"sample: {len(jobs):,} jobs, {len(fleet)} nodes")
        for scenario in (fifo, easy):
            timed(scenario, jobs, fleet)


if __name__ == "__main__":
    main()

"""Benchmark and fidelity figures: the `recorded` baseline against the history it stands for (issue 20,
item 6). For the sample and each SWF log of the Parallel Workloads Archive in ../shared (or
$MERIDIAN_SHARED), replays the whole log under the scheduler its source names
(engine.scenario.recorded) and prints the reproduction table: per workload class, recorded and
replayed p50 and p95 waits of the jobs that started in both, the deviation, and whether it is
within 10 % (or 6 minutes); then the replay's wall clock.

    .venv/bin/python benchmarks/bench_recorded.py [--logs CTC-SP2-1996-3.1-cln.swf.gz ...]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

from engine.scenario.recorded import recorded_baseline, recorded_of, reproduction
from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT
from engine.service.run import run_scenario
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

LOGS = ("CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2-1996-2.2.swf.gz", "HPC2N-2002-2.2-cln.swf.gz",
        "SDSC-BLUE-2000-4.2-cln.swf.gz")


def _replay(name: str, jobs: pd.DataFrame, fleet: pd.DataFrame, scheduler: str | None, world: World) -> None:
    started = time.perf_counter()
    result = run_scenario(recorded_baseline(scheduler), jobs, fleet, world)
    seconds = time.perf_counter() - started
    table = reproduction(jobs, result.jobs)
    print(f"\n{name}: {len(jobs):,} jobs, recorded scheduler {scheduler or 'not named'}: "
          f"{recorded_of(scheduler).description}; replayed in {seconds:.1f} s")
    print(table.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", nargs="*", default=list(LOGS), help="SWF files under traces/swf/")
    args = parser.parse_args()
    bundle = read_bundle().tables
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    _replay("sample", bundle["jobs"], bundle["fleet"], "per-pool-fifo", world)
    root = Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED)
    for log in args.logs:
        path = root / "traces" / "swf" / log
        if not path.exists():
            print(f"\n{log}: not found at {path}; skipped")
            continue
        batch = parse_swf(path.read_bytes(), str(path), ImportOptions())
        _replay(log, batch.tables["jobs"], batch.tables["fleet"], batch.scheduler, World())


if __name__ == "__main__":
    main()

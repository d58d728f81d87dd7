"""Benchmark: load headroom and fleet compaction searches on the sample (issue 20, Speed and scale).

Targets: one scenario's load headroom on the sample's first 7 days at most 60 s on 2 cores; FIFO
against follow-the-sun on the whole sample (both scenarios' headroom and compaction at FIFO's
service level) at most 10 minutes. Every figure is a fresh computation (the in-process cache is
cleared first); 3 seeds, 2 worker processes. Prints the wall clock, the simulations run and the
headroom figures, as Markdown rows for benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_headroom.py [--whole] [--workers 2] [--seeds 3]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.headroom import measure as measure_module
from engine.service.headroom.measure import measure
from engine.telemetry.sample import read_bundle

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"


def _timed(label: str, baseline: Scenario, candidates: list[Scenario], tables, days, seeds: int, workers: int):
    measure_module._CACHE.clear()
    jobs, fleet, world = tables
    scenarios = first_days([baseline, *candidates], jobs, days)
    started = time.perf_counter()
    report = measure(scenarios[0], scenarios[1:], jobs, fleet, world, seeds=seeds, workers=workers)
    seconds = time.perf_counter() - started
    runs = sum(s.evaluations for s in report.scenarios)
    figures = "; ".join(f"{s.name} x{s.load_headroom:.3f} ({s.load_headroom_min:.3f}-{s.load_headroom_max:.3f}), "
                        f"needs {s.needed_gpus:,.0f} GPUs" for s in report.scenarios)
    print(f"| {label} | {report.jobs:,} | {runs} | {seconds:.1f} s | {seconds / runs:.2f} s | {figures} |", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--whole", action="store_true", help="also FIFO against follow-the-sun on the whole sample")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    t = read_bundle().tables
    tables = (t["jobs"], t["fleet"], {name: t[name] for name in ("prices", "regions", "carbon", "teams")})
    load = {name: Scenario.load(SCENARIOS / f"{name}.toml") for name in ("fifo", "follow-the-sun")}
    print("| search | jobs | simulations | wall clock | per simulation | load headroom, GPUs needed |")
    print("|---|---:|---:|---:|---:|---|")
    _timed("follow-the-sun alone, first 7 days (target <= 60 s)", load["follow-the-sun"], [], tables, 7,
           args.seeds, args.workers)
    _timed("fifo against follow-the-sun, first 7 days", load["fifo"], [load["follow-the-sun"]], tables, 7,
           args.seeds, args.workers)
    if args.whole:
        _timed("fifo against follow-the-sun, whole sample (target <= 600 s)", load["fifo"], [load["follow-the-sun"]],
               tables, None, args.seeds, args.workers)


if __name__ == "__main__":
    main()

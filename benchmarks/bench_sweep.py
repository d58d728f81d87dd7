"""Benchmark: the sweep runner's scaling (issue 7, Speed: 32 scenarios on the sample data at least 1.7x
faster on 2 workers than on 1).

Runs the example grid (`sample_data/sweeps/fleet-growth.toml`: 32 points over the first 7 days) on
the local process pool with 1 and then 2 workers, `--repeat` times (the pairs interleaved, so that a
burst of load on a shared machine hits one pair, not one side), then once on a Dask LocalCluster of
2 workers; the tables are loaded once, outside the timings. A one-point warm-up first starts the
pool's fork server (which imports the engine once, about 3-4 s, then forks every worker of every
pool from it), so that no timed run pays that; a fresh `meridian sweep` process pays it once, with
any number of workers. Wall time is `run_sweep` end to end, worker or cluster start-up included; "points" is the sum of the points' own seconds in their workers
(more than the 1-worker figure when two points share the machine's memory and caches). Checks that
every run gives the same KPIs. Prints a Markdown table; --record appends it, dated, to
benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_sweep.py [--grid FILE] [--repeat N] [--no-dask] [--record]
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import tempfile
import time
from argparse import Namespace
from pathlib import Path

from engine.cli.common import tables
from engine.service.sweep.grid import load_grid
from engine.service.sweep.runner import run_sweep

ROOT = Path(__file__).resolve().parents[1]
GRID = ROOT / "sample_data" / "sweeps" / "fleet-growth.toml"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
SECTION = "## Sweep runner (issue 7) — `benchmarks/bench_sweep.py`"


def _measure(points, data, label: str, **backend) -> dict:
    load = os.getloadavg()[0]
    began = time.perf_counter()
    outcomes = run_sweep(points, data, **backend)
    wall = time.perf_counter() - began
    points_s = sum(o.elapsed_s for o in outcomes)
    failed = sum(o.status != "ok" for o in outcomes)
    print(f"  {label:24s} {wall:7.1f} s wall  {points_s:7.1f} s in points  {failed} failed  "
          f"load {load:.2f} -> {os.getloadavg()[0]:.2f}", flush=True)
    return {"label": label, "wall": wall, "points_s": points_s, "kpis": [o.kpis for o in outcomes],
            "load": (load, os.getloadavg()[0])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", default=str(GRID), help="grid file (default: the example grid)")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of 1-worker and 2-worker runs (default 1)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask LocalCluster run")
    parser.add_argument("--record", action="store_true", help=f"append the table to {RESULTS.name}")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = tables(Namespace(trace=None, dataset="sample", db=str(Path(folder) / "bench.duckdb")))
    grid = load_grid(opts.grid)
    points = grid.windowed(data[0])
    print(f"{grid.name}: {len(points)} points, first {grid.days:g} days, {os.cpu_count()} CPUs")
    run_sweep(points[:1], data, workers=1)
    runs, speedups = [], []
    for pair in range(1, opts.repeat + 1):
        one = _measure(points, data, f"local, 1 worker (#{pair})", workers=1)
        two = _measure(points, data, f"local, 2 workers (#{pair})", workers=2)
        two["speedup"] = one["wall"] / two["wall"]
        speedups.append(two["speedup"])
        runs += [one, two]
    if not opts.no_dask:
        dask = _measure(points, data, "Dask LocalCluster, 2", workers=2, dask="local")
        dask["speedup"] = statistics.median(r["wall"] for r in runs if "speedup" not in r) / dask["wall"]
        runs.append(dask)
    assert all(run["kpis"] == runs[0]["kpis"] for run in runs), "KPIs differ between runs"
    table = _table(runs, len(points), speedups)
    print(table)
    if opts.record:
        _record(table, grid.name, len(points), grid.days)


def _table(runs: list[dict], n: int, speedups: list[float]) -> str:
    lines = ["| run | wall | per point | sum of points' own time | speed-up vs 1 worker | load avg (1 min) |",
             "|---|---:|---:|---:|---:|---|"]
    for run in runs:
        speedup = f"{run['speedup']:.2f}x" if "speedup" in run else ""
        lines.append(f"| {run['label']} | {run['wall']:.1f} s | {run['wall'] / n:.2f} s | {run['points_s']:.1f} s | "
                     f"{speedup} | {run['load'][0]:.2f} -> {run['load'][1]:.2f} |")
    lines.append(f"\n2 workers against 1: median {statistics.median(speedups):.2f}x over {len(speedups)} pair(s) "
                 f"({min(speedups):.2f}x-{max(speedups):.2f}x); the Dask row against the median 1-worker wall time. "
                 "Identical KPIs in every run.")
    return "\n".join(lines)


def _record(table: str, name: str, points: int, days: float | None) -> None:
    text = RESULTS.read_text(encoding="utf-8")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    block = f"\n### {name}: {points} points, first {days:g} days ({stamp})\n\n{table}\n"
    if SECTION not in text:
        block = f"\n{SECTION}\n{block}"
    RESULTS.write_text(text.rstrip("\n") + "\n" + block, encoding="utf-8")


if __name__ == "__main__":
    main()

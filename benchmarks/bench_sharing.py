"""Benchmark: sharing policies (issue 5, Speed and item 11's golden figures).

1. What-if on the sample's first 7 days (the What-if page's default window) for fifo.toml,
   priority-fairshare.toml and quotas-preemption.toml, with the sample's regions, prices and
   carbon tables. Target: at most 5 s each.
2. The whole HPC2N log (202,871 jobs, 240 one-slot nodes, SWF group = team) with multifactor
   priority (default weights, events only: no timer) + EASY backfilling, and FCFS + EASY for
   comparison. Target: multifactor + EASY at most 20 s.
3. With --whole: the same three scenarios over the whole sample (the golden figures).

Prints wall-clock seconds of `Scenario.run` alone (parsing and loading are timed separately) and,
per run, the golden KPIs: production SLA violations (inference_guarantee_violations; express-queue
max-wait misses), utilisation, Jain's index, deadline hit rate, max-wait SLA attainment,
preemptions, lost GPU-hours, starved jobs, and the p95 wait of development and inference jobs.

    .venv/bin/python benchmarks/bench_sharing.py [--whole] [--skip-hpc2n] [--skip-sample]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.analysis.runs.fairness import queue_sla_table
from engine.analysis.runs.held import horizon_s
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store
from engine.world.facts import World

REPO = Path(__file__).resolve().parents[1]
HPC2N = REPO.parent / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
SCENARIOS = REPO / "sample_data" / "scenarios"
GOLDEN = ("fifo", "priority-fairshare", "quotas-preemption")


def express_misses(result) -> int:
    """Jobs of the express queue that waited longer than its max_wait_s (never started: to the window's end)."""
    max_wait = float(queue_sla_table(result).set_index("queue").loc["express", "max_wait_s"])
    jobs = result.jobs
    express = jobs[jobs["queue"] == "express"]
    wait = express["wait_s"].where(express["started"], (horizon_s(result) - express["submit_s"]).clip(lower=0.0))
    return int((wait > max_wait).sum())


def report(label: str, result, seconds: float) -> None:
    k = kpis(result)
    jobs = result.jobs
    p95 = jobs.groupby("workload_class")["wait_s"].quantile(0.95)
    print(f"  {label:20s} {seconds:7.2f} s  {len(jobs):7,} jobs  utilization {k['utilization']:.4f}  "
          f"jain {k['jain_index']:.4f}  deadlines {k['deadline_hit_rate']:.4f}  "
          f"max-wait SLA {k['max_wait_sla_attainment']:.4f}  guarantee violations "
          f"{k['inference_guarantee_violations']}  preemptions {k['preemptions']:,}  "
          f"lost {k['lost_gpu_hours']:,.1f} GPU-h  starved {k['starved_jobs']:,}  wait p95 {k['wait_p95_s']:,.0f} s")
    if "express" in set(jobs["queue"]):
        print(f"  {'':20s} express misses {express_misses(result):,}  p95 wait development "
              f"{p95.get('development', float('nan')):,.0f} s, inference {p95.get('inference', float('nan')):,.0f} s")


def sample_runs(whole: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        store = Store.open(Path(folder) / "bench.duckdb")
        ensure_sample(store)
        jobs, fleet, world = store.jobs("sample"), store.fleet("sample"), World.of_dataset(store, "sample")
        store.close()
    print(f"sample: {len(jobs):,} jobs, {len(fleet)} nodes, loaded in {time.perf_counter() - began:.2f} s")
    start = pd.Timestamp(jobs["submit_utc"].min())
    windows = [("first 7 days", {"start_utc": start, "end_utc": start + pd.Timedelta(days=7)})]
    if whole:
        windows.append(("whole sample", {}))
    for label, window in windows:
        print(label)
        for name in GOLDEN:
            scenario = replace(Scenario.load(SCENARIOS / f"{name}.toml"), **window)
            began = time.perf_counter()
            result = run_scenario(scenario, jobs, fleet, world)
            report(name, result, time.perf_counter() - began)


def hpc2n_runs() -> None:
    began = time.perf_counter()
    batch = parse_swf(HPC2N.read_bytes(), HPC2N.name, ImportOptions())
    jobs, fleet = batch.tables["jobs"], batch.tables["fleet"]
    print(f"HPC2N: {len(jobs):,} jobs, {len(fleet)} nodes, parsed in {time.perf_counter() - began:.2f} s")
    for name, order in (("fcfs+easy", "fcfs"), ("multifactor+easy", "multifactor")):
        scenario = Scenario.from_dict({"name": name, "policies": {"order": order, "backfill": "easy"}})
        began = time.perf_counter()
        result = run_scenario(scenario, jobs, fleet)
        seconds = time.perf_counter() - began
        k = kpis(result)
        print(f"  {name:20s} {seconds:7.2f} s  {len(result.jobs) / seconds:9,.0f} jobs/s  "
              f"utilization {k['utilization']:.4f}  wait p50 {k['wait_p50_s']:,.0f} s  "
              f"wait p95 {k['wait_p95_s']:,.0f} s  avg bounded slowdown {k['avg_bounded_slowdown']:.2f}  "
              f"jain {k['jain_index']:.4f}")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--whole", action="store_true", help="also run the golden scenarios over the whole sample")
    args.add_argument("--skip-hpc2n", action="store_true")
    args.add_argument("--skip-sample", action="store_true")
    opts = args.parse_args()
    if not opts.skip_sample:
        sample_runs(opts.whole)
    if not opts.skip_hpc2n:
        hpc2n_runs()


if __name__ == "__main__":
    main()

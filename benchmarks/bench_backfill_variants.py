"""What the backfilling variants do on the sample's GPU fleet (issue 25, items 2 and 4).

Every backfill policy (the keys and parameters in VARIANTS) replaces the backfill of
sample_data/scenarios/easy-backfill.toml (FCFS order, best-fit placement, lowest-index gangs) and runs on
the sample; per variant: GPU utilisation, p95 wait per workload class (hours, started jobs), mean
wait, starved jobs (waited longer than their queue class's starve_after_s,
engine.analysis.runs.fairness) and the wall clock of the run. `--headroom` gives instead the load headroom of the
main variants (HEADROOM) at EASY's service level (engine.service.headroom: the largest scaling of the demand at which
the variant still meets EASY's p95 wait in every workload class, one seed): each variant costs two searches of about ten
simulations, so it runs on the first `--days` days. `--gangs` compares instead the gang placements on
the whole sample (EASY backfilling): any free nodes (lowest-index, topology) against adjacent ones (contiguous first fit,
best fit, strip packing), with the gang jobs' mean and p95 wait and how scattered the idle nodes
are (`scattered_idle`: the share of idle nodes outside the longest run of adjacent idle ones);
the extra wait of contiguous placement is the fragmentation it causes (free nodes that are not
adjacent cannot hold a gang).
Prints Markdown tables for benchmarks/RESULTS.md.

    .venv/bin/python benchmarks/bench_backfill_variants.py [--days 7] [--headroom] [--gangs] [--workers 1]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.analysis.runs.fairness import starvation_by_team  # noqa: E402
from engine.analysis.runs.sim_metrics import kpis  # noqa: E402
from engine.scenario.spec import Scenario  # noqa: E402
from engine.service.compare import first_days  # noqa: E402
from engine.service.headroom.measure import measure  # noqa: E402
from engine.service.run import run_scenario  # noqa: E402
from engine.telemetry.sample import read_bundle  # noqa: E402
from engine.world.facts import World  # noqa: E402

BASE = ROOT / "sample_data" / "scenarios" / "easy-backfill.toml"
VARIANTS = [
    ("none", {}), ("per-pool", {}), ("easy", {}), ("easy-sjbf", {}), ("easy-sjbf", {"order": "smallest"}),
    ("easy-sjbf", {"order": "best-fit"}), ("easy-sjbf", {"order": "priority"}), ("easy++", {}),
    ("easy++", {"corrector": "double"}), ("easy++", {"corrector": "tsafrir"}), ("selective", {}),
    ("selective", {"threshold_x": 4.0}), ("selective", {"adaptive": True}), ("list", {}), ("lookahead", {}),
    ("conservative", {}), ("adaptive", {}),
]
HEADROOM = ("none", "per-pool", "easy-sjbf", "easy++", "selective", "list", "lookahead", "conservative")
GANGS = ["lowest-index", "topology", "contiguous-first-fit", "contiguous-best-fit", "contiguous-strip"]
CLASSES = ("training", "batch", "hpo", "inference", "development")


def label(key: str, params: dict) -> str:
    return key + "".join(f" {k}={v}" for k, v in params.items())


def variant(base: Scenario, family: str, key: str, params: dict, name: str) -> Scenario:
    """`base` with `family`'s policy replaced (Scenario.policies: family -> (key, parameters))."""
    return replace(base, name=name, policies={**base.policies, family: (key, dict(params))})


def figures(result) -> dict:
    jobs = result.jobs
    wait_h = jobs["wait_s"].to_numpy(np.float64) / 3600.0
    started = jobs["started"].to_numpy(bool)
    cls = jobs["workload_class"].astype(str).to_numpy()
    p95 = {c: float(np.percentile(wait_h[started & (cls == c)], 95)) if np.any(started & (cls == c)) else 0.0
           for c in CLASSES}
    return {"util": kpis(result)["utilization"] * 100, "p95": p95, "mean_h": float(np.nanmean(wait_h[started])),
            "p95_all": float(np.percentile(wait_h[started], 95)),
            "starved": int(starvation_by_team(result)["starved_jobs"].sum())}


def backfill_table(tables, days) -> None:
    jobs, fleet, world, _ = tables
    print("| variant | utilisation % | p95 wait all (h) | mean wait (h) | "
          + " | ".join(f"p95 {c} (h)" for c in CLASSES) + " | starved jobs | run (s) |")
    print("|---|" + "---:|" * (5 + len(CLASSES)))
    for scenario in scenarios_of(jobs, days):
        started = time.perf_counter()
        f = figures(run_scenario(scenario, jobs, fleet, world))
        seconds = time.perf_counter() - started
        print(f"| {scenario.name} | {f['util']:.2f} | {f['p95_all']:.2f} | {f['mean_h']:.2f} | "
              + " | ".join(f"{f['p95'][c]:.2f}" for c in CLASSES) + f" | {f['starved']} | {seconds:.1f} |", flush=True)


def scenarios_of(jobs, days) -> list[Scenario]:
    base = first_days([Scenario.load(BASE)], jobs, days)[0]
    return [variant(base, "backfill", key, params, label(key, params)) for key, params in VARIANTS]


def headroom_table(tables, days, workers: int) -> None:
    jobs, fleet, _, world_tables = tables
    scenarios = scenarios_of(jobs, days)
    easy = next(s for s in scenarios if s.name == "easy")
    started = time.perf_counter()
    report = measure(easy, [s for s in scenarios if s.name in HEADROOM], jobs, fleet, world_tables, seeds=1,
                     workers=workers)
    seconds = time.perf_counter() - started
    runs = sum(s.evaluations for s in report.scenarios)
    print(f"load headroom at EASY's service level, first {days} days, one seed: {runs} simulations in "
          f"{seconds:.0f} s ({seconds / runs:.1f} s each); the parameter variants and adaptive left out (an "
          "adaptive run replays every day under each strategy: about 15x a plain run)")
    print("| variant | load headroom (x demand) | GPUs needed |\n|---|---:|---:|")
    for s in report.scenarios:
        print(f"| {s.name} | {s.load_headroom:.3f} | {s.needed_gpus:,.0f} |", flush=True)


def gang_table(tables) -> None:
    jobs, fleet, world, _ = tables
    base = Scenario.load(BASE)
    print("| gang placement | gang jobs | gang mean wait (h) | gang p95 wait (h) | all jobs mean wait (h) | "
          "utilisation % | idle nodes not in the longest idle run % | run (s) |\n|---|---:|---:|---:|---:|---:|---:|---:|")
    for gang in GANGS:
        scenario = variant(base, "gang", gang, {}, gang)
        started = time.perf_counter()
        result = run_scenario(scenario, jobs, fleet, world)
        seconds = time.perf_counter() - started
        frame = result.jobs
        width = frame["job_id"].map(jobs.set_index("job_id")["nodes"]).to_numpy(np.float64)
        gang_rows = (width > 1) & frame["started"].to_numpy(bool)
        wait_h = frame["wait_s"].to_numpy(np.float64) / 3600.0
        print(f"| {gang} | {int(gang_rows.sum())} | {wait_h[gang_rows].mean():.2f} | "
              f"{np.percentile(wait_h[gang_rows], 95):.2f} | {np.nanmean(wait_h[frame['started'].to_numpy(bool)]):.2f} | "
              f"{kpis(result)['utilization'] * 100:.2f} | {100 * scattered_idle(result, fleet):.1f} | {seconds:.1f} |",
              flush=True)


def scattered_idle(result, fleet, step_s: float = 3600.0) -> float:
    """How scattered the idle nodes are: sampled every `step_s` in each region, the share of the
    entirely idle nodes (no job on them) outside the longest run of adjacent idle nodes (the node
    order of engine.policies.gang_contiguous: rack, then the fleet table's order), averaged over the
    samples with at least two idle nodes. 0: the idle nodes are one block, a gang of all of them fits."""
    samples = int(float(result.window_s) // step_s) + 1
    line = fleet.assign(order=np.arange(len(fleet))).sort_values(["region", "rack", "order"], kind="stable")
    position = {name: k for k, name in enumerate(line["node"])}
    busy = np.zeros((len(line), samples), bool)
    segments = result.segments
    for nodes, start, end in zip(segments["nodes"], segments["start_s"], segments["end_s"]):
        first = int(np.ceil(start / step_s))
        last = samples if not np.isfinite(end) else min(int(np.ceil(end / step_s)), samples)
        for name in str(nodes).split(";"):
            if name in position:
                busy[position[name], first:last] = True
    shares = []
    for _, rows in line.groupby("region", sort=True).indices.items():
        for t in range(samples):
            idle = ~busy[rows, t]
            count = int(idle.sum())
            if count >= 2:
                runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], idle.astype(np.int8), [0]]))))[::2]
                shares.append(1.0 - runs.max() / count)
    return float(np.mean(shares)) if shares else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7.0, help="the sample's first days (0: all 12 weeks)")
    parser.add_argument("--headroom", action="store_true", help="the load headroom table instead")
    parser.add_argument("--gangs", action="store_true", help="the gang placements on the whole sample instead")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    t = read_bundle().tables
    world_tables = {name: t[name] for name in ("prices", "regions", "carbon", "teams")}
    world = World(t["regions"], t["prices"], t["carbon"], teams=t["teams"])
    tables = (t["jobs"], t["fleet"], world, world_tables)
    if args.gangs:
        gang_table(tables)
    elif args.headroom:
        headroom_table(tables, args.days or None, args.workers)
    else:
        backfill_table(tables, args.days or None)


if __name__ == "__main__":
    main()

"""Benchmark of the batch placement policies (issue 23, item 4): speed, optimality gap, openb packing.

1. pass: the scheduling pass of benchmarks/bench_schedule_pass.py (10,000 queued jobs, 2,000
   nodes of 8 GPUs, 64 just freed, EASY backfilling) under each placement policy: the pass's median
   time, the jobs it started, ms per start and its ratio to best-fit's ms per start in the same run.
2. gap: random instances of 100 pods on 32 nodes (about 1.5 x more asked than there is room for):
   the GPU milli each plan places short of the best plan known (HiGHS's or any search's) and short
   of HiGHS's bound on the optimum (an upper bound on the gap to the optimum), % (mean and max);
   HiGHS stopped after --highs-limit-s: how many it proved optimal and its seconds.
3. openb: the FGD experiment (engine.service.experiments.fgd_batches) with the pods arriving in
   batches of --batch-pods, per policy: GPU allocation % at 100 and 130 % arrived, fragmentation
   ratio % at 90 and 100 % and fragmentation amount (% of capacity) at 100 % (seed means), beside FGD
   and best-fit placing pod by pod.

    .venv/bin/python benchmarks/bench_placement_search.py [--parts pass,gap,openb] [--seeds 42-44]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from bench_schedule_pass import QUEUED, prepared, workload

from engine.core.fleet_view import PodRequest
from engine.policies.placement_batch import greedy
from engine.policies.placement_milp import solve
from engine.policies.registry import make
from engine.service.experiments.fgd import parse_seeds
from engine.service.experiments.fgd_batches import batched_means
from engine.service.experiments.openb_inputs import load_nodes, load_pods
from engine.sim.output.collector import collector_paused
from engine.sim.state.fleet_state import FleetState

SEARCHES = ("greedy", "hill-climbing", "simulated-annealing", "tabu-search", "hybrid")
TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "alibaba-openb"


def bench_pass(repeat: int) -> None:
    print(f"1. one scheduling pass over {QUEUED:,} queued jobs (EASY), median of {repeat}")
    work, floor = workload(), None
    for key in ("best-fit", *SEARCHES, "exact"):
        times, started = [], 0
        for _ in range(repeat):
            run = prepared(work, "easy", key)
            with collector_paused():
                began = time.perf_counter()
                run._schedule("r", 3600.0)
                times.append(time.perf_counter() - began)
            started = QUEUED - run.queues["r"].count
        per_start = statistics.median(times) * 1000 / max(started, 1)
        floor = floor or per_start
        print(f"  {key:20s} pass {statistics.median(times) * 1000:8.2f} ms  {started:3d} started  "
              f"{per_start:8.4f} ms per start  {per_start / floor:7.1f}x best-fit")


def instance(seed: int, pods: int = 100, nodes: int = 32):
    """Nodes of 2, 4 or 8 GPUs; pods sharing a GPU (100-900 milli) or taking 1, 2, 4 or 8 whole ones,
    asking about 1.5 x the fleet's GPUs."""
    rng = np.random.default_rng(seed)
    gpus = rng.choice([2, 4, 8], nodes)
    state = FleetState(np.full(nodes, 32_000), np.full(nodes, 262_144), gpus, ["A100"] * nodes)
    requests = []
    for _ in range(pods):
        if rng.random() < 0.5:
            requests.append(PodRequest(int(rng.integers(1, 8)) * 1000, 1024, 1, int(rng.integers(1, 10)) * 100))
        else:
            requests.append(PodRequest(int(rng.integers(1, 12)) * 1000, 1024, int(rng.choice([1, 2, 4, 8])), 1000))
    return state.view(), requests


def bench_gap(count: int, limit_s: float) -> None:
    print(f"2. batch plans against HiGHS: {count} instances of 100 pods on 32 nodes, HiGHS stopped after {limit_s:g} s")
    keys = ("exact (HiGHS)", *SEARCHES)
    placed: dict[str, list[int]] = {key: [] for key in keys}
    solve_s, proven, bounds = [], 0, []
    for seed in range(count):
        view, requests = instance(seed)
        began = time.perf_counter()
        best = solve(greedy(view, requests, 0.5, False, False), 10**7, time_limit_s=limit_s)
        solve_s.append(time.perf_counter() - began)
        proven += best.optimal
        bounds.append(best.bound)
        placed["exact (HiGHS)"].append(sum(best.plan.value) - best.plan.unplaced)
        for key in SEARCHES:
            plan = make("placement", key).plan(view, requests, np.random.default_rng(seed))
            placed[key].append(sum(max(r.total_gpu_milli, 1) for r, p in zip(requests, plan) if p is not None))
    known = np.max([placed[key] for key in keys], axis=0)
    print(f"  HiGHS: {proven} of {count} proven optimal; median {statistics.median(solve_s):.2f} s, "
          f"max {max(solve_s):.2f} s per instance")
    for key in keys:
        short = 100 * (known - np.array(placed[key])) / known
        to_bound = 100 * (np.array(bounds) - np.array(placed[key])) / np.array(bounds)
        print(f"  {key:20s} short of the best plan known: mean {short.mean():.3f} %  max {short.max():.3f} %;  "
              f"of HiGHS's bound: mean {to_bound.mean():.3f} %  max {to_bound.max():.3f} %")


def bench_openb(seeds, batch_pods: int) -> None:
    nodes = load_nodes(TRACES / "openb_node_list_gpu_node.csv")
    pods = load_pods(TRACES / "openb_pod_list_default.csv")
    print(f"3. openb default trace, {len(pods)} pods on {len(nodes)} nodes, seeds {seeds[0]}-{seeds[-1]}, "
          f"batches of {batch_pods} (FGD and best-fit pod by pod)")
    runs = [("fgd", 1), ("best-fit", 1)] + [(key, batch_pods) for key in SEARCHES]
    for key, size in runs:
        began = time.perf_counter()
        result = batched_means(nodes, pods, key, seeds, size)
        alloc, frag = result["gpu_alloc_ratio_pct"], result["gpu_frag_ratio_pct"]
        amount = result["gpu_frag_amount_pct"]
        print(f"  {key:20s} GPU alloc {alloc[100]:6.2f} % at 100 %, {alloc[130]:6.2f} % at 130 %; "
              f"frag ratio {frag[90]:6.2f} % at 90 %, {frag[100]:6.2f} % at 100 %; frag amount {amount[100]:5.2f} % "
              f"at 100 %  ({(time.perf_counter() - began) / len(seeds):.1f} s per seed)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="pass,gap,openb")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--highs-limit-s", type=float, default=10.0)
    parser.add_argument("--seeds", type=parse_seeds, default=(42, 43, 44))
    parser.add_argument("--batch-pods", type=int, default=64)
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "pass" in parts:
        bench_pass(args.repeat)
    if "gap" in parts:
        bench_gap(args.instances, args.highs_limit_s)
    if "openb" in parts:
        bench_openb(args.seeds, args.batch_pods)


if __name__ == "__main__":
    main()

"""FGD (Weng et al., USENIX ATC'23): GPU-sharing pod placement on the Alibaba openb cluster.

An arrival-only packing experiment, as the paper's simulator runs it: the pods arrive one by one
and never leave; a pod that fits nowhere fails for good. Per seed, the pods are sorted by name and
shuffled; then the list is inflated by appending uniformly random copies of original pods until
the next copy would push the requested GPU milli past inflation x cluster capacity (or, when the
list already asks for more, random pods are removed until it does not). Then the nodes are put in
a random order, which decides ties between equally scored nodes (the first listed wins, see
`engine.policies.placement`). The target workload of the fragmentation measure is the typical
shapes of the original pods (95 % coverage).

After each pod: allocation ratio = allocated / capacity GPU milli (%, 2 decimals), fragmentation
ratio = fragmented / idle GPU milli (%), fragmentation amount = fragmented GPU milli, and
arrived = requested GPU milli so far / capacity (%, rounded to a whole number). The value at k %
arrived is the mean over the pods whose arrived rounds to k (k +- 1 when none does); amounts are
reported as % of capacity. Each seed drives one random stream: order, inflation, node order, Random's picks.
"""
from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.core.fleet_view import MILLI
from engine.core.fragmentation import TargetWorkload
from engine.policies.registry import make
from engine.service.experiments.openb_inputs import PodList, load_nodes, load_pods
from engine.service.sweep import lifeline
from engine.sim.state.fleet_state import FleetState

POLICIES = {"random": "random", "dotprod": "dot-product", "clustering": "gpu-clustering",
            "packing": "gpu-packing", "bestfit": "best-fit", "fgd": "fgd"}
LEVELS = (50, 80, 90, 100, 110, 120, 130)
SEEDS = tuple(range(42, 52))
INFLATION = 1.3
METRICS = ("gpu_alloc_ratio_pct", "gpu_frag_ratio_pct", "gpu_frag_amount_pct")


@dataclass(frozen=True)
class SeedTrace:
    """Per arriving pod: requested GPU milli so far, allocated GPU milli, fragmented GPU milli
    (after the pod), and whether it was placed."""

    arrived_milli: np.ndarray
    used_milli: np.ndarray
    frag_milli: np.ndarray
    placed: np.ndarray


def arrival_order(pods: PodList, capacity_milli: int, inflation: float, rng: np.random.Generator) -> np.ndarray:
    """Pod indices in arrival order: sorted by name, shuffled, then inflated (or trimmed) to
    inflation x capacity of requested GPU milli."""
    by_name = np.argsort(pods.name.astype(str), kind="stable")
    order = list(by_name[rng.permutation(len(by_name))])
    milli = pods.total_gpu_milli
    target, total = inflation * capacity_milli, int(milli.sum())
    if total > target:
        while total > target:
            total -= int(milli[order.pop(int(rng.integers(len(order))))])
        return np.asarray(order, dtype=np.int64)
    while milli.any():
        pick = int(by_name[rng.integers(len(by_name))])
        if total + milli[pick] > target:
            break
        order.append(pick)
        total += int(milli[pick])
    return np.asarray(order, dtype=np.int64)


def run_seed(nodes: pd.DataFrame, pods: PodList, policy_key: str, seed: int, inflation: float = INFLATION,
             target: TargetWorkload | None = None) -> SeedTrace:
    """Place every arriving pod with the placement policy `policy_key` (a registry key)."""
    rng = np.random.default_rng(seed)
    order = arrival_order(pods, int(nodes["gpu"].sum()) * MILLI, inflation, rng)
    state = FleetState.from_frame(nodes.iloc[rng.permutation(len(nodes))], target or typical_target(pods))
    policy, view, requests = make("placement", policy_key), state.view(), pods.requests()
    used = np.zeros(len(order), np.int64)
    frag = np.zeros(len(order), np.int64)
    placed = np.zeros(len(order), bool)
    allocated, index = 0, state.fragmentation
    for step, pod in enumerate(order):
        request = requests[pod]
        placement = policy.choose(view, request, rng)
        if placement is not None:
            state.allocate(placement, request)
            allocated += request.total_gpu_milli
            placed[step] = True
        used[step], frag[step] = allocated, index.weighted.sum()
    arrived = np.cumsum(pods.total_gpu_milli[order])
    return SeedTrace(arrived, used, frag / index.total_weight, placed)


def typical_target(pods: PodList) -> TargetWorkload:
    return TargetWorkload.typical(pods.cpu_milli, pods.gpu_milli, pods.num_gpu, pods.gpu_models)


def level_values(trace: SeedTrace, num_gpus: int, levels=LEVELS) -> dict[str, dict[int, float]]:
    """One seed's metrics at each arrived level, rounded as the paper's analysis scripts do."""
    arrived_pct = np.round(trace.arrived_milli / num_gpus / 10)
    alloc = np.round(trace.used_milli / num_gpus / 10, 2)
    idle = num_gpus * MILLI - trace.used_milli
    ratio = np.round(np.divide(100 * trace.frag_milli, idle, out=np.zeros(len(idle)), where=idle > 0), 2)
    amount = np.round(trace.frag_milli, 2)
    out: dict[str, dict[int, float]] = {m: {} for m in METRICS}
    for k in levels:
        rows = arrived_pct == k
        if not rows.any():
            rows = (arrived_pct >= k - 1) & (arrived_pct <= k + 1)
        if not rows.any():
            continue
        out["gpu_alloc_ratio_pct"][k] = round(float(alloc[rows].mean()), 2)
        out["gpu_frag_ratio_pct"][k] = float(ratio[rows].mean())
        out["gpu_frag_amount_pct"][k] = round(100 * float(amount[rows].mean()) / 1000 / num_gpus, 2)
    return out


def _seed_values(args) -> dict[str, dict[int, float]]:
    nodes, pods, policy_key, seed, inflation, target = args
    trace = run_seed(nodes, pods, policy_key, seed, inflation, target)
    return level_values(trace, int(nodes["gpu"].sum()))


def run_experiment(nodes: pd.DataFrame, pods: PodList, policy: str, seeds=SEEDS, inflation: float = INFLATION,
                   workers: int = 1) -> dict:
    """Per-seed level values and their seed means; `policy` is a key of POLICIES."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if inflation <= 0:
        raise ValueError(f"inflation must be positive, got {inflation}")
    target = typical_target(pods)
    jobs = [(nodes, pods, POLICIES[policy], seed, inflation, target) for seed in seeds]
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(min(workers, len(jobs)), initializer=lifeline.watch,
                                 initargs=(lifeline.parent(),)) as pool:
            per_seed = list(pool.map(_seed_values, jobs))
    else:
        per_seed = [_seed_values(job) for job in jobs]
    means = {m: {str(k): round(float(np.mean([s[m][k] for s in per_seed if k in s[m]])), 3)
                 for k in LEVELS if any(k in s[m] for s in per_seed)} for m in METRICS}
    return {**means, "seeds": {str(seed): {m: {str(k): v for k, v in s[m].items()} for m in METRICS}
                               for seed, s in zip(seeds, per_seed)}}


def parse_seeds(text: str) -> tuple[int, ...]:
    """'42-51', '42,45,47' or '42' -> seeds."""
    try:
        seeds: list[int] = []
        for part in text.split(","):
            low, sep, high = part.strip().partition("-")
            seeds += range(int(low), int(high) + 1) if sep else [int(low)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes A-B or comma-separated integers, got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seeds in {text!r}")
    return tuple(seeds)


def _inflation(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"takes a positive number, got {text!r}")
    return value


def add_parser(experiment_sub) -> None:
    """Register `meridian experiment fgd`."""
    p = experiment_sub.add_parser(
        "fgd", help="FGD (ATC'23) GPU-sharing placement on the Alibaba openb cluster",
        description="Pack an openb pod list (plain or gzip) onto a node list as the FGD paper did and print the "
                    "seed-mean GPU allocation ratio, fragmentation ratio and fragmentation amount at "
                    "50-130% arrived.")
    p.add_argument("--nodes", required=True, help="openb node list CSV (e.g. openb_node_list_gpu_node.csv)")
    p.add_argument("--pods", required=True, help="openb pod list CSV (e.g. openb_pod_list_default.csv)")
    p.add_argument("--policy", required=True, choices=list(POLICIES))
    p.add_argument("--seeds", type=parse_seeds, default=SEEDS, metavar="A-B|I,J,...",
                   help="random seeds (default 42-51)")
    p.add_argument("--inflation", type=_inflation, default=INFLATION,
                   help="inflate the workload to this multiple of GPU capacity (default 1.3)")
    p.add_argument("--workers", type=int, default=1, help="processes running seeds in parallel (default 1)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_fgd)


def cmd_fgd(args) -> int:
    nodes, pods = load_nodes(args.nodes), load_pods(args.pods)
    result = run_experiment(nodes, pods, args.policy, args.seeds, args.inflation, max(args.workers, 1))
    if args.json:
        print(json.dumps({m: result[m] for m in METRICS}, indent=2))
        return 0
    print(f"FGD experiment: {pods.source} ({len(pods)} pods) on {len(nodes)} nodes / {int(nodes['gpu'].sum())} "
          f"GPUs, policy {args.policy}, inflation {args.inflation:g}, seeds {_seed_text(args.seeds)}")
    print(f"{'arrived %':>9}  {'GPU alloc %':>11}  {'frag ratio %':>12}  {'frag amount %':>13}")
    for k in map(str, LEVELS):
        cells = [result[m].get(k) for m in METRICS]
        print(f"{k:>9}  " + "  ".join(f"{'-' if v is None else f'{v:.2f}':>{w}}"
                                      for v, w in zip(cells, (11, 12, 13))))
    return 0


def _seed_text(seeds) -> str:
    if len(seeds) > 1 and list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))

"""FGD reproduction: run time and fidelity against the published 10-seed means.

Runs `engine.service.experiments.fgd` for each policy over seeds 42-51 on openb_pod_list_default and
prints, per policy, the wall time (10 seeds, `--workers` processes), the seconds per seed, and the
seed means next to ../shared/expected/fgd_default_published.csv at every arrived level.

    .venv/bin/python benchmarks/bench_fgd.py [--workers 2] [--policies fgd,bestfit] [--seeds 42-51]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from engine.service.experiments.fgd import LEVELS, METRICS, POLICIES, parse_seeds, run_experiment
from engine.service.experiments.openb_inputs import load_nodes, load_pods

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRACES = SHARED / "traces" / "alibaba-openb"
PUBLISHED = SHARED / "expected" / "fgd_default_published.csv"
PUBLISHED_NAMES = {"random": "01-Random", "dotprod": "02-DotProd", "clustering": "03-GpuClustering",
                   "packing": "04-GpuPacking", "bestfit": "05-BestFit", "fgd": "06-FGD"}
PUBLISHED_METRICS = {"gpu_alloc_ratio_pct": "gpu_alloc_ratio_pct", "gpu_frag_ratio_pct": "gpu_frag_ratio_pct",
                     "gpu_frag_amount_pct": "gpu_frag_amount_pct_of_cluster"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--seeds", type=parse_seeds, default=tuple(range(42, 52)))
    args = parser.parse_args()
    nodes = load_nodes(TRACES / "openb_node_list_gpu_node.csv")
    pods = load_pods(TRACES / "openb_pod_list_default.csv")
    published = pd.read_csv(PUBLISHED).set_index(["policy", "metric", "arrived_gpu_request_pct"])["mean"]
    total = 0.0
    for policy in args.policies.split(","):
        start = time.perf_counter()
        result = run_experiment(nodes, pods, policy, args.seeds, workers=args.workers)
        elapsed = time.perf_counter() - start
        total += elapsed
        print(f"\n{policy}: {elapsed:.1f} s for {len(args.seeds)} seeds with {args.workers} workers "
              f"({elapsed * min(args.workers, len(args.seeds)) / len(args.seeds):.2f} s per seed per core)")
        for metric in METRICS:
            ours = [result[metric].get(str(k)) for k in LEVELS]
            theirs = [published[(PUBLISHED_NAMES[policy], PUBLISHED_METRICS[metric], k)] for k in LEVELS]
            print(f"  {metric:<20} " + "  ".join(f"{k}%: {o:6.2f} ({t:6.2f} {o - t:+.2f})"
                                                 for k, o, t in zip(LEVELS, ours, theirs)))
    print(f"\nall policies: {total:.1f} s")


if __name__ == "__main__":
    main()

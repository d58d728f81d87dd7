"""What the cluster step is worth on the sample (issue 27, item 1).

The sample's clusters each hold one GPU type (region + type), so a job's GPU type already names its
cluster; every run here splits them into clusters of two racks ([clusters] racks_per_cluster = 2)
and models the interconnect (engine/world/interconnect.py, its defaults). All run conservative
backfilling with best-fit placement and topology-aware gangs; only the cluster policy changes:
`any` (no cluster step: today's behaviour, the baseline) against `most-free`, `best-fit` and
`topology`. Prints mean and p95 wait, mean JCT, preemptions, the multi-node jobs' mean JCT and mean network slowdown, the
starts spread over clusters and the GPU-hours the network added, over the first DAYS days (0: the
whole sample).

    nice .venv/bin/python benchmarks/cluster_effect.py [--days 7]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

POLICIES = {"order": "fcfs", "placement": "best-fit", "backfill": "conservative", "admission": "accept-all",
            "gang": "topology"}
CLUSTER_POLICIES = ("any", "most-free", "best-fit", "topology")


def scenario(cluster: str) -> Scenario:
    return Scenario.from_dict({"name": f"cluster-{cluster}", "policies": {**POLICIES, "cluster": cluster},
                               "clusters": {"racks_per_cluster": 2}, "interconnect": {}})


def row(result) -> dict:
    k = kpis(result)
    jobs = result.jobs
    wide = jobs[jobs["nodes"].str.contains(";", regex=False) & jobs["end_s"].notna()]
    links = result.interconnect
    preempted = int(jobs["preemptions"].sum()) if "preemptions" in jobs else 0
    return {"mean wait h": k["wait_mean_s"] / 3600, "mean JCT h": k["jct_mean_s"] / 3600,
            "p95 wait h": k["wait_p95_s"] / 3600, "preemptions": preempted,
            "multi-node mean JCT h": float(np.mean(wide["end_s"] - wide["submit_s"])) / 3600,
            "multi-node slowdown": float(links["slowdown"].mean()) if len(links) else 1.0,
            "cross-cluster starts": int((links["level"] == "region").sum()),
            "extra GPU-h": float(links["extra_gpu_hours"].sum())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7, help="the first N days of the sample (0: all of it)")
    args = parser.parse_args()
    tables = read_bundle().tables
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    print("| cluster policy | mean wait (h) | p95 wait (h) | mean JCT (h) | preemptions | multi-node mean JCT (h) | multi-node mean slowdown | "
          "cross-cluster starts | extra GPU-h | run s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cluster, s in zip(CLUSTER_POLICIES, first_days([scenario(c) for c in CLUSTER_POLICIES], tables["jobs"],
                                                       args.days)):
        started = time.perf_counter()
        r = row(run_scenario(s, tables["jobs"], tables["fleet"], world))
        print(f"| {cluster} | {r['mean wait h']:.3f} | {r['p95 wait h']:.3f} | {r['mean JCT h']:.3f} | "
              f"{r['preemptions']:,} | {r['multi-node mean JCT h']:.3f} | "
              f"x{r['multi-node slowdown']:.3f} | {r['cross-cluster starts']:,} | {r['extra GPU-h']:,.0f} | "
              f"{time.perf_counter() - started:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What region roles do on the sample (README, [roles]): edge inference (`latency-aware.toml` against
`edge-inference.toml`, the same policies and round trips plus three edge locations) and archived
checkpoints (`spot-interruptible.toml` against `archive-checkpoints.toml`, the same policies and spot
interruptions with checkpoints kept in eu-north's archive; and the same with a 5-minute restore, an
expedited retrieval) and archived datasets (`archive-datasets.toml` without its [roles] against it: datasets
idle two days in their own region's archive tier; and the same with one archive, eu-north, for every
region's datasets, so restores cross regions and pay egress). For each run: inference's mean and p95 wait, every job's mean and p95 wait, the
bill (cost_usd), the latency SLO attainment, request-hours, the share served at the edge and the cost per
request-hour (the same formulas for the run without edge locations), evictions, lost GPU-hours, the
checkpoints archived, their storage and egress dollars and the hours restores held jobs, and the same for
archived datasets (with the hot storage they saved).

    .venv/bin/python benchmarks/bench_region_roles.py [--days 7] [--json]
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from engine.analysis.runs.roles_kpis import roles_kpis
from engine.scenario.spec import Scenario
from engine.service.compare import first_days, run_one, with_world
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
KEYS = ("wait_mean_s", "wait_p95_s", "cost_usd", "egress_usd", "latency_slo_attainment", "preemptions",
        "lost_gpu_hours", "checkpoints_archived", "checkpoint_storage_usd", "checkpoint_egress_usd",
        "restore_wait_hours", "datasets_archived", "dataset_storage_usd", "dataset_storage_saved_usd",
        "dataset_egress_usd", "dataset_restores", "dataset_restore_wait_hours")
PAIRS = (("latency-aware", "edge-inference"), ("spot-interruptible", "archive-checkpoints"))


def _scenarios() -> list[Scenario]:
    loaded = [Scenario.load(SCENARIOS / f"{name}.toml") for pair in PAIRS for name in pair]
    archive = loaded[-1]
    expedited = replace(archive, name="archive-checkpoints, 5 min restore",
                        roles=replace(archive.roles, restore_delay_s=300.0))
    datasets = Scenario.load(SCENARIOS / "archive-datasets.toml")
    hot = replace(datasets, name="archive-datasets without [roles]", roles=None)
    remote = replace(datasets, name="archive-datasets, one archive in eu-north",
                     roles=replace(datasets.roles, archive=("eu-north",)))
    return [*loaded, expedited, hot, datasets, remote]


def _request_figures(run) -> dict[str, float]:
    """request_hours, edge_request_share and usd_per_request_hour of a run, also one without edge regions
    (then none of its hours is at the edge)."""
    result = run.result
    if result.roles is None or "edge" not in ",".join(result.roles["roles"]):
        result = replace(result, roles=pd.DataFrame({"region": ["(none)"], "roles": ["edge"]}))
    return roles_kpis(result, run.world.cost)


def measure(days: float | None) -> dict[str, dict]:
    bundle = read_bundle().tables
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    jobs, fleet = bundle["jobs"], bundle["fleet"]
    out = {}
    for scenario in first_days(_scenarios(), jobs, days):
        run = with_world(run_one(scenario, jobs, fleet, world, strand=False), fleet, world)
        table = run.result.jobs
        waits = table.loc[table["workload_class"] == "inference", "wait_s"].to_numpy(np.float64)
        out[scenario.name] = {"inference_wait_mean_s": float(waits.mean()),
                              "inference_wait_p95_s": float(np.percentile(waits, 95)),
                              **{key: float(run.kpis.get(key, 0.0)) for key in KEYS},
                              **{key: value for key, value in _request_figures(run).items()
                                 if key in ("request_hours", "edge_request_share", "usd_per_request_hour")}}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7.0, help="the first N days of the sample (0: all of it)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.days or None)
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for name, row in figures.items():
        print(name)
        for key, value in row.items():
            print(f"  {key:28s} {value:,.4f}")


if __name__ == "__main__":
    main()

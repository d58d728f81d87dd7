"""How the night/weekend experiments fill the forecast idle gap on the sample (README, [experiments]):
`weekend-experiments.toml` without [experiments], as bundled (the largest GPU type of each team's region,
single-node jobs), sized per GPU type (`sizing = "per-type"`), and per type with multi-node batches of up to
4 whole nodes (`max_nodes = 4`). For each run: the experiment jobs (multi-node among them), the gap, the
GPU-hours planned and filled and their share, utilisation, the recorded jobs' mean and p95 wait and the bill;
then, per region and GPU type, the gap and the share filled (engine.analysis.runs.experiment_kpis.fill_by_type).

    .venv/bin/python benchmarks/bench_experiment_sizing.py [--json]
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from engine.analysis.runs.experiment_kpis import fill_by_type
from engine.scenario.experiments import Experiments
from engine.scenario.spec import Scenario
from engine.service.compare import run_one, with_world
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
KEYS = ("experiments_jobs", "experiments_gap_gpu_hours", "experiments_planned_gpu_hours",
        "experiments_filled_gpu_hours", "experiments_fill_share", "utilization", "cost_usd")


def _scenarios() -> list[Scenario]:
    bundled = Scenario.load(SCENARIOS / "weekend-experiments.toml")
    spec = bundled.experiments
    per_type = replace(spec, sizing="per-type")
    batches = replace(per_type, settings=replace(spec.settings, max_nodes=4))
    return [replace(bundled, name="no experiments", experiments=Experiments()), bundled,
            replace(bundled, name="per-type", experiments=per_type),
            replace(bundled, name="per-type, max_nodes 4", experiments=batches)]


def measure() -> dict[str, dict]:
    bundle = read_bundle().tables
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    out = {}
    for scenario in _scenarios():
        run = with_world(run_one(scenario, bundle["jobs"], bundle["fleet"], world, strand=False), bundle["fleet"], world)
        table = run.result.jobs
        recorded = ~table["job_id"].astype(str).str.startswith("exp-")
        waits = table.loc[recorded & table["started"], "wait_s"].to_numpy(np.float64)
        gaps = run.result.experiments
        by_type = fill_by_type(run.result)
        out[scenario.name] = {
            **{key: float(run.kpis.get(key, 0.0)) for key in KEYS},
            "multi_node_jobs": float(gaps["multi_node_jobs"].sum()) if gaps is not None else 0.0,
            "recorded_wait_mean_h": float(waits.mean() / 3600), "recorded_wait_p95_h": float(np.percentile(waits, 95) / 3600),
            "by_type": by_type.round(3).to_dict("records")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for name, row in figures.items():
        print(name)
        for key, value in row.items():
            if key != "by_type":
                print(f"  {key:32s} {value:,.4f}")
        for line in row["by_type"]:
            print(f"  {line['region']:14s} {line['gpu_type']:6s} gap {line['gap_gpu_hours']:10,.0f}  "
                  f"filled {line['ran_gpu_hours']:10,.0f}  share {line['fill_share']:.3f}  jobs {line['jobs']:.0f}  "
                  f"multi-node {line['multi_node_jobs']:.0f}")


if __name__ == "__main__":
    main()

"""What the soft-constraints router relaxes on the sample (benchmarks/RESULTS.md, README): for the first
week and the whole sample, the jobs that had each soft constraint relaxed, the jobs moved out of their
home region, and the p95 wait, beside the same scenario without soft constraints (every weight 0: only the
hard constraints, each job to the hard-feasible region with the most free GPUs) and beside the
residency-aware overflow scenario, with the run times as ratios to the FIFO run of the same window.

    .venv/bin/python benchmarks/bench_relaxations.py [--days 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from engine.analysis.runs.relaxation import kpi_key
from engine.analysis.runs.sim_metrics import kpis
from engine.core.reasons import SOFT_CONSTRAINTS
from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
WEIGHTS = ("w_data_locality", "w_latency", "w_carbon", "w_cost", "w_team_affinity")


def _scenarios() -> dict[str, Scenario]:
    soft = Scenario.load(SCENARIOS / "soft-constraints.toml")
    key, params = soft.policies["routing"]
    hard_only = replace(soft, name="hard constraints only",
                        policies={**soft.policies, "routing": (key, {**params, **dict.fromkeys(WEIGHTS, 0.0)})})
    return {"fifo": Scenario.load(SCENARIOS / "fifo.toml"), "soft-constraints": soft, "hard constraints only": hard_only,
            "residency-aware": Scenario.load(SCENARIOS / "residency-aware.toml")}


def measure(days: float | None) -> dict[str, dict]:
    bundle = read_bundle().tables
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    jobs, fleet = bundle["jobs"], bundle["fleet"]
    out = {}
    for name, scenario in _scenarios().items():
        scenario = first_days([scenario], jobs, days)[0]
        began = time.perf_counter()
        result = run_scenario(scenario, jobs, fleet, world)
        seconds = time.perf_counter() - began
        values = kpis(result)
        row = {"jobs": len(result.jobs), "seconds": seconds, "wait_p95_s": values["wait_p95_s"],
               "wait_mean_s": values["wait_mean_s"], "deadline_hit_rate": values["deadline_hit_rate"],
               "latency_slo_attainment": values["latency_slo_attainment"],
               "moved": int((result.jobs["region"] != result.jobs["home_region"]).sum())}
        if result.relaxations is not None:
            row.update({"jobs_relaxed": values["jobs_relaxed"], "relaxations": values["relaxations"],
                        "relaxed_egress_usd": values["relaxed_egress_usd"],
                        **{c: values[kpi_key(c)] for c in SOFT_CONSTRAINTS}})
        out[name] = row
    floor = out["fifo"]["seconds"]
    for row in out.values():
        row["time_vs_fifo"] = row["seconds"] / floor
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, help="the first N days of the sample (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(args.days)
    if args.json:
        print(json.dumps(found, indent=1))
        return
    for name, row in found.items():
        print(f"{name}: " + ", ".join(f"{k} {v:,.3f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in row.items()))


if __name__ == "__main__":
    main()

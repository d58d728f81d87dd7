"""What each [data] mechanism does on the sample (benchmarks/RESULTS.md, README): the bundled
`data-movement` scenario (follow-the-sun, 10 Gbit/s) and the same data mechanisms under cost-aware
routing (`cheapest`), each with the plain transfer delay only ("none"), one mechanism at a time, and all of
them; for each run the bill (cost_usd, egress included), egress, the replicas' storage and the egress they
saved, the data moved, the hours jobs were held by their data and those hidden in the queue, the p95 and
mean wait, and the run time as a ratio to the "none" run of the same routing.

    .venv/bin/python benchmarks/bench_data_moves.py [--days 7] [--json]
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

from engine.scenario.spec import Scenario
from engine.service.compare import first_days, run_one, with_world
from engine.telemetry.sample import read_bundle
from engine.world.data_model import DataModel
from engine.world.facts import World

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
KEYS = ("cost_usd", "egress_usd", "replica_storage_usd", "replica_egress_saved_usd", "replicas_created",
        "data_moved_gb", "data_wait_hours", "data_hidden_hours", "compression_cpu_hours", "wait_p95_s", "wait_mean_s")


def variants(full: DataModel) -> dict[str, DataModel]:
    plain = DataModel(transfer_gbps=full.transfer_gbps)
    return {"none": plain, "replicas": replace(plain, replicate_after=full.replicate_after,
                                               storage_usd_per_gb_month=full.storage_usd_per_gb_month),
            "prefetch": replace(plain, prefetch=True),
            "compression": replace(plain, compression_ratio=full.compression_ratio,
                                   compress_s_per_gb=full.compress_s_per_gb),
            "incremental": replace(plain, incremental=True, changed_fraction=full.changed_fraction), "all": full}


def measure(days: float | None) -> dict[str, dict[str, dict]]:
    bundle = read_bundle().tables
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    jobs, fleet = bundle["jobs"], bundle["fleet"]
    base = Scenario.load(SCENARIOS / "data-movement.toml")
    out: dict[str, dict[str, dict]] = {}
    for routing in ("follow-the-sun", "cheapest"):
        rows = out[routing] = {}
        for name, model in variants(base.data).items():
            scenario = replace(base, name=f"{routing} {name}", data=model,
                               policies={**base.policies, "routing": (routing, {})})
            scenario = first_days([scenario], jobs, days)[0]
            began = time.perf_counter()
            run = with_world(run_one(scenario, jobs, fleet, world, strand=False), fleet, world)
            rows[name] = {"seconds": time.perf_counter() - began, **{k: run.kpis.get(k, 0.0) for k in KEYS}}
        floor = rows["none"]["seconds"]
        for row in rows.values():
            row["time_vs_none"] = row["seconds"] / floor
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=float, help="the first N days of the sample (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    found = measure(args.days)
    lines = [f"{routing} {name}: " + ", ".join(f"{k} {v:,.2f}" for k, v in row.items())
             for routing, rows in found.items() for name, row in rows.items()]
    print(json.dumps(found, indent=1) if args.json else "\n".join(lines))


if __name__ == "__main__":
    main()

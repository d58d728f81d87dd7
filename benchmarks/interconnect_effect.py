"""What keeping gangs in one rack is worth once the network costs something (issue 27, item 2).

Runs conservative backfilling with lowest-index gangs (`conservative`) and with topology-aware gangs
(`conservative-topology`) on the whole sample, each without and with the interconnect model
(engine/world/interconnect.py, its defaults), and prints mean JCT, p95 wait, the multi-node jobs'
mean JCT, how many multi-node starts spanned racks, and the GPU-hours the spread added. With
`--headroom DAYS`, instead, the load headroom of conservative-topology against conservative, both
with the interconnect (the baseline's service level, 3 seeds), over the first DAYS days; `--slack X`
measures it instead at X times the baseline's p95 wait per class (written as an [slo] file), for a
baseline with no headroom at its own level; `--only CLASS` keeps that class's target alone.

    nice .venv/bin/python benchmarks/interconnect_effect.py [--headroom 7 [--slack 1.25] [--only training]]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.headroom.measure import measure
from engine.service.headroom.service import from_baseline
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

POLICIES = {"order": "fcfs", "placement": "best-fit", "backfill": "conservative", "admission": "accept-all"}


def scenario(gang: str, interconnect: bool) -> Scenario:
    name = "conservative" + ("-topology" if gang == "topology" else "") + ("+interconnect" if interconnect else "")
    spec = {"name": name, "policies": {**POLICIES, "gang": gang}}
    if interconnect:
        spec["interconnect"] = {}
    return Scenario.from_dict(spec)


def row(result) -> dict:
    k = kpis(result)
    table = result.jobs
    wide = table[table["nodes"].str.contains(";") & table["end_s"].notna()]
    links = result.interconnect
    spread = int((links["level"] != "rack").sum()) if links is not None else 0
    extra = float(links["extra_gpu_hours"].sum()) if links is not None else 0.0
    return {"mean JCT h": k["jct_mean_s"] / 3600, "p95 wait h": k["wait_p95_s"] / 3600,
            "multi-node mean JCT h": float(np.mean(wide["end_s"] - wide["submit_s"])) / 3600,
            "spread starts": spread, "extra GPU-h": extra}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--headroom", type=float, default=0, help="also the load headroom over the first N days")
    parser.add_argument("--slack", type=float, default=0, help="targets: this x the baseline's p95 wait per class")
    parser.add_argument("--only", help="with --slack: the target of this workload class only")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    tables = read_bundle().tables
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    if args.headroom:
        return _headroom(tables, world, args)
    print("| scenario | mean JCT (h) | p95 wait (h) | multi-node mean JCT (h) | spread starts | extra GPU-h | run s |")
    print("|---|---|---|---|---|---|---|")
    for interconnect in (False, True):
        for gang in ("lowest-index", "topology"):
            started = time.perf_counter()
            s = scenario(gang, interconnect)
            result = run_scenario(s, tables["jobs"], tables["fleet"], world)
            r = row(result)
            print(f"| {s.name} | {r['mean JCT h']:.3f} | {r['p95 wait h']:.3f} | {r['multi-node mean JCT h']:.3f} | "
                  f"{r['spread starts']:,} | {r['extra GPU-h']:,.0f} | {time.perf_counter() - started:.1f} |")
    return 0


def _headroom(tables: dict, world: World, args) -> int:
    world_tables = {k: tables[k] for k in ("regions", "prices", "carbon", "teams")}
    base, cand = first_days([scenario("lowest-index", True), scenario("topology", True)], tables["jobs"],
                            args.headroom)
    slo = _slack_file(base, tables, world, args.slack, args.only) if args.slack else None
    report = measure(base, [cand], tables["jobs"], tables["fleet"], world_tables, workers=args.workers, slo_file=slo)
    for s in report.scenarios:
        print(f"headroom, first {args.headroom:g} days, {s.name}: load headroom x{s.load_headroom:.3f} "
              f"({s.load_headroom_min:.3f}-{s.load_headroom_max:.3f}), ratio x{s.load_headroom_ratio:.3f} "
              f"({min(s.ratio_by_seed):.3f}-{max(s.ratio_by_seed):.3f}), needed GPUs {s.needed_gpus:,.0f}, "
              f"limited by {s.limited_by or '-'} ({report.elapsed_s:.0f} s)")
    return 0


def _slack_file(base: Scenario, tables: dict, world: World, slack: float, only: str | None) -> Path:
    """An [slo] file with `slack` x the p95 wait per class `base` achieves (engine.service.headroom.service),
    of class `only` alone when given."""
    level = from_baseline(run_scenario(base, tables["jobs"], tables["fleet"], world))
    targets = {c: slack * h for c, h in level.p95_wait_h.items() if only is None or c == only}
    path = Path(tempfile.mkdtemp()) / "slack.toml"
    path.write_text("[slo]\n" + "".join(f'"{c}" = {h!r}\n' for c, h in targets.items()))
    print(f"targets x{slack:g} of {base.name}'s: " + ", ".join(f"{c} {h:.2f} h" for c, h in targets.items()))
    return path


if __name__ == "__main__":
    raise SystemExit(main())

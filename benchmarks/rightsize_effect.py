"""Right-sizing at submit against none and against the retrospective right-sizing (issue 27, item 4).

Runs sample_data/scenarios/rightsize-at-submit.toml (FCFS, best-fit, EASY backfilling, from its
window's start to the data's end) without its [rightsize] table (the baseline), as bundled, and at
the other quantiles and margins of `SETTINGS`; prints per run the right-sizing KPIs
(engine/analysis/runs/rightsize.py), the change in mean wait and completion time against the
baseline, and the net GPU-hours freed as a share of what the retrospective right-sizing
(engine/analysis/telemetry/rightsize.py: each job sized to its measured peak after the fact) frees on
the same window's jobs, whose totals are printed first, beside the whole sample's. With `--elastic`,
instead, FCFS, EASY backfilling, best-fit and `controls` admission (elastic training gangs) on the
whole sample under perfect scaling and under [elastic_scaling] model = "amdahl" (its defaults): the
degraded jobs, their mean run and GPU-hours, training's mean JCT and the mean wait.

    nice .venv/bin/python benchmarks/rightsize_effect.py [--elastic]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from engine.analysis.runs.rightsize import against
from engine.analysis.telemetry.rightsize import rightsize
from engine.scenario.edits import window
from engine.scenario.rightsize import RightSize
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

BUNDLED = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios" / "rightsize-at-submit.toml"
SETTINGS = ((0.1, 0.0), (0.1, 50.0), (0.25, 0.0), (0.5, 0.0), (0.9, 0.0))  # (quantile, margin_pct)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elastic", action="store_true", help="perfect against Amdahl scaling of degraded jobs")
    args = parser.parse_args()
    tables = read_bundle().tables
    jobs, fleet = tables["jobs"], tables["fleet"]
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    if args.elastic:
        return _elastic(jobs, fleet, world)
    bundled = Scenario.load(BUNDLED)
    whole = rightsize(jobs, tables["prices"]).totals
    mine = rightsize(window(jobs, bundled.start_utc, bundled.end_utc), tables["prices"]).totals
    for label, t in (("whole sample", whole), (f"window from {bundled.start_utc:%Y-%m-%d}", mine)):
        print(f"retrospective, {label}: {t['over_asking']:,.0f} jobs over-asking, {t['freed_gpu_hours']:,.0f} "
              f"GPU-hours freed of {t['gpu_hours']:,.0f}, ${t['freed_usd']:,.0f}")
    started = time.perf_counter()
    base = run_scenario(replace(bundled, rightsize=RightSize()), jobs, fleet, world)
    print(f"baseline: mean wait {base.jobs['wait_s'].mean() / 3600:.3f} h ({time.perf_counter() - started:.1f} s)")
    print("| quantile | margin | jobs sized | GPUs saved at submit | GPU-h freed | OOM restarts | GPU-h lost | "
          "net GPU-h | of retrospective | wait change | JCT change | run s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for quantile, margin in SETTINGS:
        started = time.perf_counter()
        s = replace(bundled, rightsize=replace(bundled.rightsize, quantile=quantile, margin_pct=margin))
        r = against(run_scenario(s, jobs, fleet, world), base, mine)
        print(f"| {quantile:g} | {margin:g} % | {r['rightsized_jobs']:,} | {r['gpus_saved_at_submit']:,.0f} | "
              f"{r['sized_freed_gpu_hours']:,.0f} | {r['oom_restarts']:,} | {r['oom_lost_gpu_hours']:,.0f} | "
              f"{r['net_freed_gpu_hours']:,.0f} | {100 * r['net_share_of_retrospective']:.1f} % | "
              f"{_minutes(r['wait_change_s'])} | {_minutes(r['jct_change_s'])} | {time.perf_counter() - started:.1f} |")
    return 0


def _elastic(jobs: pd.DataFrame, fleet: pd.DataFrame, world: World) -> int:
    print("| scaling | degraded jobs | their mean run (h) | their GPU-h | training mean JCT (h) | mean wait (h) |")
    print("|---|---|---|---|---|---|")
    for model in ("perfect", "amdahl"):
        s = Scenario.from_dict({"name": model, "elastic_scaling": {"model": model}, "policies": {
            "order": "fcfs", "placement": "best-fit", "backfill": "easy", "admission": "controls"}})
        result = run_scenario(s, jobs, fleet, world)
        table = result.jobs
        degraded = table.iloc[result.decisions.loc[result.decisions["decision"] == "degraded", "row"].to_numpy()]
        training = table[(table["workload_class"] == "training") & table["end_s"].notna()]
        print(f"| {model} | {len(degraded):,} | {degraded['run_s'].mean() / 3600:.2f} | "
              f"{(degraded['gpus_allocated'] * degraded['run_s']).sum() / 3600:,.0f} | "
              f"{(training['end_s'] - training['submit_s']).mean() / 3600:.2f} | {table['wait_s'].mean() / 3600:.3f} |")
    return 0


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:+.1f} min" if pd.notna(seconds) else "n/a"


if __name__ == "__main__":
    raise SystemExit(main())

"""Right-sizing at submit against none and against the retrospective right-sizing (issue 27, item 4).

Runs sample_data/scenarios/rightsize-at-submit.toml (FCFS, best-fit, EASY backfilling, from its
window's start to the data's end) without its [rightsize] table (the baseline), as bundled, and at
the other quantiles and margins of `SETTINGS`; prints per run the right-sizing KPIs
(engine/analysis/runs/rightsize.py), the change in mean wait and completion time against the
baseline, and the net GPU-hours freed as a share of what the retrospective right-sizing
(engine/analysis/telemetry/rightsize.py: each job sized to its measured peak after the fact) frees on
the same window's jobs, whose totals are printed first, beside the whole sample's.

    nice .venv/bin/python benchmarks/rightsize_effect.py
"""
from __future__ import annotations

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
    tables = read_bundle().tables
    jobs, fleet = tables["jobs"], tables["fleet"]
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
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


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:+.1f} min" if pd.notna(seconds) else "n/a"


if __name__ == "__main__":
    raise SystemExit(main())

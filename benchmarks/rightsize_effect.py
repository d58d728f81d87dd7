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
degraded jobs, their mean run and GPU-hours, training's mean JCT and the mean wait, and under
model = "fitted" (engine/predict/scaling_fit.py). With `--memory`: the memory-need model's accuracy on
held-out jobs (engine/service/memory_accuracy.py), then the bundled scenario without [rightsize], with it
(GPUs only) and with memory = true at the quantiles and margins of `MEMORY_SETTINGS`: mean wait,
restarts, GPU-hours net freed and GiB-hours freed and lost. With `--fit`: the serial fraction fitted per
class on the sample, on a synthetic Amdahl series, and on the CTC-SP2 log's runs of one user's
executable at different sizes (/work/shared/traces/swf, or $MERIDIAN_SHARED/traces/swf).

    nice .venv/bin/python benchmarks/rightsize_effect.py [--elastic | --memory | --fit]
"""
from __future__ import annotations

import argparse
import gzip
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from engine.analysis.runs.rightsize import against, rightsize_kpis
from engine.analysis.telemetry.rightsize import rightsize
from engine.predict.gpu_need import NeedSettings
from engine.predict.scaling_fit import class_fits, fit_serial_fraction
from engine.scenario.edits import window
from engine.scenario.rightsize import RightSize
from engine.scenario.spec import Scenario
from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT
from engine.service.memory_accuracy import memory_need_accuracy
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

BUNDLED = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios" / "rightsize-at-submit.toml"
SETTINGS = ((0.1, 0.0), (0.1, 50.0), (0.25, 0.0), (0.5, 0.0), (0.9, 0.0))  # (quantile, margin_pct)
MEMORY_SETTINGS = ((0.9, 10.0), (0.9, 25.0), (0.9, 50.0), (0.99, 10.0))  # (memory_quantile, memory_margin_pct)
CTC = "CTC-SP2-1996-3.1-cln.swf.gz"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--elastic", action="store_true", help="perfect against Amdahl scaling of degraded jobs")
    which.add_argument("--memory", action="store_true", help="GPU-only against GPU and memory right-sizing")
    which.add_argument("--fit", action="store_true", help="the serial fractions fitted per class")
    args = parser.parse_args()
    tables = read_bundle().tables
    jobs, fleet = tables["jobs"], tables["fleet"]
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    if args.elastic:
        return _elastic(jobs, fleet, world)
    if args.memory:
        return _memory(tables, world)
    if args.fit:
        return _fits(jobs)
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
    for model in ("perfect", "amdahl", "fitted"):
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


def _memory(tables: dict, world: World) -> int:
    jobs, fleet = tables["jobs"], tables["fleet"]
    print("| predictor | margin | jobs covered | memory saved | pinball | MAE GiB |")
    print("|---|---|---|---|---|---|")
    report = memory_need_accuracy(jobs, tables["regions"], NeedSettings(quantile=0.9))
    for name in ("model", "user_last", "request"):
        for margin, r in report[name].items():
            print(f"| {name} | {margin.split('_')[1]} % | {100 * r['covered']:.1f} % | {100 * r['saved_share']:.1f} % | "
                  f"{r['pinball']:.4f} | {r['mae_gib']:.1f} |")
    print(f"({report['jobs_train']:,} jobs to learn from before {report['cutoff_utc']}, {report['jobs_test']:,} later)")
    bundled = Scenario.load(BUNDLED)
    runs = [("none", RightSize()), ("GPUs only (bundled)", bundled.rightsize)] + [
        (f"GPUs + memory q{q:g} +{m:g} %", replace(bundled.rightsize, memory=True, memory_quantile=q,
                                                   memory_margin_pct=m)) for q, m in MEMORY_SETTINGS]
    print("| right-sizing | mean wait (h) | mean JCT change | restarts | of them for memory | GPU-h freed | "
          "GPU-h lost | net GPU-h | jobs given less memory | GiB-h freed | GiB-h lost | run s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    base = None
    for label, settings in runs:
        started = time.perf_counter()
        result = run_scenario(replace(bundled, rightsize=settings), jobs, fleet, world)
        base = base or result
        k, jct = rightsize_kpis(result), _mean_jct(result.jobs) - _mean_jct(base.jobs)
        print(f"| {label} | {result.jobs['wait_s'].mean() / 3600:.3f} | {_minutes(jct)} | "
              f"{k.get('oom_restarts', 0):,} | {k.get('oom_memory_restarts', 0):,} | "
              f"{k.get('sized_freed_gpu_hours', 0):,.0f} | {k.get('oom_lost_gpu_hours', 0):,.0f} | "
              f"{k.get('net_freed_gpu_hours', 0):,.0f} | {k.get('memory_sized_jobs', 0):,} | "
              f"{k.get('sized_freed_gib_hours', 0):,.0f} | {k.get('oom_lost_gib_hours', 0):,.0f} | "
              f"{time.perf_counter() - started:.1f} |")
    return 0


def _fits(jobs: pd.DataFrame) -> int:
    print("| data | class | groups | jobs | serial fraction | std error | RMS log residual | used |")
    print("|---|---|---|---|---|---|---|---|")
    for f in class_fits(jobs):
        print(f"| sample | {f.workload_class} | {f.groups} | {f.jobs:,} | {f.estimate:.3f} | {f.std_error:.3f} | "
              f"{f.rms_log:.2f} | {f.serial_fraction:g}{'' if f.fitted else ' (default: ' + f.note + ')'} |")
    rng = np.random.default_rng(0)
    n = np.tile([1.0, 2.0, 4.0, 8.0, 16.0], 20)
    group = np.repeat(np.arange(20), 5)
    for noise in (0.0, 0.2):
        runtime = rng.uniform(600, 36_000, 20)[group] * (0.15 + 0.85 / n) * rng.lognormal(0.0, noise, len(n))
        _fit_row(f"synthetic, s = 0.15, log-sd noise {noise:g}", group, n, runtime)
    path = Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED) / "traces" / "swf" / CTC
    if not path.is_file():
        print(f"({path} not found: no SWF fit)")
        return 0
    with gzip.open(path, "rt") as lines:
        swf = np.array([line.split() for line in lines if line.strip() and not line.startswith(";")], dtype=float)
    done = (swf[:, 10] == 1) & (swf[:, 11] >= 0) & (swf[:, 13] >= 0)  # completed, user and executable known
    group = swf[done, 11].astype(np.int64) * 1_000_000 + swf[done, 13].astype(np.int64)
    _fit_row(f"{CTC}, user + executable", group, swf[done, 4], swf[done, 3])
    return 0


def _fit_row(label: str, group: np.ndarray, n: np.ndarray, runtime: np.ndarray) -> None:
    f = fit_serial_fraction(group, n, runtime)
    print(f"| {label} | - | {f['groups']} | {f['jobs']:,} | {f['estimate']:.3f} | {f['std_error']:.3f} | "
          f"{f['rms_log']:.2f} | - |")


def _mean_jct(table: pd.DataFrame) -> float:
    done = table[table["end_s"].notna()]
    return float((done["end_s"] - done["submit_s"]).mean())


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:+.1f} min" if pd.notna(seconds) else "n/a"


if __name__ == "__main__":
    raise SystemExit(main())

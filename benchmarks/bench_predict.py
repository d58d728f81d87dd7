"""Benchmark: the runtime and failure predictors on the real CTC-SP2, KTH-SP2 and HPC2N logs and on
the sample (issues 8 and 30).

For each log (parsed by the repository's SWF importer, local times in the log's zone; the sample from
its committed files) it prints the test-part figures of `evaluate_runtime` and `evaluate_failure`
(time-ordered 70/30 split): the model's P50 and its runtime to schedule with (sched_s) against the
user's request and the mean of the user's last two runtimes, the P10-P90 interval (calibrated,
engine/predict/conformal.py: its coverage with the offsets tracked over the outcomes known at each
submit, the shares below the P10 and above the P90, the median P90 / P10, and the coverage with the
split-conformal offsets alone), and the failure model against the base rate and the user's recent
failure rate, with its calibration table. Then the two measured decisions: runtime predictions clipped to the
request or not, sigmoid or isotonic calibration. Last, the training time on all of HPC2N's
202,871 jobs (target: at most 60 s): the features, the three runtime quantiles and the failure
model. HPC2N records no failed or cancelled job, so for that timing alone the failure model is
fitted to a stand-in label with both classes: "ran to its requested time" (killed at its limit).

    .venv/bin/python benchmarks/bench_predict.py [--threads N] [--repeats N]

`--threads` sets the models' OpenMP threads for the timing (default 1, as in the models'
settings; engine/predict/threads.py says why); the evaluations use the default settings.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from engine.predict.evaluate import evaluate_failure, evaluate_runtime
from engine.predict.failure import FailureModel, FailureSettings
from engine.predict.features import features, runtime_s, zones_of
from engine.predict.runtime import RuntimeModel, RuntimeSettings
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf"
LOGS = ("CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2-1996-2.2.swf.gz", "HPC2N-2002-2.2-cln.swf.gz", "sample")
TIMED = "HPC2N-2002-2.2-cln.swf.gz"


def load(name: str) -> tuple[pd.DataFrame, str | dict | None]:
    if name == "sample":
        batch = read_bundle()
        return batch.tables["jobs"], zones_of(batch.tables["regions"])
    batch = parse_swf((TRACES / name).read_bytes(), name, ImportOptions())
    regions = batch.tables.get("regions")
    return batch.tables["jobs"], (regions["timezone"].iloc[0] if regions is not None else None)


def runtime_rows(report: dict) -> list[str]:
    rows = []
    for key, label in (("model", "model P50"), ("sched", "model sched (tau 0.7)"), ("request", "user request"),
                       ("last_two", "last-two mean")):
        m = report[key]
        rows.append(f"| {label} | {m['male']:.3f} | {m['accuracy']:.3f} | {m['underestimate_rate']:.3f} |")
    return rows


def interval_row(name: str, report: dict) -> str:
    m = report["model"]
    return (f"| {name} | {report['jobs_test']:,} | **{m['coverage']:.3f}** | {m['below_p10']:.3f} | {m['above_p90']:.3f} "
            f"| {m['width_ratio_median']:.1f}x | {m['coverage_split']:.3f} |")


def failure_rows(report: dict) -> list[str]:
    rows = []
    for key, label in (("model", "model"), ("base_rate", "base rate"), ("user_recent", "user's recent rate")):
        m = report[key]
        rows.append(f"| {label} | {m['roc_auc']:.3f} | {m['pr_auc']:.3f} | {m['brier']:.4f} |")
    return rows


def evaluate(name: str) -> None:
    jobs, tz = load(name)
    began = time.perf_counter()
    runtime = evaluate_runtime(jobs, tz)
    runtime_wall = time.perf_counter() - began
    began = time.perf_counter()
    failure = evaluate_failure(jobs, tz)
    failure_wall = time.perf_counter() - began
    print(f"\n### {name}: {len(jobs):,} jobs, zone {tz}, cutoff {runtime['cutoff_utc']}")
    print(f"\nRuntime: {runtime['jobs_train']:,} training jobs, {runtime['jobs_test']:,} test jobs "
          f"({runtime_wall:.1f} s for features, fit and scoring)\n")
    print("| predictor | MALE | accuracy | underestimation rate |\n|---|---:|---:|---:|")
    print("\n".join(runtime_rows(runtime)))
    print("\n| log | test jobs | P10-P90 coverage (tracked) | below P10 | above P90 | median P90/P10 | split only |\n"
          "|---|---:|---:|---:|---:|---:|---:|")
    print(interval_row(name, runtime))
    print(f"\nFailure: {failure['jobs_train']:,} training jobs (failure rate {failure['train_failure_rate']:.3f}), "
          f"{failure['jobs_test']:,} test jobs (rate {failure['model']['base_rate']:.3f}; {failure_wall:.1f} s)\n")
    print("| predictor | ROC-AUC | PR-AUC | Brier |\n|---|---:|---:|---:|")
    print("\n".join(failure_rows(failure)))
    if failure["calibration"]:
        print("\n| predicted bin | jobs | mean predicted | observed |\n|---|---:|---:|---:|")
        for b in failure["calibration"]:
            print(f"| {b['bin_low']:.1f}-{b['bin_high']:.1f} | {b['jobs']:,} | {b['predicted']:.3f} "
                  f"| {b['observed']:.3f} |")
    clipped = evaluate_runtime(jobs, tz, settings=RuntimeSettings(clip_to_request=True))["model"]
    print(f"\nClipped to the request: P50 MALE {clipped['male']:.4f} (unclipped {runtime['model']['male']:.4f}), "
          f"accuracy {clipped['accuracy']:.4f} ({runtime['model']['accuracy']:.4f}), "
          f"coverage {clipped['coverage']:.4f} ({runtime['model']['coverage']:.4f})")
    if np.isfinite(failure["model"]["roc_auc"]):
        isotonic = evaluate_failure(jobs, tz, settings=FailureSettings(method="isotonic"))["model"]
        print(f"Isotonic calibration: Brier {isotonic['brier']:.4f} (sigmoid {failure['model']['brier']:.4f}), "
              f"ROC-AUC {isotonic['roc_auc']:.4f} ({failure['model']['roc_auc']:.4f}), "
              f"PR-AUC {isotonic['pr_auc']:.4f} ({failure['model']['pr_auc']:.4f})")


def time_training(repeats: int, threads: int) -> None:
    jobs, tz = load(TIMED)
    run = runtime_s(jobs)
    known = np.isfinite(run)
    hit_limit = run >= jobs["requested_runtime_s"].to_numpy()
    print(f"\n### Training on all of {TIMED} ({len(jobs):,} jobs; {known.sum():,} with a runtime; "
          f"stand-in failure label: {hit_limit.mean():.3f} ran to their request)\n")
    print("| run | features | runtime model (P10/P90 on 80 %, P50 and sched) | failure model | total | total CPU "
          "| load avg (1 min) |\n|---|---:|---:|---:|---:|---:|---|")
    for attempt in range(1, repeats + 1):
        load_before = os.getloadavg()[0]
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        X = features(jobs, tz)
        t1 = time.perf_counter()
        RuntimeModel(RuntimeSettings(threads=threads)).fit(X[known], run[known])
        t2 = time.perf_counter()
        FailureModel(FailureSettings(threads=threads)).fit(X, hit_limit)
        t3 = time.perf_counter()
        print(f"| #{attempt} | {t1 - t0:.1f} s | {t2 - t1:.1f} s | {t3 - t2:.1f} s | {t3 - t0:.1f} s | "
              f"{time.process_time() - cpu0:.1f} s | {load_before:.2f} -> {os.getloadavg()[0]:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=RuntimeSettings().threads)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only-timing", action="store_true")
    parser.add_argument("--logs", nargs="+", default=list(LOGS), help=f"logs to evaluate (default {' '.join(LOGS)})")
    parser.add_argument("--no-timing", action="store_true", help="skip the HPC2N training timing")
    args = parser.parse_args()
    print(f"OpenMP threads for the timing: {args.threads}; cores: {os.cpu_count()}")
    if not args.only_timing:
        for name in args.logs:
            evaluate(name)
    if not args.no_timing:
        time_training(args.repeats, args.threads)


if __name__ == "__main__":
    main()

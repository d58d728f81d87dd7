"""The workload classifier's figures (issue 27, item 5) for benchmarks/RESULTS.md and the README.

1. The classifier on the sample's labels: user-grouped folds and the time split (accuracy, the
   majority class, per-class precision and recall, confusion matrix), and the seconds each took.
2. Class shares inferred on the SWF logs in ../shared/traces/swf (or $MERIDIAN_SHARED), by a model
   trained on the whole sample.
3. Resource matching (engine/analysis/runs/matching.py) on the sample under a few scenarios, and
   under FIFO with the jobs' classes as labelled, removed ("unknown": every job in the standard
   queue) and inferred by the user-grouped folds (each job classified by a model that never saw its
   user), always judged against the labels.
4. Right-sizing at submit (engine/service/submit_sizing.py, issue 27 item 4) against the retrospective
   right-sizing on the sample's later jobs, at several quantiles of the predicted used share.

    nice .venv/bin/python benchmarks/bench_classify.py [--part 1|2|3|4]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

from engine.analysis.runs.matching import matching_kpis
from engine.predict.classify import CLASSES, class_shares, classify, evaluate, held_out_classes, train
from engine.predict.features import zones_of
from engine.predict.gpu_need import NeedSettings
from engine.scenario.spec import Scenario
from engine.service.compare import run_one, world_of
from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT
from engine.service.submit_sizing import submit_sizing
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
LOGS = ("CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2-1996-2.2.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "HPC2N-2002-2.2-cln.swf.gz")
MATCHING_SCENARIOS = ("fifo", "priority-fairshare", "quotas-preemption", "dev-reclaim")


def evaluation(jobs: pd.DataFrame, tz) -> None:
    for split in ("users", "time"):
        began = time.perf_counter()
        report = evaluate(jobs, tz, split)
        print(f"\n{split} split: {report['jobs_test']:,} test jobs, accuracy {report['accuracy']:.4f}, always "
              f"{report['majority_class']} {report['majority_accuracy']:.4f} ({time.perf_counter() - began:.1f} s)")
        for row in report["per_class"]:
            print(f"  {row['class']:<12} support {row['support']:>6,}  precision {row['precision']:.4f}  "
                  f"recall {row['recall']:.4f}  F1 {row['f1']:.4f}")
        print("  confusion (rows true, columns predicted):", *CLASSES)
        for name, counts in zip(CLASSES, report["confusion"]):
            print(f"  {name:<12}", *(f"{n:>7,}" for n in counts))


def swf_shares(jobs: pd.DataFrame, tz) -> None:
    began = time.perf_counter()
    model = train(jobs, tz)
    print(f"\ntrained on the sample in {time.perf_counter() - began:.1f} s")
    folder = Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED) / "traces" / "swf"
    for name in LOGS:
        path = folder / name
        batch = parse_swf(path.read_bytes(), name, ImportOptions())
        log = batch.tables["jobs"]
        began = time.perf_counter()
        table = class_shares(log, classify(model, log, zones_of(batch.tables["regions"])))
        print(f"\n{name}: {len(log):,} jobs classified in {time.perf_counter() - began:.1f} s")
        print(table.to_string(index=False, float_format=lambda v: f"{v:,.3f}"))


def matching(tables: dict) -> None:
    world = world_of({k: tables[k] for k in ("prices", "regions", "carbon", "teams")})
    jobs, fleet = tables["jobs"], tables["fleet"]
    truth = pd.Series(jobs["workload_class"].to_numpy(), index=jobs["job_id"].to_numpy())
    fifo = Scenario.load(SCENARIOS / "fifo.toml")
    for name in MATCHING_SCENARIOS:
        run = run_one(Scenario.load(SCENARIOS / f"{name}.toml"), jobs, fleet, world, strand=False)
        _line(name, "labels", run.kpis)
    inferred = held_out_classes(jobs, zones_of(tables["regions"]))
    for how, classes in (("no classes", "unknown"), ("inferred (held out by user)", inferred)):
        run = run_one(fifo, jobs.assign(workload_class=classes), fleet, world, strand=False)
        _line("fifo", how, {**run.kpis, **matching_kpis(run.result, run.fleet, truth)})


def sizing(tables: dict) -> None:
    for quantile in (0.1, 0.25, 0.4, 0.5, 0.9):
        began = time.perf_counter()
        r = submit_sizing(tables["jobs"], tables["regions"], NeedSettings(quantile=quantile))
        print(f"q {quantile:.2f}: {r['jobs_test']:,} later jobs ({r['gpu_hours']:,.0f} GPU-h); retrospective "
              f"{r['retrospective_over_asking']:,} over-asking, {r['retrospective_freed_gpu_hours']:,.0f} GPU-h freed; "
              f"at submit {r['resized_at_submit']:,} resized, {r['undersized_jobs']:,} undersized "
              f"({r['undersized_share']:.2%}), freed {r['freed_sized_well_gpu_hours']:,.0f}, lost "
              f"{r['lost_gpu_hours']:,.0f}, net {r['net_freed_gpu_hours']:,.0f} GPU-h "
              f"({r['net_share_of_retrospective']:+.1%} of the retrospective) ({time.perf_counter() - began:.0f} s)",
              flush=True)


def _line(scenario: str, classes: str, kpis: dict) -> None:
    print(f"{scenario:<20} {classes:<28} resource {kpis['resource_matching']:.4f}  GPU type "
          f"{kpis['gpu_type_matching']:.4f}  queue {kpis['queue_matching']:.4f}  p95 wait "
          f"{kpis['wait_p95_s'] / 3600:.1f} h", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", type=int, choices=(1, 2, 3, 4), help="one part only (default: all)")
    part = parser.parse_args().part
    tables = read_bundle().tables
    tz = zones_of(tables["regions"])
    if part in (None, 1):
        evaluation(tables["jobs"], tz)
    if part in (None, 2):
        swf_shares(tables["jobs"], tz)
    if part in (None, 3):
        matching(tables)
    if part in (None, 4):
        sizing(tables)


if __name__ == "__main__":
    main()

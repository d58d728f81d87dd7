"""Benchmark: the model lifecycle on HPC2N's 202,871 jobs (issue 8 point 8; target: training in at most 60 s).

The path `meridian predict train` takes: the SWF log parsed by the repository's importer, stored in
a DuckDB file in a temporary folder and read back through the Store (as the CLI reads a dataset),
then `ModelRegistry.train` with the default settings (one OpenMP thread), its steps timed by the
registry itself (meta.json "seconds"): features, runtime fit (P10/P50/P90 on every job with a
runtime), failure fit, evaluation (the time-split reports), permutation importance, save. Then
loading the stored version and predicting all 202,871 jobs.

HPC2N records no failed or cancelled job, so its failure model is a constant and fits in no time.
The `stand-in` run (on by default) trains once more with a stand-in label that has both classes,
jobs that ran to their requested time marked "failed" (killed at the limit, 7.4 % of jobs), so the
failure model's fit, calibration and importance are timed too; its figures mean nothing else.

    .venv/bin/python benchmarks/bench_predict_train.py [--no-stand-in]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.predict.features import runtime_s
from engine.predict.registry import ModelRegistry
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.store import Store

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf"
LOG = "HPC2N-2002-2.2-cln.swf.gz"
STEPS = ("features", "runtime_fit", "failure_fit", "evaluation", "importance", "save")


def stored_dataset(folder: Path, name: str, stand_in: bool):
    """(db path, jobs, regions, seconds to parse, seconds to read back) of the log stored as dataset `name`."""
    began = time.perf_counter()
    batch = parse_swf((TRACES / LOG).read_bytes(), LOG, ImportOptions())
    parsed = time.perf_counter() - began
    if stand_in:
        jobs = batch.tables["jobs"]
        ran_to_limit = runtime_s(jobs) >= jobs["requested_runtime_s"].to_numpy()
        jobs.loc[ran_to_limit, "status"] = "failed"
    db = folder / f"{name}.duckdb"
    store = Store.open(db)
    try:
        store.add_import(name, batch, LOG, f"bench-{name}")
        began = time.perf_counter()
        jobs, regions = store.jobs(name), store.regions(name)
        read = time.perf_counter() - began
    finally:
        store.close()
    return db, jobs, regions, parsed, read


def run(folder: Path, stand_in: bool) -> None:
    name = "hpc2n-stand-in" if stand_in else "hpc2n"
    db, jobs, regions, parsed, read = stored_dataset(folder, name, stand_in)
    registry = ModelRegistry.beside(db)
    load_before = os.getloadavg()[0]
    version = registry.train(name, jobs, regions)
    spent = version.meta["seconds"]
    began = time.perf_counter()
    predictors = registry.load(name)
    loaded = time.perf_counter() - began
    began = time.perf_counter()
    predicted = predictors.predict(jobs)
    predict = time.perf_counter() - began
    load_after = os.getloadavg()[0]
    size = sum(p.stat().st_size for p in version.path.iterdir()) / 1e6
    fit = spent["features"] + spent["runtime_fit"] + spent["failure_fit"] + spent["save"]
    data = version.meta["data"]
    print(f"\n{name}: {len(jobs):,} jobs ({data['runtime_rows']:,} runtime rows, "
          f"{data['failure_rows']:,} failure rows, failure rate {data['failure_rate']:.3f}); "
          f"parse {parsed:.1f} s, read from DuckDB {read:.1f} s")
    print("| " + " | ".join(STEPS) + " | training fit (no eval) | total | load | predict all | files | load avg |")
    print("|" + "---:|" * (len(STEPS) + 5) + "---|")
    print("| " + " | ".join(f"{spent[s]:.1f} s" for s in STEPS) + f" | **{fit:.1f} s** | {spent['total']:.1f} s "
          f"| {loaded:.2f} s | {predict:.1f} s | {size:.1f} MB | {load_before:.2f} -> {load_after:.2f} |", flush=True)
    evaluation = version.meta["evaluation"]
    male = evaluation["runtime"]["model"]["male"]
    auc = evaluation["failure"]["model"]["roc_auc"]
    print(f"evaluation: P50 MALE {male:.3f}, coverage {evaluation['runtime']['model']['coverage']:.3f}, "
          f"failure ROC-AUC {'-' if auc is None else f'{auc:.3f}'}; predictions: median P50 "
          f"{np.median(predicted['p50_s']):.0f} s, mean fail_prob {predicted['fail_prob'].mean():.3f}")
    for model in ("runtime", "failure"):
        part = evaluation["importance"][model]
        top = ", ".join(f"{f['feature']} {f['mean']:+.3f}" for f in part["features"][:5]) or part.get("note", "")
        print(f"importance ({model}, {part['score']}): {top}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-stand-in", action="store_true", help="skip the run with the stand-in failure label")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench_predict_train-") as folder:
        run(Path(folder), stand_in=False)
        if not args.no_stand_in:
            run(Path(folder), stand_in=True)


if __name__ == "__main__":
    main()

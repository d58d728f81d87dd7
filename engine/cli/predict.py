"""`meridian predict`: train, list, inspect and apply a dataset's runtime and failure predictors.

    meridian predict train  --dataset NAME [--no-eval] [--settings FILE.toml] [--json] [--db FILE]
    meridian predict models --dataset NAME [--json] [--db FILE]
    meridian predict show   --dataset NAME [--version N] [--json] [--db FILE]
    meridian predict job    --dataset NAME --job ID [--version N] [--json] [--db FILE]
    meridian predict forget --dataset NAME [--db FILE]

Models live beside the database (`X.duckdb` -> `X.models/`, engine/predict/registry.py). `train`
fits the dataset's next version on every job with a known outcome, evaluates it on the time-ordered
split (unless --no-eval) and prints a summary (progress lines on stderr); `models` lists the
versions with their data range, headline figures and whether the dataset's jobs are still the ones
trained on; `show` prints a version's whole record (meta.json: evaluation, calibration, feature
importance); `job` predicts one job of the dataset (P10/P50/P90 runtime, the request, the
probability of failing or being cancelled); `forget` deletes the dataset's models. With --json,
stdout is one JSON document: train and show print meta.json with its "path"; models a list of
version summaries; job one object (times in seconds). The optional settings file holds [runtime]
and [failure] tables of RuntimeSettings and FailureSettings fields (engine/predict/runtime.py,
failure.py), e.g. `[runtime] max_iter = 100`.

Exit codes: 0 success; 2 bad input (unknown dataset, job or version, no model yet, a model this
installation cannot load, a bad settings file, a locked database), one line on stderr.
scikit-learn is imported only when a command runs, so other `meridian` commands do not pay for it.
"""
from __future__ import annotations

import json
import math
import sys

import pandas as pd

from engine.cli.common import EXIT_OK, BadInput
from engine.cli.predict_common import dataset_tables, guarded, model_registry, read_settings
from engine.cli.queue import add_commands
from engine.core.text import duration, minute, number, stamp


@guarded
def cmd_train(args) -> int:
    runtime, failure = read_settings(args.settings)
    jobs, regions = dataset_tables(args)
    version = model_registry(args).train(args.dataset, jobs, regions, evaluate=not args.no_eval, runtime=runtime,
                                         failure=failure, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps({"path": str(version.path), **version.meta}))
    else:
        _print_summary(version)
    return EXIT_OK


@guarded
def cmd_models(args) -> int:
    registry = model_registry(args)
    versions = registry.versions(args.dataset)
    if not versions:
        registry.version(args.dataset)  # raises NoModel with the hint to train one
    jobs = _current_jobs(args)
    records = [_summary(v, None if jobs is None else v.trained_on(jobs)) for v in versions]
    if args.json:
        print(json.dumps(records))
        return EXIT_OK
    print(f"models of dataset {args.dataset!r} in {registry.root}")
    print(f"{'version':>7}  {'created (UTC)':<16}  {'jobs':>9}  {'submits (UTC)':<33}  {'MALE':>6}  "
          f"{'cover':>6}  {'ROC-AUC':>7}  {'Brier':>7}  data")
    for r in records:
        data = {True: "current", False: "data changed", None: "dataset gone"}[r["current"]]
        print(f"{'v' + str(r['version']):>7}  {minute(r['created_utc']):<16}  {r['jobs']:>9,}  "
              f"{minute(r['first_submit_utc'])} - {minute(r['last_submit_utc'])}  {number(r['runtime_male'], 3):>6}  "
              f"{number(r['runtime_coverage'], 3):>6}  {number(r['failure_roc_auc'], 3):>7}  "
              f"{number(r['failure_brier'], 4):>7}  {data}")
    return EXIT_OK


@guarded
def cmd_show(args) -> int:
    version = model_registry(args).version(args.dataset, args.version)
    if args.json:
        print(json.dumps({"path": str(version.path), **version.meta}))
        return EXIT_OK
    _print_summary(version)
    meta = version.meta
    for name in ("runtime", "failure"):
        print(f"{name} settings: " + ", ".join(f"{k}={v}" for k, v in meta["settings"][name].items()))
    evaluation = meta["evaluation"]
    if evaluation is None:
        return EXIT_OK
    print("calibration on the test part (predicted probability bin: jobs, mean predicted, observed rate)")
    for b in evaluation["failure"]["calibration"]:
        print(f"  {b['bin_low']:.1f}-{b['bin_high']:.1f}: {b['jobs']:>8,}  {b['predicted']:.3f}  {b['observed']:.3f}")
    for name, what in (("runtime", "increase of the P50's MALE"), ("failure", "drop of ROC-AUC")):
        part = evaluation["importance"][name]
        print(f"{name} feature importance ({what} when shuffled; {part['rows']:,} test jobs x {part['repeats']}; "
              f"unshuffled {number(part['baseline'], 3)})")
        if part.get("note"):
            print(f"  {part['note']}")
        for f in part["features"]:
            print(f"  {f['feature']:<20} {f['mean']:+.4f} ± {f['std']:.4f}")
    return EXIT_OK


@guarded
def cmd_job(args) -> int:
    version = model_registry(args).version(args.dataset, args.version)
    predictors = version.load()
    jobs, regions = dataset_tables(args)
    matches = jobs.index[(jobs["job_id"].astype(str) == str(args.job)).to_numpy()]
    if not len(matches):
        raise BadInput(f"dataset {args.dataset!r} has no job {args.job!r}")
    label = matches[0]
    if len(matches) > 1:
        print(f"meridian: {len(matches)} jobs have id {args.job!r}; the first is shown", file=sys.stderr)
    predicted = predictors.predict(jobs, regions, rows=[label]).iloc[0]
    job = jobs.loc[label]
    record = {"dataset": args.dataset, "version": version.number, "job_id": str(job["job_id"]),
              "user": _text(job.get("user_name")), "status": _text(job.get("status")),
              "submit_utc": stamp(job.get("submit_utc")), "gpus": _finite(job.get("gpus")),
              "requested_s": _finite(job.get("requested_runtime_s")), "actual_s": _actual_s(job),
              **{k: float(predicted[k]) for k in ("p10_s", "p50_s", "p90_s", "sched_s", "fail_prob")}}
    if args.json:
        print(json.dumps(record))
        return EXIT_OK
    print(f"job {record['job_id']} of dataset {args.dataset!r} (model v{version.number})")
    print(f"  user {record['user'] or '-'}, GPUs {number(record['gpus'], 0)}, submitted {minute(record['submit_utc'])} "
          f"UTC, status {record['status'] or '-'}")
    print(f"  runtime P10 {duration(record['p10_s'])}, P50 {duration(record['p50_s'])}, "
          f"P90 {duration(record['p90_s'])} (80 % interval, calibrated); to schedule with {duration(record['sched_s'])}")
    print(f"  requested {duration(record['requested_s'])}; actual {duration(record['actual_s'])}")
    print(f"  probability of failing or being cancelled: {record['fail_prob']:.3f}")
    return EXIT_OK


@guarded
def cmd_forget(args) -> int:
    registry = model_registry(args)
    registry.version(args.dataset)  # NoModel when there is nothing to forget
    count = registry.forget(args.dataset)
    print(f"deleted {count} model version{'s' if count != 1 else ''} of dataset {args.dataset!r}")
    return EXIT_OK


def _current_jobs(args):
    """The dataset's jobs now, or None when the database has no such dataset."""
    try:
        return dataset_tables(args)[0]
    except BadInput:
        return None


def _summary(version, current: bool | None) -> dict:
    """The headline of one version (JSON-ready): range, rows, MALE, coverage, ROC-AUC, Brier."""
    meta, data = version.meta, version.meta["data"]
    evaluation = meta["evaluation"] or {}
    runtime, failure = evaluation.get("runtime", {}).get("model", {}), evaluation.get("failure", {}).get("model", {})
    return {"version": version.number, "created_utc": meta["created_utc"], "jobs": data["jobs"],
            "first_submit_utc": data["first_submit_utc"], "last_submit_utc": data["last_submit_utc"],
            "runtime_rows": data["runtime_rows"], "failure_rows": data["failure_rows"],
            "evaluated": meta["evaluation"] is not None, "runtime_male": runtime.get("male"),
            "runtime_coverage": runtime.get("coverage"), "failure_roc_auc": failure.get("roc_auc"),
            "failure_brier": failure.get("brier"), "seconds": meta["seconds"]["total"], "current": current,
            "path": str(version.path)}


def _print_summary(version) -> None:
    meta, data = version.meta, version.meta["data"]
    print(f"dataset {version.dataset!r}, model v{version.number} (created {minute(meta['created_utc'])} UTC, "
          f"scikit-learn {meta['software']['scikit_learn']}): {data['jobs']:,} jobs submitted "
          f"{minute(data['first_submit_utc'])} - {minute(data['last_submit_utc'])} UTC")
    print(f"  runtime model: {data['runtime_rows']:,} jobs with a runtime; failure model: {data['failure_rows']:,} "
          f"jobs with an outcome (failure rate {data['failure_rate']:.3f})")
    evaluation = meta["evaluation"]
    if evaluation is None:
        print("  not evaluated (trained with --no-eval)")
    else:
        runtime, failure = evaluation["runtime"], evaluation["failure"]
        print(f"evaluation: trained on submits before {minute(runtime['cutoff_utc'])} UTC, tested on the "
              f"{runtime['jobs_test']:,} jobs after ({failure['jobs_test']:,} with an outcome)")
        print(f"  {'runtime':<16}{'MALE':>8}{'accuracy':>10}{'underest.':>11}{'P10-P90 cover':>15}")
        for key, label in (("model", "model P50"), ("request", "user request"), ("last_two", "last-two mean")):
            m = runtime[key]
            cover = f"{number(m['coverage'], 3):>15}" if "coverage" in m else ""
            print(f"  {label:<16}{number(m['male'], 3):>8}{number(m['accuracy'], 3):>10}"
                  f"{number(m['underestimate_rate'], 3):>11}{cover}")
        print(f"  {'failure':<16}{'ROC-AUC':>8}{'PR-AUC':>10}{'Brier':>11}   test failure rate "
              f"{number(failure['model']['base_rate'], 3)}")
        for key, label in (("model", "model"), ("base_rate", "base rate"), ("user_recent", "user's recent")):
            m = failure[key]
            print(f"  {label:<16}{number(m['roc_auc'], 3):>8}{number(m['pr_auc'], 3):>10}{number(m['brier'], 4):>11}")
    spent = meta["seconds"]
    steps = ", ".join(f"{k.replace('_', ' ')} {v:.1f}" for k, v in spent.items() if k != "total")
    print(f"time: {spent['total']:.1f} s ({steps})")
    print(f"stored in {version.path}")


def _finite(value) -> float | None:
    try:
        figure = float(value)
    except (TypeError, ValueError):
        return None
    return figure if math.isfinite(figure) else None


def _text(value) -> str:
    return "" if value is None or value != value else str(value)


def _actual_s(job) -> float | None:
    """end - start in seconds when both are known."""
    start, end = job.get("start_utc"), job.get("end_utc")
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return None
    return _finite((pd.Timestamp(end) - pd.Timestamp(start)).total_seconds())


def add_parser(sub, db_help: str) -> None:
    p = sub.add_parser("predict", help="train, list and apply the runtime and failure predictors of a dataset")
    commands = p.add_subparsers(dest="predict_command", required=True)
    spec = (
        ("train", cmd_train, "train, evaluate and store the dataset's next model version"),
        ("models", cmd_models, "list the dataset's model versions"),
        ("show", cmd_show, "everything stored about one model version (evaluation, calibration, importance)"),
        ("job", cmd_job, "predict one job: P10/P50/P90 runtime and the probability of failing"),
        ("forget", cmd_forget, "delete every model version of the dataset"),
    )
    for name, command, text in spec:
        c = commands.add_parser(name, help=text, description=text)
        c.add_argument("--dataset", required=True, help="dataset in the database")
        if name in ("show", "job"):
            c.add_argument("--version", type=int, help="model version (default: the latest)")
        if name == "job":
            c.add_argument("--job", required=True, help="the job's id (job_id)")
        if name == "train":
            c.add_argument("--no-eval", action="store_true",
                           help="skip the time-split evaluation and feature importance (faster)")
            c.add_argument("--settings", help="TOML file with [runtime] and [failure] model settings")
        if name != "forget":
            c.add_argument("--json", action="store_true", help="print JSON")
        c.add_argument("--db", help=db_help)
        c.set_defaults(func=command)

    add_commands(commands, db_help)

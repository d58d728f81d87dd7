"""`meridian predict eta | backtest | rightsize`: when the queued jobs will start, how well those
intervals held in the past, and which jobs held more GPUs than they used.

    meridian predict eta       --dataset NAME [--at "YYYY-MM-DD HH:MM"] [--job ID] [--samples 40] [--seed 0]
                               [--version N] [--calibrate] [--snapshots 40] [--settings FILE.toml] [--json] [--db FILE]
    meridian predict backtest  --dataset NAME [--snapshots 40] [--samples 40] [--seed 0] [--settings FILE.toml]
                               [--json] [--db FILE]
    meridian predict rightsize --dataset NAME [--headroom-pct 0] [--tier on-demand] [--by job|team|user] [--top 20]
                               [--csv FILE] [--json] [--db FILE]

`eta` gives every job pending at `--at` (UTC; default the dataset's last recorded instant, i.e. its
queue now) its start interval (engine.service.eta: the queue replayed `--samples` times under FCFS +
EASY backfilling with runtimes drawn from the runtime model's P10/P50/P90; 80 % of the replayed
starts fall in the interval). The runtime model is the stored version (`--version`, default the
latest) when it saw nothing after `--at`: it was trained on the dataset's jobs as they are (same
`jobs_digest`) and `--at` is at or after the last outcome it saw. Otherwise (no stored model, the
data changed, or an earlier `--at`) a model is fitted on the jobs that had ended by `--at`, with the
[runtime] settings of `--settings` (the `train` file format); stderr says which. `--calibrate` first
runs the backtest (`--snapshots` instants) over the history known at `--at` (engine.service.eta.known_at,
so nothing later moves the answer) and applies its conformal offsets only when they brought the
backtest's coverage closer to the level than the raw interval (stderr gives both coverages).
`--job ID` prints that job alone; a job not pending at `--at` is bad input naming its status then.

`backtest` is engine.service.eta_backtest.backtest on the dataset: coverage, median width (hours)
and MALE (mean absolute error of ln(remaining wait + 60 s)) of the raw, calibrated and learned
intervals and of the recent-waits baseline, scored on the later half of the snapshots.

`rightsize` is engine.analysis.telemetry.rightsize over the dataset's jobs at its prices (completed from the
default price book): totals and the `--top` rows (0: all) of the per-job (default), per-team or
per-user table, most freed GPU-hours first; `--csv` writes the whole chosen table as
spreadsheet-safe CSV (engine.core.escaping; UTF-8 with a BOM). A dataset without per-job GPU use
(gpus_used_max or gpu_util_pct) gets a one-line note and exit 0.

With --json, stdout is one JSON document (times ISO 8601 UTC with "Z"; NaN and infinities null):
`eta` a list of the eta table's records (engine/service/eta.py, seconds and UTC times) each with
at_utc, or with --job that job's record; `backtest` the report with the dataset's name; `rightsize`
{dataset, headroom_pct, tier, by, totals, rows_total, rows (the top rows)}.
Exit codes as engine/cli/predict.py: 0 success, 2 bad input with one line on stderr.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from engine.cli.common import EXIT_OK, BadInput
from engine.cli.predict_common import dataset_tables, guarded, model_registry, read_settings
from engine.cli.queue_text import (
    job_sentence,
    pct,
    plain,
    print_backtest,
    print_queue,
    print_rightsizing,
    write_csv,
)
from engine.core.text import minute, stamp
from engine.telemetry.store import Store

BY = {"job": "jobs", "team": "by_team", "user": "by_user"}


@guarded
def cmd_eta(args) -> int:
    from engine.predict.features import zones_of
    from engine.predict.runtime_source import NotEnoughHistory
    from engine.service.eta import eta

    _check_counts(args)
    runtime, _ = read_settings(args.settings)
    jobs, regions, fleet = _with_fleet(args)
    tz = zones_of(regions)
    at = _instant(args.at, jobs)
    if args.job is not None:
        _must_be_pending(args.dataset, jobs, at, str(args.job))
    try:
        model = _runtime_model(args, jobs, at, tz, runtime)
        calibration = _calibration(args, jobs, at, fleet, tz, runtime) if args.calibrate else None
        table = eta(jobs, fleet, at, model=model, samples=args.samples, seed=args.seed, calibration=calibration,
                    tz=tz)
    except NotEnoughHistory as exc:
        raise BadInput(str(exc)) from None
    records = [{"at_utc": stamp(at), **r} for r in plain(table.to_dict("records"))]
    if args.job is not None:
        position = int(np.flatnonzero(table["job_id"].astype(str).to_numpy() == str(args.job))[0])
        record = records[position]
        print(json.dumps(record, allow_nan=False) if args.json else job_sentence(record))
        return EXIT_OK
    if args.json:
        print(json.dumps(records, allow_nan=False))
        return EXIT_OK
    print_queue(args.dataset, at, table, args.samples)
    return EXIT_OK


@guarded
def cmd_backtest(args) -> int:
    from engine.predict.features import zones_of

    _check_counts(args)
    runtime, _ = read_settings(args.settings)
    jobs, regions, fleet = _with_fleet(args)
    report = _backtest(args, jobs, fleet, zones_of(regions), runtime)
    if args.json:
        print(json.dumps(plain({"dataset": args.dataset, **report}), allow_nan=False))
        return EXIT_OK
    print_backtest(args.dataset, report)
    return EXIT_OK


@guarded
def cmd_rightsize(args) -> int:
    from engine.analysis.telemetry.rightsize import RightSizeOptions, rightsize

    if args.top < 0:
        raise BadInput(f"--top must be 0 (all rows) or more, got {args.top}")
    if not args.headroom_pct >= 0:
        raise BadInput(f"--headroom-pct must be >= 0, got {args.headroom_pct}")
    options = RightSizeOptions(headroom_pct=args.headroom_pct, tier=args.tier)
    jobs, _ = dataset_tables(args)
    result = rightsize(jobs, _read(args, "prices"), options)
    table = getattr(result, BY[args.by])
    if args.csv:
        write_csv(Path(args.csv), table)
    note = None if result.totals["measured"] else (
        f"dataset {args.dataset!r} has no per-job GPU use to right-size from: it needs gpus_used_max (the most of "
        "a job's GPUs busy at once) or gpu_util_pct (their mean utilisation, %) on jobs that ran")
    shown = table if args.top == 0 else table.head(args.top)
    if args.json:
        document = {"dataset": args.dataset, "headroom_pct": options.headroom_pct, "tier": options.tier,
                    "by": args.by, "totals": result.totals, "rows_total": len(table),
                    "rows": shown.to_dict("records"), **({"note": note} if note else {})}
        print(json.dumps(plain(document), allow_nan=False))
    elif note:
        print(note)
    else:
        print_rightsizing(args, options, result.totals, table, shown)
    return EXIT_OK


def _check_counts(args) -> None:
    for name, value, low in (("--samples", args.samples, 1), ("--seed", args.seed, 0),
                             ("--snapshots", args.snapshots, 2)):
        if value < low:
            raise BadInput(f"{name} must be a whole number >= {low}, got {value}")


def _read(args, table: str) -> pd.DataFrame:
    """One more table of the dataset (`dataset_tables` has checked that it exists)."""
    store = Store.open(args.db)
    try:
        return getattr(store, table)(args.dataset)
    finally:
        store.close()


def _with_fleet(args) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(jobs, regions, fleet) of --dataset; BadInput without a fleet to replay the queue on."""
    jobs, regions = dataset_tables(args)
    fleet = _read(args, "fleet")
    if fleet.empty:
        raise BadInput(f"dataset {args.dataset!r} has no fleet table; the ETA replays its queue on the fleet")
    return jobs, regions, fleet


def _instant(text: str | None, jobs: pd.DataFrame) -> pd.Timestamp:
    """--at as naive UTC (default: the last recorded instant); BadInput unparsable or after the data."""
    stamps = pd.concat([pd.to_datetime(jobs[c]) for c in ("submit_utc", "start_utc", "end_utc")]).dropna()
    if stamps.empty:
        raise BadInput("the dataset's jobs have no submit, start or end times")
    last = stamps.max()
    if text is None:
        return last
    try:
        at = pd.Timestamp(text)
    except ValueError:
        at = pd.NaT
    if at is pd.NaT:
        raise BadInput(f'--at {text!r} is not a time; use "YYYY-MM-DD HH:MM" (UTC)')
    at = at.tz_convert("UTC").tz_localize(None) if at.tzinfo else at
    if at > last:
        raise BadInput(f"--at {at:%Y-%m-%d %H:%M} is after the dataset's last recorded instant, "
                       f"{last:%Y-%m-%d %H:%M:%S} UTC")
    return at


def _must_be_pending(dataset: str, jobs: pd.DataFrame, at: pd.Timestamp, job: str) -> None:
    """BadInput unless job `job` is pending at `at`, naming its status then."""
    from engine.service.eta import known_at

    matches = jobs.index[(jobs["job_id"].astype(str) == job).to_numpy()]
    if not len(matches):
        raise BadInput(f"dataset {dataset!r} has no job {job!r}")
    known = known_at(jobs.loc[matches], at)
    if (known["status"] == "pending").any():
        return
    when = f"{at:%Y-%m-%d %H:%M} UTC"
    if known.empty:
        submitted = pd.to_datetime(jobs.loc[matches, "submit_utc"]).min()
        raise BadInput(f"job {job!r} is not pending at {when}: it was submitted later ({submitted:%Y-%m-%d %H:%M})")
    row = known.iloc[0]
    event = ("started", row["start_utc"]) if row["status"] == "running" else ("ended", row["end_utc"])
    raise BadInput(f"job {job!r} is not pending at {when}: it is {row['status']} "
                   f"({event[0]} {event[1]:%Y-%m-%d %H:%M})")


def _runtime_model(args, jobs: pd.DataFrame, at: pd.Timestamp, tz: dict, settings):
    """The stored model when it saw nothing after `at`, else one fitted on the jobs ended by `at`;
    one line on stderr says which."""
    from engine.service.eta import fit_runtime_model

    registry = model_registry(args)
    when = f"{at:%Y-%m-%d %H:%M} UTC"
    if args.version is None and registry.latest(args.dataset) is None:
        reason = f"dataset {args.dataset!r} has no stored model"
    else:
        version = registry.version(args.dataset, args.version)
        seen = version.meta["data"]["last_end_utc"]
        if not version.trained_on(jobs):
            reason = f"model v{version.number} was trained on other data (the dataset changed since)"
        elif seen is not None and at < pd.Timestamp(seen).tz_localize(None):
            reason = f"model v{version.number} saw outcomes up to {minute(seen)} UTC, after {when}"
        else:
            print(f"runtime model: stored v{version.number} (trained on these jobs, nothing after {when})",
                  file=sys.stderr)
            return version.load().runtime
    print(f"runtime model: {reason}; fitting one on the jobs ended by {when}", file=sys.stderr, flush=True)
    return fit_runtime_model(jobs, at, tz, settings)


def _backtest(args, jobs: pd.DataFrame, fleet: pd.DataFrame, tz: dict, settings) -> dict:
    from engine.service.eta_backtest import backtest

    try:
        return backtest(jobs, fleet, samples=args.samples, seed=args.seed, snapshots=args.snapshots, tz=tz,
                        settings=settings)
    except ValueError as exc:  # too little history before the cut or after it
        raise BadInput(f"the backtest could not run: {exc}") from None


def _calibration(args, jobs: pd.DataFrame, at: pd.Timestamp, fleet: pd.DataFrame, tz: dict, settings):
    """The Calibration of the backtest over the history known at `at` when its coverage came closer to
    the level than the raw one's, else None."""
    from engine.service.eta import Calibration, known_at

    print(f"backtest: replaying the queue at {args.snapshots} past instants...", file=sys.stderr, flush=True)
    report = _backtest(args, known_at(jobs, at), fleet, tz, settings)
    level, raw, calibrated = report["level"], report["raw"]["coverage"], report["calibrated"]["coverage"]
    better = abs(calibrated - level) < abs(raw - level)
    print(f"backtest: {report['jobs_scored']:,} waits scored; the raw {pct(level, 0)} interval held {pct(raw)} "
          f"of the starts, the calibrated one {pct(calibrated)}: "
          + ("applying the calibration" if better else "keeping the raw interval"), file=sys.stderr)
    return Calibration(**report["calibration"]) if better else None


def add_commands(commands, db_help: str) -> None:
    """Register eta, backtest and rightsize under `meridian predict` (`commands`: its subparsers)."""
    from engine.core.vocabulary import TIERS

    eta = commands.add_parser("eta", help="when the queued jobs start: a start interval for each pending job",
                              description="when the queued jobs start: a start interval for each pending job")
    eta.add_argument("--at", help='the queue as it was at this UTC time, "YYYY-MM-DD HH:MM" '
                                  "(default: the dataset's last recorded instant, its queue now)")
    eta.add_argument("--job", help="print only this pending job (its job_id)")
    eta.add_argument("--version", type=int, help="stored model version (default: the latest)")
    eta.add_argument("--calibrate", action="store_true",
                     help="backtest first and apply its calibration if it brings the coverage closer to 80 %%")
    backtest = commands.add_parser("backtest", help="how often the ETA's intervals held the recorded starts",
                                   description="how often the ETA's intervals held the recorded starts")
    for c in (eta, backtest):
        c.add_argument("--samples", type=int, default=40, help="replays of the queue per query (default 40)")
        c.add_argument("--seed", type=int, default=0, help="seed of the runtime draws and snapshots (default 0)")
        c.add_argument("--snapshots", type=int, default=40,
                       help=f"past instants the {'--calibrate ' if c is eta else ''}backtest replays (default 40)")
        c.add_argument("--settings", help="TOML file whose [runtime] table sets the runtime models fitted here "
                                          "(as `train --settings`)")
    rightsize = commands.add_parser("rightsize", help="jobs that held more GPUs than they used, and what that cost",
                                    description="jobs that held more GPUs than they used, and what that cost")
    rightsize.add_argument("--headroom-pct", type=float, default=0.0,
                           help="GPUs kept above the measured need, percent of it (default 0)")
    rightsize.add_argument("--tier", choices=TIERS, default="on-demand",
                           help="pricing tier of the freed GPU-hours (default on-demand)")
    rightsize.add_argument("--by", choices=list(BY), default="job",
                           help="table: one row per job, team or user (default job)")
    rightsize.add_argument("--top", type=int, default=20, help="rows to print (default 20; 0: all)")
    rightsize.add_argument("--csv", help="write the whole chosen table to this CSV file")
    for c, command in ((eta, cmd_eta), (backtest, cmd_backtest), (rightsize, cmd_rightsize)):
        c.add_argument("--dataset", required=True, help="dataset in the database")
        c.add_argument("--json", action="store_true", help="print JSON")
        c.add_argument("--db", help=db_help)
        c.set_defaults(func=command)

"""`meridian sweep` and `meridian sweeps`: run a grid of scenarios in parallel, list and reload sweeps.

    meridian sweep (--dataset NAME | --trace FILE) --grid FILE.toml [--dask ADDRESS|local]
                   [--workers N] [--json] [--db FILE] [--no-store | --resume ID]
    meridian sweeps [ID] [--json] [--db FILE]

`sweep` prints one progress line per point on stderr as it finishes ("[3/32] name: ok 2.1 s" or
"[4/32] name: failed: ScenarioError: ..."), then a table, one row per point: its axis values,
status, utilisation (0-1), p95 wait of started jobs (hours), the p95 censored wait of each workload
class (hours; engine.analysis.runs.slo.class_waits) and cost (USD); or with --json one document
{"sweep_id": ..., "name": ..., "outcomes": [SweepOutcome.record(), ...]}. The sweep and each outcome
are stored in the database as they arrive (engine.telemetry.sweeps) unless --no-store (sweep_id is
then null); only this process opens the database. Exit codes: 0 every point ok, 1 some point failed
(the others are still printed and stored), 2 bad input (grid, dataset, trace, Dask missing or
unreachable), one line on stderr. A sweep whose process was killed is marked "interrupted" the next
time the database is opened; `--resume ID` with the same grid and data runs only its points without
an outcome (and its failed ones) and prints the whole sweep. `sweeps` lists the stored sweeps, `sweeps ID` shows one as `sweep`
does (JSON: the sweep's stored fields and its outcomes).
"""
from __future__ import annotations

import json
import math
import sys
import time

import pandas as pd

from engine.cli.common import bind_agents, guarded, tables
from engine.service.compare import Unusable
from engine.service.sweep.backends import SweepUnavailable
from engine.service.sweep.grid import GridError, load_grid
from engine.service.sweep.outcome import OK
from engine.service.sweep.runner import default_workers, run_sweep
from engine.telemetry.store import Store
from engine.telemetry.sweeps import (
    SweepRecord,
    append_outcome,
    finish_sweep,
    list_sweeps,
    load_sweep,
    resume_sweep,
    save_sweep,
)

EXIT_OK, EXIT_FAILED = 0, 1


def _guarded(command):
    """engine.cli.common.guarded, a bad grid and a missing Dask user errors too."""
    return guarded(command, lambda: (GridError, SweepUnavailable))


def _backend(args) -> tuple[str, int | None]:
    """(backend name as stored, workers asked for; None for a remote cluster's own workers)."""
    if args.workers is not None and args.workers < 1:
        raise Unusable(f"--workers must be a positive integer, got {args.workers}")
    if args.dask is None:
        return "local", args.workers or default_workers()
    if args.dask == "local":
        return "dask-local", args.workers or default_workers()
    return args.dask, None


@_guarded
def cmd_sweep(args) -> int:
    grid = load_grid(args.grid)
    data = tables(args)
    points = bind_agents(grid.windowed(data[0]), args.db)
    backend, workers = _backend(args)
    if args.resume is not None and args.no_store:
        raise Unusable("--resume takes up a stored sweep; it cannot go with --no-store")
    store = None if args.no_store else Store.open(args.db)
    stored: list[dict] = []
    try:
        if store is None:
            sweep_id = None
        elif args.resume is None:
            sweep_id = save_sweep(store, SweepRecord(grid.name, args.dataset or args.trace, grid.text, len(points),
                                                     workers, backend))
        else:
            sweep_id, stored = args.resume, _resumed(store, args, grid, len(points), workers, backend)
            points = [p for p in points if p.index not in {r["index"] for r in stored}]
        outcomes = _run(points, data, workers, args.dask, store, sweep_id, len(stored))
    finally:
        if store is not None:
            store.close()
    records = sorted(stored + [o.record() for o in outcomes], key=lambda r: r["index"])
    if args.json:
        print(json.dumps({"sweep_id": sweep_id, "name": grid.name, "outcomes": records}))
    else:
        print(outcome_table(records).to_string(index=False))
        if sweep_id is not None:
            print(f"\nstored as sweep {sweep_id} (meridian sweeps {sweep_id})")
    return EXIT_OK if all(r["status"] == OK for r in records) else EXIT_FAILED


def _resumed(store: Store, args, grid, points: int, workers, backend) -> list[dict]:
    """The outcomes sweep `args.resume` kept, after checking that this call asks for the same grid on the
    same data, and taking the sweep up in this process (engine.telemetry.sweeps.resume_sweep)."""
    loaded = load_sweep(store, args.resume)
    if loaded is None:
        known = ", ".join(str(i) for i in list_sweeps(store)["sweep_id"]) or "none"
        raise Unusable(f"no sweep {args.resume}; stored sweeps: {known}")
    meta = loaded[0]
    if meta["source"] != (args.dataset or args.trace) or meta["grid_text"] != grid.text or meta["points"] != points:
        raise Unusable(f"sweep {args.resume} ran grid {meta['name']!r} on {meta['source']}; resume it with the same "
                       "--grid file, unchanged, and the same --dataset or --trace")
    try:
        kept = resume_sweep(store, args.resume, workers, backend)
    except ValueError as exc:
        raise Unusable(str(exc)) from None
    print(f"resuming sweep {args.resume}: {len(kept)} of {points} points kept, {points - len(kept)} to run",
          file=sys.stderr, flush=True)
    return [r for r in loaded[1] if r["index"] in kept]


def _run(points, data, workers, dask, store, sweep_id, kept: int = 0):
    """run_sweep with a progress line per point, each outcome stored as it arrives; `kept` points of a
    resumed sweep count as done already."""
    def progress(outcome, done, total):
        if store is not None:
            append_outcome(store, sweep_id, outcome.record())
        status = f"ok {outcome.elapsed_s:.1f} s" if outcome.status == OK else f"failed: {outcome.error}"
        print(f"[{kept + done}/{kept + total}] {outcome.name}: {status}", file=sys.stderr, flush=True)

    began = time.perf_counter()
    status = "interrupted"
    try:
        outcomes = run_sweep(points, data, workers=workers, dask=dask, progress=progress)
        status = "ok" if all(o.status == OK for o in outcomes) else "failed"   # kept points are all ok
        return outcomes
    finally:
        if store is not None:
            finish_sweep(store, sweep_id, time.perf_counter() - began, status)


def outcome_table(records: list[dict]) -> pd.DataFrame:
    """One row per outcome: its params (blank where a point has no such axis), status, utilization,
    wait_p95_h, "<class> p95 h" per workload class (censored), cost_usd; "-" for numbers a failed
    point lacks."""
    labels = list(dict.fromkeys(label for r in records for label in r["params"]))
    classes = sorted({row["workload_class"] for r in records for row in r["classes"]})
    rows = []
    for record in records:
        kpis = record["kpis"]
        waits = {row["workload_class"]: row["wait_p95_s"] for row in record["classes"]}
        rows.append({**{label: _cell(record["params"].get(label, "")) for label in labels}, "status": record["status"],
                     "utilization": _number(kpis.get("utilization"), "{:.3f}"),
                     "wait_p95_h": _number(_hours(kpis.get("wait_p95_s")), "{:.2f}"),
                     **{f"{c} p95 h": _number(_hours(waits.get(c)), "{:.2f}") for c in classes},
                     "cost_usd": _number(kpis.get("cost_usd"), "{:,.0f}")})
    return pd.DataFrame(rows)


def _hours(seconds):
    return None if seconds is None else seconds / 3600.0


def _number(value, pattern: str) -> str:
    return "-" if value is None or not math.isfinite(value) else pattern.format(value)


def _cell(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@_guarded
def cmd_sweeps(args) -> int:
    store = Store.open(args.db)
    try:
        if args.id is None:
            return _list(store, args.json)
        loaded = load_sweep(store, args.id)
        if loaded is None:
            known = ", ".join(str(i) for i in list_sweeps(store)["sweep_id"]) or "none"
            raise Unusable(f"no sweep {args.id}; stored sweeps: {known}")
    finally:
        store.close()
    meta, records = loaded
    if args.json:
        print(json.dumps({**meta, "created_utc": meta["created_utc"].isoformat() + "Z", "outcomes": records}))
        return EXIT_OK
    print(f"sweep {meta['sweep_id']} {meta['name']} on {meta['source']}: {meta['status']}, {len(records)} of "
          f"{meta['points']} points, backend {meta['backend']}"
          + (f", {meta['elapsed_s']:.1f} s" if meta["elapsed_s"] is not None else ""))
    if records:
        print(outcome_table(records).to_string(index=False))
    return EXIT_OK


def _list(store: Store, json_mode: bool) -> int:
    frame = list_sweeps(store)
    if json_mode:
        frame["created_utc"] = frame["created_utc"].map(lambda t: t.isoformat() + "Z")
        print(frame.to_json(orient="records"))
    elif frame.empty:
        print("no sweeps")
    else:
        print(frame.to_string(index=False, formatters={"elapsed_s": lambda s: "-" if s != s else f"{s:.1f}"}))
    return EXIT_OK


def add_parsers(sub, db_help: str) -> None:
    """Register the sweep and sweeps subcommands on the `meridian` parser."""
    p = sub.add_parser("sweep", help="run a grid of scenarios in parallel (local processes or Dask)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="dataset in the database")
    source.add_argument("--trace", help="trace file, parsed without a database")
    p.add_argument("--grid", required=True, help="grid TOML file (axes and/or scenarios)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster: tcp://host:port, or local "
                                                    "(a LocalCluster); needs pip install 'meridian[dask]'")
    p.add_argument("--workers", type=int, help="worker processes (default: the number of CPUs)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.add_argument("--no-store", action="store_true", help="do not store the sweep in the database")
    p.add_argument("--resume", type=int, metavar="ID", help="take up stored sweep ID (interrupted or failed) with "
                                                             "the same --grid and data: only its missing and failed "
                                                             "points run")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("sweeps", help="list stored sweeps, or show one")
    p.add_argument("id", nargs="?", type=int, help="sweep id (default: list them all)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_sweeps)

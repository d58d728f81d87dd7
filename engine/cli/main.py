"""`meridian`: the command-line interface.

Exit codes: 0 success, 2 bad input (errors on stderr, never a traceback), 1 anything else.
Every command opens the database (default `~/.meridian/meridian.duckdb`, `--db` overrides);
a fresh database is seeded with the embedded sample data as dataset `sample`.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

# The imports below (pandas, numpy, the engine: about 0.45 s of CPU) make no garbage cycles worth collecting, only
# many long-lived objects whose count keeps triggering collections that walk them: paused meanwhile (about 30 ms).
_COLLECTING = gc.isenabled()
gc.disable()
from engine.cli.common import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, BadInput, print_rejected
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import FORMATS
from engine.telemetry.importers.common import DST_RULES, ImportOptions
from engine.telemetry.store import DEFAULT_DB_PATH, Store, StoreLocked

gc.freeze()  # what they made lives as long as the process: left out of every later collection
if _COLLECTING:
    gc.enable()

REPO_ROOT = Path(__file__).resolve().parents[2]
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies




def _open(args) -> Store:
    from engine.telemetry.sample import ensure_sample

    store = Store.open(args.db)
    ensure_sample(store)
    return store


def _parse_mapping(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source or not target:
            raise BadInput(f"--map takes SOURCE=TARGET (e.g. --map 'Start Time=start_utc'), got {pair!r}")
        mapping[source] = target
    return mapping


def cmd_ingest(args) -> int:
    from engine.telemetry.ingest import ingest_path

    options = ImportOptions(tz=args.tz, mapping=_parse_mapping(args.map), region=args.region,
                            keep_valid=args.keep_valid, dst=args.dst)
    store = _open(args)
    try:
        result = ingest_path(store, args.path, format=args.format, dataset=args.dataset, options=options)
    finally:
        store.close()
    if result.duplicate_of:
        print(f"{args.path}: already imported into dataset '{result.duplicate_of}'; nothing added")
    else:
        print(f"imported {result.rows} rows ({result.format}) from {args.path} into dataset '{result.dataset}'")
    for note in result.notes:
        print(f"  note: {note}")
    if result.rejected:
        print(f"set aside {result.rejected:,} row(s), {result.problems:,} problem(s)"
              + (f" (first {len(result.rejects)} listed; all: meridian rejects {result.dataset})"
                 if len(result.rejects) < result.problems else "") + ":")
        for problem in result.rejects:
            print(f"  {problem}")
    return EXIT_OK


def cmd_rejects(args) -> int:
    store = _open(args)
    try:
        if not store.dataset_exists(args.name):
            raise BadInput(f"no dataset {args.name!r}; `meridian datasets` lists them")
        table = store.rejects(args.name)
    finally:
        store.close()
    if args.json:
        print(table.to_json(orient="records"))
        return EXIT_OK
    if table.empty:
        print(f"dataset {args.name!r}: no rows were set aside")
    for row in table.itertuples(index=False):
        print(f"{row.file}:{row.line}: {row.problem}")
    return EXIT_OK


def datasets_records(store: Store) -> list[dict]:
    """The dataset list as JSON-ready dicts: name, format, rows, start, end, files, rejected, scheduler."""
    records = []
    for row in store.datasets().itertuples(index=False):
        records.append({
            "name": row.name,
            "format": row.format,
            "rows": int(row.rows),
            "start": None if _isnull(row.start) else row.start.isoformat() + "Z",
            "end": None if _isnull(row.end) else row.end.isoformat() + "Z",
            "files": int(row.files),
            "rejected": int(row.rejected),
            "scheduler": None if _isnull(row.scheduler) else row.scheduler,
        })
    return records


def _isnull(value) -> bool:
    return value is None or value != value  # NaT and NaN are not equal to themselves


def cmd_datasets(args) -> int:
    store = _open(args)
    try:
        records = datasets_records(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(records, indent=2))
        return EXIT_OK
    if not records:
        print("no datasets")
        return EXIT_OK
    print(f"{'name':<28} {'format':<22} {'rows':>10}  {'start':<20}  {'end':<20}  scheduler")
    for r in records:
        start, end = (r["start"] or "-")[:19], (r["end"] or "-")[:19]
        print(f"{r['name']:<28} {r['format']:<22} {r['rows']:>10,}  {start:<20}  {end:<20}  {r['scheduler'] or '-'}")
    return EXIT_OK


def cmd_delete(args) -> int:
    store = Store.open(args.db)
    try:
        if not store.delete_dataset(args.name):
            names = ", ".join(store.datasets()["name"]) or "none"
            raise BadInput(f"no dataset named {args.name!r}; datasets: {names}")
    finally:
        store.close()
    models = ""
    db = Path(args.db).expanduser()
    if db.with_name(db.stem + ".models").is_dir():  # scikit-learn is imported only when models exist
        from engine.predict.registry import ModelRegistry

        forgotten = ModelRegistry.beside(args.db).forget(args.name)
        models = f" and its {forgotten} model version(s)" if forgotten else ""
    print(f"deleted dataset '{args.name}'{models}")
    return EXIT_OK


def cmd_sample(args) -> int:
    from engine.telemetry.synth.generate import generate_sample

    if args.scale <= 0:
        raise BadInput(f"--scale must be positive, got {args.scale}")
    seed = {} if args.seed is None else {"seed": args.seed}
    paths = generate_sample(Path(args.out), scale=args.scale, **seed)
    for path in paths.values():
        print(path)
    return EXIT_OK


def _die_with_parent() -> None:
    """In the Streamlit child, before it runs: ask Linux to send it SIGTERM when this process dies, however
    it dies (even SIGKILL, which this process cannot catch); elsewhere nothing."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def cmd_dashboard(args) -> int:
    """Serve the dashboard with Streamlit as a child process; SIGTERM, SIGHUP, SIGINT (Ctrl+C) to this
    process stop the child too, and on Linux so does any death of this process (it never outlives the
    command)."""
    db = str(Path(args.db or DEFAULT_DB_PATH).expanduser().resolve())
    Store.open(db).close()  # create and migrate now, so a bad path fails here with a clear message
    command = [sys.executable, "-m", "streamlit", "run", str(REPO_ROOT / "dashboard" / "app.py"),
               "--server.port", str(args.port), "--", "--db", db]
    if args.shared:
        shared = Path(args.shared).expanduser().resolve()
        if not shared.is_dir():
            raise BadInput(f"--shared {args.shared}: not a folder (it should hold traces/ and expected/)")
        command += ["--shared", str(shared)]
    print(f"Meridian dashboard at http://localhost:{args.port} (database {db}); Ctrl+C stops it", flush=True)
    child = subprocess.Popen(command, cwd=REPO_ROOT, env=os.environ.copy(),
                             preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)

    def stop(signum, frame):
        raise KeyboardInterrupt
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return EXIT_OK
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# The command families of the other engine.cli modules, in the order `meridian --help` lists them: (module,
# the function that adds its parsers, the commands it adds). A command line naming a command imports its
# family's module only (each family's imports cost a process time); help or an unknown command, all of them.
FAMILIES = (("engine.cli.simulate", "add_parsers", ("simulate", "compare")),
            ("engine.cli.headroom", "add_parser", ("headroom",)),
            ("engine.cli.report", "add_parser", ("report",)),
            ("engine.cli.plan", "add_parser", ("plan",)),
            ("engine.cli.sweep", "add_parsers", ("sweep", "sweeps")),
            ("engine.cli.optimise", "add_parser", ("optimise",)),
            ("engine.cli.predict", "add_parser", ("predict",)),
            ("engine.cli.classify", "add_parser", ("classify",)),
            ("engine.cli.rl", "add_parser", ("rl",)))


def _add_experiment_parsers(sub, argv: list[str] | None) -> None:
    """`meridian experiment NAME`: reproductions of published results (see engine.service.experiments).
    Their modules import scikit-learn (about a second): their parsers are built only when the command
    line names `experiment` (or when no command line is given)."""
    p = sub.add_parser("experiment", help="re-run a published scheduling experiment (the fidelity report)")
    experiments = p.add_subparsers(dest="experiment", required=True)
    if argv is not None and "experiment" not in argv:
        return
    from engine.service.experiments import backfill, fgd, rlscheduler, rlscheduler_evolve

    rlscheduler.add_parser(experiments)
    fgd.add_parser(experiments)
    rlscheduler_evolve.add_parser(experiments)
    backfill.add_parser(experiments)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given `argv`, only the parsers it can reach are made complete."""
    parser = argparse.ArgumentParser(prog="meridian", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    db_help = f"DuckDB file (default {DEFAULT_DB_PATH})"

    p = sub.add_parser("ingest", help="import a telemetry file (CSV, SWF, sacct, openb, utilisation), or a folder "
                                      "written by `meridian sample` as one dataset")
    p.add_argument("path", help="a file, or a folder written by `meridian sample` (its fleet, prices, regions, "
                                "carbon, teams, utilisation and jobs become one dataset)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS])
    p.add_argument("--dataset", help="dataset to add to (default: named after the file)")
    p.add_argument("--tz", help="IANA time zone of naive timestamps, e.g. Europe/Berlin")
    p.add_argument("--region", help="region for rows that name none")
    p.add_argument("--map", action="append", default=[], metavar="SOURCE=TARGET",
                   help="map a CSV column to a Meridian column (repeatable)")
    p.add_argument("--keep-valid", action="store_true",
                   help="import the valid rows and set the rest aside (kept and listed: meridian rejects NAME); "
                        "default: a file with any bad row adds nothing")
    p.add_argument("--dst", choices=DST_RULES, default="shift",
                   help="local times a daylight-saving change skipped or repeated: shift (default: a skipped time "
                        "moves forward by the gap, a repeated one is its first occurrence, with a note) or reject")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("rejects", help="list the rows a dataset's imports set aside (file, line, problem)")
    p.add_argument("name")
    p.add_argument("--json", action="store_true", help="print a JSON list of {file, line, problem}")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_rejects)

    p = sub.add_parser("datasets", help="list datasets")
    p.add_argument("--json", action="store_true", help="print a JSON list of objects")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_datasets)

    p = sub.add_parser("delete", help="delete a dataset and everything imported into it")
    p.add_argument("name")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("sample", help="generate the synthetic sample data set")
    p.add_argument("--scale", type=float, default=1.0, help="multiplies arrivals and fleet (default 1)")
    p.add_argument("--seed", type=int, help="random seed (default: the one the bundled sample used)")
    p.add_argument("--out", default="sample_out", help="output folder (default ./sample_out)")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("dashboard", help="start the web dashboard")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--db", help=db_help)
    p.add_argument("--shared", metavar="DIR", help="folder holding the public traces/ and expected/ results for the "
                                                   "Fidelity page's live re-runs (default $MERIDIAN_SHARED, else "
                                                   "../shared beside the repository)")
    p.set_defaults(func=cmd_dashboard)

    _add_experiment_parsers(sub, argv)
    named = argv[0] if argv else None
    known = named in sub.choices or any(named in names for _, _, names in FAMILIES)
    for module, add, names in FAMILIES:
        if not known or named in names:
            getattr(importlib.import_module(module), add)(sub, db_help)
    return parser


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    # SIGTERM stops a command as Ctrl+C does: a sweep or headroom run records itself 'interrupted'.
    previous = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return args.func(args)
    except ImportRejected as exc:
        print_rejected(exc)
        return EXIT_BAD_INPUT
    except (BadInput, StoreLocked) as exc:
        print(f"meridian: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("meridian: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        print(f"meridian: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        signal.signal(signal.SIGTERM, previous)


def console() -> int:
    """The `meridian` command (and `python -m engine.cli`): `main`, then, after a successful command, the
    objects still alive left to the operating system. `gc.freeze()` keeps the interpreter's exit from
    collecting (and freeing) every module's objects, about 0.3 s of CPU after an HPC2N replay; exit
    handlers, the closing of files and the flushing of stdout and stderr run as usual, and the commands
    close their databases themselves. A failed command exits as before. Tests call `main` in process."""
    code = main()
    if code == 0:
        gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(console())

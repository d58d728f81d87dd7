"""What every `meridian` command shares: exit codes, the user-error exception and the guard that
prints one line on stderr for it, the data a command runs on (--dataset NAME from the database, or
--trace FILE parsed in memory), the scenario argument ("recorded" or a TOML file), the headroom
search's options and its progress lines.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from engine.core.errors import ScenarioError
from engine.scenario.recorded import recorded_baseline
from engine.scenario.spec import Scenario
from engine.service.compare import WORLD_TABLES, Unusable
from engine.service.headroom import DEFAULT_SEEDS
from engine.telemetry.batch import TABLE_COLUMNS
from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.input_limits import read_input
from engine.telemetry.store import DEFAULT_DB_PATH, Store, StoreLocked

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT = 0, 1, 2
RECORDED = "recorded"


class BadInput(Exception):
    """A user error: printed on stderr as one line, exit code 2."""


class Source(NamedTuple):
    """What a command runs on: the dataset's (or trace's) tables and how its telemetry was scheduled."""

    jobs: pd.DataFrame
    fleet: pd.DataFrame
    world: dict
    scheduler: str | None
    name: str


def source(args) -> Source:
    """The tables of the dataset or trace the arguments name; a trace's world tables are those its
    importer gives, else empty (the world KPIs then use their defaults)."""
    if args.trace:
        path = Path(args.trace)
        data = read_input(path)
        batch = parser_for(detect_format(path.name, data))(data, str(path), ImportOptions())
        jobs, fleet = batch.tables.get("jobs"), batch.tables.get("fleet")
        if jobs is None or fleet is None:
            raise Unusable(f"{path}: {batch.format} trace has no jobs and fleet; ingest it with a fleet "
                            "and use --dataset")
        return Source(jobs, fleet, {name: batch.tables.get(name, pd.DataFrame(columns=TABLE_COLUMNS[name]))
                                    for name in WORLD_TABLES}, batch.scheduler, path.name)
    from engine.telemetry.sample import ensure_sample
    from engine.telemetry.store import Store

    store = Store.open(args.db)
    try:
        ensure_sample(store)
        names = list(store.datasets()["name"])
        if args.dataset not in names:
            raise Unusable(f"unknown dataset {args.dataset!r}; choose from {', '.join(names) or 'none'}")
        return Source(store.jobs(args.dataset), store.fleet(args.dataset),
                      {name: store.table(name, args.dataset) for name in WORLD_TABLES},
                      store.recorded_scheduler(args.dataset), args.dataset)
    finally:
        store.close()


def tables(args) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """(jobs, fleet, {prices, regions, carbon, teams}) of the dataset or trace the arguments name."""
    data = source(args)
    return data.jobs, data.fleet, data.world


def load_scenario(value: str, scheduler: str | None, db: str | None = None) -> Scenario:
    """A scenario file, or "recorded": the policies that reproduce how the data was scheduled
    (engine.scenario.recorded; a file of that name wins). A learned order's agent is loaded from the
    model registry beside the database `db` (default the default database) or the packaged ones."""
    if value == RECORDED and not Path(value).exists():
        return recorded_baseline(scheduler)
    scenario = Scenario.load(value)
    if scenario.policies["order"][0] != "rl":
        return scenario  # the model registry imports scikit-learn (about a second): only a learned order needs it
    from engine.predict.rl.agent_registry import AgentRegistry
    from engine.service.rl.agents import bind

    return bind(scenario, AgentRegistry.beside(db or DEFAULT_DB_PATH))


def bind_agents(points, db: str | None) -> list:
    """Sweep points with their learned orders' agents loaded (engine.service.rl.agents.bind), so that an
    agent trained into the registry beside the database runs in the workers too."""
    from dataclasses import replace

    from engine.predict.rl.agent_registry import AgentRegistry
    from engine.service.rl.agents import bind

    registry = AgentRegistry.beside(db or DEFAULT_DB_PATH)
    return [replace(point, scenario=bind(point.scenario, registry)) for point in points]


def check_days(days: float | None) -> float | None:
    if days is not None and not days > 0:
        raise Unusable(f"--days must be positive, got {days:g}")
    return days


def print_progress(done: int, total: int, outcome) -> None:
    """One line on stderr per finished search."""
    what = "load headroom" if outcome.kind == "demand" else "GPUs needed"
    if outcome.error:
        found = f"failed: {outcome.error}"
    elif outcome.kind == "demand":
        found = f"demand x{outcome.search.value:.3g}"
    else:
        found = f"{outcome.gpus.get(outcome.search.value, float('nan')):,.0f} GPUs"
    seed = f", seed {outcome.seed}" if outcome.kind == "demand" else ""
    steps = f"{outcome.search.evaluations} runs, " if outcome.search else ""
    print(f"[{done}/{total}] {outcome.scenario}: {what}{seed}: {found} ({steps}{outcome.elapsed_s:.0f} s)",
          file=sys.stderr, flush=True)


def print_assumed(notes: list[str], json_mode: bool) -> None:
    """One "assumed: ..." line per default relied on: on stderr in JSON mode, else on stdout."""
    for note in notes:
        print(f"assumed: {note}", file=sys.stderr if json_mode else sys.stdout)


def print_rejected(exc: ImportRejected, lead: str = "") -> None:
    """A rejected input on stderr: its problems line by line (file:line: reason), then the total."""
    for line in exc.lines():
        print(line, file=sys.stderr)
    print(f"meridian: {lead}{exc.summary()}", file=sys.stderr)


def guarded(command, more=tuple, rejected: str = ""):
    """`command` with a user error (a bad scenario, unusable input, BadInput, a locked database, or
    one of the exception types `more()` returns, asked only when something was raised) printed as
    one line on stderr and exit code 2; a rejected input file gets its problems (print_rejected, the
    total after `rejected`)."""
    def wrapped(args) -> int:
        try:
            return command(args)
        except ImportRejected as exc:
            print_rejected(exc, rejected)
            return EXIT_BAD_INPUT
        except (ScenarioError, Unusable, BadInput, StoreLocked, *more()) as exc:
            print(f"meridian: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    return wrapped


def add_source(p) -> None:
    """--dataset NAME | --trace FILE, one of them required."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--dataset", help="dataset in the database")
    where.add_argument("--trace", help="trace file, parsed without a database")


def add_headroom_options(p) -> None:
    """The headroom search's options: --seeds, --slo, --workers, --dask."""
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"demand resamplings per scenario (default {DEFAULT_SEEDS})")
    p.add_argument("--slo", help="service level from a file's [slo] table (p95 wait hours per class; the format "
                                 "of meridian plan) instead of the baseline's")
    p.add_argument("--workers", type=int, help="local processes (default: one per core)")
    p.add_argument("--dask", metavar="ADDRESS", help='run the searches on a Dask cluster ("local" or tcp://host:port)')
    p.add_argument("--no-store", action="store_true",
                   help="keep no headroom searches in the database (a killed run then cannot resume)")


@contextmanager
def stored_headroom(args, source_name: str, scenarios: list[str], seeds: int) -> Iterator:
    """A ledger that keeps the headroom searches in the database as they finish (engine.service.headroom.
    ledger), or None with --no-store; says on stderr how many it found kept from an earlier run."""
    if getattr(args, "no_store", False):
        yield None
        return
    from engine.service.headroom.ledger import stored_run

    store = Store.open(args.db)
    try:
        with stored_run(store, source_name, scenarios, len(scenarios) * (max(seeds, 0) + 1)) as ledger:
            yield ledger
        if ledger.reused:
            print(f"resumed: {ledger.reused} searches kept from an earlier run", file=sys.stderr, flush=True)
    finally:
        store.close()

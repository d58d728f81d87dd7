"""`meridian simulate` and `meridian compare`: run scenarios over a dataset or a trace file.

The jobs and fleet come from the Store (--dataset NAME) or from a trace parsed in memory with
its importer (--trace FILE; no database involved). Output is a KPI table and per-group tables (by
workload class and by team), or JSON: simulate -> {"scenario": name, "kpis": {...},
"by_workload_class": [{...}, ...], "by_team": [{...}, ...]}; compare -> a list of those, the first
the baseline. Keys and units: engine.analysis.sim_metrics (kpis, by_group),
engine.analysis.world_kpis (cost, carbon, residency: KPI_KEYS) and the README. The world KPIs use the
dataset's prices, regions and carbon tables with --dataset, and the defaults (price book, world-average
grid intensity, UTC) with --trace; the defaults relied on are printed after the KPIs ("assumed: ..."),
on stderr with --json so that stdout stays one JSON document. The runs and their KPIs come from
engine.compare.run_scenarios, which the executive report (engine.report) shares.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pandas as pd

from engine.analysis.fairness import queue_sla_table, team_table
from engine.analysis.sim_metrics import by_group
from engine.analysis.sim_series import group_comparison
from engine.compare import WORLD_TABLES, Unusable, run_scenarios
from engine.scenario import Scenario, ScenarioError
from engine.telemetry.batch import TABLE_COLUMNS
from engine.telemetry.importers import parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format

EXIT_BAD_INPUT = 2
GROUPS = (("workload_class", "by_workload_class"), ("team", "by_team"))


def tables(args) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """(jobs, fleet, {prices, regions, carbon, teams}) of the dataset or trace the arguments name; a trace's
    world tables are those its importer gives, else empty (the world KPIs then use their defaults)."""
    if args.trace:
        path = Path(args.trace)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise Unusable(f"cannot read {path}: {exc.strerror or exc}") from None
        batch = parser_for(detect_format(path.name, data))(data, str(path), ImportOptions())
        jobs, fleet = batch.tables.get("jobs"), batch.tables.get("fleet")
        if jobs is None or fleet is None:
            raise Unusable(f"{path}: {batch.format} trace has no jobs and fleet; ingest it with a fleet "
                            "and use --dataset")
        return jobs, fleet, {name: batch.tables.get(name, pd.DataFrame(columns=TABLE_COLUMNS[name]))
                             for name in WORLD_TABLES}
    from engine.telemetry.sample import ensure_sample
    from engine.telemetry.store import Store

    store = Store.open(args.db)
    try:
        ensure_sample(store)
        names = list(store.datasets()["name"])
        if args.dataset not in names:
            raise Unusable(f"unknown dataset {args.dataset!r}; choose from {', '.join(names) or 'none'}")
        return (store.jobs(args.dataset), store.fleet(args.dataset),
                {name: store.table(name, args.dataset) for name in WORLD_TABLES})
    finally:
        store.close()


def _run(args, files: list[str]) -> tuple[list[tuple[Scenario, dict, object]], list[str]]:
    """([(scenario, its KPIs with the world KPIs appended, result) per scenario file], the defaults the
    world KPIs relied on, each once): engine.compare.run_scenarios over the arguments' tables."""
    scenarios = [Scenario.load(f) for f in files]
    runs, assumed = run_scenarios(scenarios, *tables(args))
    return [(run.scenario, run.kpis, run.result) for run in runs], assumed


def _print_assumed(notes: list[str], json_mode: bool) -> None:
    """One "assumed: ..." line per default relied on: on stderr in JSON mode, else on stdout."""
    for note in notes:
        print(f"assumed: {note}", file=sys.stderr if json_mode else sys.stdout)


def _guarded(command):
    def wrapped(args) -> int:
        try:
            return command(args)
        except (ScenarioError, Unusable) as exc:
            print(f"meridian: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    return wrapped


def _fmt(value: float, sign: str = "") -> str:
    """A KPI for a text table: whole numbers and anything from 1,000 up grouped without decimals,
    others to 4 significant digits (never in scientific notation below 1e15); `sign` "+" signs it."""
    value = float(value)
    if not math.isfinite(value):
        return f"{value:{sign}}"
    if value.is_integer() or abs(value) >= 1000:
        return f"{value:{sign},.0f}"
    return f"{value:{sign},.4g}" if abs(value) >= 1e-4 else f"{value:{sign}.3e}"


def _report(scenario: Scenario, values: dict, result) -> dict:
    """The JSON object of one run: scenario name, KPIs and the per-group rows."""
    return {"scenario": scenario.name, "kpis": values,
            **{name: by_group(result, column).to_dict("records") for column, name in GROUPS},
            "teams": _records(team_table(result)), "queue_classes": _records(queue_sla_table(result))}


def _records(table) -> list[dict]:
    """Rows as JSON-safe dicts (NaN and infinities as null)."""
    return json.loads(table.to_json(orient="records"))


def _print_sharing(result) -> None:
    """Each team's share against its entitlement, and each queue class's SLA attainment."""
    for title, table in (("teams (share and entitlement)", team_table(result)),
                         ("queue classes (max-wait SLA)", queue_sla_table(result))):
        numbers = {c: _fmt for c in table.columns if table[c].dtype.kind in "fi"}
        print(f"\n{title}")
        print(table.to_string(index=False, formatters=numbers))


def _print_groups(runs: list[tuple[str, object]]) -> None:
    """The per-class and per-team tables (a scenario column when comparing); "" team as (none)."""
    for column, name in GROUPS:
        table = group_comparison(runs, column)
        table[column] = table[column].replace("", "(none)")
        if len(runs) == 1:
            table = table.drop(columns="scenario")
        numbers = {c: _fmt for c in table.columns if c not in (column, "scenario")}
        print(f"\n{name.replace('_', ' ')}")
        print(table.to_string(index=False, formatters=numbers))


@_guarded
def cmd_simulate(args) -> int:
    ((scenario, values, result),), assumed = _run(args, [args.scenario])
    written = [*result.to_csv(args.out), *result.to_parquet(args.out)] if args.out else []
    if args.json:
        print(json.dumps(_report(scenario, values, result)))
        _print_assumed(assumed, True)
        return 0
    print(f"scenario {scenario.name}")
    for key, value in values.items():
        print(f"  {key:31s} {_fmt(value)}")
    _print_assumed(assumed, False)
    _print_groups([(scenario.name, result)])
    _print_sharing(result)
    if written:
        print(f"\nwrote {', '.join(p.name for p in written)} to {args.out}/")
    return 0


@_guarded
def cmd_compare(args) -> int:
    runs, assumed = _run(args, args.scenario)
    if args.json:
        print(json.dumps([_report(s, k, r) for s, k, r in runs]))
        _print_assumed(assumed, True)
        return 0
    base = runs[0][1]
    rows = [["kpi", *(s.name for s, _, _ in runs)]]
    for key in base:
        cells = [key, _fmt(base[key])]
        for _, values, _ in runs[1:]:
            delta = values[key] - base[key]
            rel = f" ({delta / base[key]:+.0%})" if base[key] and math.isfinite(delta / base[key]) else ""
            cells.append(f"{_fmt(values[key])} {_fmt(delta, '+')}{rel}")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:]))]))
    _print_assumed(assumed, False)
    _print_groups([(s.name, r) for s, _, r in runs])
    return 0


def add_parsers(sub, db_help: str) -> None:
    """Register the simulate and compare subcommands on the `meridian` parser."""
    for name, func, help_text in (("simulate", cmd_simulate, "replay a dataset or trace under a scenario"),
                                  ("compare", cmd_compare, "compare scenarios (deltas against the first)")):
        p = sub.add_parser(name, help=help_text)
        source = p.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", help="dataset in the database")
        source.add_argument("--trace", help="trace file, parsed without a database")
        if name == "simulate":
            p.add_argument("--scenario", required=True, help="scenario TOML file")
            p.add_argument("--out", help="folder for the per-job table, timeline and decision log")
        else:
            p.add_argument("--scenario", action="append", required=True, help="scenario TOML (repeat)")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument("--db", help=db_help)
        p.set_defaults(func=func)

"""`meridian simulate` and `meridian compare`: run scenarios over a dataset or a trace file.

The jobs and fleet come from the Store (--dataset NAME) or from a trace parsed in memory with
its importer (--trace FILE; no database involved). Output is a KPI table and per-group tables (by
workload class and by team), or JSON: simulate -> {"scenario": name, "kpis": {...},
"by_workload_class": [{...}, ...], "by_team": [{...}, ...], "by_cluster": [{...}, ...]}
(engine.analysis.runs.clusters; as text only when a region has more than one cluster); compare -> a
list of those, the first the baseline. Keys and units: engine.analysis.runs.sim_metrics (kpis, by_group),
engine.analysis.runs.world_kpis (cost, carbon, residency: KPI_KEYS) and the README. The world KPIs use the
dataset's prices, regions and carbon tables with --dataset, and the defaults (price book, world-average
grid intensity, UTC) with --trace; the defaults relied on are printed after the KPIs ("assumed: ..."),
on stderr with --json so that stdout stays one JSON document. compare runs its scenarios in parallel
(--workers local processes, one per core by default, or --dask; engine.service.scenario_runs) and prints
a line on stderr as each finishes ("[2/16] easy-backfill: ran in 5.1 s"), then one per headroom search.
The runs and their KPIs come from engine.service.compare.run_one, which the executive report
(engine.service.report) shares: the same for any number of workers.
"""
from __future__ import annotations

import json
import math
import sys

from engine.analysis.runs.clusters import by_cluster
from engine.analysis.runs.fairness import queue_sla_table, team_table
from engine.analysis.runs.sim_metrics import by_group
from engine.analysis.runs.sim_series import group_comparison
from engine.cli.common import (
    add_headroom_options,
    add_source,
    check_days,
    guarded,
    load_scenario,
    print_assumed,
    print_progress,
    source,
    stored_headroom,
)
from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.scenario_runs import run_scenarios_on

GROUPS = (("workload_class", "by_workload_class"), ("team", "by_team"))


def _run(args, files: list[str]) -> tuple[list, list[str], object]:
    """([Run per scenario], the defaults the world KPIs relied on, each once, the HeadroomReport or None):
    engine.service.compare.run_scenarios over the arguments' tables, first --days days (all by default), and
    with_headroom when asked (compare, by default)."""
    data = source(args)
    scenarios = first_days([load_scenario(f, data.scheduler, args.db) for f in files], data.jobs, check_days(args.days))
    runs, assumed = run_scenarios_on(scenarios, data.jobs, data.fleet, data.world,
                                     world=True if args.world else None,
                                     progress=_simulated if len(scenarios) > 1 else None,
                                     workers=getattr(args, "workers", 1), dask=getattr(args, "dask", None))
    measured = None
    if getattr(args, "headroom", False):
        from engine.service.headroom.measure import HeadroomOptions, with_headroom  # compare's: simulate needs none

        with stored_headroom(args, data.name, [s.name for s in scenarios], args.seeds) as ledger:
            runs, measured = with_headroom(runs, data.jobs, data.fleet, data.world, HeadroomOptions(
                seeds=args.seeds, slo_file=args.slo, workers=args.workers, dask=args.dask, progress=print_progress,
                ledger=ledger))
    return runs, assumed, measured


def _simulated(done: int, total: int, run, seconds: float) -> None:
    """A line on stderr per scenario run (compare): "[2/16] easy-backfill: ran in 5.1 s"."""
    print(f"[{done}/{total}] {run.scenario.name}: ran in {seconds:.1f} s", file=sys.stderr, flush=True)


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
            "teams": _records(team_table(result)), "queue_classes": _records(queue_sla_table(result)),
            "by_cluster": _records(by_cluster(result)),
            **{name: _records(getattr(result, name)) for name in ("forecast", "chains", "experiments")
               if getattr(result, name) is not None}}


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


def _print_clusters(result) -> None:
    """The by-cluster table, when a region has more than one cluster."""
    table = by_cluster(result)
    if not len(table) or table.groupby("region").size().max() < 2:
        return
    numbers = {c: _fmt for c in table.columns if table[c].dtype.kind in "fi"}
    print("\nby cluster")
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


SHOWN_ROWS = 20  # rows of a long table the text output shows (--out and --json have them all)
TITLES = {"forecast": "demand forecast (held-out weeks before the window; naive: the same hour a week earlier)",
          "chains": "chains (each stage after the first: its hand-over; seconds from time 0)",
          "experiments": "experiments (forecast idle GPU-hours in each team's off-hours per GPU type, and what "
                         "filled them)"}


def _print_tables(result) -> None:
    """[predictive_scaling]'s forecast error, the chains' hand-overs and [experiments]' gaps, when the run has them."""
    for name, title in TITLES.items():
        table = getattr(result, name)
        if table is None:
            continue
        numbers = {c: _fmt for c in table.columns if table[c].dtype.kind in "fi"}
        print(f"\n{title}")
        print(table.head(SHOWN_ROWS).to_string(index=False, formatters=numbers))
        if len(table) > SHOWN_ROWS:
            print(f"... {len(table) - SHOWN_ROWS:,} more rows (--out writes them all)")


@guarded
def cmd_simulate(args) -> int:
    (run,), assumed, _ = _run(args, [args.scenario])
    result = run.result
    written = [*result.to_csv(args.out), *result.to_parquet(args.out)] if args.out else []
    if args.json:
        print(json.dumps(_report(run.scenario, run.kpis, result)))
        print_assumed(assumed, True)
        return 0
    print(f"scenario {run.scenario.name}")
    for key, value in run.kpis.items():
        print(f"  {key:31s} {_fmt(value)}")
    print_assumed(assumed, False)
    _print_groups([(run.scenario.name, result)])
    _print_clusters(result)
    _print_sharing(result)
    _print_tables(result)
    if written:
        print(f"\nwrote {', '.join(p.name for p in written)} to {args.out}/")
    return 0


@guarded
def cmd_compare(args) -> int:
    runs, assumed, measured = _run(args, args.scenario)
    if args.json:
        print(json.dumps([{**_report(r.scenario, r.kpis, r.result), **_headroom_record(r, measured)} for r in runs]))
        print_assumed(assumed, True)
        return 0
    if measured is not None:
        from engine.service.headroom.measure import AMORTISATION_YEARS, GPU_CAPEX_USD
        from engine.service.report.headline import capacity_sentences

        base = runs[0].scenario.name
        print(f"service level: {measured.level.describe()}")
        for run in runs[1:]:
            for sentence in capacity_sentences(base, measured.baseline, run.headroom, GPU_CAPEX_USD,
                                               AMORTISATION_YEARS):
                print(f"  {sentence}")
        print()
    base = runs[0].kpis
    rows = [["kpi", *(r.scenario.name for r in runs)]]
    for key in dict.fromkeys(key for run in runs for key in run.kpis):  # also one run's own (hand-offs)
        first = base.get(key, math.nan)
        cells = [key, _fmt(first)]
        for run in runs[1:]:
            delta = run.kpis.get(key, math.nan) - first
            rel = f" ({delta / first:+.0%})" if first and math.isfinite(delta / first) else ""
            cells.append(f"{_fmt(run.kpis.get(key, math.nan))} {_fmt(delta, '+')}{rel}")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:]))]))
    print_assumed(assumed, False)
    _print_groups([(r.scenario.name, r.result) for r in runs])
    return 0


def _headroom_record(run, measured) -> dict:
    """The JSON of a run's headroom searches: the level, per seed headroom, the GPUs needed, trust."""
    if measured is None:
        return {}
    h = run.headroom
    return {"headroom": {"service_level": measured.level.describe(), "seeds": list(measured.seeds),
                         "load_headroom_by_seed": list(h.load_headroom_by_seed),
                         "load_headroom_ratio_by_seed": list(h.ratio_by_seed), "fleet_gpus": h.fleet_gpus,
                         "needed_gpus": h.needed_gpus, "monotone": h.monotone, "bounded": h.bounded,
                         "simulations": h.evaluations}}


def add_parsers(sub, db_help: str) -> None:
    """Register the simulate and compare subcommands on the `meridian` parser."""
    for name, func, help_text in (("simulate", cmd_simulate, "replay a dataset or trace under a scenario"),
                                  ("compare", cmd_compare, "compare scenarios (deltas against the first), with "
                                                           "their load headroom at the first one's service level")):
        p = sub.add_parser(name, help=help_text)
        add_source(p)
        scenario_help = 'scenario TOML file, or "recorded" (how the data was scheduled)'
        if name == "simulate":
            p.add_argument("--scenario", required=True, help=scenario_help)
            p.add_argument("--out", help="folder for the per-job table, timeline and decision log")
        else:
            p.add_argument("--scenario", action="append", required=True, help=scenario_help + " (repeat)")
            p.add_argument("--no-headroom", dest="headroom", action="store_false",
                           help="skip the load headroom and GPUs-needed searches (each scenario then runs once)")
            add_headroom_options(p)
        p.add_argument("--days", type=float, help="keep the jobs submitted in the first N days (default: all)")
        p.add_argument("--world", action="store_true",
                       help="compute cost and carbon also for an unpriced fleet (an SWF log's processors)")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument("--db", help=db_help)
        p.set_defaults(func=func)

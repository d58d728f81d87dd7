"""`meridian plan`: the cheapest fleet that keeps each workload class's p95 wait under its target.

    meridian plan --dataset NAME --growth 1.3 --slo FILE.toml [--days N] [--json] [--db PATH]

Progress goes to stderr; stdout gets the plan (or one JSON document, engine.service.planning.summary).
Exit 0 whether or not a fleet met every target within the rounds allowed (the output says which),
2 for bad input (plan file, dataset, growth) with a one-line error.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.cli.common import guarded, tables

if TYPE_CHECKING:
    from engine.service.planning.plan import PlanResult


def _plan_error() -> tuple:
    from engine.service.planning.settings import PlanError

    return (PlanError,)


def _guarded(command):
    """engine.cli.common.guarded, a bad plan file or --days a user error too. The planner (scipy's MILP,
    about half a second of imports) loads only when `plan` runs."""
    return guarded(command, _plan_error)


@_guarded
def cmd_plan(args) -> int:
    from engine.service.planning.plan import plan_fleet
    from engine.service.planning.settings import PlanError, load_settings
    from engine.service.planning.summary import plan_record

    settings = load_settings(args.slo)
    if args.days is not None:
        if not 0.5 <= args.days <= 366:
            raise PlanError(f"--days must be between 0.5 and 366, got {args.days:g}")
        settings = replace(settings, days=args.days)
    args.trace = None
    jobs, fleet, world_tables = tables(args)
    result = plan_fleet(jobs, fleet, world_tables, settings, args.growth,
                        progress=lambda message: print(message, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(plan_record(result)))
    else:
        _print_plan(result)
    return 0


def _print_plan(result: PlanResult) -> None:
    from engine.service.planning.summary import fleet_comparison

    today, best = result.today, result.best.check
    met = result.recommended is not None
    print(f"plan for demand x{result.growth:g} over {result.start_utc:%Y-%m-%d %H:%M} - "
          f"{result.end_utc:%Y-%m-%d %H:%M} UTC ({result.settings.days:g} days, "
          f"{result.settings.warmup_days:g} days warm-up)")
    verdict = (f"cheapest fleet meeting every target: round {result.recommended.number} of {len(result.iterations)}"
               if met else
               f"no fleet met every target in {len(result.iterations)} rounds; the last round is shown")
    print(verdict)
    print(f"{'':22}{'today':>16}{'plan':>16}")
    print(f"{'GPUs':22}{int(today.gpus['total'].sum()):>16,}{int(best.gpus['total'].sum()):>16,}")
    print(f"{'cost USD/year':22}{today.cost_usd_per_year:>16,.0f}{best.cost_usd_per_year:>16,.0f}")
    print(f"{'utilisation':22}{today.kpis['utilization']:>16.1%}{best.kpis['utilization']:>16.1%}")
    print("\np95 wait by workload class (hours)")
    slo = today.slo.merge(best.slo, on=["workload_class", "target_p95_h"], suffixes=("_today", "_plan"))
    for row in slo.itertuples(index=False):
        print(f"  {row.workload_class:14} target {row.target_p95_h:6.2f}   today {row.p95_h_today:7.2f}"
              f" ({'met' if row.met_today else 'missed'})   plan {row.p95_h_plan:7.2f} margin {row.margin_h_plan:+.2f}")
    print("\nGPUs by region and type (reserved / spot / on-demand)")
    for row in fleet_comparison(result).itertuples(index=False):
        print(f"  {row.region:14} {row.gpu_type:6} today {row.today_reserved:4}/{row.today_spot:3}/"
              f"{row.today_on_demand:3}   plan {row.plan_reserved:4}/{row.plan_spot:3}/{row.plan_on_demand:3}"
              f"   change {row.change:+d}")
    print("\nrounds")
    for it in result.iterations:
        pools = ", ".join("/".join(p) for p in it.missed_pools)
        verdict = "every target met" if it.check.met else "a target missed"
        if pools:
            verdict += f"; pools over a target: {pools}"
        how = (f"the fleet above with every pool x{it.compacted:.2f} (compaction)" if it.compacted else
               f"integer program ${it.plan.weekly_cost_usd:,.0f}/week")
        print(f"  {it.number}: {how}, simulated ${it.check.cost_usd_per_year:,.0f}/year, {verdict}")
    for note in result.notes:
        print(f"note: {note}")


def add_parser(sub, db_help: str) -> None:
    p = sub.add_parser("plan", help="the cheapest fleet that meets p95-wait targets per workload class")
    p.add_argument("--dataset", required=True, help="dataset in the database")
    p.add_argument("--growth", type=float, default=1.0, help="demand multiplier, e.g. 1.3 for 30%% more jobs")
    p.add_argument("--slo", required=True, help="plan file: [slo] targets and assumptions (TOML)")
    p.add_argument("--days", type=float, help="plan on the last N days of the data (overrides the file)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_plan)

"""`meridian headroom`: how much more work each scenario serves, and on how few GPUs, at the baseline's
service level (engine.service.headroom.measure).

    meridian headroom (--dataset NAME | --trace FILE) [--baseline A.toml|recorded] --scenario B.toml
                      [--scenario C.toml ...] [--slo FILE.toml] [--seeds N] [--days N]
                      [--workers N] [--dask ADDRESS|local] [--gpu-capex-usd X] [--amortisation-years Y] [--json]
                      [--db FILE] [--no-store]

The baseline defaults to "recorded" (the policies that reproduce how the data was scheduled,
engine.scenario.recorded). A line on stderr per finished search; stdout gets the service level and
a table (or one JSON document: {"service_level", "seeds", "window_utc", "jobs", "elapsed_s",
"scenarios": [{"scenario", KPIs..., "load_headroom_by_seed", "load_headroom_ratio_by_seed",
"fleet_gpus", "limited_by", "monotone", "bounded", "simulations", "searches": [{"kind", "seed", "value",
"points": [[x, held, worst], ...]}]}]}). Exit 2 with one line on stderr for bad input.
Each search is stored in the database the moment it finishes (engine.service.headroom.ledger) unless
--no-store: a run that was killed or stopped is marked interrupted, and the same command again runs
only the searches it had not finished.
"""
from __future__ import annotations

import json
import sys

from engine.cli.common import (
    RECORDED,
    add_headroom_options,
    add_source,
    check_days,
    guarded,
    load_scenario,
    print_progress,
    source,
    stored_headroom,
)
from engine.service.compare import first_days
from engine.service.headroom.measure import AMORTISATION_YEARS, GPU_CAPEX_USD, HeadroomError, HeadroomReport, measure
from engine.service.headroom.service import ServiceLevelError


def _guarded(command):
    """engine.cli.common.guarded, a search's own errors (no level to hold, a bad --slo file) user errors too."""
    return guarded(command, lambda: (HeadroomError, ServiceLevelError))


@_guarded
def cmd_headroom(args) -> int:
    data = source(args)
    scenarios = [load_scenario(f, data.scheduler, args.db) for f in [args.baseline, *args.scenario]]
    scenarios = first_days(scenarios, data.jobs, check_days(args.days))
    with stored_headroom(args, data.name, [s.name for s in scenarios], args.seeds) as ledger:
        report = measure(scenarios[0], scenarios[1:], data.jobs, data.fleet, data.world, seeds=args.seeds,
                         slo_file=args.slo, workers=args.workers, dask=args.dask, progress=print_progress,
                         gpu_capex_usd=args.gpu_capex_usd, amortisation_years=args.amortisation_years, ledger=ledger)
    if args.json:
        print(json.dumps(record(report)))
    else:
        _print(report)
    return 0


def record(report: HeadroomReport) -> dict:
    """The JSON document of the module docstring."""
    start, end = report.window_utc
    return {"service_level": report.level.describe(), "targets_p95_h": report.level.p95_wait_h,
            "max_guarantee_misses": report.level.max_guarantee_misses, "seeds": list(report.seeds),
            "window_utc": [f"{start:%Y-%m-%dT%H:%M:%S}", f"{end:%Y-%m-%dT%H:%M:%S}"], "jobs": report.jobs,
            "elapsed_s": round(report.elapsed_s, 1),
            "scenarios": [{"scenario": s.name, **s.kpis(), "load_headroom_by_seed": list(s.load_headroom_by_seed),
                           "load_headroom_ratio_by_seed": list(s.ratio_by_seed), "fleet_gpus": s.fleet_gpus,
                           "limited_by": s.limited_by,
                           "monotone": s.monotone, "bounded": s.bounded, "simulations": s.evaluations,
                           "searches": [{"kind": o.kind, "seed": o.seed, "value": o.search.value,
                                         "points": [[p.x, p.held, p.worst] for p in o.search.points]}
                                        for o in s.searches]}
                          for s in report.scenarios]}


def _print(report: HeadroomReport) -> None:
    start, end = report.window_utc
    print(f"service level: {report.level.describe()}")
    print(f"window {start:%Y-%m-%d %H:%M} - {end:%Y-%m-%d %H:%M} UTC, {report.jobs:,} jobs; seeds "
          f"{', '.join(map(str, report.seeds))}; {sum(s.evaluations for s in report.scenarios):,} simulations in "
          f"{report.elapsed_s:,.0f} s")
    base = report.baseline.name
    header = ["scenario", "load headroom", "(seeds)", "limited by", f"work vs {base}", "GPUs needed",
              f"GPUs saved vs {base}", "$/yr saved"]
    rows = [header]
    for s in report.scenarios:
        rows.append([s.name, f"x{s.load_headroom:.3f}", f"{s.load_headroom_min:.3f}-{s.load_headroom_max:.3f}",
                     s.limited_by or "-", f"{100 * (s.load_headroom_ratio - 1):+.0f} %", f"{s.needed_gpus:,.0f}",
                     f"{s.saved_gpus:+,.0f}", f"{s.saved_usd_per_year:+,.0f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join([r[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:], widths[1:]))]))
    for s in report.scenarios:
        if not s.monotone:
            print(f"note: {s.name}: a search found the level broken below a scale where it held again "
                  "(not monotone); its figures are the bisection's", file=sys.stdout)
        if s.bounded:
            print(f"note: {s.name}: a search reached its limit (x1/16 or x16): the figure is a bound")


def add_parser(sub, db_help: str) -> None:
    """Register `meridian headroom` on the `meridian` parser."""
    p = sub.add_parser("headroom", help="load headroom and GPUs needed of scenarios at the baseline's service level")
    add_source(p)
    p.add_argument("--baseline", default=RECORDED,
                   help='baseline scenario TOML, or "recorded" (default: how the data was scheduled)')
    p.add_argument("--scenario", action="append", default=[], help="candidate scenario TOML (repeat)")
    add_headroom_options(p)
    p.add_argument("--days", type=float, help="keep the jobs submitted in the first N days (default: all)")
    p.add_argument("--gpu-capex-usd", type=float, default=GPU_CAPEX_USD,
                   help=f"price of one GPU in USD (default {GPU_CAPEX_USD:.0f})")
    p.add_argument("--amortisation-years", type=float, default=AMORTISATION_YEARS,
                   help=f"years a GPU is written off over (default {AMORTISATION_YEARS:g})")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_headroom)

"""`meridian report`: the executive report of candidate scenarios against a baseline, as PDF or HTML.

    meridian report (--dataset NAME | --trace FILE) [--baseline A.toml|recorded] --candidate B.toml
                    [--candidate C.toml ...] --out FILE.pdf|FILE.html [--days N] [--db FILE]
                    [--gpu-capex-usd X] [--amortisation-years Y] [--annualisation-days D] [--pue P]
                    [--seeds N] [--slo FILE.toml] [--workers N] [--dask ADDRESS]

The baseline defaults to "recorded" (how the data was scheduled). Building measures every scenario's
load headroom and GPUs needed at the baseline's service level (a line on stderr per search). Prints
where it wrote and the headline. Bad input (unknown extension, bad scenario, unknown dataset, no
Chromium for a PDF) exits with code 2 and one line on stderr.
"""
from __future__ import annotations

import sys
from pathlib import Path

from engine.cli.common import (
    EXIT_BAD_INPUT,
    RECORDED,
    add_headroom_options,
    check_days,
    load_scenario,
    print_progress,
    source,
    stored_headroom,
)
from engine.core.errors import ScenarioError
from engine.service.compare import Unusable
from engine.service.headroom.measure import HeadroomOptions

OUTPUTS = (".pdf", ".html")


def cmd_report(args) -> int:
    from engine.service.report.assumptions import ReportAssumptions
    from engine.service.report.builder import build_report
    from engine.service.report.html import render_html
    from engine.service.report.pdf import ChromiumMissing, write_pdf
    try:
        out = Path(args.out)
        if out.suffix.lower() not in OUTPUTS:
            raise Unusable(f"--out must end in .pdf or .html, got {args.out!r}")
        if not out.parent.is_dir():
            raise Unusable(f"--out: folder {out.parent} does not exist")
        check_days(args.days)
        try:
            assumptions = ReportAssumptions(annualisation_days=args.annualisation_days,
                                            gpu_capex_usd=args.gpu_capex_usd,
                                            amortisation_years=args.amortisation_years, pue=args.pue)
        except ValueError as exc:
            raise Unusable(str(exc)) from None
        data = source(args)
        baseline = load_scenario(args.baseline, data.scheduler, args.db)
        candidates = [load_scenario(f, data.scheduler, args.db) for f in args.candidate]
        with stored_headroom(args, data.name, [s.name for s in (baseline, *candidates)], args.seeds) as ledger:
            options = HeadroomOptions(seeds=args.seeds, slo_file=args.slo, workers=args.workers, dask=args.dask,
                                      progress=print_progress, ledger=ledger)
            report = build_report(data.jobs, data.fleet, data.world, baseline, candidates, assumptions,
                                  dataset=data.name, days=args.days, headroom=options)
        if out.suffix.lower() == ".pdf":
            write_pdf(report, out)
        else:
            out.write_text(render_html(report), encoding="utf-8")
    except (ScenarioError, Unusable, ChromiumMissing) as exc:
        print(f"meridian: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    best = report.candidate if len(report.candidates) == 1 else \
        f"{report.candidate}, the best of {len(report.candidates)} candidates,"
    print(f"wrote {out} ({best} vs {report.baseline} on {report.dataset}, {report.range_note})")
    for sentence in report.headline:
        print(f"  - {sentence}")
    if len(report.candidates) > 1:
        print("ranked by the work each serves at the baseline's service level: " + ", ".join(report.candidates))
    return 0


def add_parser(sub, db_help: str) -> None:
    """Register `meridian report` on the `meridian` parser."""
    p = sub.add_parser("report", help="executive ROI report of candidate scenarios against a baseline (PDF or HTML)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="dataset in the database")
    source.add_argument("--trace", help="trace file, parsed without a database")
    p.add_argument("--baseline", default=RECORDED,
                   help='baseline scenario TOML, or "recorded" (default: how the data was scheduled)')
    p.add_argument("--candidate", action="append", required=True, help="candidate scenario TOML (repeat)")
    p.add_argument("--out", required=True, help="FILE.pdf (printed by headless Chromium) or FILE.html")
    p.add_argument("--days", type=float, help="keep the jobs submitted in the first N days (default: all)")
    p.add_argument("--gpu-capex-usd", type=float, default=30_000.0, help="price of one GPU in USD (default 30000)")
    p.add_argument("--amortisation-years", type=float, default=3.0, help="years a GPU is written off over (default 3)")
    p.add_argument("--annualisation-days", type=float, default=365.0, help="days per year (default 365)")
    p.add_argument("--pue", type=float, default=1.2, help="power usage effectiveness (default 1.2)")
    add_headroom_options(p)
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_report)

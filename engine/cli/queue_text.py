"""What `meridian predict eta | backtest | rightsize` (engine.cli.queue) print: the
plain-text tables and sentences, the CSV file, and values made ready for JSON."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from engine.cli.common import BadInput
from engine.core.text import duration, hours, minute, number, stamp


def job_sentence(record: dict) -> str:
    place = f"job {record['job_id']} is {ordinal(record['jobs_ahead'] + 1)} of {record['queue_length']} in the " \
            f"queue of region {record['region']}"
    if record["wait_p50_s"] is None:
        return f"{place}; it never starts: {record['why_text']}"
    latest = minute(record["start_hi_utc"]) if record["start_hi_utc"] else "never"
    return (f"{place}; now: {record['why_text']}; expected to start {record['eta_text']} "
            f"({minute(record['start_p50_utc'])} UTC; between {minute(record['start_lo_utc'])} and {latest})")


def ordinal(n: int) -> str:
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def print_queue(dataset: str, at: pd.Timestamp, table: pd.DataFrame, samples: int) -> None:
    when = f"{at:%Y-%m-%d %H:%M} UTC"
    if table.empty:
        print(f"no job of dataset {dataset!r} was pending at {when}")
        return
    corrected = " (calibrated)" if table["calibrated"].any() else ""
    print(f"queue of dataset {dataset!r} at {when}: {len(table):,} jobs pending; start intervals{corrected} "
          f"from {samples} replays (FCFS + EASY backfilling, no later arrivals)")
    rows = [[str(r.job_id), str(r.region), gpus(r.gpus), duration(r.waited_s), f"{r.jobs_ahead:,}", r.why_text,
             r.eta_text, minute(stamp(r.start_p50_utc))] for r in table.itertuples()]
    print_table(["job", "region", "GPUs", "waited", "ahead", "why it waits", "expected start", "most likely (UTC)"],
                rows, right={2, 3, 4})


def print_backtest(dataset: str, report: dict) -> None:
    scored = report["snapshots"] - report["calibration_snapshots"]
    print(f"ETA backtest of dataset {dataset!r}: the queue replayed at {report['snapshots']} instants after the "
          f"training cut {minute(report['cutoff_utc'])} UTC, {report['samples']} runtime draws each, "
          f"{pct(report['level'], 0)} intervals")
    print(f"  the first {report['calibration_snapshots']} instants calibrate ({report['jobs_calibration']:,} waits); "
          f"the other {scored} score {report['jobs_scored']:,} waits of {report['distinct_jobs_scored']:,} jobs; "
          f"{report['jobs_never_started']:,} pending jobs never started in the data (not scored)")
    rows = []
    for key in ("raw", "calibrated", "learned", "baseline"):
        m = report[key]
        rows.append([key] + (["-", "-", "-", "-"] if m is None else
                             [pct(m["coverage"]), hours(m["width_h"] * 3600, infinite="unbounded"), number(m["male"], 3), f"{m['never_fits']:,}"]))
    print_table(["interval", "coverage", "median width", "MALE", "never fits"], rows, right={1, 2, 3, 4})
    if report["learned"] is None:
        print("  learned: not fitted (fewer than 100 calibration waits)")
    shifts = report["calibration"]
    print(f"  calibration moves on ln(wait + 60 s): lower bound {-shifts['lo_shift']:+.3f}, "
          f"point {shifts['p50_shift']:+.3f}, upper bound {shifts['hi_shift']:+.3f}")
    print(f"  {report['seconds_per_query']:.2f} s per query")


def print_rightsizing(args, options, totals: dict, table: pd.DataFrame, shown: pd.DataFrame) -> None:
    print(f"right-sizing of dataset {args.dataset!r} (headroom {options.headroom_pct:g} %, {options.tier} prices): "
          f"{totals['measured']:,.0f} of {totals['ran']:,.0f} jobs that ran have measured GPU use "
          f"({totals['measured_by_mean']:,.0f} by their mean only)")
    dollars = "" if not math.isfinite(totals["freed_usd"]) else f", ${totals['freed_usd']:,.0f}" + (
        " (some prices assumed from the default price book)" if totals["price_assumed"] else "")
    print(f"  {totals['over_asking']:,.0f} jobs over-asked ({totals['over_asking_pct']:.1f} % of measured); "
          f"{totals['freed_gpu_hours']:,.1f} of {totals['gpu_hours']:,.1f} GPU-hours could have been freed "
          f"({totals['freed_pct']:.1f} %){dollars}")
    print(f"top {len(shown):,} of {len(table):,} {'jobs' if args.by == 'job' else args.by + 's'} "
          "by freed GPU-hours:")
    if args.by == "job":
        keys = ["job", "user", "team"]
        headers = keys + ["GPUs", "peak used", "util %", "recommended", "run h", "freed GPU-h", "freed $"]
        rows = [[r.job_id, r.user_name, r.team, gpus(r.gpus), gpus(r.gpus_used_max), number(r.gpu_util_pct, 0),
                 gpus(r.recommended_gpus), number(r.run_h, 1), number(r.freed_gpu_hours, 1), number(r.freed_usd, 0)]
                for r in shown.itertuples()]
    else:
        keys = ["user", "team"] if args.by == "user" else ["team"]
        headers = keys + ["jobs", "over-asking", "GPU-h", "freed GPU-h", "freed %", "freed $", "util %"]
        rows = [([r.user_name, r.team] if args.by == "user" else [r.team])
                + [f"{r.jobs:,}", f"{r.over_asking:,}", number(r.gpu_hours, 1), number(r.freed_gpu_hours, 1),
                   number(r.freed_pct, 1), number(r.freed_usd, 0), number(r.gpu_util_pct, 0)] for r in shown.itertuples()]
    print_table(headers, rows, right=set(range(len(keys), len(headers))))


def print_table(headers: list[str], rows: list[list[str]], right: set[int]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells):
        return "  " + "  ".join(c.rjust(w) if i in right else c.ljust(w)
                                for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    print(line(headers))
    for row in rows:
        print(line(row))


def write_csv(path: Path, table: pd.DataFrame) -> None:
    from engine.core.escaping import to_spreadsheet_csv

    try:
        path.write_bytes(to_spreadsheet_csv(table))
    except OSError as exc:
        raise BadInput(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {len(table):,} rows to {path}", file=sys.stderr)


def pct(share: float | None, digits: int = 1) -> str:
    return "-" if share is None or not math.isfinite(share) else f"{100 * share:.{digits}f} %"


def gpus(value: float) -> str:
    """A GPU count: whole numbers without decimals, shares as they are (0.5)."""
    return "-" if not math.isfinite(value) else f"{value:g}"



def plain(value):
    """`value` ready for json.dumps: times as ISO "Z" strings, numpy scalars as Python numbers, NaN,
    infinities and NaT as None, containers converted recursively."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return stamp(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value

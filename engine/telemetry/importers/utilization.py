"""Utilisation time series -> the utilization table.

Two shapes are recognised:
- Philly's `time,active,total` (philly/philly_node_sequence.csv): busy and total *nodes* per minute;
- a generic one: a time column (timestamp, ts, ts_utc or time), optional region / cluster / node,
  and either busy_gpus (or busy) with total_gpus (or total), or util_pct (or utilization /
  utilisation) - counted in GPUs.
Times are ISO-8601 (with or without an offset) or epoch seconds (see `timestamps.parse_times`).
Times without an offset are wall clock in `ImportOptions.tz`, or UTC when none is given (said in
the notes); a wall-clock time skipped when clocks go forward is a row error. Every column within the data
contract (`contract.UTILIZATION`: counts and percent; times within 1970-2100; text).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError, kept
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.contract import UTILIZATION, check_numbers, check_times
from engine.telemetry.importers.csv_records import CSV
from engine.telemetry.importers.named_columns import Rows, check_texts, numbers, read_rows
from engine.telemetry.importers.timestamps import checked_zone, clock_changes, parse_times

TIME_COLUMNS = ("timestamp", "ts_utc", "ts", "time")
BUSY_COLUMNS = ("busy_gpus", "busy", "active")
TOTAL_COLUMNS = ("total_gpus", "total")
PCT_COLUMNS = ("util_pct", "utilization", "utilisation")
PLACE_COLUMNS = ("region", "cluster", "node")


def parse_utilization(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse a utilisation series; busy > total, bad numbers and unreadable times are row errors."""
    text = decode_text(data, source)
    errors = options.collector(source)
    rows = read_rows(text, source, CSV, (), TIME_COLUMNS + BUSY_COLUMNS + TOTAL_COLUMNS + PCT_COLUMNS
                     + PLACE_COLUMNS, errors)
    time_col = _pick(rows, TIME_COLUMNS)
    busy_col, total_col, pct_col = _pick(rows, BUSY_COLUMNS), _pick(rows, TOTAL_COLUMNS), _pick(rows, PCT_COLUMNS)
    if time_col is None or not (pct_col or (busy_col and total_col)):
        raise ImportRejected([RowError(source, 1, (
            "a utilisation series needs a time column (timestamp, ts or time) and either busy and total "
            "(busy_gpus/total_gpus, or Philly's active/total) or util_pct"))])
    tz = checked_zone(options.tz, source) if options.tz else None
    notes: list[str] = []
    ts = _timestamps(rows, time_col, tz, options.dst, errors, notes)
    counted = bool(busy_col and total_col)
    busy = numbers(rows, busy_col, errors, limit=UTILIZATION["busy"]) if counted else np.full(len(rows), np.nan)
    total = numbers(rows, total_col, errors, limit=UTILIZATION["total"]) if counted else np.full(len(rows), np.nan)
    check_texts(rows, PLACE_COLUMNS, errors)
    if counted:
        for i in np.flatnonzero((busy > total) & (total >= 0)):
            errors.add(rows.lines[i], f"{busy_col} {busy[i]:g} exceeds {total_col} {total[i]:g}")
        with np.errstate(divide="ignore", invalid="ignore"):
            pct = np.where(total > 0, 100 * busy / total, np.nan)
    else:
        pct = _percent(rows, pct_col, errors, notes)
    errors.raise_if_any()
    if not len(rows):
        raise ImportRejected.whole_file(source, "no data rows (header only?)")
    keep = errors.valid(rows.lines)   # all True unless the import keeps the valid rows
    ts, busy, total, pct = kept(keep, ts, busy, total, pct)
    rows = rows.where(keep)
    unit = "nodes" if busy_col == "active" else "gpus"
    table = pd.DataFrame({
        "ts_utc": ts,
        "region": rows.text("region", options.region or DEFAULT_REGION),
        "cluster": rows.text("cluster"),
        "node": rows.text("node"),
        "busy": busy,
        "total": total,
        "util_pct": pct,
        "unit": unit,
    })
    if unit == "nodes":
        notes.append("active/total count nodes (Philly's node sequence), not GPUs")
    return ImportBatch("utilization", {"utilization": table}, notes, rejects=errors.every())


def _pick(rows: Rows, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if rows.has(name)), None)


def _timestamps(rows: Rows, column: str, tz: str | None, dst: str, errors: ErrorCollector,
                notes: list[str]) -> np.ndarray:
    """Naive UTC times from ISO-8601 text (offset or naive) or epoch seconds; bad values reported."""
    text = rows.frame[column]
    empty = (text == "").to_numpy()
    parsed = parse_times(text.where(~empty, None), naive_is_utc=tz is None, tz=tz)
    for mask, template in (
        (empty | parsed.unparsable, f"{column} is not a time: {{!r}} (expected ISO-8601 or epoch seconds)"),
        (parsed.out_of_range, f"{column} is not a time: {{!r}} (epoch seconds must fall in 1970-2100)"),
    ):
        errors.add_many(rows.lines[mask], template, text[mask].to_numpy())
    check_times(parsed.values, text, f"column {column!r}", rows.lines, errors)
    clock_changes(errors, rows.lines, text, parsed.skipped, parsed.repeated, column, tz, dst, notes)
    if parsed.naive:
        notes.append(f"times without a UTC offset read as wall-clock times of {tz}" if tz else
                     "times without a UTC offset read as UTC (pass the time zone to say otherwise)")
    return parsed.values


def _percent(rows: Rows, column: str, errors: ErrorCollector, notes: list[str]) -> np.ndarray:
    """Utilisation in percent; a `utilization` column holding only fractions (<= 1) is scaled by 100."""
    values = numbers(rows, column, errors)
    if column != "util_pct" and len(values) and np.nanmax(values, initial=0) <= 1:
        notes.append(f"{column} values are all <= 1: read as fractions and multiplied by 100")
        values = values * 100
    check_numbers(values, UTILIZATION["util_pct"], f"column {column!r}", rows.lines, errors, rows.frame[column])
    return values

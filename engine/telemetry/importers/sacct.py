"""Slurm `sacct --parsable2` exports (pipe-separated, with a header line) -> jobs and regions tables.

One row per job: step rows (JobID with a '.', e.g. 123.batch, 123.0) are skipped; array and
heterogeneous job ids (123_4, 123+1) are jobs. sacct prints naive wall-clock times of the
cluster, so the import needs the cluster's time zone (`ImportOptions.tz`) to store UTC.
GPUs come from AllocTRES (gres/gpu), or from ReqTRES for jobs that were never allocated.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.model import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, ImportRejected
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.delimited import Rows, numbers, read_rows
from engine.telemetry.importers.localtime import checked_zone, local_to_utc
from engine.telemetry.importers.slurm_fields import Tres, job_state, time_limit_s, tres, workload_from_partition

REQUIRED = ("jobid", "submit", "start", "end", "state", "alloctres")
OPTIONAL = ("user", "account", "partition", "qos", "cluster", "timelimit", "priority",
            "nnodes", "ncpus", "reqtres")
# sacct's own spelling of each column, for messages.
SHOWN = {"jobid": "JobID", "submit": "Submit", "start": "Start", "end": "End", "alloctres": "AllocTRES",
         "reqtres": "ReqTRES", "timelimit": "Timelimit", "state": "State"}
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
NO_TIME = {"", "Unknown", "None"}


def parse_sacct(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse a `sacct --parsable2` export; every job's times are converted from `options.tz` to UTC."""
    text = decode_text(data, source)
    if not options.tz:
        raise ImportRejected.whole_file(
            source, "sacct timestamps are local times; pass the cluster's time zone (--tz)")
    tz = checked_zone(options.tz, source)
    errors = ErrorCollector(source)
    rows = _jobs_only(read_rows(text, source, "|", REQUIRED, OPTIONAL, errors), errors)
    frame = rows.frame
    submit = local_to_utc(_times(rows, "submit", errors, required=True), tz)
    start = local_to_utc(_times(rows, "start", errors), tz)
    end = local_to_utc(_times(rows, "end", errors), tz)
    for i in np.flatnonzero((end < start).to_numpy()):
        errors.add(rows.lines[i], f"End {frame['end'].iloc[i]} is before Start {frame['start'].iloc[i]}")
    status = _each(rows, "state", job_state, errors)
    limit = _each(rows, "timelimit", time_limit_s, errors) if rows.has("timelimit") else None
    alloc = _each(rows, "alloctres", lambda v: tres(v, "AllocTRES"), errors)
    if rows.has("reqtres"):
        requested = _each(rows, "reqtres", lambda v: tres(v, "ReqTRES"), errors)
        alloc = [r if a == Tres() else a for a, r in zip(alloc, requested)]
    priority = numbers(rows, "priority", errors, allow_empty=True) if rows.has("priority") else None
    nnodes = numbers(rows, "nnodes", errors, allow_empty=True, minimum=0) if rows.has("nnodes") else None
    ncpus = numbers(rows, "ncpus", errors, allow_empty=True, minimum=0) if rows.has("ncpus") else None
    errors.raise_if_any()
    if not len(rows):
        raise ImportRejected.whole_file(source, "no job rows (only the header, or only job steps)")

    region = options.region or DEFAULT_REGION
    jobs = pd.DataFrame({
        "source_line": rows.lines,
        "job_id": frame["jobid"],
        "user_name": _text(rows, "user"),
        "team": _text(rows, "account"),
        "workload_class": [workload_from_partition(p) for p in _text(rows, "partition")],
        "priority": priority,
        "qos": _text(rows, "qos"),
        "queue": _text(rows, "partition"),
        "submit_utc": submit,
        "start_utc": start,
        "end_utc": end,
        "gpus": [t.gpus or 0.0 for t in alloc],
        "gpu_type": [t.gpu_type for t in alloc],
        "cpus": _first_known([t.cpus for t in alloc], ncpus),
        "memory_gib": [t.memory_gib for t in alloc],
        "nodes": pd.array(_first_known([t.nodes for t in alloc], nnodes), dtype="Int64"),
        "region": region,
        "cluster": _text(rows, "cluster"),
        "status": status,
        "requested_runtime_s": limit,
    })
    notes = [f"sacct times read as wall-clock times of {tz} and stored as UTC"]
    if rows.has("reqtres"):
        notes.append("jobs without AllocTRES (never allocated, e.g. pending) take their sizes from ReqTRES")
    regions = pd.DataFrame({"region": [region], "timezone": [tz]})
    return ImportBatch("sacct", {"jobs": jobs, "regions": regions}, notes)


def _jobs_only(rows: Rows, errors: ErrorCollector) -> Rows:
    """Drop job steps (JobID containing '.') and report empty JobIDs."""
    ids = rows.frame["jobid"]
    errors.add_many(rows.lines[(ids == "").to_numpy()], "JobID is empty")
    keep = (~ids.str.contains(".", regex=False) & (ids != "")).to_numpy()
    return Rows(rows.frame[keep].reset_index(drop=True), rows.lines[keep])


def _times(rows: Rows, column: str, errors: ErrorCollector, required: bool = False) -> pd.Series:
    """Naive local times of one column (NaT for Unknown/None), reporting unreadable ones."""
    text = rows.frame[column]
    missing = text.isin(NO_TIME).to_numpy()
    parsed = pd.to_datetime(text.where(~missing, None), format=TIME_FORMAT, errors="coerce")
    for i in np.flatnonzero(~missing & parsed.isna().to_numpy()):
        errors.add(rows.lines[i], f"{SHOWN[column]} is not a time: {text.iloc[i]!r} (expected YYYY-MM-DDTHH:MM:SS)")
    if required:
        for i in np.flatnonzero(missing):
            errors.add(rows.lines[i], f"{SHOWN[column]} is {text.iloc[i]!r}; every job needs one")
    return parsed


def _each(rows: Rows, column: str, parse, errors: ErrorCollector) -> list:
    """`parse` applied to every value of a column (once per distinct value); failures reported."""
    results: dict[str, object] = {}
    for value in pd.unique(rows.frame[column]):
        try:
            results[value] = parse(value)
        except ValueError as exc:
            results[value] = exc
    out = []
    for line, value in zip(rows.lines, rows.frame[column]):
        result = results[value]
        if isinstance(result, ValueError):
            errors.add(line, str(result))
            result = None
        out.append(result)
    return out


def _text(rows: Rows, column: str) -> list:
    """An optional text column, with empty values as NULL (all NULL when the column is absent)."""
    if not rows.has(column):
        return [None] * len(rows)
    return [value or None for value in rows.frame[column]]


def _first_known(primary: list, fallback: np.ndarray | None) -> list:
    """`primary` where known, else the fallback column's value (NaN -> None)."""
    if fallback is None:
        return primary
    return [p if p is not None else (None if np.isnan(f) else f) for p, f in zip(primary, fallback)]

"""Slurm `sacct --parsable2` exports (pipe-separated, with a header line) -> jobs and regions tables.

One row per job: step rows (JobID with a '.', e.g. 123.batch, 123.0) are skipped; array and
heterogeneous job ids (123_4, 123+1) are jobs. sacct prints naive wall-clock times of the
cluster, so the import needs the cluster's time zone (`ImportOptions.tz`) to store UTC.
GPUs come from AllocTRES (gres/gpu), or from ReqTRES for jobs that were never allocated. Priority, node and
CPU counts and the text columns within the data contract (`contract.JOB_NUMBERS`, text rules).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, ImportRejected, kept
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.contract import JOB_NUMBERS
from engine.telemetry.importers.csv_records import Dialect
from engine.telemetry.importers.named_columns import Rows, check_texts, numbers, read_rows, report_empty
from engine.telemetry.importers.slurm_fields import Tres, job_state, time_limit_s, tres, workload_from_partition
from engine.telemetry.importers.timestamps import checked_zone, clock_changes, localise

REQUIRED = ("jobid", "submit", "start", "end", "state", "alloctres")
OPTIONAL = ("user", "account", "partition", "qos", "cluster", "timelimit", "priority",
            "nnodes", "ncpus", "reqtres")
# sacct's own spelling of each column, for messages.
SHOWN = {"jobid": "JobID", "submit": "Submit", "start": "Start", "end": "End", "alloctres": "AllocTRES",
         "reqtres": "ReqTRES", "timelimit": "Timelimit", "state": "State"}
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
NO_TIME = {"", "Unknown", "None"}
PIPES = Dialect("|", quoting=False)   # --parsable2 prints every value as it is, quotes included


def parse_sacct(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse a `sacct --parsable2` export; every job's times are converted from `options.tz` to UTC."""
    text = decode_text(data, source)
    if not options.tz:
        raise ImportRejected.whole_file(
            source, "sacct timestamps are local times; state the cluster's time zone (--tz on the CLI, the time-zone choice on the Data page)")
    tz = checked_zone(options.tz, source)
    errors = options.collector(source)
    rows = _jobs_only(read_rows(text, source, PIPES, REQUIRED, OPTIONAL, errors), errors)
    frame = rows.frame
    notes = [f"sacct times read as wall-clock times of {tz} and stored as UTC"]
    submit = _times(rows, "submit", tz, options.dst, errors, notes, required=True)
    start = _times(rows, "start", tz, options.dst, errors, notes)
    end = _times(rows, "end", tz, options.dst, errors, notes)
    for i in np.flatnonzero(end < start):
        errors.add(rows.lines[i], f"End {frame['end'].iloc[i]} is before Start {frame['start'].iloc[i]}")
    status = _each(rows, "state", job_state, errors)
    limit = _each(rows, "timelimit", time_limit_s, errors) if rows.has("timelimit") else None
    alloc = _each(rows, "alloctres", lambda v: tres(v, "AllocTRES"), errors)
    if rows.has("reqtres"):
        requested = _each(rows, "reqtres", lambda v: tres(v, "ReqTRES"), errors)
        alloc = [r if a == Tres() else a for a, r in zip(alloc, requested)]
    priority, nnodes, ncpus = (numbers(rows, column, errors, allow_empty=True, limit=JOB_NUMBERS[job_column])
                               if rows.has(column) else None
                               for column, job_column in (("priority", "priority"), ("nnodes", "nodes"), ("ncpus", "cpus")))
    check_texts(rows, ("jobid", "user", "account", "partition", "qos", "cluster"), errors)
    errors.raise_if_any()
    if not len(rows):
        raise ImportRejected.whole_file(source, "no job rows (only the header, or only job steps)")
    keep = errors.valid(rows.lines)   # all True unless the import keeps the valid rows
    submit, start, end, status, limit, alloc, priority, nnodes, ncpus = kept(
        keep, submit, start, end, status, limit, alloc, priority, nnodes, ncpus)
    rows = rows.where(keep)
    frame = rows.frame

    region = options.region or DEFAULT_REGION
    jobs = pd.DataFrame({
        "source_line": rows.lines,
        "job_id": frame["jobid"],
        "user_name": rows.text("user"),
        "team": rows.text("account"),
        "workload_class": [workload_from_partition(p) for p in rows.text("partition")],
        "priority": priority,
        "qos": rows.text("qos"),
        "queue": rows.text("partition"),
        "submit_utc": submit,
        "start_utc": start,
        "end_utc": end,
        "gpus": [t.gpus or 0.0 for t in alloc],
        "gpu_type": [t.gpu_type for t in alloc],
        "cpus": _first_known([t.cpus for t in alloc], ncpus),
        "memory_gib": [t.memory_gib for t in alloc],
        "nodes": pd.array(_first_known([t.nodes for t in alloc], nnodes), dtype="Int64"),
        "region": region,
        "cluster": rows.text("cluster"),
        "status": status,
        "requested_runtime_s": limit,
    })
    if rows.has("reqtres"):
        notes.append("jobs without AllocTRES (never allocated, e.g. pending) take their sizes from ReqTRES")
    regions = pd.DataFrame({"region": [region], "timezone": [tz]})
    return ImportBatch("sacct", {"jobs": jobs, "regions": regions}, notes, rejects=errors.every())


def _jobs_only(rows: Rows, errors: ErrorCollector) -> Rows:
    """Drop job steps (JobID containing '.') and report empty JobIDs."""
    report_empty(rows, "jobid", errors, SHOWN["jobid"])
    ids = rows.frame["jobid"]
    return rows.where((~ids.str.contains(".", regex=False) & (ids != "")).to_numpy())


def _times(rows: Rows, column: str, tz: str, dst: str, errors: ErrorCollector, notes: list[str],
           required: bool = False) -> np.ndarray:
    """One column's wall-clock times of zone `tz` as naive UTC (NaT for Unknown/None).

    Reports unreadable times; times a clock change skipped or repeated by the import's rule `dst`.
    """
    text, label = rows.frame[column], SHOWN[column]
    missing = text.isin(NO_TIME).to_numpy()
    wall = pd.to_datetime(text.where(~missing, None), format=TIME_FORMAT, errors="coerce").to_numpy()
    bad = ~missing & np.isnat(wall)
    errors.add_many(rows.lines[bad], f"{label} is not a time: {{!r}} (expected YYYY-MM-DDTHH:MM:SS)",
                    text[bad].to_numpy())
    if required:
        errors.add_many(rows.lines[missing], f"{label} is {{!r}}; every job needs one", text[missing].to_numpy())
    utc, skipped, repeated = localise(wall, tz)
    clock_changes(errors, rows.lines, text, skipped, repeated, label, tz, dst, notes)
    return utc


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


def _first_known(primary: list, fallback: np.ndarray | None) -> list:
    """`primary` where known, else the fallback column's value (NaN -> None)."""
    if fallback is None:
        return primary
    return [p if p is not None else (None if np.isnan(f) else f) for p, f in zip(primary, fallback)]

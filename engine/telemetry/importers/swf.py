"""Standard Workload Format (Parallel Workloads Archive) -> jobs, fleet and regions tables.

SWF logs come from CPU clusters. Meridian treats each processor as one schedulable slot:
gpus = cpus = processors (allocated, else requested), gpu_type 'cpu'. Times are seconds from
the header's UnixStartTime; -1 means unknown and becomes NULL. Every field within the data contract
(`contract.SWF_FIELDS`), each problem on its line. Parsing is vectorised (pandas'
C reader over the job lines); only when that fails does a line-by-line pass locate the errors.
"""
from __future__ import annotations

import io
import math
import re

import numpy as np
import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError, kept
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.contract import MAX_SLOTS, SWF_FIELDS, check_numbers
from engine.telemetry.importers.swf_header import SwfHeader, fleet_table
from engine.telemetry.importers.timestamps import checked_zone

FIELDS = tuple(SWF_FIELDS)   # the 18 field names, in order
# 0-based column of each field Meridian reads (field k of the SWF spec is column k - 1).
JOB, SUBMIT, WAIT, RUN, ALLOC, REQ_PROCS, REQ_TIME, STATUS, USER, GROUP, QUEUE = 0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 14
# SWF status codes (the contract allows -1 to 5); 2-4 are parts of a checkpointed job: 2 = interrupted and
# continued later, 3 = last part, completed, 4 = last part, failed.
STATUSES = {1: "completed", 0: "failed", 5: "cancelled", 2: "preempted", 3: "completed", 4: "failed"}
LAST_S = 4_102_444_800  # 2100-01-01 00:00 UTC: no job may end later
# A comment, blank or whitespace-only line after the first job line.
_IRREGULAR = re.compile(r"\n[ \t\r]*(;|\n|$)")


def parse_swf(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """Parse an SWF log (plain or gzip) into jobs, a fleet of processor slots and the region's zone."""
    text = decode_text(data, source)
    comments, body, lines = _split(text)
    if not body:
        raise ImportRejected.whole_file(source, "no job lines after the header")
    errors = options.collector(source)
    values = _read_fast(body, len(lines))
    if values is None:
        values = _read_slow(body, lines, errors)
    header = SwfHeader.parse(comments)
    if max(header.max_procs or 0, header.max_nodes or 0) > MAX_SLOTS:
        raise _header_problem(text, source, "MaxNodes|MaxProcs", f"the header's MaxNodes / MaxProcs ("
                              f"{header.max_nodes} / {header.max_procs}) exceed the {MAX_SLOTS:,} a fleet may have")
    if not 0 <= (header.unix_start_s or 0) < LAST_S:
        raise _header_problem(text, source, "UnixStartTime", f"the header's UnixStartTime ({header.unix_start_s}) "
                                                             "is outside 1970-2100")
    _check(values, lines, header.unix_start_s or 0, errors)
    errors.raise_if_any()
    values, lines = kept(errors.valid(lines), values, lines)   # all rows unless the import keeps the valid ones
    if not len(lines):
        raise ImportRejected(errors.reported(), errors.total)
    region = options.region or DEFAULT_REGION
    notes = ["SWF logs describe CPU clusters: each processor is treated as one slot "
             "(gpus = cpus = processors, gpu type 'cpu')"]
    procs = np.where(values[:, ALLOC] >= 0, values[:, ALLOC], values[:, REQ_PROCS])
    max_procs, max_nodes = header.max_procs, header.max_nodes
    if max_procs is None:
        max_procs = max_nodes = max(1, int(procs.max()))
        notes.append(f"no MaxNodes/MaxProcs header: fleet sized to the largest job ({max_procs} processors)")
    jobs = _jobs(values, lines, procs, max(1.0, max_procs / max_nodes), header, region, notes)
    tables = {"jobs": jobs, "fleet": fleet_table(max_nodes, max_procs, region)}
    notes.append(f"fleet: {max_nodes} nodes with {max_procs} processors in all, tier 'reserved' "
                 "(on-premise hardware is paid for whether used or not)")
    tz = checked_zone(options.tz, source) if options.tz else header.timezone
    if options.tz and header.timezone and options.tz != header.timezone:
        notes.append(f"time zone {options.tz} given for the import overrides the log's {header.timezone}")
    elif not options.tz and header.timezone_note:
        notes.append(header.timezone_note)
    if tz:
        tables["regions"] = pd.DataFrame({"region": [region], "timezone": [tz]})
    return ImportBatch("swf", tables, notes, scheduler=header.scheduler, rejects=errors.every())


def _header_problem(text: str, source: str, keys: str, reason: str) -> ImportRejected:
    """The refusal of a header value, on the line of the first `; Key:` comment naming one of `keys` (a|b)."""
    match = re.search(rf"^[ \t]*;[ \t]*(?:{keys})[ \t]*:", text, re.IGNORECASE | re.MULTILINE)
    return ImportRejected([RowError(source, text.count("\n", 0, match.start()) + 1 if match else 0, reason)])


def _split(text: str) -> tuple[list[str], str, np.ndarray]:
    """(header comment lines, job lines joined by newlines, 1-based line number of each job line).

    Logs put every comment before the first job; then the job lines are one slice of the text
    and need no per-line work. Comments or blank lines among the jobs take the slower path.
    """
    comments, offset, number = [], 0, 1
    for number, line in enumerate(_lines(text), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(";"):
            break
        if stripped:
            comments.append(stripped)
        offset += len(line)
    tail = text[offset:].rstrip()
    if not tail:
        return comments, "", np.zeros(0, dtype=np.int64)
    if not _IRREGULAR.search(tail):
        count = tail.count("\n") + 1
        return comments, tail, np.arange(number, number + count, dtype=np.int64)
    body, numbers = [], []
    for extra, line in enumerate(tail.split("\n")):
        stripped = line.strip()
        if stripped.startswith(";"):
            comments.append(stripped)
        elif stripped:
            body.append(stripped)
            numbers.append(number + extra)
    return comments, "\n".join(body), np.asarray(numbers, dtype=np.int64)


def _lines(text: str):
    """Each line of `text` with its line end, one at a time (io.StringIO would copy the whole text at four
    bytes a character)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start) + 1 or len(text)
        yield text[start:end]
        start = end


def _read_fast(body: str, count: int) -> np.ndarray | None:
    """All `count` job lines as an (n, 18) float array, or None when any line is malformed. The reader gets
    the lines as UTF-8 bytes: from a str it would hold a copy at four bytes a character."""
    try:
        frame = pd.read_csv(io.BytesIO(body.encode()), sep=r"\s+", header=None, dtype=np.float64,
                            engine="c", skip_blank_lines=False)
    except (ValueError, pd.errors.ParserError):
        return None
    values = frame.to_numpy()
    if values.shape != (count, len(FIELDS)) or not np.isfinite(values).all():
        return None
    return values


def _read_slow(body: str, lines: np.ndarray, errors: ErrorCollector) -> np.ndarray:
    """Line-by-line parse that reports the first problem of every malformed line."""
    values = np.full((len(lines), len(FIELDS)), np.nan)
    for i, line in enumerate(body.split("\n")):
        parts = line.split()
        if len(parts) != len(FIELDS):
            errors.add(lines[i], f"expected {len(FIELDS)} numeric fields, found {len(parts)}")
            continue
        for k, part in enumerate(parts):
            try:
                number = float(part)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                errors.add(lines[i], f"field {k + 1} ({FIELDS[k]}) is not a number: {part!r}")
                break
            values[i, k] = number
    return values


def _check(values: np.ndarray, lines: np.ndarray, base_s: int, errors: ErrorCollector) -> None:
    """Report every field outside the data contract (contract.SWF_FIELDS: the standard's ranges, -1 meaning
    unknown), jobs with no processor count, and jobs that would end after 2100 (the log's UnixStartTime + submit
    + wait + run time). Lines that did not parse (NaN rows) were reported already and are skipped here."""
    for k, (name, limit) in enumerate(SWF_FIELDS.items()):
        check_numbers(values[:, k], limit, f"field {k + 1} ({name})", lines, errors, None)
    both = np.flatnonzero((values[:, ALLOC] == -1) & (values[:, REQ_PROCS] == -1))
    errors.add_many(lines[both], "fields 5 and 8 (allocated and requested processors) are both unknown (-1)")
    end = base_s + values[:, SUBMIT] + np.maximum(values[:, WAIT], 0) + np.maximum(values[:, RUN], 0)
    for i in np.flatnonzero(end >= LAST_S):
        errors.add(lines[i], f"the job would end after 2100: submit time {values[i, SUBMIT]:g} + wait time "
                             f"{values[i, WAIT]:g} + run time {values[i, RUN]:g} s after the log's start")


def _jobs(values: np.ndarray, lines: np.ndarray, procs: np.ndarray, procs_per_node: float,
          header: SwfHeader, region: str, notes: list[str]) -> pd.DataFrame:
    """The jobs table; appends to `notes` every assumption it makes."""
    if header.unix_start_s is None:
        notes.append("no UnixStartTime header: submit times are counted from 1970-01-01 00:00 UTC")
    base = header.unix_start_s or 0
    submit = base + np.rint(values[:, SUBMIT]).astype(np.int64)
    wait, run = values[:, WAIT], values[:, RUN]
    status = _statuses(values[:, STATUS], run, notes)
    # A job cancelled with no run time never started: its wait is how long its user waited before
    # withdrawing it (SWF's definition), so it is stored with no start and that moment as its end.
    withdrawn = (values[:, STATUS] == 5) & (run < 0) & (wait >= 0)
    if withdrawn.any():
        notes.append(f"{int(withdrawn.sum())} job(s) cancelled before they started (status 5, no run time): "
                     "stored with no start, ending when they were withdrawn (submit + wait)")
    start = submit + np.rint(np.maximum(wait, 0)).astype(np.int64)
    end = np.where(withdrawn, start, start + np.rint(np.maximum(run, 0)).astype(np.int64))
    return pd.DataFrame({
        "source_line": lines,
        "job_id": _ids(values[:, JOB], ""),
        "user_name": _ids(values[:, USER], "u"),
        "team": _teams(values[:, USER], values[:, GROUP], notes),
        "workload_class": "unknown",
        "queue": _ids(values[:, QUEUE], "q"),
        "submit_utc": _seconds_to_times(submit, np.ones(len(submit), dtype=bool)),
        "start_utc": _seconds_to_times(start, (wait >= 0) & ~withdrawn),
        "end_utc": _seconds_to_times(end, (wait >= 0) & ((run >= 0) | withdrawn)),
        "gpus": procs,
        "gpu_type": "cpu",
        "cpus": procs,
        "nodes": np.ceil(procs / procs_per_node - 1e-9).astype(np.int64),
        "region": region,
        "status": status,
        "requested_runtime_s": np.where(values[:, REQ_TIME] >= 0, values[:, REQ_TIME], np.nan),
    })


def _teams(users: np.ndarray, groups: np.ndarray, notes: list[str]) -> pd.Series:
    """A team per job: its group ('g<id>') when the log records groups, else its user ('u<id>'), so that
    the fairness measures compare the log's real groups or users, not one team of everyone."""
    by_group, by_user = _ids(groups, "g"), _ids(users, "u")
    if (groups >= 0).any():
        fallback = int(((groups < 0) & (users >= 0)).sum())
        if fallback:
            notes.append(f"{fallback} job(s) without a group (-1) take their user as their team")
        return by_group.where(groups >= 0, by_user)
    notes.append("the log records no groups (-1): each user is a team (user id u<N>)")
    return by_user


def _ids(column: np.ndarray, prefix: str) -> pd.Series:
    """'<prefix><integer>' per value; NULL where the value is -1 (unknown)."""
    text = pd.Series(np.where(column >= 0, column, 0).astype(np.int64)).astype(str)
    if prefix:
        text = prefix + text
    return text.where(column >= 0, None)


def _seconds_to_times(seconds: np.ndarray, known: np.ndarray) -> pd.Series:
    """Epoch seconds -> naive UTC datetimes, NaT where not `known`."""
    stamps = seconds.astype("datetime64[s]")
    stamps[~known] = np.datetime64("NaT")
    return pd.Series(stamps)


def _statuses(codes: np.ndarray, run: np.ndarray, notes: list[str]) -> np.ndarray:
    """Meridian status per SWF code. Unknown (-1) is 'completed' when the run time is known, else 'cancelled'."""
    names = np.full(len(codes), "completed", dtype=object)
    for code, name in STATUSES.items():
        names[codes == code] = name
    unknown = codes == -1
    names[unknown & (run < 0)] = "cancelled"
    ran, never = int((unknown & (run >= 0)).sum()), int((unknown & (run < 0)).sum())
    if ran:
        notes.append(f"status unknown (-1) for {ran} job(s) with a run time: stored as completed")
    if never:
        notes.append(f"status and run time both unknown (-1) for {never} job(s): stored as cancelled")
    partial = int(np.isin(codes, [2, 3, 4]).sum())
    if partial:
        notes.append(f"{partial} records are parts of checkpointed jobs (status 2-4): interrupted parts are "
                     "stored as preempted, last parts as completed or failed")
    return names

"""The job lines of an SWF log (or of one piece of it, importers.swf) -> checked values -> the jobs table.

Each processor is one schedulable slot: gpus = cpus = processors (allocated, else requested), gpu_type 'cpu'.
Times are seconds from the header's UnixStartTime; -1 means unknown and becomes NULL. Every field within the
data contract (`contract.SWF_FIELDS`), each problem on its line. Parsing is vectorised (pyarrow over the job
lines); only when that fails does a line-by-line pass locate the errors. The notes that count jobs are
CountedNotes, always made (a count of 0 is dropped once the pieces' notes are merged), so that merged notes
keep one order whatever pieces hold which jobs.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from engine.telemetry.errors import ErrorCollector
from engine.telemetry.importers.common import CountedNote
from engine.telemetry.importers.contract import SWF_FIELDS, check_numbers
from engine.telemetry.importers.swf_header import SwfHeader

FIELDS = tuple(SWF_FIELDS)   # the 18 field names, in order
# 0-based column of each field Meridian reads (field k of the SWF spec is column k - 1).
JOB, SUBMIT, WAIT, RUN, ALLOC, REQ_PROCS, REQ_TIME, STATUS, USER, GROUP, QUEUE = 0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 14
# SWF status codes (the contract allows -1 to 5); 2-4 are parts of a checkpointed job: 2 = interrupted and
# continued later, 3 = last part, completed, 4 = last part, failed.
STATUSES = {1: "completed", 0: "failed", 5: "cancelled", 2: "preempted", 3: "completed", 4: "failed"}
LAST_S = 4_102_444_800  # 2100-01-01 00:00 UTC: no job may end later
# A comment, blank or whitespace-only line after the first job line.
EMPTY = pa.scalar("", pa.large_string())  # the separator of a prefix and its id
_IRREGULAR = re.compile(r"\n[ \t\r]*(;|\n|$)")


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
    """All `count` job lines as an (n, 18) float array, or None when any line is malformed. pyarrow splits
    each line at ASCII whitespace and casts every field to a double in one pass (correctly rounded, the
    values pandas' C reader gives, in about two thirds of its time); the array is a writable copy, column by
    column (as pandas' was) for the checks' column scans. Each step's text is dropped once the next is made
    (a log's text is at most 1 GiB, so 32-bit offsets hold it), and the memory handed back to the system."""
    lines = pc.split_pattern(pa.array([body], pa.string()), "\n").values
    if len(lines) != count:
        return None
    fields = pc.ascii_split_whitespace(pc.ascii_trim_whitespace(lines))
    del lines
    if not pc.all(pc.equal(pc.list_value_length(fields), len(FIELDS))).as_py():
        return None
    try:
        values = pc.cast(pc.list_flatten(fields), pa.float64())
    except pa.ArrowInvalid:
        return None
    del fields
    values = np.array(values.to_numpy().reshape(count, len(FIELDS)), order="F")
    pa.default_memory_pool().release_unused()  # pyarrow's pool would keep what the steps used, at the run's peak
    return values if np.isfinite(values).all() else None


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
    """The jobs table; appends to `notes` every assumption it makes (counted ones even with a count of 0)."""
    if header.unix_start_s is None:
        notes.append("no UnixStartTime header: submit times are counted from 1970-01-01 00:00 UTC")
    base = header.unix_start_s or 0
    submit = base + np.rint(values[:, SUBMIT]).astype(np.int64)
    wait, run = values[:, WAIT], values[:, RUN]
    status = _statuses(values[:, STATUS], run, notes)
    # A job cancelled with no run time never started: its wait is how long its user waited before
    # withdrawing it (SWF's definition), so it is stored with no start and that moment as its end.
    withdrawn = (values[:, STATUS] == 5) & (run < 0) & (wait >= 0)
    notes.append(CountedNote("{count} job(s) cancelled before they started (status 5, no run time): stored with "
                             "no start, ending when they were withdrawn (submit + wait)", int(withdrawn.sum())))
    start = submit + np.rint(np.maximum(wait, 0)).astype(np.int64)
    end = np.where(withdrawn, start, start + np.rint(np.maximum(run, 0)).astype(np.int64))
    return pd.DataFrame({
        "source_line": lines,
        "job_id": _ids(values[:, JOB], ""),
        "user_name": _ids(values[:, USER], "u"),
        "team": _teams(values[:, USER], values[:, GROUP]),
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


def _teams(users: np.ndarray, groups: np.ndarray) -> pd.Series:
    """A team per job: its group ('g<id>') when the log records groups, else its user ('u<id>'), so that
    the fairness measures compare the log's real groups or users, not one team of everyone (team_note says
    which, once every piece of the log is read)."""
    return pd.Series(pc.if_else(pa.array(groups >= 0), _id_text(groups, "g"), _id_text(users, "u")), dtype="str")


def team_counts(values: np.ndarray) -> np.ndarray:
    """(jobs with a group, jobs without a group but with a user) of the rows `values`, for team_note."""
    groups, users = values[:, GROUP], values[:, USER]
    return np.array([int((groups >= 0).sum()), int(((groups < 0) & (users >= 0)).sum())], dtype=np.int64)


def team_note(counts: np.ndarray) -> str | None:
    """The note on teams of a log whose jobs have `counts` (team_counts, summed over its pieces)."""
    grouped, fallback = (int(count) for count in counts)
    if not grouped:
        return "the log records no groups (-1): each user is a team (user id u<N>)"
    return f"{fallback} job(s) without a group (-1) take their user as their team" if fallback else None


def _ids(column: np.ndarray, prefix: str) -> pd.Series:
    """'<prefix><integer>' per value; NULL where the value is -1 (unknown)."""
    return pd.Series(_id_text(column, prefix), dtype="str")


def _id_text(column: np.ndarray, prefix: str) -> pa.Array:
    """`_ids` as a pyarrow array, the integers written by pyarrow's cast: every job id, but each distinct
    user, group or queue (a log has few) once, with its prefix, then taken for every job."""
    known = column >= 0
    ids = np.where(known, column, 0).astype(np.int64)
    if not prefix:
        return pc.cast(pa.array(ids, mask=~known), pa.large_string())
    codes, distinct = pd.factorize(ids)
    text = pc.binary_join_element_wise(pa.scalar(prefix, pa.large_string()),
                                       pc.cast(pa.array(distinct), pa.large_string()), EMPTY)
    return text.take(pa.array(codes, mask=~known))


def _seconds_to_times(seconds: np.ndarray, known: np.ndarray) -> pd.Series:
    """Epoch seconds -> naive UTC datetimes, NaT where not `known`."""
    stamps = seconds.astype("datetime64[s]")
    stamps[~known] = np.datetime64("NaT")
    return pd.Series(stamps)


def _statuses(codes: np.ndarray, run: np.ndarray, notes: list[str]) -> pd.Series:
    """Meridian status per SWF code. Unknown (-1) is 'completed' when the run time is known, else 'cancelled'."""
    names = list(dict.fromkeys(["completed", *STATUSES.values()]))
    index = np.zeros(len(codes), dtype=np.int64)
    for code, name in STATUSES.items():
        index[codes == code] = names.index(name)
    unknown = codes == -1
    index[unknown & (run < 0)] = names.index("cancelled")
    ran, never = int((unknown & (run >= 0)).sum()), int((unknown & (run < 0)).sum())
    notes.append(CountedNote("status unknown (-1) for {count} job(s) with a run time: stored as completed", ran))
    notes.append(CountedNote("status and run time both unknown (-1) for {count} job(s): stored as cancelled", never))
    notes.append(CountedNote("{count} records are parts of checkpointed jobs (status 2-4): interrupted parts are "
                             "stored as preempted, last parts as completed or failed",
                             int(np.isin(codes, [2, 3, 4]).sum())))
    return pd.Series(pa.array(names, pa.large_string()).take(pa.array(index)), dtype="str")

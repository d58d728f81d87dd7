"""Vectorised validation and normalisation of a text jobs table into the schema's typed columns.

Any job importer can hand `normalise_jobs` a DataFrame whose columns are Meridian job
column names (see `batch.JOB_COLUMNS`) holding text, plus the physical source line of each
row. It returns the typed table for `ImportBatch.tables["jobs"]`, or raises `ImportRejected`
listing every problem (first 100 in line order, plus the total).

Rules (units as in the schema):
- text: surrounding whitespace removed; empty -> NULL; otherwise stored exactly as written
  (a value such as "=HYPERLINK(...)" is data, never evaluated).
- job_id, submit_utc, gpus are required per row; job ids must be unique within the file.
- depends_on (optional: the job id of the job a job waits for, a staged workflow) names a job of the same
  file, not the job itself, and no chain of them loops back (engine.core.chain_links: a cycle names the
  lines of all its jobs); checkpoint_gb (GB its predecessor hands over) is within its contract.
- times: see `timestamps.parse_times`; start must not precede submit, end must not precede
  start (or submit when there is no start).
- every column within the data contract (`contract`: type, unit, range; times 1970-2100, text at most
  256 characters without control characters but tab, LF and CR).
- numbers: gpus, cpus, memory_gib, data_size_gb, requested_runtime_s >= 0 (fractional GPUs
  allowed); nodes and gpu_milli whole numbers, gpu_milli at most 1000.
  requested_runtime_s also accepts [D-]HH:MM:SS.
- measured GPU use (optional; NULL when absent): gpu_util_pct 0-100 (percent of the job's GPUs);
  gpus_used_max >= 0 and at most the job's gpus; gpus_used_pct (GPUs busy in percent of one GPU,
  Alibaba PAI's gpu_wrk_util) >= 0 and at most 100 x gpus, stored as gpu_util_pct = gpus_used_pct
  / gpus (NULL for a job without GPUs); measured host memory memory_used_gib_max (GiB, the job's
  peak over its nodes) 0-10,000,000, not bounded by memory_gib (a request the scheduler did not enforce).
- status and workload class: case-insensitive, with the aliases in `columns`. A missing
  status is derived: completed when the job has an end, running when it only has a start,
  pending otherwise. A missing workload class is 'unknown'; a missing region is
  `options.region` or DEFAULT_REGION.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from engine.core.chain_links import links
from engine.core.vocabulary import DEFAULT_REGION, JOB_STATUSES, WORKLOAD_CLASSES
from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError
from engine.telemetry.importers.columns import STATUS_ALIASES, WORKLOAD_CLASS_ALIASES, value_lookup
from engine.telemetry.importers.common import CountedNote, ImportOptions
from engine.telemetry.importers.contract import (
    JOB_NUMBERS,
    TEXT_COLUMNS,
    TIME_COLUMNS,
    check_numbers,
    check_text,
    check_times,
)
from engine.telemetry.importers.derived_columns import end_from_elapsed, expand_tres
from engine.telemetry.importers.job_ids import SeenIds
from engine.telemetry.importers.slurm_fields import NO_LIMIT, job_state
from engine.telemetry.importers.timestamps import (
    checked_zone,
    clock_changes,
    parse_times,
    text_to_float,
)

_CLOCK = r"(?:([0-9]+)-)?([0-9]+):([0-9]{2}):([0-9]{2})"  # RE2-friendly: no \d
_STATUS = value_lookup(STATUS_ALIASES)
_CLASS = value_lookup(WORKLOAD_CLASS_ALIASES)


@dataclass
class AcrossChunks:
    """What the rules over a whole file remember between its chunks: the job ids seen, and the first line of
    each time column (by label) whose naive values lack a zone."""

    seen: SeenIds = field(default_factory=SeenIds)
    unzoned: dict[str, int] = field(default_factory=dict)
    chained: list[tuple[pd.Series, pd.Series, np.ndarray]] = field(default_factory=list)  # depends_on per chunk

    def finish(self, errors: ErrorCollector, labels: dict[str, str]) -> None:
        """Once every chunk is read: the one problem of unzoned times and the depends_on links over the whole
        file, then reject the file if it has any."""
        order = [labels[c] for c in TIME_COLUMNS if c in labels and labels[c] in self.unzoned]
        report_unzoned(errors, {label: self.unzoned[label] for label in order})
        if self.chained:
            ids, named = (pd.concat([part[k] for part in self.chained], ignore_index=True) for k in (0, 1))
            lines = np.concatenate([part[2] for part in self.chained])
            _chain_links(ids, named, lines, labels.get("depends_on", "depends_on"), errors)
        errors.raise_if_any()


def clean_text(values: pd.Series) -> pd.Series:
    """Text with surrounding whitespace removed and empty strings as missing (NaN)."""
    trimmed = pc.utf8_trim_whitespace(pa.array(values.astype("str"), from_pandas=True))
    empty = pc.equal(trimmed, "")
    if pc.any(empty).as_py():
        trimmed = pc.if_else(empty, pa.scalar(None, trimmed.type), trimmed)
    return pd.Series(trimmed.to_pandas(), index=values.index, dtype="str")


def _chain_links(ids: pd.Series, named: pd.Series, lines: np.ndarray, label: str, errors: ErrorCollector) -> None:
    """Report every depends_on that names no job of the file, its own job, or closes a cycle (at each line of it)."""
    _, problems = links(ids.to_numpy(object), named, lines)
    for found, reason in problems:
        for line in found:
            errors.add(line, f"{reason} (column {label!r})")


def _numbers(text: pd.Series, column: str, label: str, lines: np.ndarray, errors: ErrorCollector) -> np.ndarray:
    """Parse one numeric column and check it against its contract (JOB_NUMBERS); NaN where missing or rejected."""
    if column == "requested_runtime_s":   # Slurm's UNLIMITED, Partition_Limit: no limit stated
        text = text.where(~text.str.upper().isin(NO_LIMIT), None)
    present = text.notna().to_numpy()
    values = text_to_float(text) + 0.0  # a new array; also turns -0 into 0
    if column == "requested_runtime_s":
        clock = text.str.fullmatch(_CLOCK).to_numpy(dtype=bool, na_value=False)
        if clock.any():
            parts = text[clock].str.extract(_CLOCK).astype(float).fillna(0).to_numpy()
            values[clock] = parts @ np.array([86400.0, 3600.0, 60.0, 1.0])
    what = "GPUs" if column == "gpus" else "value"
    bad = present & ~np.isfinite(values)
    errors.add_many(lines[bad], f"non-numeric {what} {{!r}} in column {label!r}", text[bad].to_numpy())
    values[bad] = np.nan  # reported: an infinity must not reach the whole-number columns' Int64 cast
    check_numbers(values, JOB_NUMBERS[column], f"column {label!r}", lines, errors, text.to_numpy(), what)
    return values


def _vocabulary(text: pd.Series, lookup: dict[str, str], choices, what: str, lines,
                errors) -> tuple[np.ndarray, list[str | None]]:
    """Map spellings to canonical values, as (codes, values): codes index values, -1 where
    the text is missing; values are None for unknown spellings, which are reported."""
    codes, uniques = pd.factorize(text)
    mapped = [lookup.get(str(u).lower()) or (_slurm_state(str(u)) if lookup is _STATUS else None) for u in uniques]
    unknown = [k for k, m in enumerate(mapped) if m is None]
    if unknown:
        bad = np.isin(codes, unknown)
        errors.add_many(lines[bad], f"unknown {what} {{!r}}; expected one of {', '.join(choices)}",
                        text[bad].to_numpy())
    return codes, mapped


def _slurm_state(value: str) -> str | None:
    """A Slurm job state ('CANCELLED by 123', 'OUT_OF_MEMORY', 'NODE_FAIL') as a status, None when it is not one."""
    try:
        return job_state(value)
    except ValueError:
        return None


def _fill(codes: np.ndarray, values: list, fallback: np.ndarray | str) -> pd.Series:
    """Text column from vocabulary codes; rows with code -1 or an unknown value take `fallback`
    (one string, or one per row). Built by index lookups, without per-row Python objects."""
    table = pa.array(values + [None], type=pa.string())
    picked = table.take(pa.array(np.where(codes < 0, len(values), codes)))
    filled = pc.if_else(picked.is_null(), pa.array(fallback) if isinstance(fallback, np.ndarray) else fallback,
                        picked)
    return pd.Series(filled.to_pandas(), dtype="str")


def _duplicates(ids: pd.Series, label: str, lines: np.ndarray, errors: ErrorCollector,
                seen: SeenIds | None = None) -> None:
    """Report every repeat of a job id, naming the line where it first appeared (in this table, or in the
    chunks `seen` before it, which learns this table's new ids)."""
    codes, uniques = pd.factorize(ids)
    valid = np.flatnonzero(codes >= 0)
    if not len(valid) or (seen is None and np.bincount(codes[valid]).max() < 2):
        return
    _, first = np.unique(codes[valid], return_index=True)  # codes are 0..k-1, so first[code]
    first_pos = valid[first]
    first_line = lines[first_pos]
    repeat = first_pos[codes[valid]] != valid
    if seen is not None:
        values = np.asarray(uniques, dtype=object)
        earlier = seen.first_lines(values, first_line)
        new = earlier < 0
        first_line = np.where(new, first_line, earlier)
        repeat |= ~new[codes[valid]]
    dup = valid[repeat]
    errors.add_many(lines[dup], f"duplicate job id {{!r}} in column {label!r} (first on line {{!r}})",
                    list(zip(ids.iloc[dup].to_numpy(), first_line[codes[dup]].tolist())))


def _times(text: dict[str, pd.Series], labels, lines, errors, options, naive_utc, notes,
           across: AcrossChunks | None = None) -> dict:
    """Parse every time column present; one error for all naive values lacking a zone."""
    times, unzoned = {}, []
    for column in TIME_COLUMNS:
        if column not in text:
            continue
        label = labels[column]
        parsed = parse_times(text[column], naive_is_utc=column in naive_utc, tz=options.tz)
        for mask, template in (
            (parsed.unparsable, f"unparsable time {{!r}} in column {label!r}"),
            (parsed.out_of_range, f"epoch seconds {{!r}} in column {label!r} are outside 1970-2100"),
        ):
            errors.add_many(lines[mask], template, text[column][mask].to_numpy())
        check_times(parsed.values, text[column], f"column {label!r}", lines, errors)
        if parsed.naive_unzoned.any():
            unzoned.append((int(lines[parsed.naive_unzoned].min()), label))
        clock_changes(errors, lines, text[column], parsed.skipped, parsed.repeated, label, options.tz, options.dst,
                      notes)
        times[column] = parsed.values
    if across is not None:
        for line, label in unzoned:
            across.unzoned[label] = min(line, across.unzoned.get(label, line))
    else:
        report_unzoned(errors, {label: line for line, label in unzoned})
    return times


def report_unzoned(errors: ErrorCollector, unzoned: dict[str, int]) -> None:
    """One problem for every naive time lacking a zone (`unzoned`: column label -> first such line, in column
    order), on the first such line; ImportRejected at once for a tolerant import."""
    if not unzoned:
        return
    names = ", ".join(repr(label) for label in unzoned)
    plural = "s" if len(unzoned) > 1 else ""
    problem = RowError(errors.file, min(unzoned.values()), f"timestamps in column{plural} {names} have no time "
                       "zone; state it (--tz Europe/Berlin on the CLI, the time-zone choice on the Data page) or add "
                       "an offset")
    if errors.tolerant:   # a problem of the file, not of its rows: no row can be imported without a zone
        raise ImportRejected([problem])
    errors.add(problem.line, problem.reason)


def _order(times, text, labels, lines, errors) -> None:
    """Report times out of order: (later column, earlier column, check only when this one is empty)."""
    checks = [("start_utc", "submit_utc", None), ("end_utc", "start_utc", None),
              ("end_utc", "submit_utc", "start_utc")]
    for later, earlier, unless in checks:
        if later not in times or earlier not in times:
            continue
        bad = times[later] < times[earlier]  # NaT compares False
        if unless in times:
            bad &= np.isnat(times[unless])
        errors.add_many(lines[bad], f"{labels[later]} {{!r}} is before {labels[earlier]} {{!r}}",
                        list(zip(text[later][bad].to_numpy(), text[earlier][bad].to_numpy())))


def normalise_jobs(raw: pd.DataFrame, lines, source: str, options: ImportOptions, *,
                   labels: dict[str, str] | None = None, naive_utc: Collection[str] = (),
                   errors: ErrorCollector | None = None,
                   across: AcrossChunks | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Text jobs table -> (typed jobs table, notes); raises ImportRejected on any problem (a tolerant
    `errors` leaves the rows with a problem out instead).

    lines: physical source line of each row. labels: column -> name shown in messages
    (default: the column name). naive_utc: time columns whose naive values are UTC.
    errors: errors found earlier (e.g. malformed rows), reported together with these.
    across: `raw` is one chunk of a file read in chunks: job ids are checked against the earlier chunks', and
    nothing is raised (the caller raises once the last chunk is read: AcrossChunks.finish).
    """
    missing = [c for c in ("job_id", "submit_utc") if c not in raw.columns]
    if missing or ("gpus" not in raw.columns and "tres" not in raw.columns):
        raise ValueError(f"normalise_jobs needs columns job_id, submit_utc and gpus (or tres), got {list(raw.columns)}")
    raw = raw.reset_index(drop=True)
    if options.tz:
        checked_zone(options.tz, source)
    errors = errors if errors is not None else options.collector(source)
    lines = np.asarray(lines, dtype=np.int64)
    labels = {c: (labels or {}).get(c, c) for c in raw.columns}
    text = {c: clean_text(raw[c]) for c in raw.columns}
    notes: list[str] = []
    unread_tres = expand_tres(text, labels, lines, errors, notes) if "tres" in text else np.zeros(len(lines), bool)
    for column, what in (("job_id", "job id"), ("submit_utc", "submit time"), ("gpus", "GPUs")):
        absent = text[column].isna().to_numpy() & (~unread_tres if column == "gpus" else True)
        errors.add_many(lines[absent], f"missing {what} in column {labels[column]!r}")
    _duplicates(text["job_id"], labels["job_id"], lines, errors, across.seen if across else None)
    if "depends_on" in text and across is not None:
        across.chained.append((text["job_id"], text["depends_on"], lines))
    elif "depends_on" in text:
        _chain_links(text["job_id"], text["depends_on"], lines, labels["depends_on"], errors)
    for column in TEXT_COLUMNS:
        if column in text:
            check_text(text[column], f"column {labels[column]!r}", lines, errors)
    out: dict[str, object] = {"source_line": lines}
    out.update({c: text[c] for c in TEXT_COLUMNS if c in text})
    times = _times(text, labels, lines, errors, options, naive_utc, notes, across)
    if "elapsed_s" in text:
        end_from_elapsed(text.pop("elapsed_s"), labels["elapsed_s"], lines, times, errors, notes)
        if "end_utc" in times and "end_utc" not in text:   # the ends are start + elapsed: say so in messages
            text["end_utc"] = pd.Series(np.datetime_as_string(times["end_utc"], unit="s"), dtype="str")
            labels["end_utc"] = f"{labels.get('start_utc', 'start')} + {labels['elapsed_s']}"
    out.update(times)
    for column, limit in JOB_NUMBERS.items():
        if column in text:
            values = _numbers(text[column], column, labels[column], lines, errors)
            out[column] = pd.array(values, dtype="Int64") if limit.whole else values
    _order(times, text, labels, lines, errors)
    _gpu_use(out, text, labels, lines, errors, notes)
    _finish_vocabularies(out, text, times, lines, errors, options, notes)
    if across is None:
        errors.raise_if_any()
    jobs = pd.DataFrame(out)
    return (jobs[errors.valid(lines)].reset_index(drop=True) if errors.tolerant else jobs), notes


def _gpu_use(out, text, labels, lines, errors, notes) -> None:
    """Check measured GPU use against the job's GPUs (NaN where rejected); store gpus_used_pct
    (GPUs busy in percent of one GPU) as gpu_util_pct, the percent of the job's own GPUs."""
    gpus = out["gpus"]
    for column, scale, limit in (("gpus_used_max", 1.0, "the job's GPUs"),
                                 ("gpus_used_pct", 100.0, "100 x the job's GPUs")):
        if column not in out:
            continue
        values = out[column]
        over = values > scale * gpus   # NaN compares False
        errors.add_many(lines[over], f"{{!r}} in column {labels[column]!r} is more than {limit} "
                                     f"({{!r}} in column {labels['gpus']!r})",
                        list(zip(text[column][over].to_numpy(), text["gpus"][over].to_numpy())))
        values[over] = np.nan
    if "gpus_used_pct" in out:
        busy = out.pop("gpus_used_pct")
        with np.errstate(divide="ignore", invalid="ignore"):
            out["gpu_util_pct"] = np.where(gpus > 0, busy / gpus, np.nan)
        notes.append(f"gpu_util_pct is {labels['gpus_used_pct']!r} (GPUs busy, in percent of one GPU) "
                     "divided by the job's GPUs")


def _finish_vocabularies(out, text, times, lines, errors, options, notes) -> None:
    """Fill status, workload_class and region, deriving or defaulting missing values."""
    n = len(lines)
    none = (np.full(n, -1), [])
    codes, values = (_vocabulary(text["status"], _STATUS, JOB_STATUSES, "status", lines, errors)
                     if "status" in text else none)
    missing = codes < 0
    derived: np.ndarray | str = "pending"
    if missing.any():
        ended = ~np.isnat(times["end_utc"]) if "end_utc" in times else np.zeros(n, dtype=bool)
        started = ~np.isnat(times["start_utc"]) if "start_utc" in times else np.zeros(n, dtype=bool)
        derived = np.where(ended, "completed", np.where(started, "running", "pending"))
        notes.append(CountedNote("status derived from the times for {count} job(s) without one: completed if "
                                 "ended, running if only started, else pending", int(missing.sum())))
    out["status"] = _fill(codes, values, derived)
    codes, values = (_vocabulary(text["workload_class"], _CLASS, WORKLOAD_CLASSES, "workload class", lines,
                                 errors) if "workload_class" in text else none)
    if (missing := int((codes < 0).sum())):
        notes.append(CountedNote("{count} job(s) without a workload class recorded as 'unknown'", missing))
    out["workload_class"] = _fill(codes, values, "unknown")
    region = text["region"] if "region" in text else pd.Series(np.full(n, None, dtype=object), dtype="str")
    if (missing := int(region.isna().sum())):
        default = options.region or DEFAULT_REGION
        notes.append(CountedNote(f"{{count}} job(s) without a region assigned to region {default!r}", missing))
        out["region"] = region.fillna(default)

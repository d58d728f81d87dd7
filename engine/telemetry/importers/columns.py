"""Names the generic job importers accept: column aliases, value vocabularies, mapping rules.

A source column is matched to a Meridian jobs column (the schema's names in
`batch.JOB_COLUMNS`) by, in this order:

1. an explicit mapping (`ImportOptions.mapping`: source column, named as in the file or in the
   normalised form below -> Meridian column or one of its aliases);
2. the alias table below, compared after normalising the header: surrounding whitespace
   removed, lower-cased, runs of spaces and hyphens turned into one underscore
   ("Submit Time" -> "submit_time"). When several columns match the same Meridian
   column, the one whose name comes earliest in that column's alias list wins (the
   canonical name first), then the leftmost; the others are ignored with a note.

Columns matching nothing are ignored with a note. `source_line` is never read from a
file: it is always the physical line of the row.

One accepted column is not stored as it is: `gpus_used_pct` (Alibaba PAI's `gpu_wrk_util`) counts
the GPUs busy on average in percent of one GPU (50 = half a GPU, 800 = eight busy GPUs); it is
stored as `gpu_util_pct` = gpus_used_pct / gpus, the percent of the job's own GPUs
(see `jobs_frame`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from engine.telemetry.errors import ImportRejected, RowError

# Meridian column -> accepted header names (normalised), canonical name first: the schema's own, then the
# README's (submit for submit_utc), then the spellings of common exports (Slurm's sacct, PBS, cloud batch
# services, spreadsheets).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "job_id": ("job_id", "jobid", "id", "job", "job_number", "jobidraw"),
    "user_name": ("user_name", "user", "username", "user_id", "owner"),
    "team": ("team", "account", "group", "group_name", "department"),
    "project": ("project", "wckey"),
    "workload_class": ("workload_class", "class", "type", "workload", "job_type"),
    "priority": ("priority",),
    "qos": ("qos",),
    "queue": ("queue", "partition"),
    "submit_utc": ("submit_utc", "submit", "submitted", "submit_time", "submission_time", "submitted_at",
                   "created", "creation_time", "queued_at"),
    "start_utc": ("start_utc", "start", "started", "start_time", "started_at", "begin"),
    "end_utc": ("end_utc", "end", "ended", "finished", "finish", "finish_time", "end_time", "finished_at",
                "completed_at", "completion_time"),
    "gpus": ("gpus", "gpu", "num_gpus", "gpu_count", "ngpus", "n_gpus"),
    "gpu_milli": ("gpu_milli",),
    "gpu_type": ("gpu_type", "gpu_model", "model", "gpu_name"),
    "cpus": ("cpus", "cpu", "num_cpus", "ncpus", "alloccpus", "cpu_count"),
    "memory_gib": ("memory_gib", "mem_gib", "memory"),
    "nodes": ("nodes", "num_nodes", "nnodes", "allocnodes", "node_count"),
    "region": ("region",),
    "cluster": ("cluster",),
    "status": ("status", "state", "job_state"),
    "requested_runtime_s": ("requested_runtime_s", "timelimit", "timelimit_s", "time_limit", "requested_time",
                            "walltime", "reqtime"),
    "deadline_utc": ("deadline_utc", "deadline"),
    "data_location": ("data_location",),
    "data_size_gb": ("data_size_gb",),
    "residency": ("residency",),
    "gpu_util_pct": ("gpu_util_pct", "gpu_util", "gpu_utilization", "gpu_utilisation", "gpu_util_percent"),
    "gpus_used_max": ("gpus_used_max", "max_gpus_used", "peak_gpus_used", "gpus_used_peak"),
    "gpus_used_pct": ("gpus_used_pct", "gpu_wrk_util"),
    "memory_used_gib_max": ("memory_used_gib_max", "max_memory_used_gib", "peak_memory_gib", "memory_peak_gib"),
    "depends_on": ("depends_on", "predecessor", "predecessor_job_id", "after_job_id"),
    "checkpoint_gb": ("checkpoint_gb", "checkpoint_size_gb"),
    "elapsed_s": ("elapsed_s", "elapsed", "elapsed_time", "run_time", "runtime", "duration"),
    "tres": ("alloc_tres", "alloctres", "tres", "req_tres", "reqtres"),
}
# Columns read but not stored as they are: elapsed_s (a run time, [D-]HH:MM:SS or seconds) gives a job's end
# as start + elapsed where the file has no end; tres (a Slurm TRES list, e.g. AllocTRES) gives gpus and
# gpu_type (and cpus, memory, nodes) where the file has no such column (see `jobs_frame`).
DERIVED = ("elapsed_s", "tres")
REQUIRED_COLUMNS = ("job_id", "submit_utc", "gpus")
STANDS_IN = {"gpus": "tres"}   # a required column another may stand in for
# Column -> a column holding the same quantity in another unit; when a file has both, the first is
# used (unless only the second was mapped explicitly) and the other ignored with a note.
SAME_QUANTITY = {"gpu_util_pct": "gpus_used_pct"}


def shown_name(column: str) -> str:
    """A Meridian job column as the README names it: submit for submit_utc; other names unchanged."""
    return column[:-4] if column.endswith("_utc") else column
# Canonical value -> accepted spellings (compared lower-cased, surrounding whitespace removed).
STATUS_ALIASES: dict[str, tuple[str, ...]] = {
    "completed": ("completed", "complete", "succeeded", "success", "done", "ok"),
    "failed": ("failed", "fail", "error", "timeout"),
    "cancelled": ("cancelled", "canceled", "killed"),
    "preempted": ("preempted", "evicted"),
    "running": ("running",),
    "pending": ("pending", "queued"),
}
WORKLOAD_CLASS_ALIASES: dict[str, tuple[str, ...]] = {
    "training": ("training", "train"),
    "inference": ("inference", "infer", "serving"),
    "development": ("development", "dev", "interactive", "notebook"),
    "hpo": ("hpo", "sweep", "tune"),
    "batch": ("batch",),
    "unknown": ("unknown",),
}

_ALIAS_RANK = {alias: (canonical, rank)
               for canonical, aliases in COLUMN_ALIASES.items() for rank, alias in enumerate(aliases)}
_SEPARATORS = re.compile(r"[\s\-]+")


def normalise_header(name: str) -> str:
    """'  Submit Time ' -> 'submit_time' (the form the alias table is written in)."""
    return _SEPARATORS.sub("_", name.strip().lower())


def value_lookup(aliases: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Flatten a value-alias table to {spelling: canonical value}."""
    return {alias: canonical for canonical, spellings in aliases.items() for alias in spellings}


@dataclass(frozen=True)
class ColumnPlan:
    """Which source column feeds each Meridian jobs column.

    header: the file's column names as written; sources: Meridian column -> index into
    header; notes: what was ignored or overridden, in plain words.
    """

    header: tuple[str, ...]
    sources: dict[str, int]
    notes: tuple[str, ...] = ()

    def source_name(self, column: str) -> str:
        """The header of the source column feeding Meridian column `column`."""
        return self.header[self.sources[column]]

    def declares_utc(self, column: str) -> bool:
        """True when the source header itself says its times are UTC (ends in '_utc')."""
        return normalise_header(self.source_name(column)).endswith("_utc")


def _listing(names) -> str:
    return ", ".join(repr(n) for n in names) if names else "(none)"


def _find_source(header: tuple[str, ...], name: str) -> int | None:
    if name in header:
        return header.index(name)
    wanted = normalise_header(name)
    matches = [i for i, h in enumerate(header) if normalise_header(h) == wanted]
    return matches[0] if matches else None


def _apply_mapping(header, mapping, source) -> tuple[dict[str, int], list[RowError]]:
    chosen: dict[str, int] = {}
    problems: list[RowError] = []
    for src, target in mapping.items():
        index = _find_source(header, src)
        canonical = _ALIAS_RANK.get(normalise_header(str(target)), (None, 0))[0]
        if index is None:
            problems.append(RowError(source, 1, f"column mapping names column {src!r}, which is not in the "
                                                f"file; the file's columns are: {_listing(header)}"))
        elif canonical is None:
            problems.append(RowError(source, 1, f"column mapping sends {src!r} to {target!r}, which is not a "
                                                "Meridian job column; choose from: "
                                                f"{', '.join(map(shown_name, COLUMN_ALIASES))}"))
        elif canonical in chosen:
            problems.append(RowError(source, 1, f"column mapping sends both {header[chosen[canonical]]!r} and "
                                                f"{src!r} to {shown_name(canonical)!r}"))
        else:
            chosen[canonical] = index
    return chosen, problems


def resolve_columns(header: list[str], mapping: dict[str, str], source: str) -> ColumnPlan:
    """Match `header` to Meridian columns, or raise ImportRejected (all header problems, line 1)."""
    header = tuple(header)
    chosen, problems = _apply_mapping(header, mapping or {}, source)
    mapped = set(chosen.values())
    candidates: dict[str, list[tuple[int, int]]] = {}
    unknown = []
    for index, name in enumerate(header):
        if index in mapped:
            continue
        canonical, rank = _ALIAS_RANK.get(normalise_header(name), (None, 0))
        if canonical is None:
            unknown.append(name)
        else:
            candidates.setdefault(canonical, []).append((rank, index))
    shadowed = []
    for canonical, found in candidates.items():
        found.sort()
        if canonical not in chosen:
            chosen[canonical] = found[0][1]
            found = found[1:]
        shadowed += [f"{header[i]!r} (Meridian's {shown_name(canonical)} comes from {header[chosen[canonical]]!r})"
                     for _, i in found]
    for canonical, other in SAME_QUANTITY.items():
        if canonical in chosen and other in chosen:   # an explicitly mapped column wins, else the canonical one
            mapped_other = chosen[other] in mapped and chosen[canonical] not in mapped
            loser, winner = (canonical, other) if mapped_other else (other, canonical)
            shadowed.append(f"{header[chosen.pop(loser)]!r} (Meridian's {canonical} comes from "
                            f"{header[chosen[winner]]!r})")
    for column in REQUIRED_COLUMNS:
        if column not in chosen and STANDS_IN.get(column) not in chosen:
            name = shown_name(column)
            accepted = [name, *(a for a in COLUMN_ALIASES[column] if a != name)]
            also = f", or a Slurm TRES list ({', '.join(COLUMN_ALIASES['tres'])})" if column in STANDS_IN else ""
            problems.append(RowError(source, 1, (
                f"missing required column {name!r}: none of the file's columns ({_listing(header)}) is named "
                f"{', '.join(accepted)}{also}; rename one, or map it (--map 'YOUR COLUMN={name}' on the CLI, the "
                "column mapping on the Data page)")))
    if problems:
        raise ImportRejected(problems)
    notes = []
    if unknown:
        notes.append(f"ignored column(s) Meridian does not use: {_listing(unknown)}")
    if shadowed:
        notes.append(f"ignored duplicate column(s): {'; '.join(shadowed)}")
    ordered = {c: chosen[c] for c in COLUMN_ALIASES if c in chosen}
    return ColumnPlan(header, ordered, tuple(notes))

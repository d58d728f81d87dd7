"""Alibaba openb traces (cluster-trace-gpu-v2023, Weng et al., USENIX ATC'23): node lists and pod lists.

Node list `sn,cpu_milli,memory_mib,gpu,model` -> fleet. Pod list `name,cpu_milli,memory_mib,num_gpu,
gpu_milli[,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time]` -> jobs, where a pod
asks for num_gpu GPUs of gpu_milli thousandths each (gpu_milli < 1000 means a shared GPU).
The trace's times are seconds from its start, with no absolute date: they are anchored at
`TRACE_EPOCH_UTC`. Every column within the data contract (`contract.OPENB_NODES`, `OPENB_PODS`, `OPENB_TEXT`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, kept
from engine.telemetry.importers.common import ImportOptions, decode_text
from engine.telemetry.importers.contract import OPENB_EPOCH, OPENB_NODES, OPENB_PODS, OPENB_TEXT
from engine.telemetry.importers.csv_records import CSV
from engine.telemetry.importers.named_columns import Rows, check_texts, numbers, read_rows, report_empty

CLUSTER = "openb"
TRACE_EPOCH_UTC = pd.Timestamp(OPENB_EPOCH)
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_OPTIONAL = ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
PHASES = {"Running": "running", "Succeeded": "completed", "Failed": "failed", "Pending": "pending",
          "Unknown": "failed"}
QOS_CLASSES = {"LS": "inference", "BE": "batch"}   # latency-sensitive serving; best-effort jobs


def parse_openb_nodes(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """A node list -> fleet rows (tier 'reserved': Alibaba's own machines). CPU-only nodes keep gpu_type NULL."""
    errors = options.collector(source)
    rows = read_rows(decode_text(data, source), source, CSV, NODE_COLUMNS, (), errors)
    cpu_milli, memory_mib, gpus = (numbers(rows, c, errors, limit=OPENB_NODES[c])
                                   for c in ("cpu_milli", "memory_mib", "gpu"))
    report_empty(rows, "sn", errors)
    check_texts(rows, OPENB_TEXT, errors)
    errors.raise_if_any()
    keep = errors.valid(rows.lines)   # all True unless the import keeps the valid rows
    cpu_milli, memory_mib, gpus = kept(keep, cpu_milli, memory_mib, gpus)
    rows = rows.where(keep)
    fleet = pd.DataFrame({
        "region": options.region or DEFAULT_REGION,
        "cluster": CLUSTER,
        "node": rows.frame["sn"],
        "gpu_type": rows.frame["model"].where(rows.frame["model"] != "", None),
        "gpus": gpus.astype(np.int64),
        "cpus": cpu_milli / 1000,
        "memory_gib": memory_mib / 1024,
        "tier": "reserved",
    })
    return ImportBatch("openb-nodes", {"fleet": fleet},
                       ["openb nodes are stored as tier 'reserved' (the operator's own machines)"],
                       rejects=errors.every())


def parse_openb_pods(data: bytes, source: str, options: ImportOptions) -> ImportBatch:
    """A pod list -> jobs; fractional `gpus` = num_gpu * gpu_milli / 1000."""
    errors = options.collector(source)
    rows = read_rows(decode_text(data, source), source, CSV, POD_COLUMNS, POD_OPTIONAL, errors)
    cpu_milli, memory_mib, num_gpu, gpu_milli = (numbers(rows, c, errors, limit=OPENB_PODS[c])
                                                 for c in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))
    report_empty(rows, "name", errors)
    check_texts(rows, OPENB_TEXT, errors)
    notes: list[str] = []
    status = _statuses(rows, errors, notes)
    submit, start, end = _times(rows, status, errors, notes)
    errors.raise_if_any()
    keep = errors.valid(rows.lines)   # all True unless the import keeps the valid rows
    cpu_milli, memory_mib, num_gpu, gpu_milli, status, submit, start, end = kept(
        keep, cpu_milli, memory_mib, num_gpu, gpu_milli, status, submit, start, end)
    rows = rows.where(keep)
    qos = rows.text("qos")
    jobs = pd.DataFrame({
        "source_line": rows.lines,
        "job_id": rows.frame["name"],
        "workload_class": [QOS_CLASSES.get(q, "unknown") for q in qos],
        "qos": qos,
        "submit_utc": submit,
        "start_utc": start,
        "end_utc": end,
        "gpus": num_gpu * gpu_milli / 1000,
        "gpu_milli": gpu_milli.astype(np.int64),
        "gpu_type": rows.text("gpu_spec"),
        "cpus": cpu_milli / 1000,
        "memory_gib": memory_mib / 1024,
        "nodes": 1,
        "region": options.region or DEFAULT_REGION,
        "cluster": CLUSTER,
        "status": status,
    })
    if rows.has("qos"):
        notes.append("workload class from qos: LS (latency-sensitive) -> inference, BE (best effort) -> batch")
    return ImportBatch("openb-pods", {"jobs": jobs}, notes, rejects=errors.every())


def _statuses(rows: Rows, errors: ErrorCollector, notes: list[str]) -> list[str | None]:
    """Meridian status per pod from pod_phase; all 'pending' when the file has no phases."""
    if not rows.has("pod_phase") or not (rows.frame["pod_phase"] != "").any():
        notes.append("no pod_phase in the file: every pod is stored as pending (a workload to schedule)")
        return ["pending"] * len(rows)
    out: list[str | None] = []
    for line, phase in zip(rows.lines, rows.frame["pod_phase"]):
        if phase not in PHASES:
            errors.add(line, f"unknown pod_phase {phase!r} (expected Pending, Running, Succeeded or Failed)")
        out.append(PHASES.get(phase))
    unknown = int((rows.frame["pod_phase"] == "Unknown").sum())
    if unknown:
        notes.append(f"{unknown} pods in phase Unknown (node lost contact) are stored as failed")
    return out


def _times(rows: Rows, status: list, errors: ErrorCollector, notes: list[str]) -> tuple[pd.Series, ...]:
    """(submit, start, end) as UTC times: TRACE_EPOCH_UTC + seconds from creation/scheduled/deletion."""
    epoch = TRACE_EPOCH_UTC.strftime("%Y-%m-%d %H:%M UTC")
    if not rows.has("creation_time"):
        notes.append(f"no times in the file: every pod is submitted at {epoch} (the trace epoch)")
        submit = pd.Series(np.full(len(rows), TRACE_EPOCH_UTC.to_datetime64()))
        missing = pd.Series(np.full(len(rows), np.datetime64("NaT"), dtype="datetime64[s]"))
        return submit, missing, missing
    notes.append(f"openb times are seconds from the trace start, which has no date: anchored at {epoch}")
    created = numbers(rows, "creation_time", errors, limit=OPENB_PODS["creation_time"])
    scheduled, deleted = (numbers(rows, c, errors, allow_empty=True, limit=OPENB_PODS[c]) if rows.has(c)
                          else np.full(len(rows), np.nan) for c in ("scheduled_time", "deletion_time"))
    pending = np.array([s == "pending" for s in status], dtype=bool)
    scheduled[pending & (scheduled == 0)] = np.nan
    for i in np.flatnonzero(deleted < created):
        errors.add(rows.lines[i], f"deletion_time {deleted[i]:g} is before creation_time {created[i]:g}")
    for i in np.flatnonzero(scheduled < created):
        errors.add(rows.lines[i], f"scheduled_time {scheduled[i]:g} is before creation_time {created[i]:g}")
    return _at(created), _at(scheduled), _at(deleted)


def _at(seconds: np.ndarray) -> pd.Series:
    """TRACE_EPOCH_UTC + whole seconds (NaN -> NaT)."""
    known = np.isfinite(seconds)
    stamps = np.full(len(seconds), np.datetime64("NaT"), dtype="datetime64[s]")
    stamps[known] = TRACE_EPOCH_UTC.to_datetime64().astype("datetime64[s]") + \
        np.rint(seconds[known]).astype(np.int64).astype("timedelta64[s]")
    return pd.Series(stamps)


"""The data contract of every input: each column's type, unit and range, declared here once and checked at import
with the file and the line by the checkers below (every importer calls them; none has range rules of its own).

What passes is what the simulator and the pages are built for; a value outside is a row problem naming its line,
the column (or SWF field) and the limit, never an "internal error" or an exhausted memory later on.

Every file: at most MAX_COLUMNS (1,000) columns, no column name twice in the header (case-insensitive; empty
names are not compared), text at most MAX_TEXT_CHARS (256) characters without a control character but tab, LF
and CR, times within 1970-01-01 to 2100-01-01 UTC. The numbers, as `Limit`s:

- JOB_NUMBERS: the jobs table of every job importer (CSV, sacct, and the sample bundle's jobs); the measured
  use gpus_used_max and gpus_used_pct is bounded by the job's GPUs as well (jobs_frame).
- SWF_FIELDS: the 18 fields of a Standard Workload Format line (Feitelson's definition in the Parallel
  Workloads Archive), -1 meaning unknown in every field but the job id and the submit time.
- OPENB_NODES, OPENB_PODS: Alibaba's openb node and pod lists (cluster-trace-gpu-v2023).
- UTILIZATION: a utilisation series (busy and total in GPUs, or nodes for Philly's active/total).
- BUNDLE_NUMBERS: the other tables of a folder written by `meridian sample` (fleet, prices, regions, carbon,
  teams, utilisation).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError

EARLIEST, LATEST = np.datetime64("1970-01-01T00:00:00", "ns"), np.datetime64("2100-01-01T00:00:00", "ns")
MAX_TEXT_CHARS = 256
MAX_COLUMNS = 1_000
CONTROL_CHARACTERS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"   # tab, LF and CR stay: quoted multi-line values
YEAR_S = 365 * 86_400
MAX_SLOTS = 2 ** 20      # processors or GPUs of one fleet (one slot each); the largest real SWF logs have ~160,000
ID_LIMIT = 2 ** 53       # numeric ids from here on are not exact as float64
OPENB_EPOCH = np.datetime64("2023-01-01T00:00:00", "ns")   # openb times count seconds from here (no date given)


@dataclass(frozen=True)
class Limit:
    """A numeric column: `unit`, range `low` to `high`, whole numbers only or not; `unknown` is a value that
    stands for "not recorded" (SWF's -1) and passes whatever the range."""

    unit: str
    low: float
    high: float
    whole: bool = False
    unknown: float | None = None


TEXT_COLUMNS = ("job_id", "user_name", "team", "project", "qos", "queue", "gpu_type", "region",
                "cluster", "data_location", "residency", "depends_on")
TIME_COLUMNS = ("submit_utc", "start_utc", "end_utc", "deadline_utc")
JOB_NUMBERS = {
    "priority": Limit("the scheduler's", -1e15, 1e15), "gpus": Limit("GPUs", 0, 100_000),
    "gpu_milli": Limit("1/1000 GPU", 0, 1000, whole=True), "cpus": Limit("cores", 0, 10_000_000),
    "memory_gib": Limit("GiB", 0, 10_000_000), "nodes": Limit("nodes", 0, 1_000_000, whole=True),
    "requested_runtime_s": Limit("seconds", 0, 100 * YEAR_S), "data_size_gb": Limit("GB", 0, 1e9),
    "gpu_util_pct": Limit("percent", 0, 100), "gpus_used_max": Limit("GPUs", 0, 100_000),
    "gpus_used_pct": Limit("percent of one GPU", 0, 10_000_000),
    "checkpoint_gb": Limit("GB", 0, 1e6), "memory_used_gib_max": Limit("GiB", 0, 10_000_000),
}


def _swf(unit: str, high: float, whole: bool = True, low: float = 0, unknown: float | None = -1) -> Limit:
    return Limit(unit, low, high, whole, unknown)


SWF_FIELDS = {   # field name (in order, field k of the standard is the k-th) -> Limit
    "job id": _swf("number", ID_LIMIT - 1, unknown=None), "submit time": _swf("s", 100 * YEAR_S, False, unknown=None),
    "wait time": _swf("s", 100 * YEAR_S, False), "run time": _swf("s", 100 * YEAR_S, False),
    "allocated processors": _swf("processors", MAX_SLOTS), "average CPU time": _swf("s", 100 * YEAR_S, False),
    "used memory": _swf("KB per processor", ID_LIMIT - 1, False), "requested processors": _swf("processors", MAX_SLOTS),
    "requested time": _swf("s", 100 * YEAR_S, False), "requested memory": _swf("KB per processor", ID_LIMIT - 1, False),
    "status": _swf("code", 5), "user id": _swf("number", ID_LIMIT - 1), "group id": _swf("number", ID_LIMIT - 1),
    "executable id": _swf("number", ID_LIMIT - 1), "queue": _swf("number", ID_LIMIT - 1),
    "partition": _swf("number", ID_LIMIT - 1), "preceding job": _swf("number", ID_LIMIT - 1),
    "think time": _swf("s", 100 * YEAR_S, False),
}
_OPENB_SPAN_S = float((LATEST - OPENB_EPOCH) // np.timedelta64(1, "s"))
OPENB_NODES = {"cpu_milli": Limit("1/1000 core", 0, 10 ** 10, whole=True),
               "memory_mib": Limit("MiB", 0, 1024 * 10 ** 7, whole=True),
               "gpu": Limit("GPUs", 0, MAX_SLOTS, whole=True)}
OPENB_PODS = {"cpu_milli": Limit("1/1000 core", 0, 10 ** 10, whole=True),
              "memory_mib": Limit("MiB", 0, 1024 * 10 ** 7, whole=True),
              "num_gpu": Limit("GPUs", 0, 100_000, whole=True), "gpu_milli": Limit("1/1000 GPU", 0, 1000, whole=True),
              **{c: Limit("s from the trace start", 0, _OPENB_SPAN_S)
                 for c in ("creation_time", "scheduled_time", "deletion_time")}}
OPENB_TEXT = ("sn", "model", "name", "gpu_spec", "qos")
UTILIZATION = {"busy": Limit("GPUs (or nodes)", 0, 10_000_000), "total": Limit("GPUs (or nodes)", 0, 10_000_000),
               "util_pct": Limit("percent", 0, 100)}
BUNDLE_NUMBERS = {
    "jobs": JOB_NUMBERS,
    "fleet": {"gpus": Limit("GPUs", 0, MAX_SLOTS, whole=True), "cpus": Limit("cores", 0, 10_000_000),
              "memory_gib": Limit("GiB", 0, 10_000_000)},
    "prices": {"usd_per_gpu_hour": Limit("USD per GPU hour", 0, 10_000)},
    "regions": {"egress_usd_per_gb": Limit("USD per GB", 0, 1_000)},
    "carbon": {"local_hour": Limit("hour", 0, 23, whole=True), "g_co2e_per_kwh": Limit("gCO2e per kWh", 0, 10_000)},
    "teams": {"work_start_hour": Limit("hour", 0, 24, whole=True), "work_end_hour": Limit("hour", 0, 24, whole=True),
              "share_weight": Limit("weight", 1e-9, 1e9)},   # above 0, as a scenario's team weights
    "utilization": UTILIZATION,
}


def check_header(header: list[str], line: int, source: str) -> None:
    """ImportRejected when a header has more than MAX_COLUMNS columns (the file as a whole) or names a column
    twice (its line and the name)."""
    if len(header) > MAX_COLUMNS:
        raise ImportRejected.whole_file(source, f"the header has {len(header):,} columns, more than the "
                                                f"{MAX_COLUMNS:,} a file may have")
    seen: dict[str, int] = {}
    twice: list[str] = []
    for index, name in enumerate(header):
        key = name.strip().lower()
        first = seen.setdefault(key, index)
        if key and first != index and header[first] not in twice:
            twice.append(header[first])
    if twice:
        raise ImportRejected([RowError(source, line, f"column {name!r} appears more than once in the header; "
                                                     "rename or remove the copies") for name in twice])


def check_numbers(values: np.ndarray, limit: Limit, where: str, lines: np.ndarray, errors: ErrorCollector,
                  shown, what: str = "value") -> None:
    """Report every value of `values` outside `limit`, naming its line, `where` ("column 'gpus'") and the value
    as `shown` (the text of each row; None: the number); each is set to NaN. NaN (absent) and `limit.unknown` pass."""
    ok = np.isfinite(values) if limit.unknown is None else np.isfinite(values) & (values != limit.unknown)
    unknown = "" if limit.unknown is None else f", where only {limit.unknown:g} (unknown) may be below {limit.low:g}"
    below = (f"negative {what} {{!r}} in {where}" if limit.low == 0 else f"{what} {{!r}} in {where} is below "
             f"{limit.low:g}") + unknown
    high = f"{limit.high:g}" if isinstance(limit.high, float) else str(limit.high)
    low_mask, high_mask = ok & (values < limit.low), ok & (values > limit.high)
    checks = [(low_mask, below), (high_mask, f"{what} {{!r}} in {where} is above {high}")]
    if limit.whole:
        checks.append((ok & ~low_mask & ~high_mask & (values != np.round(values)),
                       f"{{!r}} in {where} is not a whole number"))
    for mask, template in checks:
        if mask.any():
            picked = [f"{v:g}" for v in values[mask]] if shown is None else np.asarray(shown, dtype=object)[mask]
            errors.add_many(lines[mask], template, picked)
            values[mask] = np.nan


def check_text(values: pd.Series, where: str, lines: np.ndarray, errors: ErrorCollector) -> None:
    """Report text values longer than MAX_TEXT_CHARS or holding a control character."""
    long = values.str.len().gt(MAX_TEXT_CHARS).to_numpy(dtype=bool, na_value=False)
    errors.add_many(lines[long], f"{{!r}} in {where} is longer than {MAX_TEXT_CHARS} characters", values[long].to_numpy())
    control = values.str.contains(CONTROL_CHARACTERS, regex=True).to_numpy(dtype=bool, na_value=False) & ~long
    errors.add_many(lines[control], f"{{!r}} in {where} holds a control character (NUL, escape, ...)",
                    values[control].to_numpy())


def check_times(values: np.ndarray, shown: pd.Series, where: str, lines: np.ndarray, errors: ErrorCollector) -> None:
    """Report times outside 1970-2100 (naive UTC datetime64), naming the value as written; each becomes NaT."""
    outside = ~np.isnat(values) & ((values < EARLIEST) | (values >= LATEST))
    errors.add_many(lines[outside], f"time {{!r}} in {where} is outside 1970-2100", shown[outside].to_numpy())
    values[outside] = np.datetime64("NaT")

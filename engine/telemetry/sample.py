"""The embedded sample: load the committed `sample_data/` bundle as the dataset `sample`.

`ensure_sample(store)` loads it into a fresh database exactly once (remembered in the
`meta` key `sample_loaded`), so a user who deletes the dataset does not get it back.
The bundle is read with fixed types; each file's header and values are checked against the data
contract (engine.telemetry.importers.contract), since a folder given to `meridian ingest` may come from anyone.
"""
from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from engine.core.vocabulary import JOB_STATUSES, WORKLOAD_CLASSES
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import ErrorCollector, ImportRejected, RowError
from engine.telemetry.importers.contract import BUNDLE_NUMBERS, check_header, check_numbers, check_text, check_times
from engine.telemetry.input_limits import GZIP_MAGIC, gunzip_bounded, read_input
from engine.telemetry.store import Store

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_data"
SAMPLE_DATASET = "sample"
META_KEY = "sample_loaded"
# Fixed order: the bundle's content hash is the sha256 of these files' bytes in this order.
BUNDLE_FILES = {
    "regions": "regions.csv", "teams": "teams.csv", "prices": "prices.csv", "carbon": "carbon.csv",
    "fleet": "fleet.csv", "jobs": "jobs.csv.gz", "utilization": "utilization.csv.gz",
}

# Columns a bundle may lack (written before they were added): the jobs' measured peak memory (migration 8).
OPTIONAL = {"jobs": ("memory_used_gib_max",)}

_S, _F, _I, _T = pa.string(), pa.float64(), pa.int32(), pa.timestamp("s", tz="UTC")
_TYPES = {   # column -> Arrow type, in file order
    "jobs": {"job_id": _S, "user_name": _S, "team": _S, "project": _S, "workload_class": _S, "priority": _F,
             "qos": _S, "queue": _S, "submit_utc": _T, "start_utc": _T, "end_utc": _T, "gpus": _F,
             "gpu_milli": _I, "gpu_type": _S, "cpus": _F, "memory_gib": _F, "nodes": _I, "region": _S,
             "cluster": _S, "status": _S, "requested_runtime_s": _F, "deadline_utc": _T,
             "data_location": _S, "data_size_gb": _F, "residency": _S, "gpu_util_pct": _F, "gpus_used_max": _F,
             "memory_used_gib_max": _F},
    "fleet": {"region": _S, "cluster": _S, "node": _S, "gpu_type": _S, "gpus": _I, "cpus": _F,
              "memory_gib": _F, "rack": _S, "tier": _S},
    "regions": {"region": _S, "timezone": _S, "country": _S, "jurisdiction": _S, "egress_usd_per_gb": _F},
    "prices": {"region": _S, "gpu_type": _S, "tier": _S, "usd_per_gpu_hour": _F, "assumed": pa.bool_()},
    "carbon": {"region": _S, "local_hour": _I, "g_co2e_per_kwh": _F},
    "teams": {"team": _S, "timezone": _S, "work_start_hour": _I, "work_end_hour": _I, "working_days": _S,
              "holiday_country": _S, "home_region": _S, "share_weight": _F},
    "utilization": {"ts_utc": _T, "region": _S, "cluster": _S, "busy": _F, "total": _F, "util_pct": _F,
                    "unit": _S},
}


def bundle_digest(directory: Path = SAMPLE_DIR) -> str:
    """sha256 of the bundle's files' bytes, concatenated in `BUNDLE_FILES` order."""
    digest = hashlib.sha256()
    for name in BUNDLE_FILES.values():
        digest.update(_content(directory, name))
    return digest.hexdigest()


def read_bundle(directory: Path = SAMPLE_DIR) -> ImportBatch:
    """Every table of the bundle as one batch (format "sample"), timestamps naive UTC. Each file is read
    within the limits of engine.telemetry.input_limits (a bundle may come from anyone too)."""
    tables = {}
    for table, name in BUNDLE_FILES.items():
        path = Path(directory) / name
        data = _content(directory, name)
        if data[:2] == GZIP_MAGIC:
            data = gunzip_bounded(data, str(path))
        end = data.find(b"\n")
        first = data[:end if end >= 0 else len(data)].rstrip(b"\r").decode("utf-8-sig", "replace")
        header = next(csv.reader([first]), [])
        check_header(header, 1, str(path))
        types = {c: t for c, t in _TYPES[table].items() if c in header or c not in OPTIONAL.get(table, ())}
        try:
            arrow = pa_csv.read_csv(pa.BufferReader(data), convert_options=pa_csv.ConvertOptions(
                column_types=types, include_columns=list(types), strings_can_be_null=True))
        except (pa.ArrowInvalid, KeyError) as exc:
            raise ImportRejected.whole_file(str(path), f"not a sample bundle file ({exc})") from exc
        naive = pa.schema([pa.field(f.name, pa.timestamp("s")) if pa.types.is_timestamp(f.type) else f
                           for f in arrow.schema])
        frame = arrow.cast(naive).to_pandas()
        _sanity_check(table, frame, str(path))
        _check_contract(table, frame, str(path))
        tables[table] = frame
    return ImportBatch("sample", tables, notes=["generated sample data (see sample_data/README.md)"],
                       scheduler="per-pool-fifo")


def load_sample(store: Store, directory: Path = SAMPLE_DIR, dataset: str = SAMPLE_DATASET) -> int:
    """Import the whole bundle as `dataset` in one transaction; returns the import id."""
    directory = Path(directory)
    return store.add_import(dataset, read_bundle(directory), directory.name, bundle_digest(directory))


def ensure_sample(store: Store, directory: Path = SAMPLE_DIR) -> bool:
    """Load the sample the first time a database is used; True if it was loaded now.

    Later calls do nothing, even after the user deleted the dataset. A database that
    already holds the same bundle (under any name) is not given a second copy.
    """
    if store.get_meta(META_KEY) is not None:
        return False
    digest = bundle_digest(Path(directory))
    loaded = not store.dataset_exists(SAMPLE_DATASET) and store.find_import(digest) is None
    if loaded:
        load_sample(store, directory)
    store.set_meta(META_KEY, digest)
    return loaded


def _content(directory: Path, name: str) -> bytes:
    """The bytes of the bundle file `name` (a regular file within the size limit)."""
    path = Path(directory) / name
    if not path.is_file():
        raise ImportRejected.whole_file(
            str(path), "sample bundle file is missing; regenerate it with `meridian sample --out sample_data`")
    return read_input(path)


def _check_contract(table: str, frame: pd.DataFrame, source: str) -> None:
    """Every column within the data contract (its numbers' BUNDLE_NUMBERS, text, times), each problem on its
    line: the bundle's files hold one line per row under the header."""
    errors = ErrorCollector(source)
    lines = np.arange(len(frame), dtype=np.int64) + 2
    for column, limit in BUNDLE_NUMBERS[table].items():
        if column in frame:
            values = frame[column].to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
            check_numbers(values, limit, f"column {column!r}", lines, errors, values)
    for column, kind in _TYPES[table].items():
        if column not in frame:
            continue
        if kind == _S:
            check_text(frame[column], f"column {column!r}", lines, errors)
        elif kind == _T:
            check_times(frame[column].to_numpy(copy=True), frame[column].astype(str), f"column {column!r}", lines,
                        errors)
    errors.raise_if_any()


def _sanity_check(table: str, frame: pd.DataFrame, source: str) -> None:
    if frame.empty:
        raise ImportRejected.whole_file(source, "no data rows")
    if table == "jobs":
        bad = (~frame["workload_class"].isin(WORKLOAD_CLASSES) | ~frame["status"].isin(JOB_STATUSES)
               | frame["submit_utc"].isna() | ~(frame["gpus"] >= 0))
        if bad.any():
            line = int(bad.to_numpy().argmax()) + 2   # header is line 1
            raise ImportRejected([RowError(source, line, f"invalid job row (unknown class or status, no submit "
                                                         f"time or negative GPUs); {int(bad.sum())} such rows")])

"""Import one file, or a folder written by `meridian sample`, into the store: read, detect, parse,
complete, insert atomically.

The only entry point the CLI and the dashboard use to add telemetry.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from engine.core.vocabulary import DEFAULT_REGION
from engine.telemetry.batch import ImportBatch
from engine.telemetry.errors import MAX_REPORTED, ImportRejected, RowError
from engine.telemetry.importers import FORMATS, parser_for
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.importers.generic_csv import CsvJobs
from engine.telemetry.importers.swf import SwfJobs
from engine.telemetry.input_limits import check_size, read_input
from engine.telemetry.names import BadName, check_name, name_from
from engine.telemetry.sample import BUNDLE_FILES, bundle_digest, read_bundle
from engine.telemetry.store import Store
from engine.world.pricebook import default_price_rows

CHUNKED = {"csv": CsvJobs, "swf": SwfJobs}   # formats read and appended chunk by chunk


@dataclass(frozen=True)
class IngestResult:
    """What an import added: `rows` to `dataset` (import_id None when the content was already there);
    `rejected` rows set aside (ImportOptions.keep_valid) and `rejects`, their first MAX_REPORTED problems
    (all of them are in the store: Store.rejects); `problems` counts them all."""

    dataset: str
    format: str
    rows: int
    import_id: int | None          # None when the content was already imported
    duplicate_of: str | None = None  # dataset that already holds this content
    notes: tuple[str, ...] = ()
    rejected: int = 0
    problems: int = 0
    rejects: tuple[RowError, ...] = ()


def dataset_name_for(source: str) -> str:
    stem = Path(source).name
    for suffix in (".gz", ".csv", ".swf", ".txt", ".psv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    return name_from(stem)


def _chosen(dataset: str | None, source: str) -> str | None:
    """A dataset name the user gave, checked against the name policy (ImportRejected naming the file);
    None or "" (an optional field left empty) leaves the name to the file's."""
    if dataset is None or dataset == "":
        return None
    try:
        return check_name(dataset)
    except BadName as exc:
        raise ImportRejected.whole_file(source, str(exc)) from None


def ingest_path(store: Store, path: str | Path, **kwargs) -> IngestResult:
    """Import the file, or the folder written by `meridian sample`, at `path`; anything else (a device, a
    FIFO, a folder of another kind, a symlink loop) is refused naming it (engine.telemetry.input_limits)."""
    path = Path(path)
    if path.is_dir():
        if kwargs.get("format", "auto") not in ("auto", "sample"):
            raise ImportRejected.whole_file(str(path), f"a folder is read as a sample bundle, not as {kwargs['format']}")
        return ingest_folder(store, path, kwargs.get("dataset"))
    return ingest_bytes(store, read_input(path), str(path), **kwargs)


def ingest_bytes(
    store: Store,
    data: bytes,
    source: str,
    *,
    format: str = "auto",
    dataset: str | None = None,
    options: ImportOptions | None = None,
) -> IngestResult:
    """Parse `data` (the content of file `source`) and add it to `dataset` in one transaction."""
    options = options or ImportOptions()
    check_size(data, source)
    dataset = _chosen(dataset, source)
    sha = hashlib.sha256(data).hexdigest()
    fmt = detect_format(source, data) if format == "auto" else format
    if fmt not in FORMATS:
        raise ImportRejected.whole_file(source, f"unknown format {fmt!r}; choose from auto, {', '.join(FORMATS)}")
    earlier = store.find_import(sha)
    if earlier is not None:
        return IngestResult(earlier[0], fmt, 0, None, duplicate_of=earlier[0],
                            notes=(f"identical content was already imported from {earlier[1]}",))
    if fmt in CHUNKED:
        return _ingest_chunks(store, CHUNKED[fmt](data, source, options), dataset, source, sha, options)
    batch = parser_for(fmt)(data, source, options)
    if batch.row_count == 0 and batch.rejects:
        raise ImportRejected(batch.rejects[:MAX_REPORTED], len(batch.rejects))   # every row had a problem
    if batch.row_count == 0:
        raise ImportRejected.whole_file(source, "no data rows (header only?)")
    name = dataset or _free_name(store, dataset_name_for(source))
    complete_world(store, name, batch, options)
    import_id = store.add_import(name, batch, Path(source).name, sha)
    return _result(name, fmt, batch.row_count, import_id, batch.notes, batch.rejects)


def _ingest_chunks(store: Store, reader: CsvJobs | SwfJobs, dataset: str | None, source: str, sha: str,
                   options: ImportOptions) -> IngestResult:
    """A jobs CSV or SWF log appended chunk by chunk as it is read, in one transaction: a problem found in any
    chunk, the last one included, rolls back every chunk appended before it."""
    name = dataset or _free_name(store, dataset_name_for(source))
    with store.importing(name, reader.scheduler) as writer:
        used = []
        for jobs in reader:
            writer.append("jobs", jobs)
            used.append(_regions_and_types({"jobs": jobs}))
        batch = reader.finish()
        rows = writer.rows.get("jobs", 0)
        if rows == 0 and batch.rejects:
            raise ImportRejected(batch.rejects[:MAX_REPORTED], len(batch.rejects))   # every row had a problem
        complete_world(store, name, batch, options, used=pd.concat(used, ignore_index=True) if used else None)
        for table, frame in batch.tables.items():
            writer.append(table, frame)
        writer.finish(batch.format, Path(source).name, sha, "jobs", batch.rejects)
    return _result(name, batch.format, rows, writer.import_id, batch.notes, batch.rejects)


def _result(name: str, fmt: str, rows: int, import_id: int, notes: list[str], rejects: list) -> IngestResult:
    rejected = len({problem.line for problem in rejects})
    notes = tuple(notes) + ((f"{rejected:,} row(s) with problems set aside ({len(rejects):,} "
                             f"problem(s)); they are listed by `meridian rejects {name}` and on the Data "
                             "page",) if rejected else ())
    return IngestResult(name, fmt, rows, import_id, notes=notes, rejected=rejected,
                        problems=len(rejects), rejects=tuple(rejects[:MAX_REPORTED]))


def ingest_folder(store: Store, folder: Path, dataset: str | None = None) -> IngestResult:
    """A folder written by `meridian sample` as one new dataset: its jobs, fleet, prices, regions,
    carbon, teams and utilisation, in one transaction (the recorded scheduler: per-pool FIFO)."""
    dataset = _chosen(dataset, str(folder))
    missing = [name for name in BUNDLE_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise ImportRejected.whole_file(str(folder), "a folder must be one written by `meridian sample`; this one "
                                                     f"lacks {', '.join(missing)}")
    digest = bundle_digest(folder)
    earlier = store.find_import(digest)
    if earlier is not None:
        return IngestResult(earlier[0], "sample", 0, None, duplicate_of=earlier[0],
                            notes=(f"identical content was already imported from {earlier[1]}",))
    if dataset is not None and store.dataset_exists(dataset):
        raise ImportRejected.whole_file(str(folder), f"dataset {dataset!r} exists already; a folder becomes a dataset "
                                                     "of its own (name another, or delete that one first)")
    batch = read_bundle(folder)
    name = dataset or _free_name(store, dataset_name_for(folder.name))
    import_id = store.add_import(name, batch, folder.name, digest)
    return IngestResult(name, "sample", batch.row_count, import_id, notes=tuple(batch.notes))


def _free_name(store: Store, base: str) -> str:
    name, n = base, 1
    while store.dataset_exists(name):
        n += 1
        name = f"{base}-{n}"
    return name


def complete_world(store: Store, dataset: str, batch: ImportBatch, options: ImportOptions, *,
                   used: pd.DataFrame | None = None) -> None:
    """Give every region and GPU type a time zone and prices, stating what was assumed.

    Regions the dataset does not describe get the import's time zone (or UTC); GPU types
    without a price get the default price book's on-demand/spot/reserved prices, marked assumed.
    `used`: the (region, gpu_type) pairs of jobs appended already (an import in chunks), besides the batch's.
    """
    used = _regions_and_types(batch.tables if used is None else {"used": used, **batch.tables})
    if used.empty:
        return
    known_regions = set(store.regions(dataset)["region"]) if store.dataset_exists(dataset) else set()
    if "regions" in batch.tables:
        known_regions |= set(batch.tables["regions"]["region"])
    missing = sorted(set(used["region"]) - known_regions)
    if missing:
        tz = options.tz or "UTC"
        extra = pd.DataFrame({"region": missing, "timezone": tz})
        batch.tables["regions"] = pd.concat([batch.tables.get("regions", pd.DataFrame()), extra], ignore_index=True)
        batch.notes.append(f"region(s) {', '.join(missing)} assumed to be in time zone {tz}")
    priced = store.prices(dataset) if store.dataset_exists(dataset) else pd.DataFrame(columns=["region", "gpu_type"])
    if "prices" in batch.tables:
        priced = pd.concat([priced, batch.tables["prices"]], ignore_index=True)
    have = set(zip(priced["region"], priced["gpu_type"]))
    rows = [r for region, gpu_type in used.itertuples(index=False) if (region, gpu_type) not in have
            for r in default_price_rows(region, gpu_type)]
    if rows:
        batch.tables["prices"] = pd.concat([batch.tables.get("prices", pd.DataFrame()), pd.DataFrame(rows)],
                                           ignore_index=True)
        batch.notes.append("GPU prices not in the file were taken from the default price book (marked assumed)")


def _regions_and_types(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The distinct (region, gpu_type) pairs of the jobs and fleet in `tables` (and of earlier pairs, "used"),
    and the regions of the utilisation; a missing region is DEFAULT_REGION, a missing GPU type 'unknown'."""
    parts = []
    for table in ("used", "jobs", "fleet"):
        frame = tables.get(table)
        if frame is not None and "region" in frame and "gpu_type" in frame:
            parts.append(frame[["region", "gpu_type"]])
        elif frame is not None and "region" in frame:
            parts.append(frame[["region"]].assign(gpu_type=None))
    util = tables.get("utilization")
    if util is not None:
        parts.append(util[["region"]].assign(gpu_type=None))
    if not parts:
        return pd.DataFrame(columns=["region", "gpu_type"])
    both = pd.concat(parts, ignore_index=True)
    both["region"] = both["region"].fillna(DEFAULT_REGION)
    both["gpu_type"] = both["gpu_type"].fillna("unknown").astype(str)
    return both.drop_duplicates().sort_values(["region", "gpu_type"]).reset_index(drop=True)

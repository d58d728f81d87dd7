"""Fuzzing the importers (hypothesis): a small valid file of each format, with a few of its fields
replaced by awkward values (infinities, huge numbers, dates past 2100, stray quotes and
delimiters, text where numbers belong), is either imported or rejected with errors that name
its lines; never another exception, and a rejected import leaves the database as it was. This is
how an infinite `gpu_milli` crashing the CSV importer and SWF times past 2100 failing inside
DuckDB were found."""
import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
SOURCES = {
    "jobs.csv": gzip.decompress((REPO / "sample_data" / "jobs.csv.gz").read_bytes()).decode().splitlines()[:12],
    "fleet.csv": (REPO / "sample_data" / "fleet.csv").read_text().splitlines()[:10],
    "prices.csv": (REPO / "sample_data" / "prices.csv").read_text().splitlines()[:8],
    "small.swf": (DATA / "swf" / "small.swf").read_text().splitlines(),
    "cluster_ny.txt": (DATA / "sacct" / "cluster_ny.txt").read_text().splitlines(),
    "gpu_busy.csv": (DATA / "utilization" / "gpu_busy.csv").read_text().splitlines()[:12],
}
NASTY = ["", "nan", "-1", "1e400", "inf", "-inf", "1e20", "-1e20", "9223372036854775808", "0", "1.5", " 4 ", "x",
         "2024-02-30T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
         "2024-05-01T10:00:00+25:00", "99999-00:00:00", "1-25:61:61", "Unknown", "gpu:a100:1e12", '"', ",", "|",
         "\t", "😀", "a" * 300]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = Store.open(tmp_path_factory.mktemp("fuzz") / "meridian.duckdb")
    ingest_bytes(store, "\n".join(SOURCES["jobs.csv"]).encode(), "base.csv")
    yield store
    store.close()


def _mutated(lines: list[str], edits, name: str) -> str:
    """`lines` with field (or, for the whitespace-separated SWF, word) of each edit replaced."""
    lines = list(lines)
    sep = "|" if name.endswith(".txt") else "," if name.endswith(".csv") else None
    for line, field, value in edits:
        k = line % len(lines)
        parts = lines[k].split(sep) or [""]
        parts[field % len(parts)] = value
        lines[k] = (sep or " ").join(parts)
    return "\n".join(lines)


def _fuzzed(examples: int):
    """A test over `examples` derandomised (file name, edits) cases."""
    cases = given(st.sampled_from(sorted(SOURCES)), st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99),
                                                                       st.sampled_from(NASTY)), min_size=1, max_size=4))
    return lambda test: settings(max_examples=examples, deadline=None, derandomize=True,
                                 suppress_health_check=[HealthCheck.function_scoped_fixture])(cases(test))


def _rejected_by_line(store, text: str, before, rejected: ImportRejected) -> None:
    assert rejected.errors and all(0 <= e.line <= text.count("\n") + 1 for e in rejected.errors)
    assert store.content_digest() == before


@_fuzzed(120)
def test_a_mangled_file_is_imported_or_rejected_by_line_and_loses_nothing(store, name, edits):
    text = _mutated(SOURCES[name], edits, name)
    before = store.content_digest()
    try:
        ingest_bytes(store, text.encode(), f"fuzz-{name}")
    except ImportRejected as rejected:
        _rejected_by_line(store, text, before, rejected)


@_fuzzed(80)
def test_keeping_the_valid_rows_imports_them_and_keeps_every_reject_or_loses_nothing(store, name, edits):
    text = _mutated(SOURCES[name], edits, name)
    before = store.content_digest()
    options = ImportOptions(keep_valid=True, tz="America/New_York" if name.endswith(".txt") else None)
    try:
        result = ingest_bytes(store, text.encode(), f"fuzz-kept-{name}", options=options)
    except ImportRejected as rejected:
        _rejected_by_line(store, text, before, rejected)
        return
    if result.import_id is None:
        return   # the same content was imported before
    stored = store.rejects(result.dataset)
    assert len(stored) == result.problems and stored["line"].nunique() == result.rejected
    assert all(1 <= line <= text.count("\n") + 1 for line in stored["line"])

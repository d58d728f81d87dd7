"""Benchmark: import the real HPC2N and CTC-SP2 SWF logs end to end (gunzip, parse, insert into DuckDB).

Times `ingest_path` into a fresh DuckDB file, best of 3, and the parser alone. Target (issue 2):
the 202,871-job HPC2N log in at most 5 s. Reads the logs from ../shared/traces/swf.

    .venv/bin/python benchmarks/bench_import_swf.py
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf"
LOGS = ("HPC2N-2002-2.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz")
REPEATS = 3


def best_ingest_s(path: Path) -> tuple[float, int]:
    """Best wall-clock seconds of `ingest_path` into a new database file, and the job count."""
    best, rows = float("inf"), 0
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as folder:
            store = Store.open(Path(folder) / "bench.duckdb")
            began = time.perf_counter()
            rows = ingest_path(store, path).rows
            best = min(best, time.perf_counter() - began)
            store.close()
    return best, rows


def best_parse_s(path: Path) -> float:
    data = path.read_bytes()
    best = float("inf")
    for _ in range(REPEATS):
        began = time.perf_counter()
        parse_swf(data, path.name, ImportOptions())
        best = min(best, time.perf_counter() - began)
    return best


def main() -> None:
    print(f"{'log':32} {'jobs':>8} {'ingest s':>9} {'parse s':>8}   (best of {REPEATS})")
    for name in LOGS:
        path = TRACES / name
        ingest_s, rows = best_ingest_s(path)
        print(f"{name:32} {rows:8d} {ingest_s:9.2f} {best_parse_s(path):8.2f}")


if __name__ == "__main__":
    main()

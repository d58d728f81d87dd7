"""Benchmark: peak memory (RSS) of `meridian ingest` against the size of the file (issue 28, item 3).

Imports, each in a fresh process and a fresh database, the real SDSC-BLUE SWF log (243,306 jobs) and
SWF logs made from it by repeating its job lines `copies` times (job ids renumbered, each copy's
submit times shifted past the previous copy's), gzipped, then the generic CSV of
`bench_import_csv.make_jobs` (gzipped with --csv-gzip: a CSV larger than the 512 MiB an import reads fits
gzipped). `--root` measures another tree's engine (a checkout of main: the figures before a change). The
process prints its resident set before the import (the floor: Python, pandas, DuckDB loaded) and its peak
after it (VmHWM, the high-water mark of the process's own memory; ru_maxrss would also count the memory
this script held when it started the process, such as the table it wrote the CSV from); both are in the
table with the peak's excess over the floor per MiB of text (the file once decompressed).

    nice .venv/bin/python benchmarks/bench_ingest_memory.py [--copies 1 4 8] [--csv-rows 1000000] [--csv-gzip]
        [--root /path/to/other/tree]
"""
from __future__ import annotations

import argparse
import gzip
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from engine.telemetry.input_limits import MIB

ROOT = Path(__file__).resolve().parents[1]
SDSC = ROOT.parent / "shared" / "traces" / "swf" / "SDSC-BLUE-2000-4.2-cln.swf.gz"
CHILD = """
import sys, time
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store
def status_mib(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
store = Store.open(sys.argv[2])
floor = status_mib('VmRSS:')
began = time.perf_counter()
rows = ingest_path(store, sys.argv[1]).rows
print(rows, floor, status_mib('VmHWM:'), time.perf_counter() - began)
"""


def swf_copies(copies: int, folder: Path) -> Path:
    """SDSC-BLUE's header and its job lines `copies` times over, gzipped."""
    text = gzip.decompress(SDSC.read_bytes()).decode()
    header = [line for line in text.splitlines() if line.startswith(";")]
    values = np.loadtxt(io.StringIO(text), comments=";")
    span = values[:, 1].max() + 1
    parts = []
    for k in range(copies):
        part = values.copy()
        part[:, 0] += k * len(values)
        part[:, 1] += k * span
        parts.append(part)
    body = np.concatenate(parts)
    buffer = io.StringIO()
    np.savetxt(buffer, body, fmt="%d")
    path = folder / f"sdsc-x{copies}.swf.gz"
    path.write_bytes(gzip.compress(("\n".join(header) + "\n" + buffer.getvalue()).encode(), compresslevel=6))
    return path


def csv_file(rows: int, folder: Path, zipped: bool) -> Path:
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_import_csv import make_jobs

    path = folder / f"jobs-{rows}.csv{'.gz' if zipped else ''}"
    make_jobs(rows).to_csv(path, index=False, compression={"method": "gzip", "compresslevel": 6, "mtime": 0}
                           if zipped else None)
    return path


def measure(path: Path, folder: Path, root: Path) -> None:
    text_bytes = len(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), str(folder / f"{path.name}.duckdb")],
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, check=False)
    if proc.returncode:
        print(f"| {path.name} | refused or failed: {proc.stderr.strip().splitlines()[-1]} |", flush=True)
        return
    rows, floor, peak, seconds = proc.stdout.split()[-4:]
    floor, peak = float(floor), float(peak)
    print(f"| {path.name} | {int(rows):,} | {path.stat().st_size / MIB:,.1f} | {text_bytes / MIB:,.1f} | "
          f"{floor:,.0f} | {peak:,.0f} | {(peak - floor) / (text_bytes / MIB):,.1f} | {float(seconds):,.1f} |",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="*", default=[1, 4, 8])
    parser.add_argument("--csv-rows", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--csv-gzip", action="store_true", help="gzip the CSVs")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree whose engine is measured")
    args = parser.parse_args()
    print("| file | rows | file MiB | text MiB | floor MiB | peak MiB | (peak - floor) / text | s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        measure(SDSC, folder, args.root)
        for copies in args.copies:
            if copies > 1:
                measure(swf_copies(copies, folder), folder, args.root)
        for rows in args.csv_rows:
            measure(csv_file(rows, folder, args.csv_gzip), folder, args.root)


if __name__ == "__main__":
    main()

"""How fast the sample generator and the sample loader are.

Prints, for each requested scale: jobs generated, seconds to generate and write the bundle,
its size on disk; and seconds to load the committed bundle into a fresh DuckDB file
(`ensure_sample`, what a first start does once).

Run from the repository root: .venv/bin/python benchmarks/bench_sample.py [--scale 1 11]
"""
from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.telemetry.sample import SAMPLE_DATASET, ensure_sample  # noqa: E402
from engine.telemetry.store import Store  # noqa: E402
from engine.telemetry.synth.generate import generate_sample  # noqa: E402


def generate(scale: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        paths = generate_sample(folder, scale=scale)
        seconds = time.perf_counter() - start
        jobs = gzip.decompress(paths["jobs"].read_bytes()).count(b"\n") - 1
        size_mb = sum(p.stat().st_size for p in paths.values()) / 2**20
    print(f"generate scale {scale:g}: {jobs:,} jobs in {seconds:.1f} s, {size_mb:.1f} MB")


def load(runs: int) -> None:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            store = Store.open(Path(folder) / "m.duckdb")
            start = time.perf_counter()
            ensure_sample(store)
            times.append(time.perf_counter() - start)
            rows = store.datasets().set_index("name").loc[SAMPLE_DATASET, "rows"]
            store.close()
    print(f"load committed sample ({rows:,} jobs) into a fresh database: best {min(times):.2f} s, "
          f"worst {max(times):.2f} s of {runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, nargs="*", default=[1.0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load(args.runs)
    for scale in args.scale:
        generate(scale)


if __name__ == "__main__":
    main()

"""Fingerprints of the engine's outputs, to show that a refactor or a speed-up changes no result.

For every bundled scenario (and the `recorded` baseline) on the whole sample, and for the HPC2N log
of the Parallel Workloads Archive (in ../shared or $MERIDIAN_SHARED) under FIFO, EASY backfilling
and its recorded scheduler, hashes the per-job table, the segments, the timeline, the decision log
and the KPIs (SHA-256 of each table's CSV text, floats written with repr precision), and writes them
as JSON. `--check FILE` compares against an earlier run and lists every hash that moved.

    .venv/bin/python benchmarks/hash_outputs.py --out before.json [--workers 2]
    .venv/bin/python benchmarks/hash_outputs.py --check before.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.recorded import recorded_baseline
from engine.scenario.spec import Scenario
from engine.service.experiments.public_data import DEFAULT_SHARED, ENVIRONMENT
from engine.service.run import run_scenario
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.swf import parse_swf
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
HPC2N = "HPC2N-2002-2.2-cln.swf.gz"
TABLES = ("jobs", "segments", "timeline", "decisions")


def _digest(frame: pd.DataFrame) -> str:
    text = frame.to_csv(index=False, float_format="%r", lineterminator="\n")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _inputs(source: str):
    if source == "sample":
        bundle = read_bundle().tables
        world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
        return bundle["jobs"], bundle["fleet"], world, "per-pool-fifo"
    path = Path(os.environ.get(ENVIRONMENT) or DEFAULT_SHARED) / "traces" / "swf" / source
    batch = parse_swf(path.read_bytes(), str(path), ImportOptions())
    return batch.tables["jobs"], batch.tables["fleet"], World(), batch.scheduler


def _scenario(name: str, scheduler: str | None) -> Scenario:
    return recorded_baseline(scheduler) if name == "recorded" else Scenario.load(SCENARIOS / f"{name}.toml")


def fingerprint(case: tuple[str, str]) -> tuple[str, dict[str, str]]:
    """(the case's label, {table: hash}) for one (source, scenario) pair."""
    source, name = case
    jobs, fleet, world, scheduler = _inputs(source)
    result = run_scenario(_scenario(name, scheduler), jobs, fleet, world)
    hashes = {table: _digest(getattr(result, table)) for table in TABLES}
    values = {key: repr(float(value)) for key, value in sorted(kpis(result).items())}
    hashes["kpis"] = hashlib.sha256(json.dumps(values, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{source}/{name}", hashes


def cases(with_hpc2n: bool) -> list[tuple[str, str]]:
    sample = [("sample", p.stem) for p in sorted(SCENARIOS.glob("*.toml"))] + [("sample", "recorded")]
    return sample + ([(HPC2N, name) for name in ("fifo", "easy-backfill", "recorded")] if with_hpc2n else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write the hashes to this JSON file")
    parser.add_argument("--check", help="compare with the hashes in this JSON file")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-hpc2n", dest="hpc2n", action="store_false", help="the sample's scenarios only")
    args = parser.parse_args()
    todo = cases(args.hpc2n)
    with ProcessPoolExecutor(args.workers) as pool:
        found = dict(sorted(pool.map(fingerprint, todo)))
    if args.out:
        Path(args.out).write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    if not args.check:
        print(json.dumps(found, indent=1))
        return 0
    before = json.loads(Path(args.check).read_text(encoding="utf-8"))
    moved = [f"{case} {table}" for case, tables in found.items() for table, digest in tables.items()
             if before.get(case, {}).get(table) != digest]
    print(f"{len(found)} cases, {sum(map(len, found.values()))} hashes; {len(moved)} moved")
    for line in moved:
        print(f"  moved: {line}")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())

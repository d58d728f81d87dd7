"""Run the full fidelity comparison and write engine/service/experiments/fidelity_record.json.

RLScheduler: the 100 published runs on Lublin-1 (5 orders x {none, compat} x 10 sequences);
FGD: 6 policies x 10 seeds (42-51) on openb_pod_list_default, seeds run by `--workers` processes;
the evolved queue order's three anchors (Lublin-1 with backfilling, HPC2N without and with: 200
trials on 10 training sequences each); the SC'15 backfilling experiment (5 EASY variants x {pyss,
textbook} on CTC-SP2, KTH-SP2 and SDSC-BLUE, Meridian's easy++-learned beside them, and the
runtime-prediction claim on each of those logs). The Fidelity page shows this record, because FGD's 60
runs and the searches take minutes.

    .venv/bin/python benchmarks/fidelity_record.py [--shared ../shared] [--workers 2] [--out FILE] [--allow-dirty]

The record names the commit it was made from, so it is made from a clean tree (committed changes
only; `--allow-dirty` records anyway and stamps it "with uncommitted changes", for trials). Prints
the summary and the seconds each experiment took.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.service.experiments import backfill, fgd, fidelity, rlscheduler  # noqa: E402
from engine.service.experiments.backfill_record import record_tables  # noqa: E402
from engine.service.experiments.public_data import DEFAULT_SHARED  # noqa: E402


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _relative(path: Path, shared: Path) -> str:
    """A trace's path relative to the shared folder (the record must not hold machine paths)."""
    try:
        return str(path.resolve().relative_to(shared.resolve()))
    except ValueError:
        return path.name


def _dump(doc: dict) -> str:
    """JSON with one table row per line, so a re-recorded file diffs row by row."""
    parts = []
    for key, value in doc.items():
        if isinstance(value, dict) and "data" in value:
            rows = ",\n    ".join(json.dumps(row) for row in value["data"])
            text = f'{{"columns": {json.dumps(value["columns"])},\n   "data": [\n    {rows}]}}'
        else:
            text = json.dumps(value)
        parts.append(f"  {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="folder holding traces/ and expected/")
    parser.add_argument("--workers", type=int, default=2, help="processes running FGD seeds (default 2)")
    parser.add_argument("--out", type=Path, default=fidelity.RECORD)
    parser.add_argument("--allow-dirty", action="store_true", help="record with uncommitted changes (a trial)")
    args = parser.parse_args(argv)
    inputs = fidelity.Inputs.under(args.shared)
    missing = inputs.missing() + [p for p in (args.shared / r for r in backfill.TRACES.values()) if not p.is_file()]
    if missing:
        print("missing: " + ", ".join(map(str, missing)), file=sys.stderr)
        return 2
    status = _git("status", "--porcelain", "--untracked-files=no")
    if status and not args.allow_dirty:
        print("the tree has uncommitted changes; commit them first (the record names its commit), or pass "
              "--allow-dirty for a trial record:\n" + status, file=sys.stderr)
        return 2

    t0 = time.perf_counter()
    runs = [(p, b) for p in rlscheduler.POLICIES for b in fidelity.RLS_BACKFILLS.values()]
    rls_rows = fidelity.compare_rlscheduler(fidelity.published_rlscheduler(inputs.rlscheduler_published),
                                            fidelity.run_rlscheduler(inputs.lublin_1, runs))
    t1 = time.perf_counter()
    fgd_results = fidelity.run_fgd(inputs.openb_nodes, inputs.openb_pods, fgd.POLICIES, fgd.SEEDS, args.workers)
    fgd_rows = fidelity.compare_fgd(fidelity.published_fgd(inputs.fgd_published), fgd_results, len(fgd.SEEDS))
    t2 = time.perf_counter()
    evolved = fidelity.run_evolved(inputs)
    t3 = time.perf_counter()
    backfill_rows, prediction_rows = record_tables(args.shared)
    t4 = time.perf_counter()

    meta = {
        "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python benchmarks/fidelity_record.py" + (f" --workers {args.workers}" if args.workers != 2 else ""),
        "commit": _git("rev-parse", "HEAD"),
        "dirty": bool(status) if status is not None else None,
        "inputs": {name: _relative(getattr(inputs, name), args.shared) for name in inputs.__dataclass_fields__},
        "backfill_inputs": backfill.TRACES,
        "fgd_seeds": list(fgd.SEEDS),
        "fgd_inflation": fgd.INFLATION,
        "seconds": {"rlscheduler": round(t1 - t0, 1), "fgd": round(t2 - t1, 1), "evolved": round(t3 - t2, 1),
                    "backfill": round(t4 - t3, 1)},
    }
    record = fidelity.Record(meta, rls_rows, fgd_rows, evolved, backfill_rows, prediction_rows)
    args.out.write_text(_dump(record.to_json()), encoding="utf-8")
    print(fidelity.summary(rls_rows, fgd_rows).to_string(index=False))
    print(f"RLScheduler {len(runs)} x {len(rlscheduler.START_INDICES)} sequences: {t1 - t0:.1f} s; "
          f"FGD {len(fgd.POLICIES)} policies x {len(fgd.SEEDS)} seeds, {args.workers} workers: {t2 - t1:.1f} s")
    print(evolved.drop(columns=["weights"]).to_string(index=False))
    print(f"evolved orders, {len(evolved)} anchors: {t3 - t2:.1f} s")
    print(backfill_rows.drop(columns=["jobs", "processors"]).to_string(index=False))
    print(f"SC'15 backfilling, {len(backfill_rows)} runs: {t4 - t3:.1f} s")
    print(prediction_rows.to_string(index=False))
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

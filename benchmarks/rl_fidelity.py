"""The reinforcement-learning scheduler's fidelity record: engine/service/rl/fidelity_rl.json.

Optionally first packages trained agents: `--package DB` copies the latest version of each of
lublin-1, lublin-1-backfill, hpc2n and hpc2n-backfill from the model registry beside the database
DB (trained with `meridian rl train`) into engine/policies/agents/ (the agent and its meta.json).
Then plays every run of engine/service/rl/fidelity.RUNS (the packaged agents on the ten test
sequences of Lublin-1, Lublin-2 and HPC2N, beside FCFS, SJF and F1) and writes the record.

    .venv/bin/python benchmarks/rl_fidelity.py [--package DB] [--shared ../shared] [--out FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.predict.rl.agent_registry import AGENT_FILE, AgentRegistry  # noqa: E402
from engine.service.experiments.public_data import DEFAULT_SHARED  # noqa: E402
from engine.service.rl import fidelity  # noqa: E402

AGENTS = ROOT / "engine" / "policies" / "agents"
PACKAGED = ("lublin-1", "lublin-1-backfill", "hpc2n", "hpc2n-backfill")


def package(db: str) -> None:
    registry = AgentRegistry.beside(db)
    for name in PACKAGED:
        version = registry.version(name)
        shutil.copyfile(version.path / AGENT_FILE, AGENTS / f"{name}.npz")
        (AGENTS / f"{name}.json").write_text(json.dumps(version.meta, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        print(f"packaged {name} v{version.number} from {version.path}")


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", metavar="DB", help="first copy the trained agents from the registry beside DB")
    parser.add_argument("--shared", default=str(DEFAULT_SHARED))
    parser.add_argument("--out", default=str(fidelity.RECORD))
    args = parser.parse_args()
    if args.package:
        package(args.package)
    began = time.perf_counter()
    doc = fidelity.run(args.shared, progress=lambda line: print(line, flush=True))
    doc["meta"] = {"created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "command": "benchmarks/rl_fidelity.py", "commit": _git("rev-parse", "HEAD"),
                   "seconds": time.perf_counter() - began, "load_average": os.getloadavg()[0]}
    Path(args.out).write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(fidelity.tables(doc)[0].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

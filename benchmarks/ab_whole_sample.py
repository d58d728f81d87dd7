"""A/B benchmark: every bundled scenario on the whole sample, in process, in two checkouts side by side.

One process per checkout, both started together (one per core on a 2-core machine), each loading the
sample once and running every `sample_data/scenarios/*.toml` of its own checkout in name order; each
scenario's CPU seconds (time.process_time, so waits for a core do not count) are printed side by side
with the change, and the count within the issue 22 target of 5 s.

    .venv/bin/python benchmarks/ab_whole_sample.py BEFORE_DIR AFTER_DIR
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

TARGET_S = 5.0

CHILD = """
import sys, time
from pathlib import Path
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World
bundle = read_bundle().tables
world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
for path in sorted(Path(sys.argv[1], "sample_data", "scenarios").glob("*.toml")):
    began = time.process_time()
    run_scenario(Scenario.load(path), bundle["jobs"], bundle["fleet"], world)
    print(path.stem, time.process_time() - began, flush=True)
"""


def cpu_seconds(output: str) -> dict[str, float]:
    return {name: float(s) for name, s in (line.split() for line in output.splitlines() if line.strip())}


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("before", type=Path)
    args.add_argument("after", type=Path)
    opts = args.parse_args()
    runs = [subprocess.Popen([sys.executable, "-c", CHILD, str(d.resolve())], cwd=d, text=True,
                             stdout=subprocess.PIPE, env={"PYTHONPATH": str(d.resolve()), "PATH": "/usr/bin:/bin"})
            for d in (opts.before, opts.after)]
    before, after = (cpu_seconds(run.communicate()[0]) for run in runs)
    print(f"{'scenario':28s} {'before s':>9s} {'after s':>9s} {'change':>8s}")
    for name in sorted(set(before) & set(after)):
        print(f"{name:28s} {before[name]:9.2f} {after[name]:9.2f} {100 * (after[name] / before[name] - 1):+7.1f}%")
    for label, times in (("before", before), ("after", after)):
        print(f"{label}: {sum(s <= TARGET_S for s in times.values())} of {len(times)} within {TARGET_S:g} s")


if __name__ == "__main__":
    main()

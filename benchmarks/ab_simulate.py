"""A/B benchmark: `meridian simulate --trace HPC2N --json` of two checkouts, interleaved, against the floor.

Each round runs the floor (bench_core.py's bare heapq FCFS replay), then both scenarios in checkout A,
then in checkout B, so that both see the same machine; the medians are printed in seconds and as
ratios to the floor's, with the peak memory, wall clock and CPU time (user + system; on a machine
shared with other work the wall clock swings with their load, the CPU time much less), and the two
checkouts' JSON outputs are compared byte for byte (a speed-up must change no result).

    .venv/bin/python benchmarks/ab_simulate.py BEFORE_DIR AFTER_DIR [--rounds 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import HPC2N, timed_process  # noqa: E402

SCENARIOS = ("easy-backfill", "fifo")


def simulate(checkout: Path, scenario: str) -> list[str]:
    return ["env", f"PYTHONPATH={checkout}", sys.executable, "-m", "engine.cli", "simulate", "--trace", str(HPC2N),
            "--scenario", str(checkout / "sample_data" / "scenarios" / f"{scenario}.toml"), "--json"]


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("before", type=Path)
    args.add_argument("after", type=Path)
    args.add_argument("--rounds", type=int, default=3)
    opts = args.parse_args()
    floor_cmd = [sys.executable, str(Path(__file__).resolve().parent / "bench_core.py"), "--floor", str(HPC2N)]
    times: dict[str, list] = {}
    outputs: dict[str, str] = {}
    for _ in range(opts.rounds):
        times.setdefault("floor", []).append(timed_process(floor_cmd))
        for label, checkout in (("before", opts.before.resolve()), ("after", opts.after.resolve())):
            for scenario in SCENARIOS:
                run = timed_process(simulate(checkout, scenario), checkout, output=True)
                times.setdefault(f"{label} {scenario}", []).append(run)
                outputs[f"{label} {scenario}"] = run.out
    base = statistics.median(r.seconds for r in times["floor"])
    base_cpu = statistics.median(r.cpu_s for r in times["floor"])
    print(f"floor (bare heapq FCFS replay of HPC2N, whole process): {base:.3f} s wall, {base_cpu:.3f} s CPU")
    for key, runs in times.items():
        if key != "floor":
            wall, cpu = statistics.median(r.seconds for r in runs), statistics.median(r.cpu_s for r in runs)
            print(f"  {key:28s} {wall:7.2f} s  {wall / base:5.1f}x floor  |  CPU {cpu:7.2f} s  {cpu / base_cpu:5.1f}x "
                  f"floor  |  peak {max(r.peak_mb for r in runs):6,.0f} MB")
    for scenario in SCENARIOS:
        same = outputs[f"before {scenario}"] == outputs[f"after {scenario}"]
        print(f"  {scenario}: JSON output {'identical' if same else 'DIFFERS'}")


if __name__ == "__main__":
    main()

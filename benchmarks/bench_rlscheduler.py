"""Benchmark: the RLScheduler reproduction and whole-log replays.

1. The 100 published runs on Lublin-1 (5 queue orders x {none, compat} x 10 sequences of 1,024
   jobs), and the same 50 runs per mode for textbook EASY and conservative backfilling.
2. FCFS without backfilling and FCFS + EASY over the whole HPC2N log (202,871 jobs, 240 nodes) as
   one sequence. Target (issue 3): at most 10 s each.
Best of REPEATS wall-clock seconds; the log is loaded once, outside the timings.

    .venv/bin/python benchmarks/bench_rlscheduler.py
"""
from __future__ import annotations

import time
from pathlib import Path

from engine.service.experiments.rlscheduler import POLICIES, START_INDICES, run_sequence
from engine.service.experiments.swf_jobs import load_swf_jobs

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swf"
REPEATS = 3


def best_s(run) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


def sequences(jobs, modes) -> None:
    for mode in modes:
        for policy in POLICIES:
            for start in START_INDICES:
                run_sequence(jobs, start, policy, mode)


def main() -> None:
    lublin = load_swf_jobs(TRACES / "lublin_256.swf")
    print(f"{'Lublin-1, 1,024-job sequences':44} {'runs':>5} {'best s':>7} {'ms/run':>7} {'jobs/s':>9}")
    for label, modes in (("none + compat (the published 100)", ("none", "compat")),
                         ("none", ("none",)), ("compat", ("compat",)),
                         ("easy", ("easy",)), ("conservative", ("conservative",))):
        runs = len(modes) * len(POLICIES) * len(START_INDICES)
        seconds = best_s(lambda: sequences(lublin, modes))
        print(f"{label:44} {runs:5d} {seconds:7.2f} {1000 * seconds / runs:7.1f} {runs * 1024 / seconds:9,.0f}")

    hpc2n = load_swf_jobs(TRACES / "HPC2N-2002-2.2-cln.swf.gz")
    n = len(hpc2n)
    print(f"\n{'HPC2N whole log, one sequence':44} {'jobs':>7} {'best s':>7} {'jobs/s':>9}  bsld    util")
    for policy, mode in (("FCFS", "none"), ("FCFS", "easy")):
        result = run_sequence(hpc2n, 0, policy, mode, length=n)
        seconds = best_s(lambda: run_sequence(hpc2n, 0, policy, mode, length=n))
        print(f"{policy + ' + ' + mode:44} {n:7d} {seconds:7.2f} {n / seconds:9,.0f}  "
              f"{result.avg_bounded_slowdown:6.1f}  {result.utilization:.3f}")


if __name__ == "__main__":
    main()

"""Benchmark: the SC'15 backfilling experiment (meridian experiment backfill) on the CTC-SP2 log.

Each of the five schedulers in both modes over the whole filtered log (77,199 jobs, 338 processors),
as a ratio to a floor measured in the same run: a bare heapq FCFS replay of the same jobs without
backfilling (one pool, start the queue's head while it fits). Best of REPEATS wall-clock seconds;
the log is loaded once, outside the timings.

    .venv/bin/python benchmarks/bench_backfill_experiment.py [--shared ../shared]
"""
from __future__ import annotations

import argparse
import heapq
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench_rlscheduler import REPEATS, best_s  # noqa: E402  (best of REPEATS wall-clock seconds)

from engine.service.experiments import backfill  # noqa: E402
from engine.service.experiments.backfill_trace import load_pyss_trace  # noqa: E402
from engine.service.experiments.public_data import DEFAULT_SHARED  # noqa: E402


def fcfs_floor(trace) -> list[int]:
    """Start times under plain FCFS on one pool: the least any replay of these jobs must do."""
    submit, run, procs = trace.submit_s.tolist(), trace.run_s.tolist(), trace.procs.tolist()
    start, ends, queue, free, i, n = [0] * len(submit), [], deque(), trace.processors, 0, len(submit)
    while i < n or queue:
        now = min(submit[i] if i < n else float("inf"), ends[0][0] if ends else float("inf"))
        while ends and ends[0][0] == now:
            free += procs[heapq.heappop(ends)[1]]
        while i < n and submit[i] == now:
            queue.append(i)
            i += 1
        while queue and procs[queue[0]] <= free:
            job = queue.popleft()
            start[job], free = now, free - procs[job]
            heapq.heappush(ends, (now + run[job], job))
    return start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    args = parser.parse_args(argv)
    trace = load_pyss_trace(args.shared / backfill.TRACES["CTC-SP2"])
    floor = best_s(lambda: fcfs_floor(trace))
    print(f"CTC-SP2, {len(trace):,} jobs: FCFS floor {floor:.2f} s (best of {REPEATS})")
    print(f"{'scheduler':<15} {'mode':<9} {'seconds':>8} {'x floor':>8}")
    for name in backfill.SCHEDULERS:
        for mode in backfill.MODES:
            seconds = best_s(lambda: backfill.run_one(trace, name, mode))
            print(f"{name:<15} {mode:<9} {seconds:>8.2f} {seconds / floor:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

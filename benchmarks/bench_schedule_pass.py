"""Benchmark: one scheduling pass over 10,000 queued jobs on a 2,000-node fleet (issue 3, point 8).

The fleet: 2,000 nodes of 8 GPUs in one region. At time 0, 2,000 jobs of 8 GPUs fill every
node (the first 64 for an hour, the others for 1-2 hours); at time 1, 10,000 jobs arrive (1, 2,
4 or 8 GPUs, one in ten a gang of 2-4 whole nodes, 10 min to 10 h requested) and wait. At one
hour the first 64 jobs end, and the timed step is the scheduling pass that follows
(`_Run._schedule`, with the finishes already applied): jobs start from the head while they fit,
and under EASY every other waiting job is examined as a backfill candidate and given its
reason. Each repetition rebuilds that state (a deep copy would break the views the fleet state's
arrays share). The pass is timed with the garbage collector paused, as it is during every run.
Target: at most 5 ms median.

    .venv/bin/python benchmarks/bench_schedule_pass.py [--repeat 15]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from engine.policies import registry
from engine.policies.bundle import Policies
from engine.sim.output.collector import collector_paused
from engine.sim.simulator import _Run
from engine.sim.state.events import FINISH
from engine.sim.state.workload import build_workload

NODES, GPUS, QUEUED, ENDING = 2_000, 8, 10_000, 64
T0 = pd.Timestamp("2026-01-01")


def workload(seed: int = 7):
    rng = np.random.default_rng(seed)
    fleet = pd.DataFrame({"region": "r", "cluster": "c", "node": [f"n{i:04d}" for i in range(NODES)],
                          "gpu_type": "H100", "gpus": GPUS, "cpus": 96, "memory_gib": 1024,
                          "rack": [f"k{i // 32}" for i in range(NODES)], "tier": "reserved"})
    gpus = np.concatenate([np.full(NODES, GPUS), rng.choice([1, 2, 4, 8], QUEUED)])
    nodes = np.concatenate([np.ones(NODES, int), np.where(rng.random(QUEUED) < 0.1, rng.integers(2, 5, QUEUED), 1)])
    gpus = np.where(nodes > 1, GPUS * nodes, gpus)
    fill_s = np.concatenate([np.full(ENDING, 3600.0), rng.uniform(3601, 7200, NODES - ENDING)])
    run_s = np.concatenate([fill_s, rng.uniform(600, 36_000, QUEUED)])
    submit = np.concatenate([np.zeros(NODES), np.ones(QUEUED)])
    jobs = pd.DataFrame({"job_id": [f"j{i:05d}" for i in range(len(gpus))],
                         "submit_utc": T0 + pd.to_timedelta(submit, unit="s"), "start_utc": T0,
                         "end_utc": T0 + pd.to_timedelta(run_s, unit="s"), "gpus": gpus, "gpu_type": "H100",
                         "nodes": nodes, "cpus": nodes * 8, "memory_gib": nodes * 64, "region": "r",
                         "status": "completed", "requested_runtime_s": run_s})
    return build_workload(jobs, fleet)


def prepared(work, backfill: str, placement: str) -> _Run:
    """The state just before the timed pass: 10,000 waiting, 64 jobs just ended."""
    policies = Policies(registry.make("order", "fcfs"), registry.make("placement", placement),
                        registry.make("backfill", backfill), registry.make("admission", "accept-all"))
    run = _Run(work, policies, seed=0, timer_s=0.0, world=None)
    for _ in range(2):  # the arrivals at 0 (all start) and at 1 (all wait)
        now, batch = run.events.pop_batch()
        for _, j in batch:
            run._arrive(j, now)
        run._schedule("r", now)
    for j in range(ENDING):
        run._finish(j, 3600.0, False)
    run.freed["r"] = True
    run.events = type(run.events)()  # the pass only pushes the started jobs' finishes
    assert run.queues["r"].count == QUEUED and FINISH == 0
    return run


def measure(backfill: str, placement: str, repeat: int) -> None:
    work, times, started = workload(), [], 0
    for _ in range(repeat):
        run = prepared(work, backfill, placement)
        with collector_paused():  # as in every run (engine.sim.simulator.simulate)
            began = time.perf_counter()
            run._schedule("r", 3600.0)
            times.append(time.perf_counter() - began)
        started = QUEUED - run.queues["r"].count
    print(f"  fcfs + {backfill:5s} + {placement:9s}  median {statistics.median(times) * 1000:6.2f} ms  "
          f"min {min(times) * 1000:6.2f} ms  ({started} started, {QUEUED - started:,} examined and left waiting)")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--repeat", type=int, default=15)
    opts = args.parse_args()
    print(f"one scheduling pass: {QUEUED:,} queued jobs, {NODES:,} nodes x {GPUS} GPUs")
    for backfill, placement in (("none", "first-fit"), ("easy", "first-fit"), ("easy", "best-fit")):
        measure(backfill, placement, opts.repeat)


if __name__ == "__main__":
    main()

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

Then every backfilling variant of issue 25 (VARIANTS) on the same pass, first-fit placement, as a
ratio to the pass without backfilling measured in the same run (the floor). EASY++ runs on the same
jobs with 100 users named (its prediction needs them; the 64 jobs that just ended are its history).
Lookahead decides once per pass (its dynamic programme over the first 50 candidates, timed on its own
too); adaptive passes at the strategy in force (the first, EASY, between decisions), and each daily
decision replays the last day's jobs (here all 12,000) under each of its strategies: its cost per
decision is timed separately (`--decisions`: that alone), with DECIDED as the strategies. These are CPU times of the process (time.process_time), so that a
shared machine's waits for a core do not count.

    .venv/bin/python benchmarks/bench_schedule_pass.py [--repeat 15] [--decisions]
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


DECIDED = "easy,easy-sjbf,selective"  # the adaptive decision timed: its default list without conservative, whose
# replay of this 10,000-deep queue would take a pass of about 80 ms per finish, minutes per decision
VARIANTS = [("easy", {}), ("easy-sjbf", {}), ("easy++", {}), ("lookahead", {}), ("list", {}), ("selective", {}),
            ("selective", {"adaptive": True}), ("conservative", {}), ("adaptive", {})]


def workload(seed: int = 7, users: bool = False):
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
    if users:
        jobs["user_name"] = [f"u{i % 100}" for i in range(len(jobs))]
    return build_workload(jobs, fleet)


def prepared(work, backfill: str, placement: str, params: dict | None = None) -> _Run:
    """The state just before the timed pass: 10,000 waiting, 64 jobs just ended."""
    policies = Policies(registry.make("order", "fcfs"), registry.make("placement", placement),
                        registry.make("backfill", backfill, **(params or {})), registry.make("admission", "accept-all"))
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


def timed(work, backfill: str, placement: str, repeat: int, params: dict | None = None,
          clock=time.perf_counter) -> tuple[list[float], int]:
    """The pass's times (s, by `clock`) over `repeat` rebuilt states, and how many jobs it started."""
    times, started = [], 0
    for _ in range(repeat):
        run = prepared(work, backfill, placement, params)
        with collector_paused():  # as in every run (engine.sim.simulator.simulate)
            began = clock()
            run._schedule("r", 3600.0)
            times.append(clock() - began)
        started = QUEUED - run.queues["r"].count
    return times, started


def measure(backfill: str, placement: str, repeat: int) -> None:
    times, started = timed(workload(), backfill, placement, repeat)
    print(f"  fcfs + {backfill:5s} + {placement:9s}  median {statistics.median(times) * 1000:6.2f} ms  "
          f"min {min(times) * 1000:6.2f} ms  ({started} started, {QUEUED - started:,} examined and left waiting)")


def variants(repeat: int) -> None:
    """Each variant's pass as a ratio to the floor (no backfilling) measured here; Markdown rows."""
    work, named = workload(), workload(users=True)
    cpu = time.process_time  # the process's CPU time: on a shared machine a wall clock counts the waits for a core
    floors = timed(work, "none", "first-fit", repeat, clock=cpu)[0]
    floor, floor_min = statistics.median(floors), min(floors)
    print(f"\n| backfill (first-fit placement) | median pass, CPU ms | ratio to no backfilling ({floor * 1000:.2f} ms) "
          f"| fastest pass, CPU ms | ratio to the fastest without ({floor_min * 1000:.2f} ms) | started |"
          "\n|---|---:|---:|---:|---:|---:|")
    for key, params in VARIANTS:
        times, started = timed(named if key == "easy++" else work, key, "first-fit", repeat, params, cpu)
        name = key + "".join(f" {k}={v}" for k, v in params.items())
        print(f"| {name} | {statistics.median(times) * 1000:.2f} | {statistics.median(times) / floor:.1f} | "
              f"{min(times) * 1000:.2f} | {min(times) / floor_min:.1f} | {started} |", flush=True)
    decisions(work, floor)


def decisions(work, floor: float) -> None:
    """Lookahead's dynamic programme alone, and one adaptive decision, on the same state."""
    from engine.policies.lookahead_kernels import best_set

    rng = np.random.default_rng(3)
    units, long = rng.choice([1000.0, 2000.0, 4000.0, 8000.0], 50), rng.random(50) < 0.5
    best_set(units, long, 64 * 8000.0, 16 * 8000.0)  # loads the compiled kernel from numba's cache
    began = time.process_time()
    for _ in range(20):
        best_set(units, long, 64 * 8000.0, 16 * 8000.0)
    dp = (time.process_time() - began) / 20
    run = prepared(work, "adaptive", "first-fit", {"strategies": DECIDED})
    began = time.process_time()
    run.adaptive.decide("r", 3600.0 - 86_400.0, 3600.0, 0)
    decision = time.process_time() - began
    print(f"\nlookahead's dynamic programme, 50 candidates, 512 GPUs free, 128 extra: {dp * 1000:.2f} ms per "
          f"decision ({dp / floor:.1f}x the floor); adaptive, one decision (the last day's {QUEUED + NODES:,} jobs "
          f"replayed under {DECIDED}): {decision:.1f} s ({decision / floor:,.0f}x the floor)")


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--repeat", type=int, default=15)
    args.add_argument("--decisions", action="store_true", help="only lookahead's and adaptive's decision costs")
    opts = args.parse_args()
    print(f"one scheduling pass: {QUEUED:,} queued jobs, {NODES:,} nodes x {GPUS} GPUs")
    if opts.decisions:
        work = workload()
        decisions(work, statistics.median(timed(work, "none", "first-fit", opts.repeat, clock=time.process_time)[0]))
        return
    for backfill, placement in (("none", "first-fit"), ("easy", "first-fit"), ("easy", "best-fit")):
        measure(backfill, placement, opts.repeat)
    variants(opts.repeat)


if __name__ == "__main__":
    main()

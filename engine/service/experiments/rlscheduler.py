"""RLScheduler's heuristic baselines (Zhang et al., SC'20) re-run on an SWF log.

Ten sequences of 1,024 consecutive jobs, starting at the published indices, each replayed on an
empty cluster (see `rlscheduler_replay`) under one queue order and one backfill mode, scored by
- average bounded slowdown: mean over the jobs of max(1, (wait + run) / max(run, 10 s));
- utilization: sum(run x processors) / ((start of the last job to start - submit of the first
  job) x MaxProcs).
Means are over the sequences.

WFP3 and UNICEP age jobs by their wait. The published code computes that wait from a start time
that is still -1 (wait = -1 - submit), and its numbers only reproduce with that quirk, so this
experiment evaluates them at a clock of -1 s unless `true_wait` is set; the product's own
policies always use the true wait.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.policies.registry import make
from engine.service.experiments.rlscheduler_backfill import MODES
from engine.service.experiments.rlscheduler_replay import JobQueue, Replay, Sequence, replay

if TYPE_CHECKING:
    from engine.service.experiments.swf_jobs import SwfJobs

START_INDICES = (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085)
SEQUENCE_LENGTH = 1024
POLICIES = {"FCFS": "fcfs", "SJF": "sjf", "WFP3": "wfp3", "UNICEP": "unicep", "F1": "f1"}
BOUNDED_SLOWDOWN_TAU_S = 10.0
AUTHORS_CLOCK_S = -1.0   # the published WFP3/UNICEP wait is computed as if the time were -1 s
EXIT_BAD_INPUT = 2


class ExperimentError(ValueError):
    """The experiment cannot run on this input (e.g. a sequence beyond the end of the log)."""


@dataclass(frozen=True)
class SequenceResult:
    """One sequence's scores: the mean bounded slowdown (>= 1) and the utilization (0-1; 0 when
    every job starts at the first submit time)."""

    start: int
    avg_bounded_slowdown: float
    utilization: float


def sequence_of(jobs: SwfJobs, start: int, length: int = SEQUENCE_LENGTH) -> Sequence:
    """Jobs start .. start + length - 1 of an `SwfJobs`, on its cluster."""
    if start < 0 or length < 1 or start + length > len(jobs):
        raise ExperimentError(f"{jobs.source}: a sequence of {length} jobs from index {start} does not fit "
                              f"in the log's {len(jobs)} jobs")
    window = slice(start, start + length)
    nodes = jobs.nodes[window]
    too_big = np.flatnonzero(nodes > jobs.max_nodes)
    if len(too_big):
        first = start + too_big[0]
        raise ExperimentError(f"{jobs.source}: job {jobs.job_id[first]} asks for {jobs.procs[first]:g} processors, "
                              f"more than the cluster's {jobs.max_procs}")
    return Sequence(jobs.submit_s[window], jobs.run_s[window], jobs.requested_s[window], jobs.procs[window],
                    nodes, jobs.max_nodes, jobs.procs_per_node)


def allowed_starts(n_jobs: int, length: int = SEQUENCE_LENGTH, test: tuple[int, ...] = START_INDICES,
                   test_length: int = SEQUENCE_LENGTH) -> np.ndarray:
    """Every start of a `length`-job sequence that shares no job with a `test_length`-job test sequence
    starting at `test`; an ExperimentError when the log has none."""
    allowed = np.ones(max(n_jobs - length + 1, 0), bool)
    for s in test:
        allowed[max(0, s - length + 1):s + test_length] = False
    candidates = np.flatnonzero(allowed)
    if not len(candidates):
        raise ExperimentError(f"the log's {n_jobs} jobs leave no {length}-job sequence apart from the test sequences")
    return candidates


def run_sequence(jobs: SwfJobs, start: int, policy: str, backfill: str, *, length: int = SEQUENCE_LENGTH,
                 true_wait: bool = False) -> SequenceResult:
    """Replay one sequence under `policy` (a key of POLICIES) and `backfill` (a key of MODES)."""
    if policy not in POLICIES:
        raise ExperimentError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    if backfill not in MODES:
        raise ExperimentError(f"unknown backfill mode {backfill!r}; choose from {', '.join(MODES)}")
    return replay_order(jobs, start, make("order", POLICIES[policy]), backfill, length=length,
                        fixed_now_s=None if true_wait else AUTHORS_CLOCK_S)


def replay_order(jobs: SwfJobs, start: int, order, backfill: str, *, length: int = SEQUENCE_LENGTH,
                 fixed_now_s: float | None = None) -> SequenceResult:
    """Replay one sequence under any order policy object (a published heuristic, or one being searched)."""
    sequence, state = replay_window(jobs, start, order, backfill, length=length, fixed_now_s=fixed_now_s)
    return score(start, sequence, state)


def replay_window(jobs: SwfJobs, start: int, order, backfill: str, *, length: int = SEQUENCE_LENGTH,
                  fixed_now_s: float | None = None) -> tuple[Sequence, Replay]:
    """The sequence from `start` and its finished replay under `order` and `backfill`."""
    sequence = sequence_of(jobs, start, length)
    queue = JobQueue(sequence, order, authors_ties=backfill == "compat", fixed_now_s=fixed_now_s)
    return sequence, replay(sequence, queue, MODES[backfill])


def score(start: int, sequence: Sequence, state: Replay) -> SequenceResult:
    """The bounded slowdown and utilization of a finished replay (see the module docstring)."""
    wait_s = state.start_s - sequence.submit_s
    span_s = state.now_s - sequence.submit_s[0]
    work = float(np.sum(sequence.run_s * sequence.procs))
    max_procs = sequence.cluster_nodes * sequence.procs_per_node
    utilization = work / (span_s * max_procs) if span_s > 0 else 0.0
    return SequenceResult(start, float(bounded_slowdown(wait_s, sequence.run_s).mean()), utilization)


def bounded_slowdown(wait_s: np.ndarray, run_s: np.ndarray) -> np.ndarray:
    """Per job: max(1, (wait + run) / max(run, 10 s))."""
    return np.maximum(1.0, (wait_s + run_s) / np.maximum(run_s, BOUNDED_SLOWDOWN_TAU_S))


def run_experiment(jobs: SwfJobs, policy: str, backfill: str, *, starts=START_INDICES, length: int = SEQUENCE_LENGTH,
                   true_wait: bool = False) -> dict:
    """Every sequence and the means, as the JSON of `meridian experiment rlscheduler --json`."""
    results = [run_sequence(jobs, s, policy, backfill, length=length, true_wait=true_wait) for s in starts]
    return {
        "mean": {
            "avg_bounded_slowdown": float(np.mean([r.avg_bounded_slowdown for r in results])),
            "utilization": float(np.mean([r.utilization for r in results])),
        },
        "sequences": [
            {"start": r.start, "avg_bounded_slowdown": r.avg_bounded_slowdown, "utilization": r.utilization}
            for r in results
        ],
    }


def add_parser(experiment_sub) -> None:
    """Register `meridian experiment rlscheduler`."""
    p = experiment_sub.add_parser(
        "rlscheduler", help="RLScheduler (SC'20) heuristic baselines on an SWF log",
        description="Replay ten 1,024-job sequences of an SWF log (plain or gzip) as RLScheduler did and print "
                    "each sequence's and the mean average bounded slowdown and utilization.")
    p.add_argument("--trace", required=True, help="SWF log, plain or .gz")
    p.add_argument("--policy", required=True, choices=list(POLICIES))
    p.add_argument("--backfill", default="none", choices=list(MODES),
                   help="none; compat = the published code's backfilling; easy; conservative (default none)")
    p.add_argument("--true-wait", action="store_true",
                   help="age WFP3/UNICEP by the true wait instead of the published code's (-1 - submit)")
    p.add_argument("--starts", type=_starts, default=START_INDICES, metavar="I,J,...",
                   help="sequence start indices (default: the ten published ones)")
    p.add_argument("--length", type=int, default=SEQUENCE_LENGTH, help="jobs per sequence (default 1024)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_rlscheduler)


def _starts(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes comma-separated integers, got {text!r}") from None


def cmd_rlscheduler(args) -> int:
    from engine.service.experiments.swf_jobs import load_swf_jobs, print_rejected
    from engine.telemetry.errors import ImportRejected

    try:
        jobs = load_swf_jobs(args.trace)
    except ImportRejected as exc:
        print_rejected(exc)
        return EXIT_BAD_INPUT
    try:
        result = run_experiment(jobs, args.policy, args.backfill, starts=args.starts, length=args.length,
                                true_wait=args.true_wait)
    except ExperimentError as exc:
        print(f"meridian: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    wait = "true wait" if args.true_wait else "published wait"
    print(f"RLScheduler replay of {jobs.source}: policy {args.policy} ({wait}), backfill {args.backfill}, "
          f"{len(args.starts)} sequences of {args.length} jobs on {jobs.max_nodes} nodes x "
          f"{jobs.procs_per_node:g} processors")
    print(f"{'start':>7}  {'avg bounded slowdown':>20}  {'utilization':>11}")
    for row in result["sequences"]:
        print(f"{row['start']:>7}  {row['avg_bounded_slowdown']:>20.2f}  {row['utilization']:>11.3f}")
    mean = result["mean"]
    print(f"{'mean':>7}  {mean['avg_bounded_slowdown']:>20.2f}  {mean['utilization']:>11.3f}")
    return 0

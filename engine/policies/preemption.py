"""Preemption policies (family "preemption"): which running jobs may be evicted for a waiting one.

Every policy has one method, `choose(request: PreemptRequest, running: RunningView) -> np.ndarray`:
the positions in `running` of the jobs it would evict for `request`, most willingly evicted first
(empty: none). The simulator (engine.sim.cycle.preempt) then evicts the fewest of them, in that order,
that make room for the waiting job on some node (whole nodes for a gang job). An evicted job loses
the work since its last checkpoint (the queue class's `checkpoint_s`, or the policy's
`checkpoint_s` when >= 0), goes back to its queue with the rest of its work, and keeps its place
in the order. A policy is asked for the job at the head of a blocked queue, for a quota holder that
wants its lent quota back (`request.reclaim`), and for jobs of guaranteed queues, which may evict
any non-guaranteed job whatever its runtime or preemption count (the capacity guarantee).
A policy may also have `time_key(now_s, starts) -> hashable` (starts: the running jobs' start
times, ascending, a list): for the same request and the same running jobs, two moments with equal
keys get the same choice, so the simulator reuses its last one (engine.sim.state.running_view); without
it, every question is asked. And it may have `choose_running(request, jobs, run, borrowing, holder, now_s)
-> job ids`: the same choice as `choose(request, run.view(jobs, borrowing, holder, now_s))`, from the
run's per-job figures (`RunFigures`) without building the view. And `suspects(request, run) -> bool per job`:
the jobs of the run it could ever choose for `request`, whatever runs and whenever (a superset: the
simulator asks it about a request only while a job of one of their queue classes runs).

- "none": never evicts (jobs of guaranteed queues then wait like any other).
- "priority": evicts jobs of a lower tier (queue class priority, then the recorded priority),
  only those of preemptible queues unless `only_preemptible` is off; with `reclaim`, also jobs of
  holders borrowing above their nominal quota when the waiting job is within its own. Never jobs
  that ran less than `min_runtime_s` since they started, or that were evicted `max_preemptions`
  times already. Cheapest first: lowest tier, lowest priority, then the most recently started
  (the least work lost).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from engine.core.bounds import TEN_YEARS_S
from engine.policies.registry import register

FAMILY = "preemption"
# engine.policies.preemption_kernels, imported with the first choice: numba costs a process about 0.2 s, which runs
# without priority preemption need not pay (an import statement in `choose` cost 0.6 us per call)
kernels = None


class PreemptRequest(NamedTuple):
    """The waiting job: tier (its queue class priority 0-1), priority (recorded field), guaranteed
    (its queue is guaranteed), reclaim (its holder is within its nominal quota and others borrow).
    A named tuple, as RunningView: built at every question, cheaper than a frozen dataclass."""

    tier: float
    priority: float
    guaranteed: bool
    reclaim: bool


class RunningView(NamedTuple):
    """Running jobs that could be evicted, one entry each: index (job id), tier, priority,
    ran_s (seconds since this run started), start_s, preemptions (evictions so far), borrowing (its
    holder holds more than its nominal quota, bool), same_holder (bool), preemptible (its queue is
    preemptible, bool), guaranteed (bool)."""

    index: np.ndarray
    tier: np.ndarray
    priority: np.ndarray
    ran_s: np.ndarray
    start_s: np.ndarray
    preemptions: np.ndarray
    borrowing: np.ndarray
    same_holder: np.ndarray
    preemptible: np.ndarray
    guaranteed: np.ndarray


class RunFigures(NamedTuple):
    """The figures of every job of a run that a `RunningView` gathers, indexed by job id: tier,
    priority, start_s (of its current piece of running), preemptions, holder (its quota holder's code),
    preemptible, guaranteed."""

    tier: np.ndarray
    priority: np.ndarray
    start_s: np.ndarray
    preemptions: np.ndarray
    holder: np.ndarray
    preemptible: np.ndarray
    guaranteed: np.ndarray

    def view(self, jobs: np.ndarray, borrowing: np.ndarray, holder: int, now_s: float) -> RunningView:
        """The RunningView of the running `jobs` (ids, ascending) at `now_s` for a request of `holder`;
        `borrowing`: per holder, whether it holds more than its nominal quota."""
        start, held = self.start_s[jobs], self.holder[jobs]
        return RunningView(index=jobs, tier=self.tier[jobs], priority=self.priority[jobs], ran_s=now_s - start,
                           start_s=start, preemptions=self.preemptions[jobs], borrowing=borrowing[held],
                           same_holder=held == holder, preemptible=self.preemptible[jobs],
                           guaranteed=self.guaranteed[jobs])


@register(FAMILY, "none", inert=True)
@dataclass(frozen=True)
class NoPreemption:
    """Running jobs are never evicted."""

    checkpoint_s = -1.0

    def choose(self, request: PreemptRequest, running: RunningView) -> np.ndarray:
        return np.zeros(0, np.int64)


@register(FAMILY, "priority")
@dataclass(frozen=True)
class PriorityPreemption:
    """Evict lower-tier (or borrowing) jobs for a blocked job, checkpoint-aware."""

    only_preemptible: bool = field(default=True, metadata={
        "help": "evict by priority only jobs of preemptible queues (off: any lower tier)"})
    reclaim: bool = field(default=True, metadata={
        "help": "evict jobs of holders borrowing quota when the waiting job is within its nominal quota"})
    min_runtime_s: float = field(default=600.0, metadata={"help": "a job runs at least this long before it may be evicted"})
    max_preemptions: int = field(default=3, metadata={"help": "a job is evicted at most this many times"})
    checkpoint_s: float = field(default=-1.0, metadata={
        "help": "checkpoint interval of every job, s (-1: each queue class's; 0: no checkpoints)",
        "unit": "s", "min": -1.0, "max": TEN_YEARS_S})

    def __post_init__(self) -> None:
        if self.min_runtime_s < 0 or self.max_preemptions < 0:
            raise ValueError("min_runtime_s and max_preemptions must be >= 0")
        if self.checkpoint_s < 0 and self.checkpoint_s != -1.0:
            raise ValueError(f"checkpoint_s must be >= 0, or -1 for each queue class's, got {self.checkpoint_s}")

    def choose(self, request: PreemptRequest, running: RunningView) -> np.ndarray:
        global kernels
        if kernels is None:
            from engine.policies import preemption_kernels as kernels
        return kernels.victims(running.tier, running.priority, running.start_s, running.ran_s, running.preemptions,
                               running.borrowing, running.same_holder, running.preemptible, running.guaranteed,
                               request.tier, request.priority, request.guaranteed, request.reclaim,
                               self.only_preemptible, self.reclaim, self.min_runtime_s, self.max_preemptions)

    def choose_running(self, request: PreemptRequest, jobs: np.ndarray, run: RunFigures, borrowing: np.ndarray,
                       holder: int, now_s: float) -> np.ndarray:
        """`choose` of `run.view(jobs, borrowing, holder, now_s)`, as job ids, in one compiled call (no
        view built: a region's running jobs change at every start and stop)."""
        global kernels
        if kernels is None:
            from engine.policies import preemption_kernels as kernels
        return kernels.victims_among(jobs, run.tier, run.priority, run.start_s, run.preemptions, run.holder,
                                     run.preemptible, run.guaranteed, borrowing, holder, now_s, request.tier,
                                     request.priority, request.guaranteed, request.reclaim, self.only_preemptible,
                                     self.reclaim, self.min_runtime_s, self.max_preemptions)

    def suspects(self, request: PreemptRequest, run: RunFigures) -> np.ndarray:
        """Per job of the run (bool): `choose` could evict it for `request`, by the job's constant figures
        (tier, priority, queue flags): any non-guaranteed job for a guaranteed or reclaiming request (a
        holder's borrowing changes), else those of a lower tier or priority (preemptible ones only, with
        `only_preemptible`)."""
        could = ~run.guaranteed
        if request.guaranteed or self.reclaim and request.reclaim:
            return could
        lower = (run.tier < request.tier) | ((run.tier == request.tier) & (run.priority < request.priority))
        if self.only_preemptible:
            lower &= run.preemptible
        return could & lower

    def time_key(self, now_s: float, starts: list[float]) -> int:
        """`choose` reads the time only through ran_s >= min_runtime_s, which stays true once a job
        has run that long: for the same running jobs, the same count of them past min_runtime_s
        means the same ones, so the same choice. The count is a bisection: the jobs that ran that
        long (now_s - start >= min_runtime_s, as `choose` computes it) are the earliest starts."""
        return bisect.bisect_left(starts, True, key=lambda start: not now_s - start >= self.min_runtime_s)

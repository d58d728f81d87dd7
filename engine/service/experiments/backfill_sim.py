"""The EASY family on one processor pool: an event loop with a pyss-compatible mode and a textbook one.

Both modes share the scheduling pass of EASY (Lifka 1995; Mu'alem and Feitelson, TPDS 2001):
1. start waiting jobs in arrival order while the first one fits now;
2. reserve for the first waiting job (the head) its earliest start in the availability profile
   built from the running jobs' expected ends (start + current prediction): the shadow time, and
   the processors left over there (extra);
3. try the other waiting jobs in the candidate order (arrival order, or shortest prediction first
   for SJBF, ties by arrival); a candidate starts if it fits now and does not delay the reservation,
   i.e. it ends (now + prediction) by the shadow time or takes at most the extra processors.
Predictions come from `backfill_predict`; a running job that outlives its prediction gets a new one
from the corrector at that moment.

The modes differ only in when passes run:
- textbook: every event time runs one pass after all its events (completions, prediction expiries,
  submissions) have been applied;
- pyss (the SC'15 simulator, Gaussier et al.): every event is handled on its own, in pyss's order at
  equal times (prediction expiries, then submissions in log order, then completions in the order the
  jobs started), and
  * a completion runs a pass (so simultaneous completions give several passes, and submissions at the
    same time are scheduled before those completions free their processors);
  * a submission runs a pass, except under `pass_on_submit_if_fits` (pyss's EASY scheduler) where it
    runs one only if the new job fits now (kept for fidelity: it changes none of the experiment's
    figures on CTC-SP2);
  * a prediction expiry only extends the job's expected end, with no pass.
  A job whose expected end is now but whose completion is not yet handled counts as free.
Times are whole seconds; results are deterministic.
"""
from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from dataclasses import dataclass

import numpy as np

from engine.service.experiments.backfill_predict import Corrector, Predictor

_EXPIRY, _SUBMIT, _END = 0, 1, 2       # pyss's order of events at the same time


@dataclass(frozen=True)
class Scheduler:
    """One EASY variant: how jobs are predicted and corrected, and the candidate order."""

    predictor: Predictor
    corrector: Corrector
    shortest_first: bool                   # SJBF candidate order (else arrival order)
    pass_on_submit_if_fits: bool = False   # pyss's EASY: a submission runs a pass only if the job fits now


def simulate(submit, run, requested, procs, user, processors: int, scheduler: Scheduler,
             mode: str = "pyss") -> np.ndarray:
    """Start time of every job (int64 seconds) under `scheduler` in `mode` ("pyss" or "textbook").
    Inputs are per-job integer sequences in log order; every job needs 1..processors processors."""
    if mode not in ("pyss", "textbook"):
        raise ValueError(f"unknown mode {mode!r}; choose pyss or textbook")
    return _Run(submit, run, requested, procs, user, processors, scheduler, mode == "pyss").go()


class _Run:
    def __init__(self, submit, run, requested, procs, user, processors, scheduler, pyss):
        self.submit = [int(v) for v in submit]
        self.run = [int(v) for v in run]
        self.requested = [int(v) for v in requested]
        self.procs = [int(v) for v in procs]
        self.user = [int(v) for v in user]
        self.total = int(processors)
        self.sched = scheduler
        self.predictor = scheduler.predictor.fresh()
        self.pyss = pyss
        n = len(self.submit)
        self.start = [-1] * n
        self.pred = [0] * n
        self.corrections = [0] * n
        self.initial = [0] * n
        self.queue: list[int] = []              # waiting jobs in arrival order
        self.by_pred: list[tuple[int, int]] = []  # waiting jobs as (prediction, arrival), for SJBF
        self.running: list[tuple[int, int]] = []  # running jobs as (expected end, job), sorted
        self.expected_end = [0] * n
        self.busy = 0                            # processors of running jobs whose completion is unhandled
        self.starts = 0
        self.events = [(s, _SUBMIT, i, i) for i, s in enumerate(self.submit)]
        heapq.heapify(self.events)

    def go(self) -> np.ndarray:
        events, pyss = self.events, self.pyss
        while events:
            now, kind, _, job = heapq.heappop(events)
            self._apply(now, kind, job)
            if pyss:
                if kind == _END or (kind == _SUBMIT and not (
                        self.sched.pass_on_submit_if_fits and self.procs[job] > self._free_now(now))):
                    self._pass(now)
            elif not events or events[0][0] != now:
                self._pass(now)
        return np.asarray(self.start, dtype=np.int64)

    def _apply(self, now: int, kind: int, job: int) -> None:
        if kind == _SUBMIT:
            pred = self.predictor.predict(self.run[job], self.requested[job], self.user[job], job)
            self.pred[job] = self.initial[job] = pred
            self.queue.append(job)
            if self.sched.shortest_first:
                insort(self.by_pred, (pred, job))
        elif kind == _END:
            self.predictor.observe(self.user[job], self.run[job])
            self._drop_running(job)
            self.busy -= self.procs[job]
        else:   # the job outlived its prediction
            self.corrections[job] += 1
            new = self.sched.corrector(self.pred[job], self.initial[job], self.requested[job], self.corrections[job])
            self._drop_running(job)
            self.pred[job] = new
            self._add_running(job)
            if new < self.run[job]:
                heapq.heappush(self.events, (self.start[job] + new, _EXPIRY, 0, job))

    def _free_now(self, now: int) -> int:
        """Processors free now: jobs whose expected end is now count as free."""
        free = self.total - self.busy
        for end, job in self.running:
            if end > now:
                break
            free += self.procs[job]
        return free

    def _pass(self, now: int) -> None:
        queue, procs = self.queue, self.procs
        free = self._free_now(now)
        while queue and procs[queue[0]] <= free:
            job = queue.pop(0)
            if self.sched.shortest_first:
                self.by_pred.pop(bisect_left(self.by_pred, (self.pred[job], job)))
            self._start(job, now)
            free -= procs[job]
        if len(queue) <= 1 or free <= 0:
            return
        head = queue[0]
        shadow, extra = self._reservation(now, free, procs[head])
        pred = self.pred
        order = [j for _, j in self.by_pred] if self.sched.shortest_first else queue[1:]
        started = []
        for job in order:
            need = procs[job]
            if need > free or job == head:
                continue
            if now + pred[job] <= shadow:
                free -= need
            elif need <= extra:
                free -= need
                extra -= need
            else:
                continue
            started.append(job)
            if free <= 0:
                break
        for job in started:
            queue.remove(job)
            if self.sched.shortest_first:
                self.by_pred.pop(bisect_left(self.by_pred, (pred[job], job)))
            self._start(job, now)

    def _reservation(self, now: int, free: int, need: int) -> tuple[int, int]:
        """The head's shadow time (first expected end after which `need` processors are free) and the
        processors free then beyond its need."""
        procs, running = self.procs, self.running
        k, n = 0, len(running)
        while k < n and running[k][0] <= now:
            k += 1
        while k < n:
            end = running[k][0]
            while k < n and running[k][0] == end:
                free += procs[running[k][1]]
                k += 1
            if free >= need:
                return end, free - need
        raise AssertionError("a job needs more processors than the machine has")

    def _start(self, job: int, now: int) -> None:
        self.start[job] = now
        self.starts += 1
        self._add_running(job)
        self.busy += self.procs[job]
        heapq.heappush(self.events, (now + self.run[job], _END, self.starts, job))
        if self.pred[job] < self.run[job]:
            heapq.heappush(self.events, (now + self.pred[job], _EXPIRY, 0, job))

    def _add_running(self, job: int) -> None:
        end = self.start[job] + self.pred[job]
        self.expected_end[job] = end
        insort(self.running, (end, job))

    def _drop_running(self, job: int) -> None:
        self.running.pop(bisect_left(self.running, (self.expected_end[job], job)))

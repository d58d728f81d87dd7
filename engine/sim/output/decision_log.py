"""The decision log and each job's reason (engine.core.reasons) of a simulation run: one entry per
decision (time, job, code) in three parallel lists, and the reason a job waits or never ran.

`DecisionLog` is a part of `_Run` (engine.sim.simulator) kept in its own file; it reads and writes
the run's `reason`, `parked` and `log_*` state.
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

from engine.core.reasons import CAPACITY

FEW = 20  # jobs that `mark` takes one by one: below about 20, fewer Python steps than its numpy calls cost


class DecisionLog:
    """Logging steps of a run (mixed into engine.sim.simulator._Run)."""

    def decide(self, now: float, j: int, reason: int) -> None:
        """Job j's reason is now `reason` (logged)."""
        self.reason[j] = reason
        self.log(now, j, reason)

    def log(self, now: float, j: int, code: int) -> None:
        self.log_t.append(now)
        self.log_j.append(j)
        self.log_c.append(code)

    def block(self, now: float, j: int, reason: int) -> None:
        """Job j waits for `reason`: logged when that is a change."""
        if self.reason[j] != reason:
            self.reason[j] = reason
            self.log(now, j, reason)

    def mark(self, now: float, jobs: np.ndarray, reason: int) -> None:
        """`block` for many jobs at once, in order (those parked by their quota keep their own reason):
        one by one up to FEW jobs, else with numpy, the jobs whose reason changes (usually few) found
        first and the parked ones dropped from those."""
        if len(jobs) <= FEW:
            current, parked = self.reason, self.parked
            for j in jobs.tolist():
                if current[j] != reason and not parked[j]:
                    current[j] = reason
                    self.log(now, j, reason)
            return
        changed = jobs[self.reason[jobs] != reason]
        if len(changed):
            changed = changed[~self.parked[changed]]
        if len(changed):
            self.reason[changed] = reason
            self.log_t.extend(repeat(now, len(changed)))
            self.log_j.extend(changed.tolist())
            self.log_c.extend(repeat(reason, len(changed)))

    def wait_for_capacity(self, new: list[int], now: float) -> None:
        """A pass in which no job can start: the new arrivals wait for capacity."""
        if len(new) == 1:  # mark's scalar case (most passes), without numpy
            if not self.parked[new[0]]:
                self.block(now, new[0], CAPACITY)
        else:
            self.mark(now, np.asarray(new, np.int64), CAPACITY)

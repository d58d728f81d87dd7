"""The running jobs of a region as a preemption policy sees them, and its choice among them.

`RunningViews.choose(region, now, holder, request)` asks the preemption policy
(engine.policies.preemption) which of the region's running jobs it would evict for `request`. A
policy with `choose_running` is handed the running job ids, ascending, with the run's per-job
figures (`RunFigures`: a job's tier, recorded priority, queue flags, holder, piece start and
eviction count) and gathers what it reads itself; any other gets the `RunningView` of them. Per
region the ids, the holders' `borrowing` (it changes with their usage) and the start times are
taken once per set of running jobs (again when the planner's `version` of the region has moved:
every start and stop bumps it) and shared by every request until the set changes.

A blocked head is often asked about again with nothing started or stopped since, only later. With
a policy that has `time_key(now_s, starts)` (equal keys: the same choice for the same request and
running jobs), the region's last choice is reused while the version, the request, the holder and
the time key are the same.
"""
from __future__ import annotations

import numpy as np

from engine.core.traits import setting
from engine.policies.preemption import PreemptRequest, RunFigures


class RunningViews:
    """Per region: its running jobs (with their planner version) and the policy's last choice there."""

    def __init__(self, sharing) -> None:
        self.sharing = sharing
        policy = sharing.policy
        self.cached: dict[str, tuple] = {}
        self.time_key = setting(policy, "preemption", "time_key")
        self.choose_running = setting(policy, "preemption", "choose_running")
        self.last: dict[str, tuple] = {}  # region -> (version, request, holder, time key, choice)
        s = sharing
        self.figures = RunFigures(s.tier, s.run.w.priority, s.seg_start, s.preemptions, s.holder, s.preemptible,
                                  s.guaranteed_mask)
        self.lending = np.zeros(int(s.holder.max(initial=-1)) + 1, bool)  # no quota gate: no holder borrows

    def _running(self, region: str) -> tuple:
        """(version, the ids of the jobs running in `region` now ascending, per holder whether it
        holds more than its nominal quota, their start times ascending as a list)."""
        planner = self.sharing.planner
        version = planner.version[region]
        entry = self.cached.get(region)
        if entry is None or entry[0] != version:
            s = self.sharing
            running = np.array(planner.jobs[region], np.int64)
            borrowing = s.gate.borrowing(s.usage(region), s.index[region]) if s.gated else self.lending
            entry = (version, running, borrowing, np.sort(s.seg_start[running]).tolist())
            self.cached[region] = entry
        return entry

    def choose(self, region: str, now: float, h: int, request: PreemptRequest) -> list[int]:
        """The running jobs of `region` the policy would evict for `request` of holder h at `now`,
        in its order."""
        version, running, borrowing, starts = self._running(region)
        if not len(running):
            return []
        key = self.time_key(now, starts) if self.time_key is not None else None
        last = self.last.get(region)
        if key is not None and last is not None and last[:4] == (version, request, h, key):
            return list(last[4])
        if self.choose_running is not None:
            choice = self.choose_running(request, running, self.figures, borrowing, h, now).tolist()
        else:
            view = self.figures.view(running, borrowing, h, now)
            choice = running[self.sharing.policy.choose(request, view)].tolist()
        self.last[region] = (version, request, h, key, choice)
        return choice

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
the time key are the same. The keys are taken only then (the start times sorted once per set of
running jobs, when first needed): most sets of running jobs are asked about once.
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
        self.cached: dict[str, list] = {}
        self.time_key = setting(policy, "preemption", "time_key")
        self.choose_running = setting(policy, "preemption", "choose_running")
        self.last: dict[str, list] = {}  # region -> [version, request, holder, moment, choice, its time key or None]
        s = sharing
        self.figures = RunFigures(s.tier, s.run.w.priority, s.seg_start, s.preemptions, s.holder, s.preemptible,
                                  s.guaranteed_mask)
        self.none_borrow = np.zeros(int(s.holder.max(initial=-1)) + 1, bool)  # no quota gate: no holder borrows

    def _running(self, region: str) -> list:
        """[version, the ids of the jobs running in `region` now ascending, per holder whether it
        holds more than its nominal quota, their start times ascending as a list (None until a time key needs them)]."""
        planner = self.sharing.planner
        version = planner.version[region]
        entry = self.cached.get(region)
        if entry is None or entry[0] != version:
            s = self.sharing
            running = np.array(planner.jobs[region])  # int64: a machine array of "q"
            borrowing = s.gate.borrowing(s.usage(region), s.index[region]) if s.gated else self.none_borrow
            entry = self.cached[region] = [version, running, borrowing, None]
        return entry

    def choose(self, region: str, now: float, h: int, request: PreemptRequest) -> list[int]:
        """The running jobs of `region` the policy would evict for `request` of holder h at `now`,
        in its order."""
        entry = self._running(region)
        version, running, borrowing, _ = entry
        if not len(running):
            return []
        last = self.last.get(region)
        if self.time_key is not None and last is not None and last[0] == version and last[1] == request \
                and last[2] == h:
            if entry[3] is None:
                entry[3] = np.sort(self.sharing.seg_start[running]).tolist()
            if last[5] is None:
                last[5] = self.time_key(last[3], entry[3])
            if self.time_key(now, entry[3]) == last[5]:
                return list(last[4])
        if self.choose_running is not None:
            choice = self.choose_running(request, running, self.figures, borrowing, h, now).tolist()
        else:
            view = self.figures.view(running, borrowing, h, now)
            choice = running[self.sharing.policy.choose(request, view)].tolist()
        self.last[region] = [version, request, h, now, choice, None]
        return choice

"""The running jobs of a region as a preemption policy sees them, and its choice among them.

`RunningViews.choose(region, now, holder, request)` asks the preemption policy
(engine.policies.preemption) which of the region's running jobs it would evict for `request`, from
a `RunningView` of them, ascending by job id. A job's tier, recorded priority, queue flags, holder,
piece start and eviction count do not change while it runs, so per region they are gathered once
per set of running jobs (again when the planner's `version` of the region has moved: every start
and stop bumps it, and changes the holders' usage, hence `borrowing`, also kept) and shared by
every request until the set changes (policies only read them); only ran_s (now - start) and
same_holder are computed per request.

A blocked head is often asked about again with nothing started or stopped since, only later. With
a policy that has `time_key(now_s, starts)` (equal keys: the same choice for the same request and
running jobs), the region's last choice is reused while the version, the request, the holder and
the time key are the same.
"""
from __future__ import annotations

import numpy as np

from engine.core.traits import setting
from engine.policies.preemption import PreemptRequest, RunningView


class RunningViews:
    """Per region: the cached figures of its running jobs (with their planner version) and the
    policy's last choice there."""

    def __init__(self, sharing) -> None:
        self.sharing = sharing
        self.cached: dict[str, tuple] = {}
        self.time_key = setting(sharing.policy, "preemption", "time_key")
        self.last: dict[str, tuple] = {}  # region -> (version, request, holder, time key, choice)

    def _figures(self, region: str) -> tuple:
        """(version, index, tier, priority, start_s, preemptions, holder, preemptible, guaranteed,
        borrowing, the start times ascending as a list) of the jobs running in `region` now."""
        planner = self.sharing.planner
        version = planner.version[region]
        entry = self.cached.get(region)
        if entry is None or entry[0] != version:
            s = self.sharing
            running = np.array(planner.jobs[region], np.int64)
            start, holder = s.seg_start[running], s.holder[running]
            if s.gated:  # per job, whether its holder holds more than its nominal quota
                borrowing = s.gate.borrowing(s.usage(region), s.index[region])[holder]
            else:
                borrowing = np.zeros(len(running), bool)
            entry = (version, running, s.tier[running], s.run.w.priority[running], start, s.preemptions[running],
                     holder, s.preemptible[running], s.guaranteed_mask[running], borrowing, np.sort(start).tolist())
            self.cached[region] = entry
        return entry

    def choose(self, region: str, now: float, h: int, request: PreemptRequest) -> list[int]:
        """The running jobs of `region` the policy would evict for `request` of holder h at `now`,
        in its order."""
        version, index, tier, priority, start, preemptions, holder, preemptible, guaranteed, borrowing, starts = \
            self._figures(region)
        if not len(index):
            return []
        key = self.time_key(now, starts) if self.time_key is not None else None
        last = self.last.get(region)
        if key is not None and last is not None and last[:4] == (version, request, h, key):
            return list(last[4])
        view = RunningView(index=index, tier=tier, priority=priority, ran_s=now - start, start_s=start,
                           preemptions=preemptions, borrowing=borrowing, same_holder=holder == h,
                           preemptible=preemptible, guaranteed=guaranteed)
        choice = index[self.sharing.policy.choose(request, view)].tolist()
        self.last[region] = (version, request, h, key, choice)
        return choice

"""Users who give up: a job that has not started when its user's patience runs out leaves the queue.

A job's patience comes from the telemetry (engine.sim.state.workload: a job recorded as cancelled before
it ever started waited end - submit seconds, then its user withdrew it; the sample's autoscaler
withdraws an inference replica not placed within an hour). Under any scenario the job gives up at
submit + patience if it has not started by then, wherever it waits (its region's queue, the
guaranteed queue, parked by its quota, held by the timing policy or moving its data); started
before, it runs (for its requested runtime: its real one was never recorded). At equal times the
give-up comes first: a job whose patience ends at t does not start at t. It is recorded with the
reason "gave-up", never started, and `wait_s` the time it waited before leaving.
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.reasons import GAVE_UP, TURNED_AWAY
from engine.sim.processes.base import WorldProcess

GIVEUP = 13


class Patience(WorldProcess):
    """The give-up events of one run (`_Run.patience`, a process of every run: the per-job table's
    wait_s reads it); `gave_up_s[j]` is when job j left (NaN: never)."""

    kinds = (GIVEUP,)
    cause = "users giving up on waiting jobs"

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        region = self.expire(payload, now)
        return [] if region is None else [region]

    def __init__(self, run, patience_s: np.ndarray | None) -> None:
        self.run = run
        n = len(run.w)
        self.gave_up_s = np.full(n, np.nan)
        self.gone: set[int] = set()  # the jobs that gave up (`left` asks it: cheaper than reading gave_up_s)
        if patience_s is None:
            return
        for j in np.flatnonzero(np.isfinite(patience_s)).tolist():
            run.events.push(run.submit[j] + float(patience_s[j]), GIVEUP, j)

    def left(self, j: int) -> bool:
        """Job j gave up already (its deferred arrival or data transfer ends after its patience)."""
        return j in self.gone

    def expire(self, j: int, now: float) -> str | None:
        """Job j's patience ends now: take it out of wherever it waits; returns its region (a pass
        there may now start the jobs behind it), or None when it started or was turned away before."""
        run = self.run
        if not math.isnan(run.start[j]) or int(run.reason[j]) in TURNED_AWAY:
            return None
        region = run.region_name[j]
        queue, key = run.queues[region], run.key_of[j]
        vip = run.sharing.vip[region]
        queued = True
        if queue.mask[key]:
            queue.remove(key)
        elif j in vip:
            vip.remove(j)
        elif run.parked[j]:
            run.sharing.withdraw(j, region)
            run.parked[j] = False
        else:
            queued = False  # not arrived yet: held back by the timing policy, or its data still moving
        if queued:
            run.count_waiting(j, region, -1)
        self.gave_up_s[j] = now
        self.gone.add(j)
        run.decide(now, j, GAVE_UP)
        run.freed[region] = True  # the jobs behind it get a full pass
        return region

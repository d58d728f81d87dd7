"""Queue order under time-dependent orders, recomputed every `recalc_s` seconds as Slurm does.

An order policy with `recalc_s` > 0 (multifactor priority: Slurm's PriorityCalcPeriod) has its
keys computed for every waiting job of a region at most once per `recalc_s`; in between, the
region's order is the cached one, with jobs that joined the queue since (arrivals, evicted jobs,
jobs back from the quota gate) keyed at the moment they are first seen and merged in. Without
`recalc_s` (or 0) every pass keys the whole queue. Ties end in the job index, as `queue_order`.
"""
from __future__ import annotations

import numpy as np

from engine.policies.ordering import queue_order


class OrderCache:
    """Per region: when the keys were computed, the ordered waiting jobs and their keys."""

    def __init__(self, policy, n_jobs: int) -> None:
        self.policy = policy
        self.every_s = float(getattr(policy, "recalc_s", 0.0) or 0.0)
        self.known = np.zeros(n_jobs, bool)  # in some region's cache
        self.cached: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}

    def order(self, view_of, region: str, jobs: np.ndarray, waiting: np.ndarray, now: float) -> np.ndarray:
        """The waiting `jobs` (ascending job ids) in order. `view_of(jobs)` builds their QueueView
        (with the ledger at `now`); `waiting[j]` says whether job j waits in the region now."""
        if self.every_s <= 0:
            return jobs[queue_order(self.policy, view_of(jobs), now)]
        entry = self.cached.get(region)
        if entry is None or now - entry[0] >= self.every_s:
            if entry is not None:
                self.known[entry[1]] = False
            keys = self.policy.keys(view_of(jobs), now)
            return self._store(region, now, jobs, keys)
        since, ids, keys = entry
        still = waiting[ids]
        if not still.all():
            self.known[ids[~still]] = False
            ids, keys = ids[still], keys[:, still]
        new = jobs[~self.known[jobs]]
        if not len(new):  # the cached order, less the jobs that left: still in order
            self.cached[region] = (since, ids, keys)
            return ids
        ids = np.concatenate([ids, new])
        keys = np.concatenate([keys, self.policy.keys(view_of(new), now)], axis=1)
        return self._store(region, since, ids, keys)

    def _store(self, region: str, since: float, ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
        perm = np.lexsort((ids, *keys[::-1]))
        ids, keys = ids[perm], keys[:, perm]
        self.known[ids] = True
        self.cached[region] = (since, ids, keys)
        return ids

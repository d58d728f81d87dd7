"""Queue order under time-dependent orders, recomputed every `recalc_s` seconds as Slurm does.

An order policy with `recalc_s` > 0 (multifactor priority: Slurm's PriorityCalcPeriod) has its
keys computed for every waiting job of a region at most once per `recalc_s`; in between, the
region's order is the cached one, with jobs that joined the queue since (arrivals, evicted jobs,
jobs back from the quota gate) keyed at the moment they are first seen and merged in. Without
`recalc_s` (or 0) every pass keys the whole queue. Ties end in the job index, as `queue_order`.

A policy with a `keyer(view)` (multifactor) keys subsets of the run's view of every job without
building a view per subset; the others get `view.take(jobs)` with the ledger.

A queue of one job needs no keys to be in order: a lone job that would be keyed now keeps the ledger
view of now instead (`Later`), and is keyed from it only when a job joins it in the cached order,
with the same figures and time, so with the same keys (most lone jobs start or leave before). That
needs a `keyer` (it reads only the teams' decayed usage, which a view keeps past later changes of the
ledger); other orders key a lone job at once. With `defer` (the caller's promise that a job that starts
cannot come back to the queue and that trying a job changes no ledger), a lone job does not even ask
for the view until `settle`, after the pass tried it, and only if it still waits.

The cached jobs that left the queue are dropped at the next order, unless the queue counts no removal
since the region's last order (a pass that starts nothing, most passes of a full cluster): then every
cached job still waits and the cached order is read as it is, and a recalculation keys the cached jobs
when they are all the waiting ones. The jobs to merge in are found by a scan of the queue, unless one
job joined: the latest arrival, checked against the cache (`_unknown`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.core.kernel_entry import Entries
from engine.core.traits import setting
from engine.core.views import QueueView
from engine.sim.state.queue import WaitingQueue

_NONE = np.zeros(0, np.int64)  # no job
# engine.core.order_kernels, imported with the first cached order: numba costs a process about 0.2 s, which runs
# without one need not pay
kernels = None


class Later(NamedTuple):
    """A lone job's keys, to compute when needed: the ledger view and the time it is keyed at."""

    shares: object
    now: float


class OrderCache:
    """Per region: when the keys were computed, the ordered waiting jobs and their keys."""

    def __init__(self, policy, n_jobs: int) -> None:
        self.policy = policy
        self.every_s = float(setting(policy, "order", "recalc_s") or 0.0)
        self.known = np.zeros(n_jobs, bool)  # in some region's cache
        self.cached: dict[str, tuple[float, np.ndarray, np.ndarray | Later | None]] = {}
        self.view: QueueView | None = None
        self.keyer = None
        self.pending: tuple[str, float, int, np.ndarray] | None = None  # a deferred lone job: region, since, j, [j]
        self.removed: dict[str, tuple] = {}  # per region: its queue and the queue's `removed` at its last order
        self.skip = None  # keys[:skip:-1], the levels sorted on: all (None) or all but the first (0)

    def order(self, view: QueueView, shares_of, region: str, queue: WaitingQueue, now: float,
              defer: bool = False) -> np.ndarray:
        """The jobs waiting in `queue` (its keys are job ids) in order. `view`: the run's view of
        every job; `shares_of()`: the ledger at `now` (asked only when jobs are keyed); `defer`: see
        the module docstring (then call `settle` once the pass has tried the first job)."""
        ids = self._order(view, shares_of, region, queue, now, defer)
        self.removed[region] = (queue, queue.removed)  # every job cached now waits in this queue
        return ids

    def _order(self, view: QueueView, shares_of, region: str, queue: WaitingQueue, now: float,
               defer: bool) -> np.ndarray:
        if self.every_s <= 0:
            jobs = _waiting(queue)
            if len(jobs) == 1:
                return jobs
            keys = self._keys(view, shares_of(), jobs, now)
            return jobs[np.lexsort((jobs, *keys[::-1]))]
        entry = self.cached.get(region)
        if defer and queue.count == 1 and entry is not None and not len(entry[1]):
            # a quiet region (nothing cached, one job waits), the most common pass: no numpy on the way
            j = queue.lo
            if now - entry[0] >= self.every_s:
                return self._defer(region, now, j)
            if not self.known[j]:
                return self._defer(region, entry[0], j)
        if entry is None or now - entry[0] >= self.every_s:
            if entry is not None and 1 < len(entry[1]) == queue.count and self._all_wait(region, queue):
                jobs = np.sort(entry[1])  # every waiting job is cached: the queue's keys, without a scan
            else:
                if entry is not None:
                    self.known[entry[1]] = False
                jobs = _waiting(queue)
                if len(jobs) == 1:
                    return self._alone(view, shares_of, region, now, jobs, now, defer)
            return self._store(region, now, jobs, self._keys(view, shares_of(), jobs, now))
        since, ids, keys = entry
        _load_kernels()
        if isinstance(keys, np.ndarray):
            if not self._all_wait(region, queue):
                args = (ids, keys, queue.mask, self.known)
                ids, keys = _entry(kernels.still_waiting, keys.dtype.char, args)(*args)
        elif len(ids) and not queue.mask[ids[0]]:  # the lone job (its keys `Later`) left
            self.known[ids] = False
            ids, keys = _NONE, None
        if len(ids) < queue.count:
            new = self._unknown(queue, ids)
        else:  # every waiting job is in the cache: no scan of the queue
            new = ids[:0]
        if not len(new):  # the cached order, less the jobs that left: still in order
            self.cached[region] = (since, ids, keys)
            return ids
        if not len(ids):
            if len(new) == 1:
                return self._alone(view, shares_of, region, since, new, now, defer)
            return self._store(region, since, new, self._keys(view, shares_of(), new, now))
        if isinstance(keys, Later):
            keys = np.ascontiguousarray(self._keys(view, keys.shares, ids, keys.now))
        self.known[new] = True  # the cached jobs are known already
        # the cached order is sorted: merged with the new jobs, it is np.lexsort's order of them all
        first = 0 if self.skip is None else 1  # the first level sorted on
        args = (ids, keys, new, np.ascontiguousarray(self._keys(view, shares_of(), new, now)), first)
        ids, keys = _entry(kernels.merged, (keys.dtype.char, args[3].dtype.char), args)(*args)
        self.cached[region] = (since, ids, keys)
        return ids

    def _all_wait(self, region: str, queue: WaitingQueue) -> bool:
        """No job left `queue` since the region's last order: every job cached then still waits."""
        return self.removed[region] == (queue, queue.removed)

    def settle(self, view: QueueView, shares_of, queue: WaitingQueue, now: float) -> None:
        """Cache the deferred lone job, if any, when it still waits (with the pass's ledger and time)."""
        if self.pending is not None:
            region, since, j, jobs = self.pending
            self.pending = None
            if queue.mask[j]:
                self._alone(view, shares_of, region, since, jobs, now, False)

    def _defer(self, region: str, since: float, j: int) -> np.ndarray:
        """Order [j] with j left to `settle`; nothing else is cached (the caller checked)."""
        jobs = np.array([j])
        self.pending = (region, since, j, jobs)
        self.cached[region] = (since, _NONE, None)
        return jobs

    def _alone(self, view: QueueView, shares_of, region: str, since: float, jobs: np.ndarray, now: float,
               defer: bool) -> np.ndarray:
        """Order the lone job `jobs` ([j]) keyed at `now`: deferred, kept `Later` (with a keyer) or keyed."""
        if defer:
            return self._defer(region, since, int(jobs[0]))
        self._keyer(view)
        if self.keyer is None:
            return self._store(region, since, jobs, self._keys(view, shares_of(), jobs, now))
        self.known[jobs] = True
        self.cached[region] = (since, jobs, Later(shares_of(), now))
        return jobs

    def _unknown(self, queue: WaitingQueue, ids: np.ndarray) -> np.ndarray:
        """The waiting jobs not known, ascending; `ids`: the region's cached jobs, all waiting. One job waits
        besides them, most often the latest arrival (the largest key): when that one is not known, is not
        one of `ids` and they are all known, it is the answer without a scan of the queue."""
        last = queue.hi - 1
        if queue.count == len(ids) + 1 and queue.mask[last] and not self.known[last]:
            args = (ids, self.known, last)
            if _entry(kernels.known_without, None, args)(*args):
                return np.array([last])
        args = (_waiting(queue), self.known)
        return _entry(kernels.unknown, None, args)(*args)

    def _keyer(self, view: QueueView) -> None:
        """The policy's keyer (None without one) for the run's `view`."""
        if view is not self.view:
            self.view = view
            self.keyer = self.policy.keyer(view) if hasattr(self.policy, "keyer") else None
            self.skip = 0 if getattr(self.keyer, "first_level_constant", False) else None

    def _keys(self, view: QueueView, shares, jobs: np.ndarray, now: float) -> np.ndarray:
        """The policy's keys (levels, len(jobs)) of `jobs` with the ledger `shares` at `now`."""
        self._keyer(view)
        if self.keyer is not None:
            return self.keyer.keys(jobs, shares, now)
        return self.policy.keys(view.take(jobs).with_shares(shares), now)

    def _store(self, region: str, since: float, ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Cache `ids` in the order of their `keys` (ties: ids), and flag them known."""
        # a first level the same for every job (multifactor without boost) decides nothing: not sorted on
        levels = keys[:self.skip:-1]
        perm = np.lexsort((ids, *levels))
        ids, keys = ids[perm], keys.take(perm, axis=1)
        self.known[ids] = True
        self.cached[region] = (since, ids, keys)
        return ids


def _load_kernels() -> None:
    global kernels
    if kernels is None:
        from engine.core import order_kernels as kernels


def _entry(kernel, key, args: tuple):
    """`kernel`'s entry point (engine.core.kernel_entry) for `args`. The cache fixes their types: job ids are
    C-contiguous int64 arrays (the queue's keys, or a kernel's or `_store`'s copies of them), masks the queue's
    and `known` (bool), keys C-contiguous 2-d arrays (`_store` takes them, a kernel makes them, or `order` makes
    them so) of the dtypes in `key`, which with `kernel` key the entry."""
    return _CALLS.get((kernel, key)) or _CALLS.made((kernel, key), kernel, args)


_CALLS = Entries()


def _waiting(queue: WaitingQueue) -> np.ndarray:
    """The waiting job ids, ascending (a lone job is the queue's lowest key: no scan)."""
    return np.array([queue.lo]) if queue.count == 1 else queue.keys()

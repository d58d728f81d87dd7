"""Step 4c of the simulator's loop: backfill the jobs behind a blocked head.

The backfill policy's window (engine.policies.backfill) says which candidates may start without
delaying the reservations. Candidates are tried in queue order; a candidate starts if its pool
has the units free now, the window allows it, and the placement (or gang) policy finds it room.

Shortcuts that keep a pass over thousands of waiting jobs cheap, and change no decision:
- When no candidate's pool has its units free, nothing can start: no window is asked for (checked
  with Python scalars for fewer than FEW candidates, else in one compiled call, engine.policies.
  easy_kernels.free_now, whose units, pools and mask the sequential walk reuses).
- Windows whose `after_skip` changes nothing (`sequential` False: EASY's `Window` and the windows
  built on it) are scanned by one compiled kernel (engine.policies.easy_kernels.scan, EASY's rule
  `admits`): each call walks on to the next candidate to try and, once none is left, sorts the others
  into refused and waiting, listing only those whose reason changes. A start only shrinks the window
  and the free units, so the walk never looks back.
- A candidate whose placement fails marks its shape dead for the rest of the pass: starts only
  take resources, so the same shape cannot fit later in the pass (a sequential window's walk passes
  over the later candidates of that shape itself).
- Sequential windows (conservative) visit the candidates one by one, calling `after_start` or
  `after_skip`, and stop once no later candidate's units are free (reservations made after that
  could only constrain candidates that cannot start anyway); the pass's outcome (refused, waiting,
  started) is split in one compiled call (easy_kernels.outcomes).
- A window that blocks by pool (`by_pool`: first come, first served per pool) is walked pool by
  pool: each start or blocked job is one numpy step over the candidates.
A window with a `plan` method (engine.policies.backfill_order: EASY-SJBF, selective, list, lookahead)
first sees the waiting jobs and chooses the order the candidates are tried in, and which are tried
(engine.sim.cycle.backfill_plan). Under EASY++ (`run.history`) the head, the candidates and the
running jobs are seen at their predicted runtimes, late running jobs as the policy's corrector says;
adaptive backfilling (`run.adaptive`) asks the strategy in force (engine.sim.cycle.adaptive). The
jobs of a [partitions] MIG rule are seen with the units and times of engine.sim.cycle.backfill_mig.
Under a cluster step the head's window is its cluster's (engine.sim.cycle.backfill_cluster).
Reasons for the candidates left waiting: "blocked-by-reservation" when its units are free but the
window refuses it, else "blocked-by-capacity" (its units are not free, or no node had room).
"""
from __future__ import annotations

import numpy as np

from engine.core.kernel_entry import Entries
from engine.core.reasons import CAPACITY, RESERVATION
from engine.policies.backfill import easy_kernels
from engine.sim.cycle.backfill_cluster import head_scope
from engine.sim.cycle.backfill_mig import prepare, seen
from engine.sim.cycle.backfill_plan import in_head_pool, planned

FEW = 32  # candidates checked with Python scalars below this many (numpy from here on)


def backfill(run, region: str, fleet, head: int, now: float, only: list[int] | None,
             rest: np.ndarray | None) -> None:
    """Backfill `region` behind `head` at `now`. `only`: consider just these new arrivals (nothing
    was freed since the others were refused); `rest`: the waiting jobs behind the head in order
    (time-dependent orders; None: read them from the queue)."""
    all_rest = rest
    queue = run.queues[region]
    units, pools, free = run.units_list, run.pool_list, fleet.pool_free
    if rest is None and only is not None and run.partitions is None:
        # nothing was freed (static order): the new arrivals behind the head, refused in Python scalars
        # while none has its units free (most such passes), without the arrays of the pass below
        jobs = _arrivals_behind(run, queue, only)
        if all(units[j] > free[pools[j]] for j in jobs):
            if jobs:
                run.wait_for_capacity(jobs, now)
            return
        rest = np.array(jobs, np.int64)
    else:
        rest = _candidates(run, queue, only, rest)
    prepare(run, fleet, head, rest, now)  # [partitions] MIG jobs: their units and times for this pass
    checked = None  # (the candidates, their units, pools, whether those are free now, the last whose are)
    if len(rest) < FEW:
        jobs = rest.tolist()
        if all(units[j] > free[pools[j]] for j in jobs):
            run.mark(now, rest, CAPACITY)
            return
    else:
        checked = (rest, *_free_now(run, rest, free))
        if checked[4] < 0:
            run.mark(now, rest, CAPACITY)
            return
    pool = pools[head]
    policy = run.p.backfill if run.adaptive is None else run.adaptive.policy(region, now, head)
    predicted = run.history is not None
    corrector = policy.correct if predicted else None
    scope = None if run.clusters is None else head_scope(run, fleet, head, pool, now, corrector)
    if scope is None:
        ends, running = fleet.running_in_pool(pool, now, corrector)
    else:
        ends, running = scope.ends, scope.units
    head_free = free[pool] if scope is None else scope.free
    head_s = run.history.expected(head, run.requested[head]) if predicted else run.requested[head]
    window = policy.window(units[head], head_free, ends, running, now, head_requested_s=head_s, head_pool=pool)
    if window is None:
        return
    if window.sequential and only is not None:  # every waiting job's reservation counts
        rest = _candidates(run, queue, None, all_rest)
        prepare(run, fleet, head, rest, now)
    if window.sequential and window.limit:  # the policy looks this far back only (Slurm's bf_max_job_test)
        rest = rest[:window.limit]
    if window.by_pool:
        _by_pool(run, fleet, window, now, queue, rest)
        return
    req = seen(run, rest, run.history.expected_many(rest, run.requested_s[rest]) if predicted
               else run.requested_s[rest])
    in_pool = in_head_pool(run, fleet, rest, pool, scope)
    if hasattr(window, "plan"):  # the plan sees the predictions made above (one per candidate and pass)
        window, order = planned(run, window, now, region, head, head_s, rest, req, in_pool, scope)
        if not len(order):
            return
        rest, req, in_pool = rest[order], req[order], in_pool[order]
    if not window.sequential:
        _scan(run, fleet, window, now, queue, rest, req, in_pool)
        return
    # nothing since the check changed the free units or the candidates' units (unless it changed `rest`)
    cand = checked[1:] if checked is not None and checked[0] is rest else _free_now(run, rest, free)
    started, refused = _one_by_one(run, fleet, window, now, rest, req, *cand, in_pool)
    refused, waiting, keys = easy_kernels().outcomes(rest, started, refused, run.job_key)
    run.mark(now, refused, RESERVATION)
    run.mark(now, waiting, CAPACITY)
    if len(keys):
        queue.remove_many(keys)


def _free_now(run, rest: np.ndarray, free: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(units, pools, whether those units are free now, the position of the last whose are: -1 for
    none) of the candidates `rest`."""
    return easy_kernels().free_now(rest, run.units, run.pool, np.array(free))


def _candidates(run, queue, only: list[int] | None, rest: np.ndarray | None) -> np.ndarray:
    """The waiting jobs behind the head in queue order (just those in `only`, when given)."""
    if rest is None:
        if only is None:
            return run.key_job[queue.keys()[1:]]
        return np.array(_arrivals_behind(run, queue, only), np.int64)
    if only is None:
        return rest
    if len(only) == 1:  # one new arrival, the usual case: one comparison instead of np.isin
        return rest[rest == only[0]]
    return rest[np.isin(rest, only)]


def _arrivals_behind(run, queue, only: list[int]) -> list[int]:
    """The jobs of `only` (new arrivals, under a time-independent order) still waiting behind the head, in
    queue order."""
    key_of, mask, head = run.key_of, queue.mask, queue.lo
    if len(only) == 1:  # one new arrival, the usual case
        key = key_of[only[0]]
        return only if mask[key] and key != head else []
    return [run.job_at[k] for k in sorted(k for k in map(key_of.__getitem__, only) if mask[k] and k != head)]


def _scan(run, fleet, window, now: float, queue, rest: np.ndarray, req: np.ndarray, in_pool: np.ndarray) -> None:
    """A non-sequential window's pass (engine.policies.easy_kernels.scan): in order, start the candidates
    the window allows whose units are free and whose shape has not found no room this pass, then give
    the others their reasons. The window and the free units change only when a candidate starts; a
    candidate whose placement fails kills its shape for the rest of the pass (a job its quota parked
    says nothing about room for its shape)."""
    kernels = easy_kernels()
    units, pools, shapes, reason, pool_list, parked = run.units, run.pool, run.shape, run.reason, run.pool_list, run.parked
    rest, req, in_pool = (np.ascontiguousarray(rest, np.int64), np.ascontiguousarray(req, np.float64),
                          np.ascontiguousarray(in_pool, np.float64))
    n = len(rest)
    codes, marked, started = np.zeros(n, np.int8), np.empty(n, np.int64), []
    k, failed = 0, -1
    while True:
        args = (k, failed, float(now), float(window.shadow_s), float(window.extra_units), rest, req, in_pool, units,
                pools, shapes, np.array(fleet.pool_free, np.float64), codes, reason, RESERVATION, CAPACITY, marked)
        k, refused, waiting = _scan_entry(kernels, args)(*args)
        if k == n:
            break
        j, failed = int(rest[k]), -1
        if run.try_start(j, now, fleet, True):
            window = window.after_start(now, req[k], in_pool[k], pool_list[j])
            codes[k] = kernels.STARTED
            started.append(run.key_of[j])
        elif not parked[j]:
            failed = k
        k += 1
    if refused:  # the kernel lists only the candidates whose reason changes: usually none
        run.mark(now, marked[:refused], RESERVATION)
    if waiting > refused:
        run.mark(now, marked[refused:waiting], CAPACITY)
    for key in sorted(started):
        queue.remove(key)


_scan_calls = Entries()  # easy_kernels.scan's entry points (engine.core.kernel_entry)


def _scan_entry(kernels, args: tuple):
    """easy_kernels.scan's entry point for the types of `_scan`'s arguments: ints and floats, the
    candidates, their times and units converted to C-contiguous int64 and float64 arrays there, the free
    units, codes and marks made there, and the run's per-job arrays (units, pools, shapes, reasons: 1-d
    arrays of engine.sim.simulator's construction), whose dtypes and layouts (C-contiguous or not, which
    is what numba's type of a 1-d array tells) key the entry: a run whose arrays are of other types gets its
    own entry rather than have them misread."""
    units, pools, shapes, reason = args[8], args[9], args[10], args[13]
    key = (units.dtype, units.flags.c_contiguous, pools.dtype, pools.flags.c_contiguous, shapes.dtype,
           shapes.flags.c_contiguous, reason.dtype, reason.flags.c_contiguous)
    return _scan_calls.get(key) or _scan_calls.made(key, kernels.scan, args)


def _by_pool(run, fleet, window, now, queue, rest: np.ndarray) -> None:
    """First come, first served in each pool (`window.by_pool`, engine.policies.backfill.PoolWindow):
    in queue order, the first waiting job of each pool not yet blocked starts if it can; one that
    cannot ("blocked-by-capacity") blocks its pool for the rest of the pass, a pool-0 job (any model)
    every pool. The jobs behind a pool's blocked job keep their reason (behind other jobs). One numpy
    step per start or block: a pass costs the pools and the starts, not the length of the queue."""
    pools = run.pool[rest]
    alive = ~np.isin(pools, list(window.blocked)) if 0 not in window.blocked else np.zeros(len(rest), bool)
    if window.blocked:
        alive &= pools != 0
    started = np.zeros(len(rest), bool)
    pos = 0
    while pos < len(rest):
        i = pos + int(alive[pos:].argmax())
        if not alive[i]:
            break
        j = int(rest[i])
        if run.try_start(j, now, fleet, True):
            started[i] = True
        elif not run.parked[j]:
            run.block(now, j, CAPACITY)
            after = slice(i + 1, None)
            alive[after] &= False if pools[i] == 0 else (pools[after] != pools[i]) & (pools[after] != 0)
        pos = i + 1
    if np.count_nonzero(started):
        queue.remove_many(run.job_key[rest[started]])


def _one_by_one(run, fleet, window, now, rest, req, cand_units, cand_pool, fits, last, in_pool):
    """Sequential windows: returns (started, refused by the window) masks over `rest`. The window's
    `scan` walks the candidates up to the next one whose units are free now and that it allows; that
    one is tried. The walk stops after the last candidate whose units were free after the latest start.
    Which units are free (`fits`) is compared again only after a try that changed the free units (a
    start, or a reclaim): the mask reads nothing else, so after a failed try that changed none (most of
    them) it is the mask a recomputation would give. After a start the next last is sought up to the
    first last (`bound`) only: one past it would walk on through candidates whose units are not free,
    which neither start nor are marked refused. The later candidates of a shape that found no room are
    `passed` over by the walk itself, as skipped (not tried: no room for them either)."""
    started, refused, passed = np.zeros((3, len(rest)), bool)
    shape = run.shape[rest]
    req, in_pool = np.asarray(req, np.float64), np.asarray(in_pool, np.float64)
    free = fleet.pool_free
    bound = last  # never past the first last (as in a plain scan)
    i = 0
    while i <= last:
        i = window.scan(now, req, in_pool, fits, refused, i, last + 1, passed)
        if i > last:
            break
        j = int(rest[i])
        before = free.copy()
        began = run.try_start(j, now, fleet, True)
        if free != before:  # a try may free units (a reclaim) or take them
            fits = cand_units <= np.array(free)[cand_pool]
        if began:
            window = window.after_start(now, req[i], in_pool[i], cand_pool[i])
            started[i] = True
            free_at = np.flatnonzero(fits[i + 1:bound + 1])
            last = i + 1 + int(free_at[-1]) if len(free_at) else -1
            i += 1
            continue
        if not run.parked[j]:
            passed[i + 1:] |= shape[i + 1:] == shape[i]
        window = window.after_skip(now, req[i], in_pool[i], cand_pool[i])
        i += 1
    return started, refused

"""EASY backfilling's rules, compiled with numba (engine.policies.backfill, engine.sim.cycle.backfill_pass).

- `reservation`: the head's shadow time and extra units from the running jobs' expected ends;
- `admits` / `allows`: may a candidate start without delaying the head (`Window.allows`);
- `head_pool_units`: the candidates' units that count against the head's reservation;
- `free_now`: the candidates' units and pools, and whether those units are free now;
- `outcomes`: a sequential pass's refused, waiting and started candidates;
- `scan`: a backfill pass's walk over its candidates in order, to the next one to try, and once none
  is left each candidate's outcome.

One call replaces the dozen numpy calls per pass (or the Python loop over a few candidates) that cost
more than the arithmetic. Arithmetic is float64 in the order numpy used (a cumulative sum from the
first end on, then the free units added), so the answers are the same bit for bit. Compiled on first
use and cached on disk by numba's `cache=True` (in engine/core/jit.py's folder), so a new process does not pay the
compile again.
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.jit import njit

# a candidate's outcome in `scan`'s codes: WAITING (its units are not free, or no node had room), STARTED
# (set by the caller), REFUSED (its units are free but the window refuses it), DEAD (its shape found no
# room earlier in the pass: not tried; the final codes say WAITING or REFUSED)
WAITING, STARTED, REFUSED, DEAD = 0, 1, 2, 3


@njit(cache=True)
def admits(now_s, requested_s, units, shadow_s, extra_units):
    """A candidate that cannot delay the head: done by the shadow time, or small enough for the extra."""
    return now_s + requested_s <= shadow_s or units <= extra_units


@njit(cache=True)
def allows(now_s, requested_s, units, shadow_s, extra_units):
    """`admits` for each candidate (float64 arrays of one length)."""
    out = np.empty(len(requested_s), np.bool_)
    for k in range(len(out)):
        out[k] = admits(now_s, requested_s[k], units[k], shadow_s, extra_units)
    return out


@njit(cache=True)
def _first_enough(head_units, free_units, end_s, units, now_s, among):
    """Over the running jobs `among` (ascending slots) in order of expected end (equal ends: earlier slot
    first), the first after whose end the free units reach the head's: (found, shadow_s, extra_units)."""
    order = np.argsort(end_s[among], kind="mergesort")
    total = 0.0
    for k in order:
        slot = among[k]
        total += units[slot]
        available = free_units + total
        if available >= head_units:
            end = end_s[slot]
            return True, now_s if now_s > end else end, available - head_units
    return False, math.inf, 0.0


@njit(cache=True)
def reservation(head_units, free_units, end_s, units, now_s, earliest):
    """EASY's reservation for a head of `head_units` when `free_units` are free now and running jobs
    hold `units` until their expected ends `end_s` (float64): (shadow_s, extra_units), the time the head
    can start (now at the earliest) and the units free then beyond its need; (inf, 0.0) if it never can.
    With more than `earliest` running jobs the earliest `earliest` ends (and their ties) are sorted
    first: when they suffice, the answer is the one sorting all of them gives."""
    if free_units >= head_units:
        return now_s, free_units - head_units
    if len(end_s) > earliest:
        bound = np.partition(end_s, earliest - 1)[earliest - 1]
        found, shadow_s, extra_units = _first_enough(head_units, free_units, end_s, units, now_s,
                                                     np.nonzero(end_s <= bound)[0])
        if found:
            return shadow_s, extra_units
    found, shadow_s, extra_units = _first_enough(head_units, free_units, end_s, units, now_s,
                                                 np.arange(len(end_s)))
    return shadow_s, extra_units


@njit(cache=True)
def head_pool_units(jobs, units, pools, head_pool):
    """The units of `jobs` (indices into `units` and `pools`) in the head's pool: a job's units when
    its pool is the head's, or either is 0 (any GPU model), else 0."""
    out = np.empty(len(jobs), np.float64)
    for k in range(len(jobs)):
        pool = pools[jobs[k]]
        out[k] = units[jobs[k]] if head_pool == 0 or pool == 0 or pool == head_pool else 0.0
    return out


@njit(cache=True)
def free_now(jobs, units, pools, pool_free):
    """(units, pools, whether the units are free now: at most `pool_free` of their pool, the position
    of the last whose are (-1: none)) of `jobs` (indices into `units` and `pools`)."""
    mine, pool, fits = np.empty(len(jobs), np.float64), np.empty(len(jobs), np.int64), np.empty(len(jobs), np.bool_)
    last = -1
    for k in range(len(jobs)):
        mine[k], pool[k] = units[jobs[k]], pools[jobs[k]]
        fits[k] = mine[k] <= pool_free[pool[k]]
        if fits[k]:
            last = k
    return mine, pool, fits, last


@njit(cache=True)
def outcomes(jobs, started, refused, job_key):
    """(the `refused` jobs, those neither started nor refused, the queue keys (`job_key` per job) of the
    `started`), each in the order of `jobs`."""
    no, waiting, keys = np.empty(len(jobs), np.int64), np.empty(len(jobs), np.int64), np.empty(len(jobs), np.int64)
    a = b = c = 0
    for k in range(len(jobs)):
        if refused[k]:
            no[a] = jobs[k]
            a += 1
        elif not started[k]:
            waiting[b] = jobs[k]
            b += 1
        if started[k]:
            keys[c] = job_key[jobs[k]]
            c += 1
    return no[:a], waiting[:b], keys[:c]


@njit(cache=True)
def scan(start, failed, now_s, shadow_s, extra_units, jobs, requested_s, in_pool, units, pools, shapes,
         pool_free, codes, reason, refused_reason, waiting_reason, marked):
    """A non-sequential backfill pass over the candidates `jobs` (in the order tried; `requested_s`,
    `in_pool` and `codes` per candidate; `units`, `pools`, `shapes` and `reason` per job). Returns
    (k, refused, waiting): k, the first candidate from `start` on whose code is WAITING, whose units are
    free now (`pool_free`) and that the window admits; `failed` >= 0: that candidate's shape found no
    room, so the candidates of its shape after it are DEAD first. When none is left, k is len(jobs) and
    the pass is over: the candidates not STARTED (by the caller) whose units are free but that the
    window refuses, then the others, are the ones given `refused_reason` and `waiting_reason`; of them,
    those whose `reason` is not already that one are written to `marked`, `marked[:refused]` and
    `marked[refused:waiting]`, in order (the rest would not change)."""
    n = len(jobs)
    if failed >= 0:
        shape = shapes[jobs[failed]]
        for k in range(failed + 1, n):
            if shapes[jobs[k]] == shape:
                codes[k] = DEAD
    for k in range(start, n):
        j = jobs[k]
        if codes[k] == WAITING and units[j] <= pool_free[pools[j]] \
                and admits(now_s, requested_s[k], in_pool[k], shadow_s, extra_units):
            return k, 0, 0
    refused = 0
    for k in range(n):
        if codes[k] != STARTED:
            j = jobs[k]
            if units[j] <= pool_free[pools[j]] and not admits(now_s, requested_s[k], in_pool[k], shadow_s, extra_units):
                codes[k] = REFUSED
                if reason[j] != refused_reason:
                    marked[refused] = j
                    refused += 1
            else:
                codes[k] = WAITING
    waiting = refused
    for k in range(n):
        if codes[k] == WAITING and reason[jobs[k]] != waiting_reason:
            marked[waiting] = jobs[k]
            waiting += 1
    return n, refused, waiting

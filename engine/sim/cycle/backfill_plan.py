"""A window that plans its pass (engine.policies.backfill_order: `plan`) sees the waiting jobs first.

`planned` shows it the head and the candidates (`Waiting`: waits, requested runtimes, units in the
head's pool, priorities, the pool's free units, and the recent expansion factor when the window asks
for it with `wants_recent`) and returns the window it gives back and the candidates to try, in its
order. A candidate the plan leaves out is not tried this pass: it is "blocked-by-reservation" when its
units are free now (the plan kept the hole for others), else "blocked-by-capacity".
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.reasons import BACKFILLED, CAPACITY, RESERVATION, STARTED
from engine.policies.backfill import easy_kernels
from engine.policies.backfill_order import Waiting

RECENT = 50  # started jobs the recent expansion factor averages over


def planned(run, window, now: float, region: str, head: int, head_s: float, rest: np.ndarray, req: np.ndarray,
            in_pool: np.ndarray, scope):
    """(the planned window, the positions in `rest` of the candidates to try, in its order). `req`:
    the candidates' runtimes as the pass sees them; `in_pool`: their units in the head's pool
    (engine.sim.cycle.backfill_pass); `scope`: the head's cluster (engine.sim.cycle.backfill_cluster;
    None: the region)."""
    fleet = run.regions[region]
    pool = run.pool_list[head]
    waiting = Waiting(now - run.submit[head], head_s, now - run.w.submit_s[rest], req, in_pool,
                      run.w.priority[rest].astype(np.float64),
                      float(fleet.pool_free[pool] if scope is None else scope.free),
                      recent_xfactor(run, region) if getattr(window, "wants_recent", False) else math.nan)
    window, order = window.plan(now, waiting)
    order = np.asarray(order, np.int64)
    if len(order) < len(rest):
        left = np.ones(len(rest), bool)
        left[order] = False
        fits = run.units[rest] <= np.array(fleet.pool_free)[run.pool[rest]]
        run.mark(now, rest[left & fits], RESERVATION)
        run.mark(now, rest[left & ~fits], CAPACITY)
    return window, order


def in_head_pool(run, fleet, rest: np.ndarray, pool: int, scope) -> np.ndarray:
    """The candidates' units that count against the head's reservation: those of its pool (or any
    pool, when either is 0: engine.policies.easy_kernels.head_pool_units), and under a cluster step only
    those that could start in its cluster now (`scope`: engine.sim.cycle.backfill_cluster; asked only
    about the candidates with units in the pool)."""
    if scope is None:
        return easy_kernels().head_pool_units(rest, run.units, run.pool, pool)
    return run.clusters.scoped_units(rest, run.units, run.pool, pool, fleet, scope.cluster, scope.free)


def recent_xfactor(run, region: str) -> float:
    """Mean expansion factor (wait + requested) / requested at start of the last RECENT jobs started
    in `region` (from the decision log; NaN when none has started)."""
    codes, jobs, names = run.log_c, run.log_j, run.region_name
    total, count, k = 0.0, 0, len(codes) - 1
    while k >= 0 and count < RECENT:
        if codes[k] == STARTED or codes[k] == BACKFILLED:
            j = jobs[k]
            requested = run.requested[j]
            if names[j] == region and 0 < requested < math.inf:
                total += (run.log_t[k] - run.submit[j] + requested) / requested
                count += 1
        k -= 1
    return total / count if count else math.nan

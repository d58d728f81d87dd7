"""Lookahead backfilling's choice of candidates, compiled with numba (engine.policies.backfill_lookahead).

`order` picks, among the first `max_candidates` candidates whose units are free now, the set that
best fills the hole (`best_set`: the two-constraint 0-1 knapsack of the module
engine.policies.backfill_lookahead describes, on a grid of units) and returns the candidates to try:
the chosen in queue order, then those of other pools (0 units here). One call per pass instead of
a numpy step per candidate. float64 throughout, as in numpy, so the answers are the same bit for bit.
Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.jit import njit

MAX_CELLS = 128


@njit(cache=True)
def _step(units, free):
    """The grid's cell: the greatest common divisor of the units and `free` when all are whole numbers
    (else 1), or free / MAX_CELLS when that is coarser."""
    whole = math.isfinite(free) and free == math.floor(free)
    divisor = int(free) if whole and free > 0 else 0
    for u in units:
        if not (math.isfinite(u) and u == math.floor(u)):
            whole = False
            break
        if u > 0:
            a, b = divisor, int(u)
            while b:
                a, b = b, a % b
            divisor = a
    step = float(divisor) if whole else 1.0
    return max(step, free / MAX_CELLS)


@njit(cache=True)
def best_set(units, long, free, extra):
    """Positions (ascending) of the set of jobs with the most total units such that all fit in `free`
    and the `long` ones fit in `extra`, on the grid of `_step` (jobs rounded up, room rounded down).
    Equal totals keep the set of earlier jobs."""
    n = len(units)
    if n == 0 or free <= 0:
        return np.zeros(0, np.int64)
    extra = min(max(extra, 0.0), free)
    step = _step(units, free)
    cells = np.empty(n, np.int64)
    for i in range(n):
        cells[i] = math.ceil(units[i] / step - 1e-9)
    room, spare = int(free / step + 1e-9), int(extra / step + 1e-9)
    value = np.zeros((room + 1, spare + 1))
    took = np.zeros((n, room + 1, spare + 1), np.bool_)
    for i in range(n):
        c = cells[i]
        e = c if long[i] else 0
        if c > room or e > spare:
            continue
        for a in range(room, c - 1, -1):
            for b in range(spare, e - 1, -1):
                candidate = value[a - c, b - e] + units[i]
                if candidate > value[a, b]:
                    took[i, a, b] = True
                    value[a, b] = candidate
    chosen = np.zeros(n, np.bool_)
    r, s = room, spare
    for i in range(n - 1, -1, -1):
        if took[i, r, s]:
            chosen[i] = True
            r -= cells[i]
            s -= cells[i] if long[i] else 0
    return np.flatnonzero(chosen)


@njit(cache=True)
def order(units, requested_s, now_s, shadow_s, free, extra, max_candidates):
    """The candidates to try (positions): the best-filling set among the first `max_candidates` whose
    units (> 0) are free now, those that would run past `shadow_s` held to `extra`; then the 0-unit ones."""
    here = np.flatnonzero((units > 0) & (units <= free))[:max_candidates]
    long = np.empty(len(here), np.bool_)
    for k in range(len(here)):
        long[k] = now_s + requested_s[here[k]] > shadow_s
    chosen = here[best_set(units[here], long, free, extra)]
    return np.concatenate((chosen, np.flatnonzero(units == 0))).astype(np.int64)

"""The head's cluster under a cluster step (engine.sim.cycle.backfill_cluster.head_scope), compiled with
numba: EASY's reservation (engine.policies.easy_kernels.reservation) in each cluster that holds the
head, in one call instead of a slot selection and a reservation call per cluster. Compiled on first use
and cached on disk beside this file (numba's `cache=True`).
"""
from __future__ import annotations

import math

from engine.core.jit import njit
from engine.policies.easy_kernels import reservation


@njit(cache=True)
def earliest_cluster(need, free, holds, ends, units, clusters, now_s, earliest):
    """The cluster among `holds` (bool per cluster) where a head of `need` units can start first:
    `free` units free now per cluster, running jobs holding `units` until `ends` in `clusters`
    (float64, slot order); ties to the lowest index; -1 when no cluster holds it."""
    best, best_start = -1, math.inf
    for c in range(len(holds)):
        if holds[c]:
            mine = clusters == c
            start = reservation(need, free[c], ends[mine], units[mine], now_s, earliest)[0]
            if best < 0 or start < best_start:
                best, best_start = c, start
    return best

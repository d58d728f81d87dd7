"""The rule of the cheapest-by routing policies (engine.policies.routing: lowest-carbon, cheapest) for a
flexible job, compiled with numba: one call per routed job instead of a key tuple per region, a set and a
sort (the sample routes ~70,000 such jobs under lowest-carbon). Cached on disk by numba's `cache=True`
(in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def cheapest_ranks(allowed, fits, free, queued, cost, need, home):
    """The dense ranks (0, 1, ... over the eligible regions, equal for equal keys; -inf elsewhere) of the
    keys (2, -cost, 0) for an eligible region with at least `need` GPUs free (an unknown NaN cost as
    -inf), else (1, 0, 0) at `home`, else (0, free, -queued): engine.policies.routing.dense_rank's ranks
    of those tuples, which compare as these float triples do (no NaN in them)."""
    n = len(allowed)
    keys = np.empty((n, 3))
    order = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        if not (allowed[i] and fits[i]):
            continue
        if free[i] >= need:
            keys[i, 0], keys[i, 1], keys[i, 2] = 2.0, -np.inf if cost[i] != cost[i] else -cost[i], 0.0
        elif i == home:
            keys[i, 0], keys[i, 1], keys[i, 2] = 1.0, 0.0, 0.0
        else:
            keys[i, 0], keys[i, 1], keys[i, 2] = 0.0, free[i], -queued[i]
        at = count  # insertion into `order`, ascending by key (a handful of regions)
        while at > 0 and _above(keys, order[at - 1], i):
            order[at] = order[at - 1]
            at -= 1
        order[at] = i
        count += 1
    ranks = np.full(n, -np.inf)
    rank = -1.0
    for k in range(count):
        i = order[k]
        if k == 0 or _above(keys, i, order[k - 1]):
            rank += 1.0
        ranks[i] = rank
    return ranks


@njit(cache=True)
def _above(keys, a, b):
    """Row a of `keys` is lexicographically greater than row b."""
    for c in range(3):
        if keys[a, c] != keys[b, c]:
            return keys[a, c] > keys[b, c]
    return False

"""The rules of the most routed policies (engine.policies.routing) for a job they may move, compiled with
numba: the cheapest-by rule (lowest-carbon, cheapest), overflow's and follow-the-sun's. One call per routed
job instead of a key tuple per region, a set and a sort (the sample routes ~70,000 such jobs under
lowest-carbon, ~37,000 under overflow or follow-the-sun). Each rule fills a key triple per eligible region
(allowed and fits); `_ranked` gives their dense ranks, as engine.policies.routing.dense_rank does for the
same keys as tuples (which compare as the float triples do: no NaN in them). Cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def cheapest_ranks(allowed, fits, free, queued, cost, need, home):
    """Keys (2, -cost, 0) for a region with at least `need` GPUs free (an unknown NaN cost as -inf), else
    (1, 0, 0) at `home`, else (0, free, -queued)."""
    keys = np.empty((len(allowed), 3))
    for i in range(len(allowed)):
        if free[i] >= need:
            keys[i, 0], keys[i, 1], keys[i, 2] = 2.0, -np.inf if cost[i] != cost[i] else -cost[i], 0.0
        elif i == home:
            keys[i, 0], keys[i, 1], keys[i, 2] = 1.0, 0.0, 0.0
        else:
            keys[i, 0], keys[i, 1], keys[i, 2] = 0.0, free[i], -queued[i]
    return _ranked(keys, allowed, fits)


@njit(cache=True)
def overflow_ranks(allowed, fits, free, queued, need, home):
    """Keys (home with at least `need` GPUs free, free, -queued)."""
    keys = np.empty((len(allowed), 3))
    for i in range(len(allowed)):
        keys[i, 0], keys[i, 1], keys[i, 2] = 1.0 if i == home and free[i] >= need else 0.0, free[i], -queued[i]
    return _ranked(keys, allowed, fits)


@njit(cache=True)
def sun_ranks(allowed, fits, free, capacity, queued, at_work, need, home, min_share):
    """Keys (3, 0, 0) at `home` with at least `need` GPUs free, (1, 0, 0) at home without; (2, free, 0) for a
    lender (off-hours, at least `need` GPUs free, free / capacity at least `min_share`: 0 without capacity);
    else (0, free, -queued)."""
    keys = np.empty((len(allowed), 3))
    for i in range(len(allowed)):
        share = free[i] / capacity[i] if capacity[i] > 0 else 0.0
        if i == home:
            keys[i, 0], keys[i, 1], keys[i, 2] = 3.0 if free[i] >= need else 1.0, 0.0, 0.0
        elif free[i] >= need and not at_work[i] and share >= min_share:
            keys[i, 0], keys[i, 1], keys[i, 2] = 2.0, free[i], 0.0
        else:
            keys[i, 0], keys[i, 1], keys[i, 2] = 0.0, free[i], -queued[i]
    return _ranked(keys, allowed, fits)


@njit(cache=True)
def _ranked(keys, allowed, fits):
    """Dense ranks of the rows of `keys` (lexicographic) over the regions allowed that fit (0 for the lowest,
    equal rows equal ranks), -inf for the others."""
    n = len(allowed)
    order = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        if not (allowed[i] and fits[i]):
            continue
        at = count  # insertion into `order`, ascending (a handful of regions)
        while at > 0 and _above(keys, order[at - 1], i):
            order[at] = order[at - 1]
            at -= 1
        order[at] = i
        count += 1
    ranks = np.full(n, -np.inf)
    rank = -1.0
    for k in range(count):
        if k == 0 or _above(keys, order[k], order[k - 1]):
            rank += 1.0
        ranks[order[k]] = rank
    return ranks


@njit(cache=True)
def _above(keys, a, b):
    """Row a of `keys` is lexicographically greater than row b."""
    for c in range(3):
        if keys[a, c] != keys[b, c]:
            return keys[a, c] > keys[b, c]
    return False

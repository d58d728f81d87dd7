"""np.sort's order of two floats, for compiled kernels that pick or sort by keys (numba, cached on disk
as engine/core/jit.py says): a NaN sorts after every number, NaNs are equal; and `merged`, np.lexsort's order of a
sorted queue and the few jobs that join it, by merging, with `still_waiting` and `unknown`, the cached jobs that
still wait and the waiting jobs not cached yet (engine.sim.cycle.order_cache). An edit of `below` is
a new cache for every kernel, those that call it included (engine/core/jit.py)."""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def below(a, b):
    """a sorts before b."""
    if a != a:
        return False
    return b != b or a < b


@njit(cache=True)
def _before(keys_a, a, id_a, keys_b, b, id_b, first):
    """Column a of keys_a (job id_a) sorts before column b of keys_b: levels first.. lexicographically,
    then the job id."""
    for level in range(first, keys_a.shape[0]):
        x, y = keys_a[level, a], keys_b[level, b]
        if below(x, y):
            return True
        if below(y, x):
            return False
    return id_a < id_b


@njit(cache=True)
def _copy(ids, keys, lo, hi, out_ids, out_keys, at):
    """Columns lo:hi of (ids, keys) to out_* from column `at`."""
    for level in range(keys.shape[0]):
        for c in range(lo, hi):
            out_keys[level, at + c - lo] = keys[level, c]
    for c in range(lo, hi):
        out_ids[at + c - lo] = ids[c]


@njit(cache=True)
def merged(ids, keys, new_ids, new_keys, first):
    """`ids` with their `keys` (levels, n), sorted by levels first.. and then id, merged with `new_ids`
    and their `new_keys` (few, in any order): np.lexsort's order of the whole (ids are distinct)."""
    m, n = len(new_ids), len(ids)
    order = np.arange(m)
    for k in range(1, m):  # insertion sort: a few new jobs at a time
        c = order[k]
        i = k
        while i > 0 and _before(new_keys, c, new_ids[c], new_keys, order[i - 1], new_ids[order[i - 1]], first):
            order[i] = order[i - 1]
            i -= 1
        order[i] = c
    out_ids = np.empty(n + m, ids.dtype)
    out_keys = np.empty((keys.shape[0], n + m), keys.dtype)
    done = 0  # the cached jobs placed so far
    for k in range(m):
        c = order[k]
        lo, hi = done, n  # bisection: the first cached job from `done` on that sorts after c
        while lo < hi:
            mid = (lo + hi) // 2
            if _before(keys, mid, ids[mid], new_keys, c, new_ids[c], first):
                lo = mid + 1
            else:
                hi = mid
        _copy(ids, keys, done, lo, out_ids, out_keys, done + k)
        _copy(new_ids, new_keys, c, c + 1, out_ids, out_keys, lo + k)
        done = lo
    _copy(ids, keys, done, n, out_ids, out_keys, done + m)
    return out_ids, out_keys


@njit(cache=True)
def still_waiting(ids, keys, waiting, known):
    """The cached `ids` (job ids) still `waiting` (a mask by job id), in their order, with their `keys`
    columns; the others are flagged not `known`. The same arrays when every one still waits."""
    m = 0
    for i in range(len(ids)):
        if waiting[ids[i]]:
            m += 1
    if m == len(ids):
        return ids, keys
    out_ids = np.empty(m, ids.dtype)
    out_keys = np.empty((keys.shape[0], m), keys.dtype)
    k = 0
    for i in range(len(ids)):
        if waiting[ids[i]]:
            _copy(ids, keys, i, i + 1, out_ids, out_keys, k)
            k += 1
        else:
            known[ids[i]] = False
    return out_ids, out_keys


@njit(cache=True)
def unknown(jobs, known):
    """The `jobs` not `known` (a mask by job id), in their order."""
    out = np.empty(len(jobs), jobs.dtype)
    m = 0
    for j in jobs:
        if not known[j]:
            out[m] = j
            m += 1
    return out[:m]


@njit(cache=True)
def known_without(ids, known, job):
    """Every one of `ids` is `known` (a mask by job id) and none is `job`."""
    for i in ids:
        if i == job or not known[i]:
            return False
    return True

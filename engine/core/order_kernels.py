"""np.sort's order of two floats, for compiled kernels that pick or sort by keys (numba, cached on disk
beside this file): a NaN sorts after every number, NaNs are equal; and `merged`, np.lexsort's order of a
sorted queue and the few jobs that join it, by merging (engine.sim.cycle.order_cache). numba's cache of a
kernel that calls `below` (engine/policies/cluster_kernels.py, preemption_kernels.py) is keyed on its own
file only: after editing `below`, delete those files' caches (`engine/policies/__pycache__/*_kernels*.nb?`)."""
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
    i = k = 0
    for o in range(n + m):
        if k == m or (i < n and _before(keys, i, ids[i], new_keys, order[k], new_ids[order[k]], first)):
            out_ids[o] = ids[i]
            out_keys[:, o] = keys[:, i]
            i += 1
        else:
            out_ids[o] = new_ids[order[k]]
            out_keys[:, o] = new_keys[:, order[k]]
            k += 1
    return out_ids, out_keys

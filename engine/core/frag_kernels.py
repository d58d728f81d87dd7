"""FGD's fragmentation terms and weights (engine.core.fragmentation.FragmentationIndex), compiled with
numba: one pass over the nodes' rows instead of a dozen numpy calls over nodes x GPUs x groups
arrays per refresh (the run's fragmentation sampler refreshes every node of every region at every
sample). Integer arithmetic throughout, so the values are exactly numpy's. Compiled on first use and
cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def gpu_terms(gpu_free, thresholds):
    """(free, C_r, U_r) per row of per-GPU free milli (-1 = absent GPU): the free milli, and per
    threshold r how many GPUs have at least r free and the milli free on them."""
    n, r = gpu_free.shape[0], len(thresholds)
    free = np.zeros(n, np.int64)
    count_ge = np.zeros((n, r), np.int64)
    usable = np.zeros((n, r), np.int64)
    for i in range(n):
        for g in range(gpu_free.shape[1]):
            milli = gpu_free[i, g]
            if milli > 0:
                free[i] += milli
            for q in range(r):
                if milli >= thresholds[q]:
                    count_ge[i, q] += 1
                    usable[i, q] += milli
    return free, count_ge, usable


@njit(cache=True)
def weigh(nodes, cpu_free, free, count_ge, usable, cpu_needed, weight_upto, k, access, restricted, total_weight):
    """W x F per candidate: total_weight x free minus, per group the candidate can run (C_r >= the
    group's GPU count `k`, and its model allowed on the node when `restricted`), the group's weight
    among shapes needing at most the candidate's free CPU (`weight_upto` row: how many of the sorted
    `cpu_needed` are <= it) times U_r."""
    out = np.empty(len(nodes), np.int64)
    for i in range(len(nodes)):
        row = np.searchsorted(cpu_needed, cpu_free[i], side="right")
        value = total_weight * free[i]
        for q in range(len(k)):
            if count_ge[i, q] >= k[q] and (not restricted or access[nodes[i], q]):
                value -= weight_upto[row, q] * usable[i, q]
        out[i] = value
    return out


@njit(cache=True)
def refresh(nodes, cpu_free, gpu_free, thresholds, cpu_needed, weight_upto, k, access, restricted, total_weight,
            free, count_ge, usable, weighted):
    """Recompute the rows of `nodes` of an index's arrays (free, C_r, U_r, W x F) in place from the
    state's `cpu_free` and `gpu_free` (`gpu_terms`, then `weigh`)."""
    node_free, node_count, node_usable = gpu_terms(gpu_free[nodes], thresholds)
    node_weighted = weigh(nodes, cpu_free[nodes], node_free, node_count, node_usable, cpu_needed, weight_upto, k,
                          access, restricted, total_weight)
    for i in range(len(nodes)):
        n = nodes[i]
        free[n] = node_free[i]
        count_ge[n, :] = node_count[i, :]
        usable[n, :] = node_usable[i, :]
        weighted[n] = node_weighted[i]

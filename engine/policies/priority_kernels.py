"""The multifactor order's keys (engine.policies.priority.MultifactorKeyer) and the exponent of its fair
share, compiled with numba: one call keys any number of jobs, with the IEEE operations of the numpy
expressions of `MultifactorPriority.factors` and `keys`, in their order (np.clip as `clip`: NaN
propagates, a value equal to a bound gives the bound), and numpy's error model (a division by zero gives
inf or NaN, not an exception). numpy's power, which rounds otherwise than the C library numba calls,
stays numpy's: the kernel gives its exponent. Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit

# the rows of a keyer's job columns and of its parameters
SUBMIT, DEADLINE, REQUESTED, QOS = range(4)
WEIGHT_AGE, MAX_AGE, WEIGHT_FAIRSHARE, WEIGHT_DEADLINE, HORIZON, BOOST_AFTER = range(6)


PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: the longest run its pairwise sum adds with 8 accumulators


@njit(cache=True)
def pairwise_block(a, lo, n):
    """numpy's pairwise sum of a[lo:lo + n], n <= PAIRWISE_BLOCK: fewer than 8 one by one from -0.0, else
    with 8 accumulators, then the rest one by one."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo:lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for k in range(8):
            r[k] += a[lo + i + k]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a):
    """numpy's pairwise sum of `a` (DOUBLE_pairwise_sum in its umath loops), operation for operation: a run
    longer than PAIRWISE_BLOCK is the sum of its two halves (the first a multiple of 8), each summed so.
    numpy recurses; numba's disk cache cannot hold a recursive function, so the halves are walked with a
    stack of tasks (evaluate a run, or add the last two sums), in numpy's order."""
    task_lo, task_n = np.empty(192, np.int64), np.empty(192, np.int64)  # task_n -1: add the last two sums
    sums = np.empty(64)
    tasks, done = 1, 0
    task_lo[0], task_n[0] = 0, len(a)
    while tasks:
        tasks -= 1
        lo, n = task_lo[tasks], task_n[tasks]
        if n < 0:
            done -= 1
            sums[done - 1] = sums[done - 1] + sums[done]
        elif n <= PAIRWISE_BLOCK:
            sums[done] = pairwise_block(a, lo, n)
            done += 1
        else:
            half = n // 2
            half -= half % 8
            task_lo[tasks], task_n[tasks] = 0, -1
            task_lo[tasks + 1], task_n[tasks + 1] = lo + half, n - half
            task_lo[tasks + 2], task_n[tasks + 2] = lo, half
            tasks += 3
    return sums[0]


@njit(cache=True, error_model="numpy")
def share_exponents(usage, minus_share):
    """(usage / total, or 0 when the total is not > 0) / minus_share per team: U / -S. The total is
    np.add.reduce(usage)'s, bit for bit: its identity 0.0 plus numpy's pairwise sum of every value."""
    total = 0.0 + pairwise_sum(usage)
    out = np.empty(len(usage))
    for t in range(len(usage)):
        out[t] = (usage[t] / total if total > 0 else 0.0) / minus_share[t]
    return out


@njit(cache=True)
def clip(x, low, high):
    """np.clip of one float."""
    if x != x:
        return x
    x = x if x > low else low
    return x if x < high else high


@njit(cache=True, error_model="numpy")
def keys(positions, columns, team, size, fair, now, params):
    """Sort keys (3, len(positions)) of the jobs at `positions`: boosted first (0, else 1), then the
    longest wait when boosted, else the highest priority (negated), then the submit time. `columns`
    (rows SUBMIT, DEADLINE, REQUESTED, QOS: the weighted QoS factor), `team`, `size` (the weighted size
    factor): per job of the run; `fair`: the fair-share factor per team; `params`: the policy's
    WEIGHT_AGE, MAX_AGE, WEIGHT_FAIRSHARE, WEIGHT_DEADLINE, HORIZON and BOOST_AFTER."""
    weight_age, max_age, weight_fairshare = params[WEIGHT_AGE], params[MAX_AGE], params[WEIGHT_FAIRSHARE]
    weight_deadline = params[WEIGHT_DEADLINE]
    horizon, boost_after = params[HORIZON], params[BOOST_AFTER]
    out = np.empty((3, len(positions)))
    for k in range(len(positions)):
        j = positions[k]
        submit, deadline = columns[SUBMIT, j], columns[DEADLINE, j]
        wait = now - submit
        urgency = 0.0
        if np.isfinite(deadline):
            urgency = clip(1.0 - (deadline - now - columns[REQUESTED, j]) / horizon, 0.0, 1.0)
        priority = 0.0 + weight_age * (clip(wait, 0.0, max_age) / max_age) + weight_fairshare * fair[team[j]] \
            + columns[QOS, j] + size[j] + weight_deadline * urgency
        if boost_after > 0 and wait >= boost_after:
            out[0, k], out[1, k] = 0.0, -wait
        else:
            out[0, k], out[1, k] = 1.0, -priority
        out[2, k] = submit
    return out

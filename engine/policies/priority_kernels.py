"""The multifactor order's keys (engine.policies.priority.MultifactorKeyer) and the exponent of its fair
share, compiled with numba: one call keys any number of jobs, with the IEEE operations of the numpy
expressions of `MultifactorPriority.factors` and `keys`, in their order (np.clip as `clip`: NaN
propagates, a value equal to a bound gives the bound), and numpy's error model (a division by zero gives
inf or NaN, not an exception). numpy's power, which rounds otherwise than the C library numba calls,
stays numpy's: the kernel gives its exponent. Cached on disk beside this file (numba's `cache=True`).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit

# the rows of a keyer's job columns and of its parameters
SUBMIT, DEADLINE, REQUESTED, QOS = range(4)
WEIGHT_AGE, MAX_AGE, WEIGHT_FAIRSHARE, WEIGHT_DEADLINE, HORIZON, BOOST_AFTER = range(6)


@njit(cache=True, error_model="numpy")
def share_exponents(usage, total, minus_share):
    """(usage / total, or 0 when the total is not > 0) / minus_share per team: U / -S."""
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

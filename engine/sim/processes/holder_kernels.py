"""A held-back job's candidate starts, compiled with numba (engine.sim.processes.holder).

`candidates` fills, for the quarter-hours q0, q0 + 1, ..., q0 + horizon (each clamped to the last
quarter of the run; horizon + 1 = len(offsets_s)), the start instant (now plus the candidate's offset),
the mean grid intensity and the mean price factor over a run of `length` quarters from there (cut at
the end of the run, at least one quarter), from the cumulative sums
`cum[r]` and `cum_price[r]` of region r, and whether the job is at work then (`work`). One call per
held job instead of a dozen numpy calls over a week of quarters. float64 throughout, as in numpy,
so the answers are the same bit for bit. Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def candidates(cum, cum_price, work, r, now_s, offsets_s, q0, last, length):
    """(start, mean intensity, mean price factor, at work) per candidate start now_s + offsets_s[k] at
    quarter q0 + k; see the module docstring."""
    horizon = len(offsets_s) - 1
    start, mean, price = np.empty(horizon + 1), np.empty(horizon + 1), np.empty(horizon + 1)
    at_work = np.empty(horizon + 1, np.bool_)
    for k in range(horizon + 1):
        start[k] = now_s + offsets_s[k]
        q = min(q0 + k, last)
        end = min(q + length, last + 1)
        quarters = max(end - q, 1)
        mean[k] = (cum[r, end] - cum[r, q]) / quarters
        price[k] = (cum_price[r, end] - cum_price[r, q]) / quarters
        at_work[k] = work[q]
    return start, mean, price, at_work

"""Selective backfilling's expansion factor, compiled with numba (engine.policies.backfill_selective).

A job's expansion factor is (wait + requested) / requested: +inf for a request of 0, 1 for an unknown
(+inf) request. `protected` answers, for every candidate of a pass, whether it has reached the
threshold, in one call instead of a handful of numpy calls per pass. float64 throughout, as in numpy,
so the answers are the same bit for bit. Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def expansion(wait_s, requested_s):
    """(wait + requested) / requested; +inf for a request of 0, 1 for an unknown (+inf) request."""
    if not math.isfinite(requested_s):
        return 1.0
    if requested_s > 0:
        return (wait_s + requested_s) / requested_s
    return math.inf


@njit(cache=True)
def protected(wait_s, requested_s, threshold):
    """Which jobs' expansion factors have reached `threshold`."""
    out = np.empty(len(requested_s), np.bool_)
    for k in range(len(requested_s)):
        out[k] = expansion(wait_s[k], requested_s[k]) >= threshold
    return out

"""The decayed usage of the usage ledger (engine.sim.state.ledger.usage_at), compiled with numba around
numpy's exp2, which stays numpy's (its SIMD routine rounds otherwise than the C library numba calls): per
entity, the exponent x = (since - now) / h of the decay, then the usage U 2^x + L (1 - 2^x) from the
decay 2^x. The same IEEE operations as the numpy expressions they replace, in the same order (a NaN's
sign bit aside where two NaNs meet), with numpy's error model: a division by zero gives inf or NaN, not
an exception. A dozen teams cost two compiled calls instead of a dozen numpy ones. Cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit


@njit(cache=True, error_model="numpy")
def decay_exponents(figures, now, half_life_s):
    """(since - now) / half_life_s per entity; `figures`: rows usage, level, since (the ledger's)."""
    n = figures.shape[1]
    out = np.empty(n)
    for e in range(n):
        out[e] = (figures[2, e] - now) / half_life_s
    return out


@njit(cache=True, error_model="numpy")
def decayed(figures, decay):
    """usage 2^x + level (1 - 2^x) per entity of `figures`, `decay` the 2^x."""
    n = figures.shape[1]
    out = np.empty(n)
    for e in range(n):
        out[e] = figures[0, e] * decay[e] + figures[1, e] * (1.0 - decay[e])
    return out

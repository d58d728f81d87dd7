"""The quota gate's lending pool left (engine.sim.cycle.quota_gate.QuotaGate._pool_left), compiled with numba:
one call instead of seven numpy ones, with their IEEE operations in their order (the sum is np.add.reduce's:
0.0 plus numpy's pairwise sum, engine.policies.priority_kernels.pairwise_sum). Cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit
from engine.policies.priority_kernels import pairwise_sum


@njit(cache=True)
def pool_left(usage, members, guaranteed, h, gpus, lent):
    """`lent` less the sum over `members` of max(usage - guaranteed, 0), holder h's usage taken `gpus` more
    (np.maximum's: a NaN stays NaN)."""
    terms = np.empty(len(members))
    for k in range(len(members)):
        m = members[k]
        beyond = (usage[m] + gpus if m == h else usage[m]) - guaranteed[m]
        terms[k] = beyond if beyond > 0.0 or beyond != beyond else 0.0
    return lent - (0.0 + pairwise_sum(terms))

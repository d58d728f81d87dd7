"""np.sort's order of two floats, for compiled kernels that pick or sort by keys (numba, cached on disk
beside this file): a NaN sorts after every number, NaNs are equal. numba's cache of a kernel that calls
`below` (engine/policies/cluster_kernels.py, preemption_kernels.py) is keyed on its own file only: after
editing `below`, delete those files' caches (`engine/policies/__pycache__/*_kernels*.nb?`)."""
from __future__ import annotations

from engine.core.jit import njit


@njit(cache=True)
def below(a, b):
    """a sorts before b."""
    if a != a:
        return False
    return b != b or a < b

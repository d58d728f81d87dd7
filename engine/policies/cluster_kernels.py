"""The cluster policies' one choice (engine.policies.cluster), compiled with numba: ANY when no
cluster holds the job, WAIT when some holds it and none fits now, else the cluster that holds it and
fits now whose (first, second) keys are lexicographically lowest, ties to the lowest index: np.lexsort's
order (a NaN key sorts after every number, NaNs equal). A handful of clusters costs one compiled call
instead of a dozen numpy ones. Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

from engine.core.cluster_view import ANY, WAIT
from engine.core.jit import njit
from engine.core.order_kernels import below


@njit(cache=True)
def lowest_fitting(holds, fits, first, second):
    """The choice of the module docstring over per-cluster bools `holds`, `fits` and float keys."""
    best, held = -1, False
    for c in range(len(holds)):
        if not holds[c]:
            continue
        held = True
        if not fits[c]:
            continue
        if best < 0 or below(first[c], first[best]) or (
                not below(first[best], first[c]) and below(second[c], second[best])):
            best = c
    if best >= 0:
        return best
    return WAIT if held else ANY

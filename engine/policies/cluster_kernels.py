"""The cluster policies' one choice (engine.policies.cluster), compiled with numba: ANY when no
cluster holds the job, WAIT when some holds it and none fits now, else the cluster that holds it and
fits now whose (first, second) keys are lexicographically lowest, ties to the lowest index: np.lexsort's
order (a NaN key sorts after every number, NaNs equal). A handful of clusters costs one compiled call
instead of a dozen numpy ones. A policy's keys are named by codes (its `lowest_by`,
engine.core.cluster_view): the fewest free GPUs, the most, the fewest racks, or none (`keyed`), so the
cluster step can make the same choice from its own per-cluster figures in the compiled call that computes
them (engine.sim.cycle.cluster_step_kernels).
Racks are compared as float64, which orders counts of racks as integers do. Cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.cluster_view import ANY, FEWEST_FREE, FEWEST_RACKS, MOST_FREE, WAIT
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


@njit(cache=True)
def keyed(code, free, racks):
    """The per-cluster key of `code` (float64): `free` GPUs (FEWEST_FREE), their negation (MOST_FREE),
    `racks` (FEWEST_RACKS) or zeros (NO_KEY)."""
    if code == FEWEST_FREE:
        return free.astype(np.float64)
    if code == MOST_FREE:
        return -free.astype(np.float64)
    if code == FEWEST_RACKS:
        return racks.astype(np.float64)
    return np.zeros(len(free))


@njit(cache=True)
def lowest_by(holds, fits, free, racks, first, second):
    """`lowest_fitting` by the keys of codes `first` and `second` (`keyed`)."""
    return lowest_fitting(holds, fits, keyed(first, free, racks), keyed(second, free, racks))

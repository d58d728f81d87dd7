"""The leftover score of best-fit, worst-fit and cheapest-tier (engine.policies.placement), compiled
with numba: one pass over the fleet's free CPU and GPU milli instead of a dozen numpy calls per pod.

Arithmetic is float64 in the order the formula is written, without fast-math, so scores are the
IEEE values plain Python or numpy would give. Compiled on first use and cached on disk beside this
file (numba's `cache=True`), so a new process does not pay the compile again.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def leftover_top(ok, cpu_free, gpu_free, cpu_milli, gpu_milli, cpu_scale, gpu_scale, cpu_weight, least):
    """The node with the highest leftover score among those where `ok` (the lowest index among
    equal scores), -1 when none is. leftover = cpu_weight x (cpuFree - cpuReq) / cpu_scale
    + (1 - cpu_weight) x (gpuFree - gpuReq) / gpu_scale; the score is 100 x (1 - leftover) for the
    least leftover (`least`, best-fit), 100 x leftover for the most (worst-fit), truncated."""
    best, top = -1, -np.inf
    for k in range(len(ok)):
        if ok[k]:
            left = (cpu_free[k] - cpu_milli) / cpu_scale * cpu_weight \
                + (gpu_free[k] - gpu_milli) / gpu_scale * (1 - cpu_weight)
            score = np.trunc((1.0 - left) * 100) if least else np.trunc(left * 100)
            if score > top:
                best, top = k, score
    return best

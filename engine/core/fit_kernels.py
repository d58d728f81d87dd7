"""The fleet's fit rule (engine.core.fleet_view.fits_on) over a set of nodes, compiled with numba:
one pass over the nodes' rows of the fleet state's block instead of a numpy call per resource
(each costs as much as the whole compiled pass on a fleet of a few hundred nodes). Compiled on first
use and cached on disk by numba's `cache=True` (in engine/core/jit.py's folder), so a new process does not pay the
compile again.
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit

MILLI = 1000


@njit(cache=True)
def fits(block, allowed, nodes, cpu_milli, memory_mib, num_gpu, gpu_milli):
    """Per node of `nodes` (indices into `block`'s rows: free CPU, free memory, free GPU milli, idle
    GPUs, the per-GPU free milli of its `gpus` slots, -1 for an absent GPU, then `gpus` + 1 pod
    counts: engine.sim.state.fleet_state), whether it is `allowed` (the request's static tests: tier,
    cluster, GPU model) and has the CPU and memory asked and `num_gpu` GPUs with `gpu_milli` free
    each (whole GPUs: idle ones): `fits_node` for each."""
    out = np.empty(len(nodes), np.bool_)
    for i in range(len(nodes)):
        out[i] = fits_node(block, allowed, nodes[i], cpu_milli, memory_mib, num_gpu, gpu_milli)
    return out


@njit(cache=True, inline="always")
def fits_node(block, allowed, k, cpu_milli, memory_mib, num_gpu, gpu_milli):
    """The fit rule on node `k` (`fits`' arguments, one node)."""
    ok = allowed[k] and block[k, 0] >= cpu_milli and block[k, 1] >= memory_mib
    if ok and num_gpu:
        if gpu_milli == MILLI:
            ok = block[k, 3] >= num_gpu
        else:
            count = 0
            for g in range(4, 4 + (block.shape[1] - 5) // 2):
                if block[k, g] >= gpu_milli:
                    count += 1
            ok = count >= num_gpu
    return ok

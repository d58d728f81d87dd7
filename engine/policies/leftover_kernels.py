"""The leftover score of best-fit, worst-fit and cheapest-tier (engine.policies.placement), first-fit's
node and GPUs, and the tightest-fit choice of a node's GPUs every score-based placement makes, compiled with numba: one pass
over the fleet's free CPU and GPU milli, and over the chosen node's GPUs, instead of a dozen numpy
calls and a Python loop per pod. On a fleet that keeps no fit masks (engine.core.fleet_view.fit_args),
first-fit's and the leftover kernels apply the fit rule (engine.core.fit_kernels.fits_node) node by
node in the same compiled pass.

Arithmetic is float64 in the order the formula is written, without fast-math, so scores are the
IEEE values plain Python or numpy would give. Compiled on first use and cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder), so a new process does not pay the compile again.
"""
from __future__ import annotations

import numpy as np

from engine.core.fit_kernels import fits_node
from engine.core.jit import njit


@njit(cache=True)
def leftover_top(ok, block, figures, fit, cpu_scale, gpu_scale, cpu_weight, least):
    """The node with the highest leftover score among those where `ok` and, when `fit`, the fit rule
    passes (engine.core.fit_kernels.fits_node; `ok` is then the request's allowed mask), the lowest index
    among equal scores; -1 when none is. `block` is the fleet state's (free CPU in column 0, free GPU milli
    in column 2), `figures` the request's (engine.core.fleet_view.PodRequest.figures). leftover =
    cpu_weight x (cpuFree - cpuReq) / cpu_scale + (1 - cpu_weight) x (gpuFree - gpuReq) / gpu_scale; the
    score is 100 x (1 - leftover) for the least leftover (`least`, best-fit), 100 x leftover for the most
    (worst-fit), truncated."""
    cpu_milli, num_gpu, gpu_milli = figures[0], figures[2], figures[3]
    best, top = -1, -np.inf
    for k in range(len(ok)):
        if ok[k] and (not fit or fits_node(block, ok, k, cpu_milli, figures[1], num_gpu, gpu_milli)):
            left = (block[k, 0] - cpu_milli) / cpu_scale * cpu_weight \
                + (block[k, 2] - num_gpu * gpu_milli) / gpu_scale * (1 - cpu_weight)
            score = np.trunc((1.0 - left) * 100) if least else np.trunc(left * 100)
            if score > top:
                best, top = k, score
    return best


@njit(cache=True)
def tightest(free, milli, count):
    """Up to `count` GPUs of a node (`free`: each GPU's free milli, -1 for absent ones) with at least
    `milli` free: the fewest free first, the lowest index among equals; ascending."""
    chosen = np.empty(count, np.int64)
    taken = np.zeros(len(free), np.bool_)
    found = 0
    while found < count:
        best = -1
        for g in range(len(free)):
            if not taken[g] and free[g] >= milli and (best < 0 or free[g] < free[best]):
                best = g
        if best < 0:
            break
        taken[best] = True
        chosen[found] = best
        found += 1
    return np.sort(chosen[:found])


@njit(cache=True)
def leftover_place(ok, block, figures, fit, cpu_scale, gpu_scale, cpu_weight, least):
    """`leftover_top`'s node (its arguments) and the request's GPUs there (`tightest`; none for a CPU-only
    pod): (node, GPUs), node -1 when none fits."""
    node = leftover_top(ok, block, figures, fit, cpu_scale, gpu_scale, cpu_weight, least)
    if node < 0 or figures[2] == 0:
        return node, np.empty(0, np.int64)
    return node, tightest(block[node, 4:4 + (block.shape[1] - 5) // 2], figures[3], figures[2])


@njit(cache=True)
def first_place(ok, gpu_free, gpu_milli, num_gpu):
    """First-fit: the lowest-indexed node where `ok` and its lowest-indexed `num_gpu` GPUs with
    `gpu_milli` free (none for a CPU-only pod): (node, GPUs), node -1 when none fits."""
    for k in range(len(ok)):
        if ok[k]:
            return k, first_gpus(gpu_free[k], gpu_milli, num_gpu)
    return -1, np.empty(0, np.int64)


@njit(cache=True)
def first_gpus(free, gpu_milli, num_gpu):
    """A node's lowest-indexed `num_gpu` GPUs with `gpu_milli` free (`free`: each GPU's free milli), ascending."""
    chosen = np.empty(num_gpu, np.int64)
    found = 0
    for g in range(len(free)):
        if found < num_gpu and free[g] >= gpu_milli:
            chosen[found] = g
            found += 1
    return chosen[:found]


@njit(cache=True)
def fit_first_place(block, allowed, figures):
    """`first_place` over the nodes the fit rule passes (the arguments: engine.core.fleet_view.fit_args),
    testing nodes in order up to the first that passes."""
    for k in range(block.shape[0]):
        if fits_node(block, allowed, k, figures[0], figures[1], figures[2], figures[3]):
            return k, first_gpus(block[k, 4:4 + (block.shape[1] - 5) // 2], figures[3], figures[2])
    return -1, np.empty(0, np.int64)

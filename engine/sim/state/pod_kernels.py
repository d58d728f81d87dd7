"""Taking and giving back one pod (engine.sim.state.fleet_state.FleetState.allocate / release),
compiled with numba: every check of the placement and the write of the node's row of the block in
one call, instead of a Python row read, a dozen scalar checks, a per-GPU loop and a row write per
start and finish. Compiled on first use and cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).

`move_pod` answers OK or the first check that failed (the codes below, in the order they are
checked); FleetState turns a code into its PlacementError and writes nothing then.
"""
from __future__ import annotations

from engine.core.jit import njit

MILLI = 1000
# what `move_pod` answers: OK, or the check that failed (taking: NO_NODE..NOT_MODEL; giving back:
# CANNOT_RELEASE, BAD_GPUS, EXCEEDS)
OK, NO_NODE, NOT_CLUSTER, LACKS, MISMATCH, BAD_GPUS, TOO_LITTLE, NOT_MODEL, CANNOT_RELEASE, EXCEEDS = range(10)


@njit(cache=True)
def move_pod(block, capacity, flags, cluster_of, model_ok, figures, node, gpus, gpu_milli, take):
    """Take (`take`) or give back one pod of `figures` (engine.core.fleet_view.PodRequest.figures: CPU
    milli, MiB, GPU count, GPU milli asked, cluster, pod shape slot), `gpu_milli` taken on each GPU of
    `gpus` (a tuple, or an empty array) on `node`: checked first (nothing written unless OK), then the
    node's row of `block` moved (free CPU, memory, GPU milli total, idle GPUs, per-GPU free, the pod
    count of the shape's column for a GPU pod) and its entirely-free flag (`flags` column 0) kept current.
    Taking checks: the node exists, is in the request's cluster (when it names one and the node has one:
    `cluster_of` per node, -1 none), has the CPU and memory, `gpus` has the request's count of entries
    and `gpu_milli` is the milli it asked, the GPUs are distinct GPUs of the node with that milli free
    each, and the node's model is allowed (`model_ok` per node). Giving back checks: the node exists,
    `gpus` has the request's count of distinct GPUs of the node, and nothing would exceed the node's
    `capacity` (a GPU pod of this shape runs there)."""
    cpu_milli, memory_mib, num_gpu, asked_milli, cluster = figures[0], figures[1], figures[2], figures[3], figures[4]
    pods_col = 4 + (block.shape[1] - 5) // 2 + figures[5]
    n = block.shape[0]
    count = capacity[node, 3] if 0 <= node < n else 0
    if take:
        if not 0 <= node < n:
            return NO_NODE
        if cluster >= 0 and 0 <= cluster_of[node] != cluster:
            return NOT_CLUSTER
        if block[node, 0] < cpu_milli or block[node, 1] < memory_mib:
            return LACKS
        if len(gpus) != num_gpu or gpu_milli != asked_milli:
            return MISMATCH
    elif not 0 <= node < n or len(gpus) != num_gpu:
        return CANNOT_RELEASE
    for i in range(len(gpus)):
        if not 0 <= gpus[i] < count:
            return BAD_GPUS
        for k in range(i):
            if gpus[k] == gpus[i]:
                return BAD_GPUS
    if take:
        for g in gpus:
            if block[node, 4 + g] < asked_milli:
                return TOO_LITTLE
        if len(gpus) and not model_ok[node]:
            return NOT_MODEL
        sign = -1
    else:
        if block[node, 0] + cpu_milli > capacity[node, 0] or block[node, 1] + memory_mib > capacity[node, 1]:
            return EXCEEDS
        for g in gpus:
            if block[node, 4 + g] + gpu_milli > MILLI:
                return EXCEEDS
        if len(gpus) and block[node, pods_col] < 1:
            return EXCEEDS
        sign = 1
    block[node, 0] += sign * cpu_milli
    block[node, 1] += sign * memory_mib
    if len(gpus):
        delta = sign * gpu_milli
        idle = 0
        for g in gpus:
            before = block[node, 4 + g]
            block[node, 4 + g] = before + delta
            idle += int(before + delta == MILLI) - int(before == MILLI)
        block[node, 2] += delta * len(gpus)
        block[node, 3] += idle
        block[node, pods_col] -= sign
    flags[node, 0] = (block[node, 0] == capacity[node, 0] and block[node, 1] == capacity[node, 1]
                      and block[node, 3] == capacity[node, 3])
    return OK

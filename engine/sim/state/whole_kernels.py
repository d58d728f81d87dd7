"""Taking and giving back whole nodes (engine.sim.state.region.GangFleetState), compiled with numba.

A gang job takes every CPU, MiB and GPU of each of its nodes: one row of the fleet state's block
per node, checked and written in one call instead of a handful of numpy calls per start and
finish, which also sums the GPU milli moved (what the region's pools gain or lose). Compiled on
first use and cached on disk by numba's `cache=True` (in engine/core/jit.py's folder), so a new process does not
pay the compile again; imported only when a run first takes whole nodes.
"""
from __future__ import annotations

from engine.core.jit import njit

BAD_NODES, NOT_WHOLE = -1, -2  # what `move_whole` answers instead of the milli moved


@njit(cache=True)
def move_whole(block, source, flags, nodes, take):
    """Copy `source`'s rows of `nodes` into `block` and mark them taken whole (`take`) or entirely
    free (`flags`' columns: entirely free, taken whole); returns the GPU milli moved (column 2 of
    the rows before and after). First checks everything and writes nothing unless: `nodes`
    ascending, distinct and existing (else BAD_NODES); to take, each node entirely free; to give
    back, each taken whole, with no CPU, memory or GPU milli free (else NOT_WHOLE)."""
    previous = -1
    for k in nodes:
        if k <= previous or k >= block.shape[0]:
            return BAD_NODES
        previous = k
    for k in nodes:
        if take:
            if not flags[k, 0]:
                return NOT_WHOLE
        elif not flags[k, 1] or block[k, 0] != 0 or block[k, 1] != 0 or block[k, 2] != 0:
            return NOT_WHOLE
    milli = 0
    for k in nodes:
        milli += abs(source[k, 2] - block[k, 2])
        block[k, :] = source[k, :]
        flags[k, 0] = not take
        flags[k, 1] = take
    return milli

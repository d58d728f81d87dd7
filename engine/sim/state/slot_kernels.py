"""The running jobs a backfill pass plans around (engine.sim.state.region.RegionFleet.running_in_pool and
running_by_cluster), selected from the region's slots in one compiled pass (numba) instead of a numpy
call per column and test. Compiled on first use and cached on disk by numba's
`cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit

END, OVERRUN, BEGIN, UNITS, POOL, CLUSTER, ACTIVE = range(7)  # the columns of RegionFleet.slots


@njit(cache=True)
def running(slots, pool, now_s, at_overrun):
    """The active slots holding units of `pool` (0: any), in slot order, as rows (expected end, overrun
    end, begin, units, cluster of the first node); with `at_overrun`, a slot past its expected end at
    `now_s` that has an overrun end is expected at that end instead. One pass, into rows as long as the
    slots, of which the first found are returned (each row stays contiguous)."""
    out = np.empty((5, slots.shape[0]))
    i = 0
    for k in range(slots.shape[0]):
        if slots[k, ACTIVE] != 0 and (pool == 0 or slots[k, POOL] == pool):
            end, overrun = slots[k, END], slots[k, OVERRUN]
            out[0, i] = overrun if at_overrun and end <= now_s and np.isfinite(overrun) else end
            out[1, i], out[2, i], out[3, i], out[4, i] = overrun, slots[k, BEGIN], slots[k, UNITS], slots[k, CLUSTER]
            i += 1
    return out[:, :i]

"""What a backfill pass sees of the jobs of a [partitions] MIG rule (engine.sim.processes.partitions).

A job of the rule takes no units of its pool outside a backfill pass (its instance decides). In a
pass, a backfill window compares units and times, so before the window is asked each MIG job among
the head and the candidates gets the units and the time of MigPlacer.backfill_terms: 0 units when an
instance on a GPU already in MIG mode takes it (a GPU in MIG mode counts by its free valid positions)
without keeping that GPU from going whole when expected, else 1000 units (one whole GPU, switched to
MIG mode for it or held longer) for its request at the instance's pace plus the reconfigurations and
idle time; the head, when of the rule, is seen with 1000 units (a whole GPU to switch, or the slot an
instance frees on a GPU in MIG mode, whose partition holds a running slot of 1000 units). A backfilled
job seen with 0 units may not switch a GPU (engine.sim.cycle.starts). The GPUs in MIG mode are in the
window's running jobs through their slots (engine.sim.processes.mig_place).
"""
from __future__ import annotations

import numpy as np

from engine.core.fleet_view import MILLI


def prepare(run, fleet, head: int, rest: np.ndarray, now: float) -> None:
    """Set the units of the MIG jobs among `head` and `rest` for this pass, and their time as seen
    (`seen_s`, read by `seen`)."""
    parts = run.partitions
    if parts is None or parts.placer is None:
        return
    takes, placer, units, units_list = parts.takes, parts.placer, run.units, run.units_list
    if takes[head]:
        units[head] = units_list[head] = float(MILLI)
    for j in rest.tolist():
        if takes[j]:
            u, extra, pace = placer.backfill_terms(j, fleet, now)
            units[j] = units_list[j] = u
            parts.seen_s[j] = run.requested[j] * pace + extra


def seen(run, rest: np.ndarray, requested: np.ndarray) -> np.ndarray:
    """`requested` (the candidates' times) with the MIG jobs' times as `prepare` set them."""
    parts = run.partitions
    if parts is None or parts.placer is None:
        return requested
    mig = parts.takes_mask[rest]
    if not mig.any():
        return requested
    return np.where(mig, parts.seen_s[rest], requested)

"""Job shapes: jobs that ask for the same resources fit alike, so fit facts are computed per shape.

A shape is (GPU model, GPUs per node, milli per GPU, CPU milli, memory MiB, nodes, whether its
queue class lets it run on spot nodes: engine.scenario.queues). For every shape
and region: the shape's resource pool in the region (engine.sim.state.region.RegionFleet: 0 for
CPU-only jobs, -1 when the region lacks the GPU model) and whether it fits the region's fleet
when empty. The simulator uses them for "never fits", for its per-shape "no room" memo, and the
router for where a job could go. Under right-sizing (the workload's `asked_num_gpu`) each job also
has the shape of its full request (`asked`: its GPUs and, when memory was sized, its memory), numbered
with the others: the one it restarts with after running out of memory (engine.sim.processes.oom_restarts).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Shapes:
    """shape: shape id per job (int64); pools / fits: shapes x regions (int64 / bool); asked: the shape
    id of each job's full request under right-sizing (None without)."""

    shape: np.ndarray
    pools: np.ndarray
    fits: np.ndarray
    asked: np.ndarray | None = None


def job_shapes(w, fleets: list, spot_ok: np.ndarray) -> Shapes:
    """The shapes of workload `w`'s jobs on `fleets` (RegionFleet per region, in region order);
    `spot_ok`: bool per job, may it run on spot nodes."""
    table = pd.DataFrame({"t": pd.Series(w.gpu_type, dtype=object).fillna(""), "g": w.num_gpu,
                          "u": w.gpu_milli, "c": w.cpu_milli, "m": w.memory_mib, "n": w.nodes,
                          "s": np.asarray(spot_ok, bool)})
    asked = getattr(w, "asked_num_gpu", None)
    if asked is not None:  # the full requests too, after the given shapes
        memory = {} if getattr(w, "asked_memory_mib", None) is None else {"m": w.asked_memory_mib}
        table = pd.concat([table, table.assign(g=asked, n=w.asked_nodes, **memory)], ignore_index=True)
    shape = table.groupby(list(table.columns), sort=True).ngroup().to_numpy(np.int64)
    first = ~table.duplicated().to_numpy()
    firsts = table[first].assign(id=shape[first]).sort_values("id")
    pools = np.zeros((len(firsts), len(fleets)), np.int64)
    fits = np.zeros((len(firsts), len(fleets)), bool)
    for i, (t, g, c, m, n, s) in enumerate(firsts[["t", "g", "c", "m", "n", "s"]].itertuples(index=False)):
        for r, fleet in enumerate(fleets):
            pools[i, r] = fleet.pool_of(t or None) if g else 0
            fits[i, r] = fleet.fits_empty(g, c, m, n, int(pools[i, r]), bool(s))
    n = len(w.job_id)
    return Shapes(shape[:n], pools, fits, shape[n:] if asked is not None else None)

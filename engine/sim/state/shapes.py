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

from engine.core.codes import first_rows


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
    `spot_ok`: bool per job, may it run on spot nodes. Shapes are numbered in the sorted order of their
    columns (GPU model, "" for any; GPUs, milli, CPU milli, memory, nodes, spot): each column is ranked by
    its sorted distinct values, the ranks are combined into one integer key, and the distinct keys are
    found by hashing and then sorted."""
    columns = [np.asarray(w.gpu_type, object), w.num_gpu, w.gpu_milli, w.cpu_milli, w.memory_mib, w.nodes,
               np.asarray(spot_ok, bool)]
    asked = getattr(w, "asked_num_gpu", None)
    if asked is not None:  # the full requests too, after the given shapes
        memory = w.memory_mib if getattr(w, "asked_memory_mib", None) is None else w.asked_memory_mib
        full = [columns[0], asked, columns[2], columns[3], memory, w.asked_nodes, columns[6]]
        columns = [np.concatenate([given, whole]) for given, whole in zip(columns, full)]
    key, span = np.zeros(len(columns[0]), np.int64), 1
    for k, column in enumerate(columns):
        rank, values = pd.factorize(column, sort=True)
        if k == 0:  # no model (None) is "", which sorts first
            names = values.tolist()
            rank = np.where(rank < 0, 0, rank) if names[:1] == [""] else rank + 1
            values = names if names[:1] == [""] else ["", *names]
        if span * len(values) >= 2 ** 62:  # renumber the key so far densely before it could overflow
            key = pd.factorize(key, sort=True)[0]
            span = int(key.max()) + 1
        key, span = key * len(values) + rank, span * len(values)
    code, keys = pd.factorize(key)
    first = first_rows(code)
    order = np.argsort(keys, kind="stable")
    rank = np.empty(len(keys), np.int64)
    rank[order] = np.arange(len(keys))
    shape, first = rank[code].astype(np.int64), first[order]
    pools = np.zeros((len(first), len(fleets)), np.int64)
    fits = np.zeros((len(first), len(fleets)), bool)
    t = ["" if pd.isna(model) else model for model in columns[0][first].tolist()]
    g, c, m, n, s = (columns[k][first].tolist() for k in (1, 3, 4, 5, 6))
    for i in range(len(first)):
        for r, fleet in enumerate(fleets):
            pools[i, r] = fleet.pool_of(t[i] or None) if g[i] else 0
            fits[i, r] = fleet.fits_empty(g[i], c[i], m[i], n[i], int(pools[i, r]), bool(s[i]))
    jobs = len(w.job_id)
    return Shapes(shape[:jobs], pools, fits, shape[jobs:] if asked is not None else None)

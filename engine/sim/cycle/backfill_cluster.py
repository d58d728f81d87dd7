"""The head's reservation under a cluster step (engine.sim.cycle.cluster_step).

With a cluster step the queue head starts inside one cluster: the first, of those that could hold it
(`ClusterStep.holds`), where enough of its pool's units are free. The backfill window is then the
policy's own (EASY's shadow, conservative's profile, ...) over that cluster alone, not the region.
`head_scope` finds it: for each cluster that holds the head, its pool's free milli-GPU on the
cluster's nodes and the running jobs whose first node is there (expected ends and units); the head's
earliest start there is EASY's shadow time over them (engine.policies.easy_kernels.reservation: when
those free units plus the units of the jobs ending first reach its own, now when they already do); the
earliest cluster wins (ties: the lowest index). The running jobs are read once for all clusters and the
clusters compared in one compiled call (engine.sim.cycle.cluster_step_kernels).

A candidate counts against that reservation (its units in the head's pool) only when it could start
in the reserved cluster: the cluster holds it and has at least its units of the head's pool free now,
or no cluster holds it (it then spans clusters). Any other never runs there in this pass (its own
cluster step puts it elsewhere, and starts only take units), so it cannot delay the head, like a job
of another pool. One that could counts whole, since its cluster step may place it there.

A head no cluster holds (the cluster step lets it span clusters) and a [partitions] MIG head keep the
region-wide window.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.policies.backfill import EARLIEST


class HeadScope(NamedTuple):
    """The cluster the head's reservation is made in, its free units and its running jobs (a named
    tuple: one is made per backfill pass)."""

    cluster: int
    free: float
    ends: np.ndarray
    units: np.ndarray


def head_scope(run, fleet, head: int, pool: int, now: float, corrector) -> HeadScope | None:
    """The head's cluster and what its window is computed over (the module docstring), or None for
    the region-wide window."""
    if run.partitions is not None and run.partitions.takes[head]:
        return None
    holds, in_pool, held = run.clusters.holds(head, fleet)
    if not held:
        return None
    ends, units, clusters = fleet.running_by_cluster(pool, now, corrector)
    best, free, ends, units = run.clusters.call("earliest_cluster", fleet, (
        float(run.units[head]), fleet.cluster_codes, fleet.state.gpu_free_total, in_pool, holds, ends, units, clusters,
        float(now), EARLIEST))
    return HeadScope(best, free, ends, units)

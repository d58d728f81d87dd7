"""Cluster policies (family "cluster"): which cluster of its region a job runs in, chosen before its
nodes are (engine.sim.cycle.cluster_step).

Every policy has one method, `choose(job, clusters) -> int`: a cluster index of the `ClustersView`
(engine.core.cluster_view), or ANY (no cluster: nodes anywhere in the region) or WAIT (no cluster has
room now: the job waits). The simulator then places the job only on the chosen cluster's nodes.

GPU compatibility comes first in every policy but `any`: only a cluster that `holds` the job (nodes of
its GPU type and node shape, enough of them) qualifies, and only one where it `fits` now is chosen;
when some cluster holds it but none fits, the answer is WAIT. A job no single cluster can hold gets
ANY, so it spans clusters as it would without a cluster step rather than wait forever. Ties go to
the lowest index (the sorted cluster names). Deterministic; no policy uses randomness. Every policy
here but `any` so answers a job that at most one cluster holds, and says so (`takes_sole_holder`,
engine.core.traits): the cluster step then answers for it without asking. Each names the keys it takes the
lowest by (`lowest_by`: codes of engine.core.cluster_view, the rule engine.policies.cluster_kernels.lowest_by),
and the cluster step makes that choice for a one-node job in the compiled call that computes the clusters'
figures, without a view.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.core.cluster_view import ANY, FEWEST_FREE, FEWEST_RACKS, MOST_FREE, NO_KEY, ClusterRequest, ClustersView
from engine.policies.registry import register

FAMILY = "cluster"
# engine.policies.cluster_kernels, imported with the first choice: numba costs a process about 0.2 s, which runs
# without a cluster policy need not pay (an import statement per choice cost 0.6 us)
kernels = None


def _lowest_fitting(clusters: ClustersView, by: tuple[int, int]) -> int:
    """ANY when no cluster holds the job, WAIT when some holds it and none fits now, else the cluster
    that holds it and fits now with the lowest keys `by` (engine.policies.cluster_kernels: codes of the
    free GPUs, their negation or the racks), ties to the lowest index."""
    global kernels
    if kernels is None:
        from engine.policies import cluster_kernels as kernels
    return int(kernels.lowest_by(np.asarray(clusters.holds, bool), np.asarray(clusters.fits, bool),
                                 np.asarray(clusters.free_gpus, np.float64), np.asarray(clusters.racks, np.float64),
                                 *by))


@register(FAMILY, "any", inert=True)
@dataclass(frozen=True)
class AnyCluster:
    """The baseline: no cluster step; a job takes nodes anywhere in its region, as the placement and
    gang policies choose them (a gang may span clusters). Its `inert` trait tells the simulator to skip
    the step, so a run under it is the same to the bit as one without clusters."""

    def choose(self, job: ClusterRequest, clusters: ClustersView) -> int:
        return ANY


@register(FAMILY, "most-free")
@dataclass(frozen=True)
class MostFree:
    """Spread the load: the compatible cluster, among those the job fits now, with the most free GPUs."""

    takes_sole_holder: ClassVar[bool] = True
    lowest_by: ClassVar[tuple[int, int]] = (MOST_FREE, NO_KEY)

    def choose(self, job: ClusterRequest, clusters: ClustersView) -> int:
        return _lowest_fitting(clusters, self.lowest_by)


@register(FAMILY, "best-fit")
@dataclass(frozen=True)
class BestFit:
    """Pack clusters: the compatible cluster, among those the job fits now, with the fewest free GPUs,
    so the emptiest clusters stay whole for wide gangs."""

    takes_sole_holder: ClassVar[bool] = True
    lowest_by: ClassVar[tuple[int, int]] = (FEWEST_FREE, NO_KEY)

    def choose(self, job: ClusterRequest, clusters: ClustersView) -> int:
        return _lowest_fitting(clusters, self.lowest_by)


@register(FAMILY, "topology")
@dataclass(frozen=True)
class Topology:
    """Keep a job's nodes close: the compatible cluster, among those the job fits now, where its nodes
    span the fewest racks (`racks`), then the fewest free GPUs (best fit). A gang never spans clusters
    while one cluster can hold it; a one-node job (one rack everywhere) is placed as best-fit."""

    takes_sole_holder: ClassVar[bool] = True
    lowest_by: ClassVar[tuple[int, int]] = (FEWEST_RACKS, FEWEST_FREE)

    def choose(self, job: ClusterRequest, clusters: ClustersView) -> int:
        return _lowest_fitting(clusters, self.lowest_by)

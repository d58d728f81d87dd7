"""What a cluster policy is shown and asked (engine.policies.cluster): the job's `ClusterRequest`, the
region's `ClustersView` at this instant, and the two answers that are not a cluster (ANY, WAIT).

A region holds clusters: the fleet's `cluster` column (a fleet without one is one cluster per region),
numbered 0..k-1 in the order of their sorted names. Units: GPUs (whole GPU equivalents).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.views import assembled

ANY = -1   # no cluster: the job may take nodes anywhere in its region (today's behaviour)
WAIT = -2  # no cluster now: the job waits for one to have room
# the keys a policy may choose the lowest fitting cluster by (its `lowest_by`: engine.policies.cluster_kernels.keyed)
FEWEST_FREE, MOST_FREE, FEWEST_RACKS, NO_KEY = range(4)


@dataclass(frozen=True)
class ClusterRequest:
    """One job as the cluster step sees it: `gpus` GPUs in all, over `nodes` nodes (> 1: a gang
    taking whole nodes), of `gpu_type` (None: any model)."""

    gpus: float
    nodes: int = 1
    gpu_type: str | None = None

    @classmethod
    def of(cls, *values) -> "ClusterRequest":
        """A request from every field's value, in field order (the cluster step's one per start)."""
        return assembled(cls, values)


@dataclass(frozen=True)
class ClustersView:
    """Per cluster of the job's region, one entry each (numpy arrays, read-only to policies):

    holds: bool, the cluster could hold the job when empty (enough nodes of the job's GPU type and
        node shape: GPUs, CPU and memory per node); a cluster that does not is incompatible.
    fits: bool, the job fits there now (the fleet's fit rule; a gang: enough entirely free nodes).
    free_gpus: free GPUs of the nodes of the job's GPU type (all its nodes for a job of any model).
    capacity_gpus: installed GPUs of those nodes.
    racks: the fewest racks the job's nodes would span there now (1 for a one-node job; 0 where it
        does not fit).
    """

    names: tuple[str, ...]
    holds: np.ndarray
    fits: np.ndarray
    free_gpus: np.ndarray
    capacity_gpus: np.ndarray
    racks: np.ndarray

    @classmethod
    def of(cls, *values) -> "ClustersView":
        """A view from every field's value, in field order (the cluster step's one per start)."""
        return assembled(cls, values)

    def __len__(self) -> int:
        return len(self.names)

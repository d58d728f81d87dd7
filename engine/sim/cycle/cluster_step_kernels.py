"""The cluster step's per-cluster figures, compiled with numba (engine.sim.cycle.cluster_step):

- `by_cluster`: what `ClusterStep.pick` shows the policy per cluster (the nodes where the job fits now,
  the free GPUs of its pool), in one pass over the region's nodes instead of two bincounts
  (`fit_by_cluster`: the fit rule in the same call, on a fleet that keeps no fit masks; `gang_by_cluster`:
  a gang's entirely free nodes, with the fewest racks it would span in each cluster; `fit_lowest_by`: a
  one-node job's cluster under a policy that names its keys, chosen in the same call);
- `earliest_cluster`: the head's cluster (engine.sim.cycle.backfill_cluster.head_scope), EASY's
  reservation (engine.policies.easy_kernels.reservation) in each cluster that holds the head, in one
  call instead of a slot selection and a reservation call per cluster;
- `scoped_units`: the backfill candidates' units that count against that head's reservation
  (engine.sim.cycle.backfill_plan.in_head_pool), the pool rule and the scope test in one pass instead of
  a dozen numpy calls.

Sums run in node order, as numpy's bincount adds them, so the figures are the same bit for bit.
Compiled on first use and cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.fit_kernels import fits_node
from engine.core.fleet_view import MILLI
from engine.core.jit import njit
from engine.policies.cluster_kernels import lowest_by
from engine.policies.easy_kernels import head_pool_units, reservation


@njit(cache=True)
def by_cluster(codes, k, marked, width, free_milli, in_pool):
    """Per cluster (`codes`: each node's, 0..k-1): whether at least `width` of its nodes are `marked`
    (bool per node), and the free GPUs of its nodes `in_pool` (from each node's free milli-GPU
    `free_milli`)."""
    count = np.zeros(k, np.int64)
    free = np.zeros(k)
    for i in range(len(codes)):
        c = codes[i]
        if marked[i]:
            count[c] += 1
        if in_pool[i]:
            free[c] += free_milli[i]
    return count >= width, free / MILLI


@njit(cache=True)
def gang_by_cluster(codes, k, free, racks, width, free_milli, in_pool):
    """`by_cluster` for a gang of `width` whole nodes over the entirely free nodes `free` (ascending
    indices), and per cluster where it fits the fewest racks (`racks` per node) whose free nodes add up
    to `width` (the racks with the most free nodes first), else 0."""
    marked = np.zeros(len(codes), np.bool_)
    marked[free] = True
    fit, gpus = by_cluster(codes, k, marked, width, free_milli, in_pool)
    spans = np.zeros(k, np.int64)
    for c in range(k):
        if fit[c]:
            mine = racks[free[codes[free] == c]]
            counts = np.sort(np.bincount(mine - mine.min()))[::-1]
            spans[c] = np.searchsorted(np.cumsum(counts), width) + 1
    return fit, gpus, spans


@njit(cache=True)
def fit_by_cluster(block, allowed, figures, codes, k, free_milli, in_pool):
    """`by_cluster` over the nodes the fit rule passes (the first three arguments:
    engine.core.fleet_view.fit_args; one node is enough), the rule applied in the same pass to the nodes of
    clusters where no node has passed yet, and the racks a one-node job spans per cluster (1 where it fits,
    else 0; int64)."""
    fit = np.zeros(k, np.bool_)
    free = np.zeros(k)
    for i in range(len(codes)):
        c = codes[i]
        if not fit[c]:
            fit[c] = fits_node(block, allowed, i, figures[0], figures[1], figures[2], figures[3])
        if in_pool[i]:
            free[c] += free_milli[i]
    return fit, free / MILLI, fit.astype(np.int64)


@njit(cache=True)
def fit_lowest_by(block, allowed, figures, codes, k, free_milli, in_pool, holds, first, second):
    """The choice of a policy that takes the lowest fitting cluster by the keys of codes `first` and
    `second` (engine.policies.cluster_kernels.lowest_by) over `fit_by_cluster`'s figures (its arguments;
    `holds`: the clusters that could hold the job): ANY, WAIT or a cluster index."""
    fits, free, racks = fit_by_cluster(block, allowed, figures, codes, k, free_milli, in_pool)
    return lowest_by(holds, fits, free, racks, first, second)


@njit(cache=True)
def earliest_cluster(need, codes, free_milli, in_pool, holds, ends, units, clusters, now_s, earliest):
    """(the cluster among `holds` (bool per cluster) where a head of `need` units can start first,
    its free units, the `ends` and `units` of its running jobs): each cluster's free units are those of
    its nodes `in_pool` (`codes` and `free_milli` per node), the running jobs hold `units` until `ends`
    in `clusters` (float64, slot order); ties to the lowest index; (-1, 0.0, the jobs of no cluster)
    when no cluster holds it. When one cluster holds it, that cluster, with no reservation computed;
    each cluster's running jobs are selected once."""
    free = np.zeros(len(holds))
    for i in range(len(codes)):
        if in_pool[i]:
            free[codes[i]] += free_milli[i]
    only = np.count_nonzero(holds) == 1
    best, best_start = -1, math.inf
    best_ends, best_units = ends[:0].copy(), units[:0].copy()
    for c in range(len(holds)):
        if holds[c]:
            mine = clusters == c
            mine_ends, mine_units = ends[mine], units[mine]
            if only:
                return c, free[c], mine_ends, mine_units
            start = reservation(need, free[c], mine_ends, mine_units, now_s, earliest)[0]
            if best < 0 or start < best_start:
                best, best_start, best_ends, best_units = c, start, mine_ends, mine_units
    if best < 0:
        mine = clusters == best
        return best, 0.0, ends[mine], units[mine]
    return best, free[best], best_ends, best_units


@njit(cache=True)
def scoped_units(jobs, units, pools, head_pool, kind, filled, holds, spans, cluster, free):
    """(`head_pool_units` of `jobs`, kept only for those that could start in `cluster` now: the
    cluster holds their key (`kind` per job; `holds` per key and cluster) and they have at most `free`
    units, or no cluster holds it (`spans` per key); -1), or (partial, k) at the first candidate k
    with units in the pool whose key is not `filled` yet. A candidate left out is multiplied by 0.0,
    as numpy multiplies by False."""
    out = head_pool_units(jobs, units, pools, head_pool)
    for k in range(len(jobs)):
        if out[k] != 0:
            j = jobs[k]
            key = kind[j]
            if not filled[key]:
                return out, k
            if not ((holds[key, cluster] and units[j] <= free) or spans[key]):
                out[k] = out[k] * 0.0
    return out, -1

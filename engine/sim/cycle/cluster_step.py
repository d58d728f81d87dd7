"""The cluster step (engine.policies.cluster): before a job's nodes are chosen, its region's cluster
policy picks the cluster it runs in, and the start places it on that cluster's nodes only
(engine.sim.cycle.starts; the fit rule and the fleet state's check read the request's `cluster`).

Attached only when the scenario's cluster policy is not inert (the default `any` is), so a run
without a cluster step is the same to the bit. Per call it builds the region's `ClustersView`
(engine.core.cluster_view) for the job: what each cluster could hold (static per job shape, cached),
where the job fits now (the fleet's fit rule, or for a gang the entirely free nodes big enough for one
pod), the free and installed GPUs of the job's GPU type, and the fewest racks a gang would span; the
per-node figures are summed per cluster in one compiled pass (engine.sim.cycle.cluster_step_kernels).
A job of a [partitions] MIG rule is seen by its instance (`pick_mig`): a GPU in MIG mode counts by its
free valid positions and free compute slices, not as a whole GPU.

A policy that promises `takes_sole_holder` (engine.core.traits; every bundled one but the inert `any`)
is not asked about a job that no cluster, or exactly one, could hold: `pick` answers ANY or that cluster
without building the view, and the start's placement or gang choice finds whether the job fits there now
(when it does not, the start ends as WAIT would: the shape's "no room" memo, no start). A run that places
in batches (engine.sim.cycle.batch_plan) always asks: a planned placement is taken only where the job fits.
A policy that names the keys it takes the lowest fitting cluster by (`lowest_by`: every bundled one) has a
one-node job's cluster chosen in the compiled call that sums the figures (`fit_lowest_by`, the policy's
own rule: engine.policies.cluster_kernels.lowest_by), without a view or a call of the policy.
"""
from __future__ import annotations

import numpy as np

from engine.core.cluster_view import ANY, WAIT, ClusterRequest, ClustersView
from engine.core.fleet_view import PlacementError, fit_args, fits_on
from engine.core.kernel_entry import Entries
from engine.core.traits import setting
from engine.core.views import assembled
from engine.world.mig import COMPUTE


class ClusterStep:
    """The run's cluster policy and the per-region figures it reads (see the module docstring)."""

    def __init__(self, run, policy) -> None:
        self.run, self.policy = run, policy
        self.sole = setting(policy, "cluster", "takes_sole_holder")  # the module docstring
        self.by = setting(policy, "cluster", "lowest_by")
        # per region fleet, per shape key's index: (holds, capacity_gpus, pool mask, whether any cluster
        # holds it, the answer when at most one does: ANY or its index; else None)
        self._static: dict[int, dict[int, tuple]] = {}
        self._fits: dict[int, dict[int, tuple | None]] = {}  # per region fleet and request: `_fit_args`
        self._requests: dict[tuple, ClusterRequest] = {}  # by (GPUs, nodes, GPU type): a job as the policy sees it
        # each job's shape key as an index (its GPUs, CPU, memory, pool, spot rule and nodes; built on first
        # use, kept current by `reshape`), the keys' indices, and per region fleet the scope tables
        # `scoped_units` reads: (which keys are filled, holds per key and cluster, whether no cluster holds the key)
        self._kind: np.ndarray | None = None
        self._kind_list: list[int] = []  # `_kind` as a list (read one job at a time)
        self._kinds: dict[tuple, int] = {}
        self._scope: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._entries = Entries()  # per kernel and region fleet: `call`

    def pick(self, j: int, fleet, request=None) -> int:
        """Job j's cluster in `fleet` (its RegionFleet): an index, ANY or WAIT (engine.core.cluster_view).
        `request`: a one-node job's pod request (engine.sim.cycle.starts.Starts.request_of) when the caller
        has it."""
        run = self.run
        width = run.width[j]
        codes, k = fleet.cluster_codes, len(fleet.cluster_names)
        holds, capacity, in_pool, _, sole = self._of(j, fleet)
        if sole is not None and self.sole and not run.batch.on:
            return sole
        state = fleet.state
        if width > 1:
            free = fleet.whole_free_nodes(run.num_gpu[j], run.cpu_milli[j], run.memory_mib[j], run.pool_list[j],
                                          run.spot_ok[j])
            fits, free_gpus, racks = kernels().gang_by_cluster(codes, k, free, state.rack, width,
                                                               state.gpu_free_total, in_pool)
        else:
            if request is None:
                request = run.request_of(j)
            fit = self._fit_args(fleet, request)
            if fit is not None and self.by:  # the policy's own choice, without a view
                return self.call("fit_lowest_by", fleet, (*fit, codes, k, state.gpu_free_total, in_pool, holds,
                                                          *self.by))
            if fit is not None:
                fits, free_gpus, racks = kernels().fit_by_cluster(*fit, codes, k, state.gpu_free_total, in_pool)
            else:
                fits, free_gpus = kernels().by_cluster(codes, k, fits_on(fleet.view, request), 1,
                                                       state.gpu_free_total, in_pool)
                racks = fits.astype(np.int64)
        asked = (run.gpus[j], width, run.gpu_type[j])
        job = self._requests.get(asked)
        if job is None:
            job = self._requests[asked] = assembled(ClusterRequest, (float(asked[0]), int(width), asked[2]))
        choice = self.policy.choose(job, assembled(ClustersView, (fleet.cluster_names, holds, fits, free_gpus,
                                                                  capacity, racks)))
        if choice in (ANY, WAIT) or (0 <= choice < k and fits[choice]):
            return int(choice)
        raise PlacementError(f"cluster policy {self.policy.registry_key!r} chose cluster {choice!r} for job "
                             f"{run.w.job_id[j]}, which is not one of the {k} where it fits now")

    def call(self, name: str, fleet, args: tuple):
        """cluster_step_kernels' kernel `name` on `args` through its entry point for `fleet`
        (engine.core.kernel_entry), without numba's dispatch: the arguments are the fleet's own arrays
        (its state's block and columns, cluster codes, running jobs' slots as read from it), a request's
        mask and figures (fleet_view.fit_args), the step's bool masks per node and cluster (`_of`) and
        Python ints and floats, whose types are fixed per fleet."""
        key = (name, id(fleet))
        return (self._entries.get(key) or self._entries.made(key, getattr(kernels(), name), args))(*args)

    def _fit_args(self, fleet, request) -> tuple | None:
        """`fit_args(fleet.view, request)`, kept per fleet and request (a request is one object per shape:
        engine.sim.cycle.starts.Starts.request_of)."""
        kept = self._fits.get(id(fleet))
        if kept is None:
            kept = self._fits[id(fleet)] = {}
        fit = kept.get(id(request), kept)
        if fit is kept:
            fit = kept[id(request)] = fit_args(fleet.view, request)
        return fit

    def pick_mig(self, j: int, fleet, placer) -> int:
        """MIG job j's cluster in `fleet`: the clusters are seen by their GPUs of a MIG part of its model
        (holds: any such node big enough for its CPU and memory; capacity: their GPUs), where its
        instance fits now (a free valid position on a GPU in MIG mode, or an idle whole GPU to switch)
        and their free GPUs (whole idle ones, and each GPU in MIG mode's free compute slices / 7)."""
        run, state = self.run, fleet.state
        codes, k = fleet.cluster_codes, len(fleet.cluster_names)
        model = run.gpu_type[j]
        capable = placer.capable[id(fleet)].copy()
        if model is not None:
            capable &= state.gpu_model == state.model_names.index(model) if model in state.model_names else False
        if not run.spot_ok[j] and state.spot is not None:
            capable &= ~state.spot
        big = capable & (state.cpu_total >= run.cpu_milli[j]) & (state.memory_total >= run.memory_mib[j])
        holds = np.bincount(codes, weights=big, minlength=k) > 0
        capacity = np.bincount(codes, weights=state.gpu_count * capable, minlength=k).astype(np.float64)
        fits = np.bincount(codes, weights=placer.switchable(j, fleet), minlength=k) > 0
        free_gpus = np.bincount(codes, weights=state.gpu_idle * capable, minlength=k).astype(np.float64)
        for c in range(k):
            if not fits[c] and holds[c]:
                fits[c] = placer.existing(j, fleet, c) is not None
        for gpu in placer.gpus[id(fleet)].values():
            if capable[gpu.node] and not gpu.returning:
                free_gpus[codes[gpu.node]] += placer.free_compute(gpu) / COMPUTE
        view = ClustersView(fleet.cluster_names, holds, fits, free_gpus, capacity, fits.astype(np.int64))
        share = int(placer.size[j][:-1]) / COMPUTE
        choice = self.policy.choose(ClusterRequest(share, 1, model), view)
        if choice in (ANY, WAIT) or (0 <= choice < k and fits[choice]):
            return int(choice)
        raise PlacementError(f"cluster policy {self.policy.registry_key!r} chose cluster {choice!r} for MIG job "
                             f"{run.w.job_id[j]}, which is not one of the {k} where it fits now")

    def holds(self, j: int, fleet) -> tuple[np.ndarray, np.ndarray, bool]:
        """(which clusters of `fleet` could ever hold job j: enough nodes big enough for one of its pods
        in its pool; which nodes are in its pool; whether any cluster could), as `pick` sees them."""
        static = self._of(j, fleet)
        return static[0], static[2], static[3]

    def scoped_units(self, jobs: np.ndarray, units: np.ndarray, pools: np.ndarray, head_pool: int, fleet,
                     cluster: int, free: float) -> np.ndarray:
        """The units of `jobs` in the head's pool `head_pool` (engine.policies.easy_kernels.head_pool_units),
        0 for a job that could not start in cluster `cluster` of `fleet` now: one counts when that cluster
        could hold it (`holds`) and it has at most `free` units, or when no cluster could (it spans
        clusters). One compiled pass over per-key tables (a backfill pass asks about every candidate); a
        key seen first in `fleet` is filled from `holds`, and the pass made again."""
        kind = self._kinds_of()
        while True:
            filled, holds, spans = self._table(fleet)
            out, k = kernels().scoped_units(jobs, units, pools, head_pool, kind, filled, holds, spans, cluster,
                                            float(free))
            if k < 0:
                return out
            missing = jobs[k:][~filled[kind[jobs[k:]]]]
            for j in dict(zip(kind[missing].tolist(), missing.tolist())).values():
                static = self._of(j, fleet)
                key = self._kind[j]
                filled[key], holds[key], spans[key] = True, static[0], not static[3]

    def reshape(self, j: int) -> None:
        """Job j's GPUs, CPU, memory, pool, spot rule or nodes changed (an OOM restart, a move, elastic
        degradation, spot fallback): `pick` and `scoped_units` look it up by its new key from now on."""
        if self._kind is not None:
            self._kind[j] = self._kind_list[j] = self._index(self._key(j))

    def _key(self, j: int) -> tuple:
        run = self.run
        return (run.num_gpu[j], run.cpu_milli[j], run.memory_mib[j], run.pool_list[j], run.spot_ok[j], run.width[j])

    def _index(self, key: tuple) -> int:
        return self._kinds.setdefault(key, len(self._kinds))

    def _kinds_of(self) -> np.ndarray:
        if self._kind is None:
            self._kind = np.fromiter(map(self._index, map(self._key, range(len(self.run.width)))), np.int64,
                                     len(self.run.width))
            self._kind_list = self._kind.tolist()
        return self._kind

    def _table(self, fleet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`fleet`'s scope tables, grown to every key indexed so far."""
        table = self._scope.get(id(fleet))
        n = len(self._kinds)
        if table is None or len(table[0]) < n:
            k = len(fleet.cluster_names)
            grown = (np.zeros(n, bool), np.zeros((n, k), bool), np.zeros(n, bool))
            if table is not None:
                for new, old in zip(grown, table):
                    new[:len(old)] = old
            table = self._scope[id(fleet)] = grown
        return table

    def _of(self, j: int, fleet) -> tuple:
        """Job j's static figures in `fleet` (the `_static` entry of its shape key)."""
        self._kinds_of()
        kind = self._kind_list[j]
        statics = self._static.get(id(fleet))
        if statics is None:
            statics = self._static[id(fleet)] = {}
        static = statics.get(kind)
        if static is None:
            num_gpu, cpu, memory, pool, spot_ok, width = self._key(j)
            codes, k, state = fleet.cluster_codes, len(fleet.cluster_names), fleet.state
            big = fleet.big_enough(num_gpu, cpu, memory, pool, spot_ok)
            holds = np.bincount(codes, weights=big, minlength=k) >= width
            in_pool = fleet.node_pool == pool if pool > 0 else np.ones(len(codes), bool)
            capacity = np.bincount(codes, weights=state.gpu_count * in_pool, minlength=k).astype(np.float64)
            held = np.flatnonzero(holds)
            sole = ANY if not len(held) else int(held[0]) if len(held) == 1 else None
            static = statics[kind] = (holds, capacity, in_pool, bool(len(held)), sole)
        return static


def kernels():
    """engine.sim.cycle.cluster_step_kernels (imported on first use: numba loads with it)."""
    global _kernels
    if _kernels is None:
        from engine.sim.cycle import cluster_step_kernels
        _kernels = cluster_step_kernels
    return _kernels


_kernels = None

"""Where a job of the [partitions] rule gets its MIG instance (engine.world.partitions, engine.world.mig).

Each region's GPUs in MIG mode are `MigGpu` records: the node and GPU, the MIG part, the memory slices
taken (a bit mask) and the instances on it. A GPU in MIG mode is held whole in the fleet state by a
partition pod (one GPU of 1000 milli, no CPU or memory), so no other job can take it; each instance's
job holds its CPU and memory on the node with a CPU-only pod. The choice for a job:

1. a GPU in MIG mode (not switching back) of the job's GPU model, on a node with its CPU and memory
   free, where its profile fits at a valid start: the GPU with the most slices taken, then the lowest
   node and GPU; the instance goes at the lowest valid free start;
2. else an idle whole GPU of a MIG part switches to MIG mode (on the node with the most GPUs already
   in MIG mode, then the fewest idle GPUs, then the lowest index; its lowest idle GPU): it is ready
   `reconfigure_s` later, and the instance starts its work then;
3. else none: the job waits.
"""
from __future__ import annotations

import numpy as np

from engine.core.fleet_view import MILLI, Placement, PodRequest
from engine.world.mig import Profile, first_start, part_of, profile

PARTITION_POD = PodRequest(0, 0, 1, MILLI)  # what a GPU in MIG mode holds in the fleet state


class MigGpu:
    """A GPU in MIG mode: where it is, its part, slices taken, instances (job -> (profile, start)),
    when it is ready (after switching in), since when it is in MIG mode, and whether it is switching
    back (`returning`); `idle_mark` counts its emptyings (a return planned before the last one is void)."""

    __slots__ = ("fleet", "region", "node", "gpu", "part", "occupied", "jobs", "ready_s", "since_s", "returning",
                 "idle_mark", "index")

    def __init__(self, fleet, region: str, node: int, gpu: int, part: str, now: float, ready_s: float,
                 index: int) -> None:
        self.fleet, self.region, self.node, self.gpu, self.part = fleet, region, node, gpu, part
        self.occupied, self.jobs, self.ready_s, self.since_s = 0, {}, ready_s, now
        self.returning, self.idle_mark, self.index = False, 0, index


class MigPlacer:
    """The MIG GPUs of a run and the choice of an instance for a job (see the module docstring)."""

    def __init__(self, run, settings) -> None:
        self.run, self.settings = run, settings
        aliases = dict(settings.gpu_models)
        self.part = {}  # id(fleet) -> each node's MIG part (None: no MIG)
        for fleet in run.regions.values():
            names = fleet.state.model_names
            self.part[id(fleet)] = [part_of(names[m], aliases) if m >= 0 else None
                                    for m in fleet.state.gpu_model.tolist()]
        self.capable = {key: np.array([p is not None for p in parts], bool) for key, parts in self.part.items()}
        self.gpus: dict[int, dict[tuple[int, int], MigGpu]] = {id(f): {} for f in run.regions.values()}
        self.all: list[MigGpu] = []  # every GPU that went into MIG mode, by index
        known = {m for f in run.regions.values() for m in f.state.model_names if part_of(m, aliases)}
        w = run.w
        size = [settings.profile_of(str(c)) for c in np.asarray(w.workload_class, dtype=object).tolist()]
        self.size = size
        self.takes = [s != "none" and int(g) == 1 and int(n) == 1 and (t is None or t in known)
                      for s, g, n, t in zip(size, w.num_gpu.tolist(), w.nodes.tolist(), run.gpu_type)]

    def place(self, j: int, fleet, now: float) -> tuple[Placement, PodRequest, MigGpu, Profile, int] | None:
        """Job j's instance in `fleet` now (its CPU-only pod taken), or None when there is no room."""
        run = self.run
        cpu, memory, model = run.cpu_milli[j], run.memory_mib[j], run.gpu_type[j]
        state = fleet.state
        spot = state.spot if not run.spot_ok[j] else None
        best, best_key = None, None
        for gpu in self.gpus[id(fleet)].values():
            node = gpu.node
            if gpu.returning or (model is not None and state.model_names[state.gpu_model[node]] != model) \
                    or (spot is not None and spot[node]) or state.cpu_free[node] < cpu \
                    or state.memory_free[node] < memory:
                continue
            prof = profile(gpu.part, self.size[j])
            start = first_start(gpu.occupied, prof)
            if start >= 0 and (best_key is None or (-gpu.occupied.bit_count(), node, gpu.gpu) < best_key):
                best, best_key = (gpu, prof, start), (-gpu.occupied.bit_count(), node, gpu.gpu)
        if best is None:
            gpu = self._switch(j, fleet, now)
            if gpu is None:
                return None
            prof = profile(gpu.part, self.size[j])
            best = (gpu, prof, first_start(gpu.occupied, prof))
        gpu, prof, start = best
        placement, request = Placement(gpu.node), PodRequest(cpu, memory)
        fleet.allocate(placement, request)
        gpu.occupied |= prof.mask(start)
        gpu.jobs[j] = (prof, start)
        return placement, request, gpu, prof, start

    def _switch(self, j: int, fleet, now: float) -> MigGpu | None:
        """An idle whole GPU for job j switched to MIG mode now (its partition pod taken), or None."""
        run, state = self.run, fleet.state
        ok = self.capable[id(fleet)] & (state.gpu_idle > 0) & (state.cpu_free >= run.cpu_milli[j]) \
            & (state.memory_free >= run.memory_mib[j])
        model = run.gpu_type[j]
        if model is not None:
            ok &= state.gpu_model == state.model_names.index(model) if model in state.model_names else False
        if not run.spot_ok[j] and state.spot is not None:
            ok &= ~state.spot
        nodes = np.flatnonzero(ok)
        if not len(nodes):
            return None
        in_mig = np.bincount([g.node for g in self.gpus[id(fleet)].values()], minlength=len(ok))[nodes]
        node = int(nodes[np.lexsort((nodes, state.gpu_idle[nodes], -in_mig))[0]])
        g = int(np.flatnonzero(state.gpu_free[node] == MILLI)[0])
        fleet.allocate(Placement(node, (g,), MILLI), PARTITION_POD)
        gpu = MigGpu(fleet, run.region_name[j], node, g, self.part[id(fleet)][node], now,
                     now + self.settings.reconfigure_s, len(self.all))
        self.gpus[id(fleet)][(node, g)] = gpu
        self.all.append(gpu)
        return gpu

    def remove(self, j: int, gpu: MigGpu) -> None:
        """Job j's instance on `gpu` ends (its CPU-only pod is released by the run)."""
        prof, start = gpu.jobs.pop(j)
        gpu.occupied &= ~prof.mask(start)

    def whole_again(self, gpu: MigGpu) -> None:
        """`gpu` leaves MIG mode: its partition pod is released."""
        del self.gpus[id(gpu.fleet)][(gpu.node, gpu.gpu)]
        gpu.fleet.release(Placement(gpu.node, (gpu.gpu,), MILLI), PARTITION_POD)

"""Where a job of the [partitions] rule gets its MIG instance (engine.world.partitions, engine.world.mig).

Each region's GPUs in MIG mode are `MigGpu` records: the node and GPU, the MIG part, the memory slices
taken (a bit mask) and the instances on it. A GPU in MIG mode is held whole in the fleet state by a
partition pod (one GPU of 1000 milli, no CPU or memory), so no other job can take it, and it holds a
running slot of 1000 units of its pool that ends when it is expected whole again (its instances'
expected ends, then idle_s and reconfigure_s): the backfill windows see it as any running job. Each
instance's job holds its CPU and memory on the node with a CPU-only pod. The choice for a job:

1. a GPU in MIG mode (not switching back) of the job's GPU model, on a node with its CPU and memory
   free, where its profile fits at a valid start not reserved for another job (a repack waiting for
   its slices): the GPU with the most slices taken, then the lowest node and GPU; the instance goes at
   the lowest valid free start;
2. else an idle whole GPU of a MIG part switches to MIG mode (on the node with the most GPUs already
   in MIG mode, then the fewest idle GPUs, then the lowest index; its lowest idle GPU): it is ready
   `reconfigure_s` later, and the instance starts its work then;
3. else none: the job waits (or, with `repack`, engine.sim.processes.partitions reconfigures a layout).
A cluster step (engine.sim.cycle.cluster_step) may restrict both to one cluster's nodes.
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.cluster_view import ANY
from engine.core.fleet_view import MILLI, Placement, PodRequest
from engine.core.reasons import TURNED_AWAY
from engine.world.mig import COMPUTE, Profile, drain_for, first_start, part_of, profile

PARTITION_POD = PodRequest(0, 0, 1, MILLI)  # what a GPU in MIG mode holds in the fleet state


class MigGpu:
    """A GPU in MIG mode: where it is, its part, slices taken, instances (job -> (profile, start)) and
    their expected ends, slices reserved for waiting jobs (job -> [mask, since, idle slice-seconds
    counted so far, compute slices free, last change]), when it is ready (after switching in), since
    when it is in MIG mode, whether it is switching back (`returning`), its running slot; `idle_mark`
    counts its emptyings (a return planned before the last one is void)."""

    __slots__ = ("fleet", "region", "node", "gpu", "part", "occupied", "jobs", "ends", "reserved", "ready_s",
                 "since_s", "returning", "idle_mark", "index", "slot")

    def __init__(self, fleet, region: str, node: int, gpu: int, part: str, now: float, ready_s: float,
                 index: int) -> None:
        self.fleet, self.region, self.node, self.gpu, self.part = fleet, region, node, gpu, part
        self.occupied, self.jobs, self.ends, self.reserved = 0, {}, {}, {}
        self.ready_s, self.since_s = ready_s, now
        self.returning, self.idle_mark, self.index, self.slot = False, 0, index, -1


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
        self.emptying: set[int] = set()  # GPUs (by index) emptied for a whole-GPU head (engine.sim.processes.mig_whole)
        known = {m for f in run.regions.values() for m in f.state.model_names if part_of(m, aliases)}
        w = run.w
        size = [settings.profile_of(str(c)) for c in np.asarray(w.workload_class, dtype=object).tolist()]
        self.size = size
        self.takes = [s != "none" and int(g) == 1 and int(n) == 1 and (t is None or t in known)
                      for s, g, n, t in zip(size, w.num_gpu.tolist(), w.nodes.tolist(), run.gpu_type)]
        util = w.gpu_util_pct if w.gpu_util_pct is not None else np.full(len(w), np.nan)
        # the GPU each job used: its mean utilisation of the GPU share it asked for (0: unmeasured)
        self.share = np.where(np.isfinite(util), np.clip(util, 0.0, 100.0) / 100.0 * w.gpus, 0.0).tolist()

    # -- what a job would get ------------------------------------------------------------------

    def pace(self, j: int) -> float:
        """How much slower job j runs on its instance than on a GPU of its own: its measured GPU share
        over the instance's compute/7 (its profile's compute slices over 7), at least 1 (1 when unmeasured)."""
        return max(1.0, self.share[j] * COMPUTE / int(self.size[j][:-1]))

    def eligible(self, j: int, gpu: MigGpu, cluster: int) -> bool:
        run, state = self.run, gpu.fleet.state
        node, model = gpu.node, run.gpu_type[j]
        return not (gpu.returning or gpu.index in self.emptying or (model is not None and state.model_names[state.gpu_model[node]] != model)
                    or (not run.spot_ok[j] and state.spot is not None and state.spot[node])
                    or (cluster != ANY and gpu.fleet.cluster_codes[node] != cluster))

    def taken(self, gpu: MigGpu, j: int) -> int:
        """The slices of `gpu` job j may not use: its instances' and those reserved for other waiting jobs."""
        taken = gpu.occupied
        for k, held in list(gpu.reserved.items()):
            if k != j:
                if self.live(k):
                    taken |= held[0]
                else:
                    del gpu.reserved[k]
        return taken

    def live(self, j: int) -> bool:
        """Whether job j still waits (a reservation for it holds)."""
        run = self.run
        return j not in run.pods and run.end[j] != run.end[j] and int(run.reason[j]) not in TURNED_AWAY

    def existing(self, j: int, fleet, cluster: int = ANY) -> tuple[MigGpu, Profile, int] | None:
        """The GPU in MIG mode, profile and start job j's instance would take now (None: none fits)."""
        state = fleet.state
        cpu, memory = self.run.cpu_milli[j], self.run.memory_mib[j]
        best, best_key = None, None
        for gpu in self.gpus[id(fleet)].values():
            node = gpu.node
            if state.cpu_free[node] < cpu or state.memory_free[node] < memory or not self.eligible(j, gpu, cluster):
                continue
            prof = profile(gpu.part, self.size[j])
            start = first_start(self.taken(gpu, j), prof)
            key = (-gpu.occupied.bit_count(), node, gpu.gpu)
            if start >= 0 and (best_key is None or key < best_key):
                best, best_key = (gpu, prof, start), key
        return best

    def free_compute(self, gpu: MigGpu) -> int:
        """The compute slices of `gpu` no instance holds (of 7)."""
        return COMPUTE - sum(p.compute for p, _ in gpu.jobs.values())

    def switchable(self, j: int, fleet, cluster: int = ANY) -> np.ndarray:
        """The nodes with an idle whole GPU of a MIG part job j could switch to MIG mode now (a mask)."""
        run, state = self.run, fleet.state
        ok = self.capable[id(fleet)] & (state.gpu_idle > 0) & (state.cpu_free >= run.cpu_milli[j]) \
            & (state.memory_free >= run.memory_mib[j])
        model = run.gpu_type[j]
        if model is not None:
            ok &= state.gpu_model == state.model_names.index(model) if model in state.model_names else False
        if not run.spot_ok[j] and state.spot is not None:
            ok &= ~state.spot
        if cluster != ANY:
            ok &= fleet.cluster_codes == cluster
        for index in self.emptying:  # a node freeing a GPU for a whole-GPU head keeps its idle ones whole
            if self.all[index].fleet is fleet:
                ok[self.all[index].node] = False
        return ok

    def backfill_terms(self, j: int, fleet, now: float) -> tuple[float, float, float]:
        """(units, extra seconds, pace) job j is seen with by a backfill window now: 0 units when an
        instance on a GPU in MIG mode takes it without holding that GPU past when it is expected whole;
        else 1000 (a whole GPU held: switched to MIG mode for it, or kept from going whole), for
        `extra` seconds beyond its paced request (the reconfigurations, the GPU's wait to be ready,
        and idle_s before the switch back)."""
        s, pace = self.settings, self.pace(j)
        found = self.existing(j, fleet)
        if found is None:
            return float(MILLI), 2 * s.reconfigure_s + s.idle_s, pace
        gpu, ready = found[0], max(now, found[0].ready_s)
        if ready + self.run.requested[j] * pace + s.idle_s + s.reconfigure_s <= self.expected(gpu, now):
            return 0.0, 0.0, pace
        return float(MILLI), ready - now + s.idle_s + s.reconfigure_s, pace

    # -- taking and giving back --------------------------------------------------------------

    def place(self, j: int, fleet, now: float, switch: bool = True, cluster: int = ANY):
        """Job j's instance in `fleet` now (its CPU-only pod taken): (placement, request, gpu, profile,
        start, ready_s, waited), or None when there is no room (without `switch`: on a GPU in MIG mode
        only); `waited` is (since, idle slice-seconds) of the repack it waited for, else None."""
        best = self.existing(j, fleet, cluster)
        if best is None:
            gpu = self._switch(j, fleet, now, cluster) if switch else None
            if gpu is None:
                return None
            prof = profile(gpu.part, self.size[j])
            best = (gpu, prof, first_start(gpu.occupied, prof))
        gpu, prof, start = best
        ready, waited = gpu.ready_s, None
        if j in gpu.reserved:  # a repack waited for these slices: the new layout takes reconfigure_s
            ready, waited = now + self.settings.reconfigure_s, self.waited(j, gpu, now)
        return (*self.put(j, gpu, prof, start, now, ready), gpu, prof, start, ready, waited)

    def put(self, j: int, gpu: MigGpu, prof: Profile, start: int, now: float, ready: float):
        """Job j's instance of `prof` at `start` on `gpu`, working from `ready`: its CPU-only pod taken;
        any reservation for it dropped."""
        run = self.run
        placement, request = Placement(gpu.node), PodRequest(run.cpu_milli[j], run.memory_mib[j])
        gpu.fleet.allocate(placement, request)
        gpu.occupied |= prof.mask(start)
        gpu.jobs[j] = (prof, start)
        gpu.ends[j] = max(now, ready) + run.requested[j] * self.pace(j)
        for other in self.gpus[id(gpu.fleet)].values():
            other.reserved.pop(j, None)
        self.expect(gpu, now)
        return placement, request

    def _switch(self, j: int, fleet, now: float, cluster: int) -> MigGpu | None:
        """An idle whole GPU for job j switched to MIG mode now (its partition pod taken), or None."""
        run, state = self.run, fleet.state
        ok = self.switchable(j, fleet, cluster)
        nodes = np.flatnonzero(ok)
        if not len(nodes):
            return None
        in_mig = np.bincount([g.node for g in self.gpus[id(fleet)].values()], minlength=len(ok))[nodes]
        node = int(nodes[np.lexsort((nodes, state.gpu_idle[nodes], -in_mig))[0]])
        g = int(np.flatnonzero(state.gpu_free[node] == MILLI)[0])
        fleet.allocate(Placement(node, (g,), MILLI), PARTITION_POD)
        gpu = MigGpu(fleet, run.region_name[j], node, g, self.part[id(fleet)][node], now,
                     now + self.settings.reconfigure_s, len(self.all))
        gpu.slot = fleet.occupy_slot(math.inf, MILLI, fleet.pool_of_node[node], cluster=fleet.cluster_codes[node])
        self.gpus[id(fleet)][(node, g)] = gpu
        self.all.append(gpu)
        return gpu

    def remove(self, j: int, gpu: MigGpu, now: float) -> None:
        """Job j's instance on `gpu` ends (its CPU-only pod is released by the run)."""
        prof, start = gpu.jobs.pop(j)
        del gpu.ends[j]
        mask = prof.mask(start)
        gpu.occupied &= ~mask
        for held in gpu.reserved.values():  # its slices start to wait idle for the repack
            if held[0] & mask:
                held[2] += held[3] * (now - held[4])
                held[3], held[4] = held[3] + prof.compute, now
        self.expect(gpu, now)

    def expected(self, gpu: MigGpu, now: float) -> float:
        """When `gpu` is expected whole again: its instances' expected ends (now when it has none),
        then idle_s (none when it is emptied for a whole-GPU head) and the switch back (the switch's
        end once it is returning)."""
        s = self.settings
        if gpu.returning:
            return now + s.reconfigure_s
        idle = 0.0 if gpu.index in self.emptying else s.idle_s
        return max(gpu.ends.values(), default=now) + idle + s.reconfigure_s

    def expect(self, gpu: MigGpu, now: float) -> None:
        """Set `gpu`'s running slot to when it is expected whole again."""
        gpu.fleet.slot_end[gpu.slot] = self.expected(gpu, now)

    def whole_again(self, gpu: MigGpu) -> None:
        """`gpu` leaves MIG mode: its partition pod and slot are released."""
        del self.gpus[id(gpu.fleet)][(gpu.node, gpu.gpu)]
        self.emptying.discard(gpu.index)
        gpu.fleet.vacate_slot(gpu.slot)
        gpu.fleet.release(Placement(gpu.node, (gpu.gpu,), MILLI), PARTITION_POD)

    # -- repacking ---------------------------------------------------------------------------

    def repack_plan(self, j: int, fleet, cluster: int = ANY) -> tuple[MigGpu, int, list[int]] | None:
        """The GPU in MIG mode, start and instances' jobs to drain so that job j's profile fits there:
        the fewest compute slices drained (then instances, then the most slices taken, the lowest node
        and GPU), only instances of a smaller profile, the node's CPU and memory free for j once they
        are gone; None when no layout can take it."""
        run, state = self.run, fleet.state
        best, best_key = None, None
        for gpu in self.gpus[id(fleet)].values():
            if not self.eligible(j, gpu, cluster) or any(k != j and self.live(k) for k in gpu.reserved):
                continue
            prof = profile(gpu.part, self.size[j])
            instances = [(k, p, s) for k, (p, s) in gpu.jobs.items()]
            plan = drain_for(instances, prof, lambda k, p: p.compute < prof.compute)
            if plan is None or not plan[1]:
                continue
            start, drained = plan
            node = gpu.node
            if state.cpu_free[node] + sum(run.cpu_milli[k] for k in drained) < run.cpu_milli[j] or \
                    state.memory_free[node] + sum(run.memory_mib[k] for k in drained) < run.memory_mib[j]:
                continue
            key = (sum(gpu.jobs[k][0].compute for k in drained), len(drained), -gpu.occupied.bit_count(), node,
                   gpu.gpu)
            if best_key is None or key < best_key:
                best, best_key = (gpu, start, drained), key
        return best

    def reserve(self, j: int, gpu: MigGpu, start: int, now: float) -> None:
        """Keep `gpu`'s slices for job j's profile at `start` until its blocking instances finish."""
        prof = profile(gpu.part, self.size[j])
        mask = prof.mask(start)
        free = prof.compute - sum(p.compute for p, s in gpu.jobs.values() if p.mask(s) & mask)
        gpu.reserved[j] = [mask, now, 0.0, max(free, 0), now]

    def waited(self, j: int, gpu: MigGpu, now: float) -> tuple[float, float]:
        """(since, idle slice-seconds) of job j's reservation on `gpu` up to now ((now, 0) without one)."""
        held = gpu.reserved.get(j)
        if held is None:
            return now, 0.0
        return held[1], held[2] + held[3] * (now - held[4])

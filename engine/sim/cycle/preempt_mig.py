"""Eviction planning for a job of a [partitions] MIG rule (engine.sim.cycle.preempt asks `plan_mig`).

Such a job needs an instance, not a whole GPU: a GPU in MIG mode offers its free valid positions, and a
victim holding an instance frees that instance's slices (and its CPU and memory on the node). The plan:
1. on each GPU in MIG mode the job may use (its model, spot rule, not switching back), take the
   victims among its instances in the policy's order until the job's profile has a valid start free
   of the others' slices (and of slices reserved for other repacks) and the node has the job's CPU and
   memory; the GPU needing the fewest victims wins (then the earliest most willing victim, the lowest
   node and GPU);
2. else the victims that free a whole GPU of a MIG part for the job to switch: the planner's one-pod
   search (engine.sim.cycle.preempt) with a whole GPU's request, on the nodes of a MIG part only.
A victim's eviction releases its instance (engine.sim.processes.partitions.GpuPartitions.on_release): the slices are free
for the job when it is tried again.
"""
from __future__ import annotations

from engine.core.cluster_view import ANY
from engine.core.fleet_view import MILLI, PodRequest
from engine.world.mig import first_start, profile


def plan_mig(planner, run, j: int, fleet, region: str, victims: list[int]) -> list[int] | None:
    """The victims to evict so that MIG job j gets an instance in `fleet` now, or None."""
    placer = run.partitions.placer
    rank = {v: i for i, v in enumerate(victims)}
    state = fleet.state
    cpu, memory = run.cpu_milli[j], run.memory_mib[j]
    best, best_key = None, None
    for gpu in placer.gpus[id(fleet)].values():
        if not placer.eligible(j, gpu, ANY):
            continue
        prof = profile(gpu.part, placer.size[j])
        here = sorted((v for v in gpu.jobs if v in rank), key=rank.get)
        taken, cpu_free, memory_free = placer.taken(gpu, j), state.cpu_free[gpu.node], state.memory_free[gpu.node]
        chosen = []
        for v in here:
            if first_start(taken, prof) >= 0 and cpu_free >= cpu and memory_free >= memory:
                break
            p, s = gpu.jobs[v]
            taken &= ~p.mask(s)
            cpu_free, memory_free = cpu_free + run.cpu_milli[v], memory_free + run.memory_mib[v]
            chosen.append(v)
        if not chosen or first_start(taken, prof) < 0 or cpu_free < cpu or memory_free < memory:
            continue
        key = (len(chosen), rank[chosen[0]], gpu.node, gpu.gpu)
        if best_key is None or key < best_key:
            best, best_key = chosen, key
    if best is not None:
        return best
    models = (run.gpu_type[j],) if run.gpu_type[j] is not None else ()
    whole = PodRequest(cpu, memory, 1, MILLI, models, run.spot_ok[j])
    return planner.plan_pod(run, whole, run.pool_list[j], fleet, region, victims, placer.capable[id(fleet)])

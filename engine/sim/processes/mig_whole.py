"""A whole-GPU queue head and the GPUs in MIG mode (engine.sim.processes.partitions, under `repack`).

A blocked head that asks for whole GPUs (one pod, not a job of the MIG rule) may get a GPU in MIG mode
back whole: `whole_plan` picks the one, of the head's GPU model, spot rule and pool (and, under a
cluster step, of a cluster that holds it), not switching back already nor being emptied for another
head, on a node whose idle whole GPUs plus this one are enough for the head and whose CPU and memory
are free for it once the GPU's instances are gone; the GPU holding the fewest compute slices wins
(then the lowest node and GPU). The partitions process then empties it by waiting, under either
repack mode: it takes no new instance (`MigPlacer.emptying`), no idle GPU of its node switches into MIG
mode meanwhile, and it switches back as soon as its last instance ends, without waiting idle_s; it is
whole reconfigure_s later. Its instances are not evicted, even under "checkpoint": an evicted job
goes back to its queue ahead of a later head and would take a GPU of MIG mode again before the head
could start.
"""
from __future__ import annotations

from engine.core.cluster_view import ANY
from engine.core.fleet_view import MILLI
from engine.world.mig import COMPUTE


def whole_plan(placer, j: int, fleet):
    """The MigGpu to empty for whole-GPU head j (the module docstring), or None."""
    run, state = placer.run, fleet.state
    if run.width[j] != 1:
        return None
    request = run.request_of(j)
    if request.gpu_milli != MILLI or request.num_gpu < 1:
        return None
    holds = run.clusters.holds(j, fleet)[0] if run.clusters is not None else None
    if holds is not None and not holds.any():
        holds = None
    pool = run.pool_list[j]
    best, best_key = None, None
    for gpu in placer.gpus[id(fleet)].values():
        node = gpu.node
        if not placer.eligible(j, gpu, ANY) or (pool > 0 and fleet.node_pool[node] != pool) \
                or (holds is not None and not holds[fleet.cluster_codes[node]]):
            continue
        cpu = state.cpu_free[node] + sum(run.cpu_milli[k] for k in gpu.jobs)
        memory = state.memory_free[node] + sum(run.memory_mib[k] for k in gpu.jobs)
        if state.gpu_idle[node] + 1 < request.num_gpu or cpu < request.cpu_milli or memory < request.memory_mib:
            continue
        key = (COMPUTE - placer.free_compute(gpu), node, gpu.gpu)
        if best_key is None or key < best_key:
            best, best_key = gpu, key
    return best

"""Right-sized jobs that were given too little: out of memory, then restarted with their request.

Attached only when the workload is right-sized (a `sized_gpus` column: engine.scenario.rightsize,
engine.sim.state.workload), so a run without [rightsize] is the same to the bit. A sized job runs
on the GPUs it was given. When its measured peak of GPUs busy (`used_gpus`) exceeds them, each of
its starts on them plans an out-of-memory failure `oom_at_fraction` x its running time later
(the [rightsize] table's; 0.5 by default). At that time the job stops, the running since its start is
lost (its GPUs x that time: `oom_lost_gpu_hours`), and it rejoins its queue with its full request
(the request's shape: engine.sim.state.shapes), its whole true runtime (and requested runtime) to do
again, logged "out-of-memory" (the lost piece is a segment of that outcome). It keeps its place in an
order keyed at submit. A job evicted before its failure (preemption, spot) starts again on its given
GPUs and plans its failure anew; one that finishes first (`oom_at_fraction` 1: at the same time,
finishes being handled first) never fails.

Memory, when it was sized too (the workload's `asked_memory_mib`: [rightsize] memory = true): a job
whose memory given (per pod x pods) is below its request and below its measured peak memory
(`used_memory_mib`) is short as well, and fails the same way (once, whether short of GPUs, memory or
both); its restart asks for its full memory per pod again, so node fit sees the request.

Per-job columns, only in a right-sized run: sized_gpus (GPUs it was first given; its request when
not sized), oom_restarts (0 or 1), oom_lost_gpu_hours; when memory was sized also asked_memory_gib
(its request over its pods), sized_memory_gib (GiB first given over its pods), oom_for_memory (1 when its memory was short at its failure) and
oom_lost_gib_hours (the memory it held x the running lost).
"""
from __future__ import annotations

import numpy as np

from engine.core.reasons import NEVER, OUT_OF_MEMORY, WAITING
from engine.sim.processes.base import WorldProcess

OOM = 25
DEFAULT_OOM_AT = 0.5  # engine.scenario.rightsize.RightSize.oom_at_fraction's default
_EPS = 1e-9


class OomRestarts(WorldProcess):
    """Plans and carries out the out-of-memory restarts of one right-sized run (see the module docstring)."""

    kinds = (OOM,)
    cause = "[rightsize] (jobs given fewer GPUs than they used, restarted)"
    attached_columns = {"sized_gpus": np.float64, "oom_restarts": np.int64, "oom_lost_gpu_hours": np.float64}
    optional_columns = {"asked_memory_gib": np.float64, "sized_memory_gib": np.float64, "oom_for_memory": np.int64,
                        "oom_lost_gib_hours": np.float64}

    @classmethod
    def attach(cls, run) -> "OomRestarts | None":
        if run.w.asked_num_gpu is None:
            return None
        sizing = getattr(run.world, "sizing", None)
        return cls(run, sizing.oom_at_fraction if sizing is not None else DEFAULT_OOM_AT)

    def __init__(self, run, oom_at: float) -> None:
        w = run.w
        self.run, self.oom_at = run, float(oom_at)
        run.shape = run.shape.copy()  # writable: a restart changes a job's shape (backfilling reads it)
        self.sized = w.gpus.copy()
        used = np.nan_to_num(w.used_gpus, nan=0.0)
        short = (w.asked_gpus > self.sized + _EPS) & (used > self.sized + _EPS)
        self.memory = w.asked_memory_mib is not None
        if self.memory:
            self.sized_mib = (w.memory_mib * w.nodes).astype(np.float64)
            peak = np.nan_to_num(w.used_memory_mib, nan=0.0)
            self.memory_short = (w.asked_memory_mib * w.asked_nodes > self.sized_mib) & (peak > self.sized_mib + _EPS)
            short = short | self.memory_short
            self.lost_mib_s = np.zeros(len(w))
        self.short = short.tolist()
        self.restarts = np.zeros(len(w), np.int64)
        self.lost_gpu_s = np.zeros(len(w))

    def on_start(self, j: int, now: float, running_s: float) -> None:
        if self.short[j]:
            run = self.run
            run.events.push(now + self.oom_at * running_s, OOM, j + run.n_jobs * run.generation[j])

    def on_event(self, kind: int, payload: int, now: float) -> list[str]:
        run = self.run
        j = run._current(payload)
        if j < 0 or j not in run.pods:  # evicted, or finished at the same time, before its failure
            return []
        region = run.region_name[j]
        start = float(run.sharing.seg_start[j])
        self.lost_gpu_s[j] += (now - start) * run.alloc_gpus[j]
        if self.memory:
            self.lost_mib_s[j] += (now - start) * run.memory_mib[j] * run.width[j]
        run.sharing.segments.append((j, region, run.nodes_of[j], start, now, run.alloc_gpus[j], now - start,
                                     "out-of-memory"))
        self.restarts[j] += 1
        self.short[j] = False
        run.release(j, now)
        run.generation[j] += 1
        run.log(now, j, OUT_OF_MEMORY)
        self._full_request(j)
        if run.never[j]:
            run.decide(now, j, NEVER)
            return [region]
        run.reason[j] = WAITING
        run.count_waiting(j, region, +1)
        if not run.sharing.joins_vip(j, region):
            run.requeue(j, region)
        return [region]

    def _full_request(self, j: int) -> None:
        """Job j asks for its request from now on, with its whole runtime to do."""
        run, w = self.run, self.run.w
        run.num_gpu[j], run.width[j] = int(w.asked_num_gpu[j]), int(w.asked_nodes[j])
        run.units_list[j] = run.units[j] = float(w.asked_nodes[j] * w.asked_num_gpu[j] * w.gpu_milli[j])
        run.gpus[j] = run.units[j] / 1000.0
        shape = int(run.asked_shape[j])
        run.shape[j] = run.shape_list[j] = shape
        r = run.region_index[run.region_name[j]]
        run.pool[j] = run.pool_list[j] = int(run.shape_pools[shape, r])
        run.never[j] = not run.shape_fits[shape, r]
        run.run_s[j] = run.remaining[j] = float(w.run_s[j])
        run.requested[j] = run.requested_s[j] = float(w.requested_s[j])
        if self.memory:
            run.memory_mib[j] = int(w.asked_memory_mib[j])
            run.sharing.memory[j] = float(w.asked_memory_mib[j] * w.asked_nodes[j] / 1024.0)
        if run.clusters is not None:
            run.clusters.reshape(j)

    def columns(self) -> dict[str, np.ndarray]:
        """attached_columns; with sized memory also the optional_columns."""
        columns = {"sized_gpus": self.sized, "oom_restarts": self.restarts,
                   "oom_lost_gpu_hours": self.lost_gpu_s / 3600.0}
        if self.memory:
            w = self.run.w
            columns.update(asked_memory_gib=w.asked_memory_mib * w.asked_nodes / 1024.0,
                           sized_memory_gib=self.sized_mib / 1024.0,
                           oom_for_memory=(self.memory_short & (self.restarts > 0)).astype(np.int64),
                           oom_lost_gib_hours=self.lost_mib_s / 1024.0 / 3600.0)
        return columns

"""GPU partitions in a run: MIG instances with their reconfigurations, and the interference of
co-tenants under time-slicing or MPS (engine.world.partitions gives the model and its defaults).

Attached only when the run's world has enabled [partitions], so a run without them is the same to the bit.

MIG (engine.sim.processes.mig_place chooses the instance): a job of the rule starts on an instance
(engine.sim.cycle.starts asks `place`), holds compute/7 of a GPU and runs at the instance's pace (its
measured GPU share over compute/7, at least 1: MigPlacer.pace), from when its instance is ready (a GPU
switching into MIG mode is ready `reconfigure_s` after the switch, a repacked layout `reconfigure_s`
after its instance is placed). When a GPU's last instance ends, a MIG_IDLE event `idle_s` later starts
its switch back (if it is still empty and no repack waits for it): it takes no new instance, and a
MIG_WHOLE event `reconfigure_s` later gives the whole GPU back.
A job of the rule takes no units of its pool (the free milli-GPU the passes compare requests with), so
the passes always try it and its instance decides; a backfill pass sees it with the units and time of
MigPlacer.backfill_terms (engine.sim.cycle.backfill_mig), preemption frees its instance's slices
(engine.sim.cycle.preempt_mig) and the cluster step counts free valid positions (engine.sim.cycle.cluster_step).
With `repack`, a head that nothing else can place gets a reconfigured layout (`place`, see
engine.world.partitions): "checkpoint" evicts the blocking instances' jobs with their work saved up to
now (engine.sim.cycle.sharing.Sharing.evict) and places it at once; "wait" reserves the slices.
Each switch costs reconfigure_s of the GPU held idle: the drain cost, reconfigure_s / 3600 GPU-hours.
With `repack`, a blocked head asking for whole GPUs may also get a GPU in MIG mode emptied and switched
back whole for it (`head_blocked`, engine.sim.processes.mig_whole).

Time-slicing and MPS: every job whose pod shares a GPU (gpu_milli < 1000) runs at pace 1 + c k, k
its co-tenants that count for it (engine.world.partitions.Partitions.slowdown). A co-tenant's arrival
or departure re-paces the others exactly: the work each did at its old pace since its last change is
settled, and its finish is planned again at its new pace (a new finish event, the old one void by the
job's generation). An eviction keeps the work done up to its checkpoint at the paces it ran
(`work_s`).

Result: `partitions`, one row per piece of running on an instance or a shared GPU (event "instance"
or "shared"), per switch of a GPU (event "to-mig": start_s the switch, end_s when the GPU was whole
again or the run's end; "to-whole": the switch back) and per repack (event "repack": row the job it
made room for, start_s when it was decided (the reservation under "wait"), end_s when the new instance
was ready, co_tenants the instances drained, drain_gpu_hours the new instance's share held idle for
reconfigure_s plus the reserved slices' idle time): event, row (the job's position in jobs, -1 for
a switch), job_id, workload_class, region, node, gpu, profile, start_slice (-1 when not an instance),
start_s, end_s, gpu_share (GPUs held), slowdown (running over work done; 1 for a switch), co_tenants
(the most it had), drain_gpu_hours (reconfigure_s / 3600 for a switch, else 0).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.cluster_view import ANY
from engine.core.fleet_view import MILLI
from engine.sim.processes.base import WorldProcess
from engine.sim.processes.mig_place import MigGpu, MigPlacer
from engine.sim.processes.mig_whole import whole_plan
from engine.sim.state.events import FAILURE, FINISH
from engine.world.mig import COMPUTE, profile

MIG_IDLE, MIG_WHOLE = 23, 24
COLUMNS = ["event", "row", "job_id", "workload_class", "region", "node", "gpu", "profile", "start_slice", "start_s",
           "end_s", "gpu_share", "slowdown", "co_tenants", "drain_gpu_hours"]


class GpuPartitions(WorldProcess):
    """MIG instances and interference on shared GPUs (see the module docstring)."""

    kinds = (MIG_IDLE, MIG_WHOLE)
    cause = "[partitions] MIG reconfigurations"
    result_fields = ("partitions",)

    def __init__(self, run, settings) -> None:
        self.run, self.settings = run, settings
        self.mig = settings.mode == "mig"
        self.placer = MigPlacer(run, settings) if self.mig else None
        self.takes = self.placer.takes if self.mig else [False] * len(run.w)
        self.takes_mask = np.array(self.takes, bool)
        self.seen_s = np.array(run.requested_s, np.float64)  # a MIG job's time as a backfill pass sees it
        classes = np.asarray(run.w.workload_class, dtype=object).astype(str)
        self.keeps_share = ((classes == "inference") & settings.inference_priority).tolist()
        self.marks: dict[int, list[list[float]]] = {}  # job -> [t, work left at t, pace from t] per change
        self.where: dict[int, tuple] = {}  # running job -> (MigGpu, profile, start) or its shared GPU's key
        self.tenants: dict[tuple, list[int]] = {}  # shared GPU (fleet id, node, gpu) -> its jobs
        self.most: dict[int, int] = {}  # running job -> the most co-tenants it had
        self.begun: dict[int, float] = {}  # running job -> start of its piece
        self.rows: list[tuple] = []
        self.emptied: dict[int, MigGpu] = {}  # whole-GPU head -> the GPU in MIG mode emptied for it

    @classmethod
    def attach(cls, run) -> "GpuPartitions | None":
        settings = getattr(run.world, "partitions", None) if run.world is not None else None
        if settings is None or not settings.enabled:
            return None
        run.partitions = process = cls(run, settings)
        for j in np.flatnonzero(process.takes).tolist():  # a MIG job takes no units of its pool: the
            run.units[j] = run.units_list[j] = 0.0  # backfill passes try it whatever their pools have free
        return process

    # -- starts and stops ---------------------------------------------------------------------

    def place(self, j: int, fleet, now: float, switch: bool = True, cluster: int = ANY, head: bool = False):
        """Job j's MIG instance now: ((placement, request) of its CPU-only pod, GPUs held), or None.
        Without `switch` only on a GPU already in MIG mode; a `head` may get a repacked layout."""
        placed = self.placer.place(j, fleet, now, switch, cluster)
        if placed is None and head and self.settings.repack != "off":
            placed = self._repack(j, fleet, now, cluster)
        if placed is None:
            return None
        placement, request, gpu, prof, start, ready, waited = placed
        if waited is not None:  # the repack it waited for: its slices' idle time while reserved
            since, idle_slice_s = waited
            self._repack_row(j, gpu, prof, start, since, ready, 0, idle_slice_s)
        self.where[j] = (gpu, prof, start, ready)
        return (placement, request), prof.compute / COMPUTE

    def _repack(self, j: int, fleet, now: float, cluster: int):
        """Job j's instance on a reconfigured layout (see the module docstring), or None (under "wait",
        or with no layout to reconfigure)."""
        placer = self.placer
        if any(j in gpu.reserved for gpu in placer.gpus[id(fleet)].values()):
            return None  # it waits for a repack already
        plan = placer.repack_plan(j, fleet, cluster)
        if plan is None:
            return None
        gpu, start, drained = plan
        if self.settings.repack == "wait":
            placer.reserve(j, gpu, start, now)
            return None
        for k in drained:
            self.run.sharing.evict(k, now, checkpointed=True)
        prof, ready = profile(gpu.part, placer.size[j]), now + self.settings.reconfigure_s
        placement, request = placer.put(j, gpu, prof, start, now, ready)
        self._repack_row(j, gpu, prof, start, now, ready, len(drained), 0.0)
        return placement, request, gpu, prof, start, ready, None

    def _repack_row(self, j: int, gpu: MigGpu, prof, start: int, since: float, ready: float, drained: int,
                    idle_slice_s: float) -> None:
        drain = (self.settings.reconfigure_s * prof.compute + idle_slice_s) / COMPUTE / 3600.0
        self.rows.append(("repack", j, gpu.region, gpu.fleet.name_list[gpu.node], gpu.gpu, prof.name, start, since,
                          ready, prof.compute / COMPUTE, 1.0, drained, drain))

    def running_s(self, j: int, fleet, now: float, work_s: float) -> float:
        """Seconds job j, started now with `work_s` of work left, takes to run (its pod already placed)."""
        if j in self.where:  # a MIG instance: its work starts when it is ready, at the instance's pace
            ready, pace = max(now, self.where[j][3]), self.placer.pace(j)
            self.marks[j], self.begun[j], self.most[j] = [[ready, work_s, pace]], now, 0
            return ready - now + work_s * pace
        placement, request = self.run.pods[j]
        if self.mig or request.num_gpu != 1 or request.gpu_milli >= MILLI:
            return work_s
        self.begun[j], self.most[j] = now, 0
        key = (id(fleet), placement.node, placement.gpus[0])
        self.where[j] = key
        tenants = self.tenants.setdefault(key, [])
        tenants.append(j)
        self.marks[j] = [[now, work_s, 1.0]]
        self._repace(tenants, now, j)
        return work_s * self.marks[j][-1][2]

    def on_release(self, j: int, now: float) -> None:
        """Job j stops holding its pod (finished, failed or evicted): its row; its GPU's others re-paced."""
        where = self.where.pop(j, None)
        if where is None:
            return
        run = self.run
        marks = self.marks.pop(j)
        done = marks[0][1] - _left(marks, now)
        slowdown = (now - marks[0][0]) / done if done > 0 else 1.0
        begun, most = self.begun.pop(j), self.most.pop(j)
        if isinstance(where[0], MigGpu):
            gpu, prof, start, _ = where
            self.placer.remove(j, gpu, now)
            self.rows.append(("instance", j, run.region_name[j], gpu.fleet.name_list[gpu.node], gpu.gpu, prof.name,
                              start, begun, now, prof.compute / COMPUTE, slowdown, 0, 0.0))
            if not gpu.jobs:
                gpu.idle_mark += 1
                idle = 0.0 if gpu.index in self.placer.emptying else self.settings.idle_s
                run.events.push(now + idle, MIG_IDLE, gpu.index * 2**20 + gpu.idle_mark % 2**20)
            return
        tenants = self.tenants[where]
        tenants.remove(j)
        fleet = run.region_of[j]
        self.rows.append(("shared", j, run.region_name[j], fleet.name_list[where[1]], where[2], "", -1, begun, now,
                          float(run.alloc_gpus[j]), slowdown, most, 0.0))
        if tenants:
            self._repace(tenants, now, -1)
        else:
            del self.tenants[where]

    def paced(self, j: int) -> bool:
        return j in self.marks

    def work_s(self, j: int, running_s: float) -> float:
        """The work done by `running_s` seconds of job j's current piece of running (at its paces)."""
        marks = self.marks[j]
        return marks[0][1] - _left(marks, self.begun[j] + running_s)

    def _repace(self, tenants: list[int], now: float, new: int) -> None:
        """Set the pace of every job on a shared GPU from its co-tenants now; replan the finishes of
        those whose pace changed (not `new`'s: its start plans it)."""
        run, settings = self.run, self.settings
        inference = sum(self.keeps_share[i] for i in tenants)
        for i in tenants:
            k = inference - 1 if self.keeps_share[i] else len(tenants) - 1
            self.most[i] = max(self.most[i], len(tenants) - 1)
            pace, marks = settings.slowdown(k), self.marks[i]
            t, left, old = marks[-1]
            if pace == old:
                continue
            if i == new:  # its start plans its finish
                marks[-1][2] = pace
                continue
            left -= (now - t) / old
            marks.append([now, left, pace])
            run.generation[i] += 1
            run.events.push(now + left * pace, FAILURE if run.failed[i] else FINISH, i + run.n_jobs * run.generation[i])

    # -- the switch back of an empty MIG GPU ----------------------------------------------------

    def on_event(self, kind: int, payload: int, now: float):
        gpu = self.placer.all[payload // 2**20]
        if kind == MIG_IDLE:
            if gpu.jobs or gpu.returning or payload % 2**20 != gpu.idle_mark % 2**20:
                return ()
            if any(self.placer.live(k) for k in gpu.reserved):  # a repack waits for it: ask again later
                self.run.events.push(now + self.settings.idle_s, MIG_IDLE, payload)
                return ()
            self._switch_back(gpu, now)
            return ()
        self.placer.whole_again(gpu)
        self._switch_row(gpu, now)
        self.run.freed[gpu.region] = True
        return (gpu.region,)

    def _switch_back(self, gpu: MigGpu, now: float) -> None:
        """`gpu`, empty, starts its switch back: whole reconfigure_s later (MIG_WHOLE)."""
        gpu.returning = True
        self.placer.expect(gpu, now)
        self.rows.append(("to-whole", -1, gpu.region, gpu.fleet.name_list[gpu.node], gpu.gpu, "", -1, now,
                          now + self.settings.reconfigure_s, 1.0, 1.0, 0, self.settings.reconfigure_s / 3600.0))
        self.run.events.push(now + self.settings.reconfigure_s, MIG_WHOLE, gpu.index * 2**20 + gpu.idle_mark % 2**20)

    def head_blocked(self, j: int, fleet, now: float) -> None:
        """Whole-GPU head j has no room: under `repack`, empty a GPU in MIG mode for it
        (engine.sim.processes.mig_whole), one per head at a time."""
        if not self.mig or self.settings.repack == "off" or self.takes[j]:
            return
        placer = self.placer
        gpu = self.emptied.get(j)
        if gpu is not None and placer.gpus[id(gpu.fleet)].get((gpu.node, gpu.gpu)) is gpu:
            return  # its GPU is on its way back
        gpu = whole_plan(placer, j, fleet)
        if gpu is None:
            return
        self.emptied[j] = gpu
        placer.emptying.add(gpu.index)
        if gpu.jobs:
            placer.expect(gpu, now)
        else:
            self._switch_back(gpu, now)

    def _switch_row(self, gpu: MigGpu, end: float) -> None:
        self.rows.append(("to-mig", -1, gpu.region, gpu.fleet.name_list[gpu.node], gpu.gpu, "", -1, gpu.since_s, end,
                          1.0, 1.0, 0, self.settings.reconfigure_s / 3600.0))

    def finish(self, last: float) -> None:
        for gpu in self.placer.all if self.mig else ():
            if (gpu.node, gpu.gpu) in self.placer.gpus[id(gpu.fleet)]:
                self._switch_row(gpu, last)

    def result(self) -> dict[str, object]:
        rows = list(zip(*self.rows)) if self.rows else [[]] * 13
        row = np.asarray(rows[1], np.int64)
        w, real = self.run.w, np.asarray(rows[1], np.int64) >= 0
        ids = np.where(real, w.job_id[np.where(real, row, 0)] if len(w) else "", "")
        classes = np.where(real, np.asarray(w.workload_class, dtype=object)[np.where(real, row, 0)] if len(w) else "",
                           "")
        frame = pd.DataFrame({
            "event": list(rows[0]), "row": row, "job_id": ids.astype(object), "workload_class": classes.astype(object),
            "region": list(rows[2]), "node": list(rows[3]), "gpu": np.asarray(rows[4], np.int64),
            "profile": list(rows[5]), "start_slice": np.asarray(rows[6], np.int64),
            "start_s": np.asarray(rows[7], np.float64), "end_s": np.asarray(rows[8], np.float64),
            "gpu_share": np.asarray(rows[9], np.float64), "slowdown": np.asarray(rows[10], np.float64),
            "co_tenants": np.asarray(rows[11], np.int64), "drain_gpu_hours": np.asarray(rows[12], np.float64)},
            columns=COLUMNS)
        return {"partitions": frame.sort_values(["start_s", "event", "row", "node", "gpu"], kind="stable",
                                                ignore_index=True)}


def _left(marks: list[list[float]], t: float) -> float:
    """Work left at time t by a job's marks (t at or after its piece's start)."""
    left = marks[0][1]
    for start, at, pace in marks:
        if start > t:
            break
        left = at - (t - start) / pace
    return max(left, 0.0)

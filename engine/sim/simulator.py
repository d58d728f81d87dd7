"""The discrete-event simulator: replays a workload's jobs on its fleet under a set of policies.

`simulate(workload, policies, seed)` runs the loop below and returns a `SimulationResult`.
Jobs stay in their own region (each region has its own fleet and queue). Policies see only
what is known at submit time (requested runtime, request, priority, deadline); the true
runtime decides only when the simulator ends a job. The loop never asks a policy its name: it
calls the one method of each family and checks every placement through `FleetState`.

Loop, per batch of events at the same time t (finishes before arrivals, then insertion order):
  1. Finishes: release the job's pods (a failed job ends at its recorded duration too).
  2. Arrivals: a job its region can never hold is recorded "never-fits"; otherwise the admission
     policy admits it to the region's queue or it is "rejected-by-admission".
  3. Scheduling pass, per region touched by the batch:
     a. order the queue with the order policy (time-independent orders are ranked once, and the
        queue is kept sorted by that rank; time-dependent ones are re-keyed over the queue);
     b. start jobs from the front while they fit (placement policy; gang jobs take whole free
        nodes, all or nothing); the first that does not fit is the blocked head;
     c. ask the backfill policy for a window (None: stop) and start, in queue order, the
        candidates that fit now and that the window allows, updating the window after each.
  4. Record the timeline sample (busy GPUs, queue length) of each touched region.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.policies.ordering import queue_order
from engine.sim.events import ARRIVAL, FINISH, EventQueue
from engine.sim.fleet_state import PodRequest
from engine.sim.region import RegionFleet
from engine.sim.result import SimulationResult
from engine.sim.views import QueueView
from engine.sim.workload import Workload

# Why a job waited or never ran (engine.sim.result); a job that started at submit keeps 0.
REASONS = ("started", "waiting-in-queue", "blocked-by-capacity", "blocked-by-reservation",
           "rejected-by-admission", "never-fits")
WAITING, CAPACITY, RESERVATION, REJECTED, NEVER = 1, 2, 3, 4, 5


@dataclass(frozen=True)
class Policies:
    """One policy per family, as built by `registry.make`."""

    order: object
    placement: object
    backfill: object
    admission: object


class _Run:
    """State of one simulation run (see the module docstring for the loop)."""

    def __init__(self, w: Workload, policies: Policies, seed: int) -> None:
        self.w, self.p = w, policies
        self.rng = np.random.default_rng(seed)
        names = sorted(set(w.fleet["region"]) | set(w.region))
        self.regions = {r: RegionFleet(w.fleet[w.fleet["region"] == r]) for r in names}
        self.region_of = [self.regions[r] for r in w.region]
        self.units = (w.nodes * w.num_gpu * w.gpu_milli).astype(np.float64)
        self.pool = self._pools()
        self.never = self._never_fits()
        self.view = QueueView(index=np.arange(len(w)), submit_s=w.submit_s, requested_s=w.requested_s,
                              size=w.gpus, priority=w.priority, deadline_s=w.deadline_s)
        self.static = not getattr(policies.order, "time_dependent", True)
        if self.static:
            self.rank_job = queue_order(policies.order, self.view, 0.0)
            self.job_rank = np.empty(len(w), np.int64)
            self.job_rank[self.rank_job] = np.arange(len(w))
        self.queues: dict[str, list[int]] = {r: [] for r in names}
        self.freed = dict.fromkeys(names, True)
        self.arrived: dict[str, list[int]] = {r: [] for r in names}
        self.blocked_head = dict.fromkeys(names, -1)
        self.start = np.full(len(w), np.nan)
        self.end = np.full(len(w), np.nan)
        self.reason = np.full(len(w), WAITING, np.int8)
        self.pods: dict[int, tuple | np.ndarray] = {}  # (placement, request), or whole gang nodes
        self.slot = np.zeros(len(w), np.int64)
        self.alloc_gpus = np.zeros(len(w))
        self.nodes_of: dict[int, object] = {}
        self.log: list[tuple[float, int, str]] = []
        self.timeline: list[tuple[float, str, float, int]] = []
        self.events = EventQueue()
        self.requests: dict[tuple, PodRequest] = {}
        # Python copies of the per-job figures the loop reads one at a time (cheaper than numpy scalars)
        self.width, self.pool_list, self.units_list = w.nodes.tolist(), self.pool.tolist(), self.units.tolist()
        self.submit, self.requested = w.submit_s.tolist(), w.requested_s.tolist()
        self.run_s, self.region_name = w.run_s.astype(np.float64).tolist(), list(w.region)

    def _pools(self) -> np.ndarray:
        """Each job's pool in its region (see RegionFleet); 0 for CPU-only jobs."""
        w, pool = self.w, np.zeros(len(self.w), np.int64)
        for name, fleet in self.regions.items():
            mine = w.region == name
            types = pd.Series(w.gpu_type[mine], dtype=object)
            known = types.notna()
            lookup = {t: fleet.pool_of(t) for t in types[known].unique()}
            pool[np.flatnonzero(mine)[known.to_numpy()]] = types[known].map(lookup).to_numpy(np.int64)
        return np.where(w.num_gpu > 0, pool, 0)

    def _never_fits(self) -> np.ndarray:
        w = self.w
        shapes = pd.DataFrame({"r": w.region, "g": w.num_gpu, "c": w.cpu_milli, "m": w.memory_mib,
                               "n": w.nodes, "p": self.pool})
        unique, inverse = np.unique(shapes.to_records(index=False), return_inverse=True)
        fits = np.array([self.regions[u.r].fits_empty(int(u.g), int(u.c), int(u.m), int(u.n), int(u.p))
                         for u in unique], bool)
        return ~fits[inverse] if len(w) else np.zeros(0, bool)

    def run(self) -> None:
        for j in range(len(self.w)):
            self.events.push(float(self.w.submit_s[j]), ARRIVAL, j)
        while len(self.events):
            now, batch = self.events.pop_batch()
            touched = {}
            for kind, j in batch:
                region = self.region_name[j]
                touched[region] = True
                if kind == FINISH:
                    self._finish(j, now)
                    self.freed[region] = True
                else:
                    self._arrive(j, now, region)
            for region in touched:
                self._schedule(region, now)
                fleet = self.regions[region]
                self.timeline.append((now, region, fleet.busy_milli / 1000.0, len(self.queues[region])))

    def _finish(self, j: int, now: float) -> None:
        fleet = self.region_of[j]
        pods = self.pods.pop(j)
        if isinstance(pods, tuple):
            fleet.release(*pods)
        else:
            fleet.release_whole(pods)
        fleet.vacate_slot(int(self.slot[j]))
        self.end[j] = now

    def _arrive(self, j: int, now: float, region: str) -> None:
        queue = self.queues[region]
        if self.never[j]:
            self._decide(now, j, NEVER)
        elif not self.p.admission.admit(len(queue), now):
            self._decide(now, j, REJECTED)
        else:
            self.arrived[region].append(j)
            if self.static:
                bisect.insort(queue, int(self.job_rank[j]))
            else:
                queue.append(j)

    def _decide(self, now: float, j: int, reason: int) -> None:
        self.reason[j] = reason
        self.log.append((now, j, REASONS[reason]))

    def _ordered(self, queue: list[int], now: float) -> np.ndarray:
        """Job indices of `queue` in the order policy's order."""
        if self.static:
            return self.rank_job[np.asarray(queue, np.int64)]
        jobs = np.asarray(queue, np.int64)
        return jobs[queue_order(self.p.order, self.view.take(jobs), now)]

    def _schedule(self, region: str, now: float) -> None:
        # Starting jobs only takes resources, so a job that did not fit since the region's last
        # finish still does not fit: only the new arrivals need a try unless something was freed.
        fresh, new = self.freed[region], self.arrived[region]
        self.freed[region], self.arrived[region] = False, []
        queue = self.queues[region]
        if not queue:
            return
        fleet = self.regions[region]
        ordered = None if self.static else self._ordered(queue, now)
        k = 0
        while k < len(queue):
            j = int(self.rank_job[queue[k]]) if self.static else int(ordered[k])
            if (not fresh and j == self.blocked_head[region]) or not self._try_start(j, now, fleet, False):
                break
            k += 1
        if self.static:
            del queue[:k]
        else:
            queue[:] = [int(j) for j in ordered[k:]]
        if not queue:
            return
        head = int(self.rank_job[queue[0]]) if self.static else queue[0]
        self.blocked_head[region] = head
        self._block(now, head, CAPACITY)
        if len(queue) > 1 and (fresh or new):
            self._backfill(region, fleet, head, now, None if fresh else new)

    def _block(self, now: float, j: int, reason: int) -> None:
        if self.reason[j] != reason:
            self.reason[j] = reason
            self.log.append((now, j, REASONS[reason]))

    def _backfill(self, region: str, fleet: RegionFleet, head: int, now: float, only: list[int] | None) -> None:
        """Step 3c; `only`: consider just these jobs (the others were refused since the last finish)."""
        pool = int(self.pool[head])
        ends, units = fleet.running_in_pool(pool)
        window = self.p.backfill.window(self.units[head], fleet.pool_free[pool], ends, units, now)
        if window is None:
            return
        queue = self.queues[region]
        if self.static and only is not None:  # the new arrivals still waiting behind the head, by rank
            ranks = sorted(int(self.job_rank[j]) for j in only if j != head and math.isnan(self.start[j]))
            rest = self.rank_job[np.asarray(ranks, np.int64)]
        else:
            rest = self._ordered(queue[1:], now) if self.static else np.asarray(queue[1:], np.int64)
            if only is not None:
                rest = rest[np.isin(rest, only)]
        req, cand_units, cand_pool = self.w.requested_s[rest], self.units[rest], self.pool[rest]
        in_pool = np.where((pool == 0) | (cand_pool == 0) | (cand_pool == pool), cand_units, 0.0)
        allowed = window.allows(now, req, in_pool)
        fits = cand_units <= fleet.pool_free[cand_pool]
        self._mark(now, rest[~allowed], RESERVATION)
        started = []
        for i in np.flatnonzero(allowed & fits):
            j = int(rest[i])
            if not (window.allows(now, req[i], in_pool[i]) and cand_units[i] <= fleet.pool_free[cand_pool[i]]):
                self._block(now, j, RESERVATION if cand_units[i] <= fleet.pool_free[cand_pool[i]] else CAPACITY)
                continue
            if self._try_start(j, now, fleet, True):
                window = window.after_start(now, req[i], in_pool[i])
                started.append(j)
            else:
                self._block(now, j, CAPACITY)
        self._mark(now, rest[allowed & ~fits], CAPACITY)
        if started and self.static:  # the queue is sorted by rank: delete each started job in place
            for rank in sorted(int(self.job_rank[j]) for j in started):
                del queue[bisect.bisect_left(queue, rank)]
        elif started:
            gone = set(started)
            queue[:] = [q for q in queue if q not in gone]

    def _mark(self, now: float, jobs: np.ndarray, reason: int) -> None:
        changed = jobs[self.reason[jobs] != reason]
        self.reason[changed] = reason
        self.log.extend((now, int(j), REASONS[reason]) for j in changed)

    def _try_start(self, j: int, now: float, fleet: RegionFleet, backfilled: bool) -> bool:
        """Place job j now if it fits (all pods or none); start it and schedule its finish."""
        w, pool, width = self.w, self.pool_list[j], self.width[j]
        if self.units_list[j] > fleet.pool_free[pool]:
            return False
        if width > 1:
            free = fleet.whole_free_nodes(int(w.num_gpu[j]), int(w.cpu_milli[j]), int(w.memory_mib[j]), pool)
            if len(free) < width:
                return False
            nodes = free[:width]
            units = fleet.allocate_whole(nodes)
            self.pods[j] = nodes
        else:
            request = self._request(j)
            placement = self.p.placement.choose(fleet.view, request, self.rng)
            if placement is None:
                return False
            units = fleet.allocate(placement, request)
            self.pods[j] = (placement, request)
            nodes = [placement.node]
        self.alloc_gpus[j] = units / 1000.0
        self.nodes_of[j] = nodes
        self.slot[j] = fleet.occupy_slot(now + self.requested[j], units, int(fleet.node_pool[nodes[0]]))
        self.start[j] = now
        self.log.append((now, j, "backfilled" if backfilled else "started"))
        if now <= self.submit[j]:
            self.reason[j] = 0
        self.events.push(now + self.run_s[j], FINISH, j)
        return True

    def _request(self, j: int) -> PodRequest:
        """Job j's pod request (one object per distinct shape)."""
        w = self.w
        models = (w.gpu_type[j],) if w.gpu_type[j] is not None and w.num_gpu[j] else ()
        key = (int(w.cpu_milli[j]), int(w.memory_mib[j]), int(w.num_gpu[j]), int(w.gpu_milli[j]), models)
        request = self.requests.get(key)
        if request is None:
            request = self.requests[key] = PodRequest(*key)
        return request

    def result(self, scenario: str) -> SimulationResult:
        w = self.w
        names = [";".join(self.region_of[j].names[self.nodes_of[j]]) if j in self.nodes_of else ""
                 for j in range(len(w))]
        jobs = pd.DataFrame({
            "job_id": w.job_id, "region": w.region, "workload_class": w.workload_class, "team": w.team,
            "submit_s": w.submit_s, "start_s": self.start, "end_s": self.end,
            "wait_s": self.start - w.submit_s, "run_s": self.end - self.start, "gpus": w.gpus,
            "gpus_allocated": self.alloc_gpus,
            "failed": w.failed, "started": np.isfinite(self.start), "nodes": names,
            "reason": np.asarray(REASONS, object)[self.reason]})
        timeline = pd.DataFrame(self.timeline, columns=["time_s", "region", "busy_gpus", "queue_length"])
        log = pd.DataFrame(self.log, columns=["time_s", "job", "decision"])
        decisions = pd.DataFrame({"time_s": log["time_s"], "job_id": w.job_id[log["job"].to_numpy(np.int64)],
                                  "region": w.region[log["job"].to_numpy(np.int64)], "decision": log["decision"]})
        capacity = {r: f.capacity_gpus for r, f in self.regions.items()}
        return SimulationResult(scenario, jobs, timeline, decisions, capacity, w.origin_utc, w.notes,
                                w.observed_end_s)


def simulate(workload: Workload, policies: Policies, seed: int = 0, name: str = "scenario") -> SimulationResult:
    """Replay `workload` under `policies`; same inputs and seed, same result."""
    run = _Run(workload, policies, seed)
    run.run()
    return run.result(name)

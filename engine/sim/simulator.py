"""The discrete-event simulator: replays a workload's jobs on its fleet under a set of policies.

`simulate(workload, policies, seed, timer_s)` runs the loop below and returns a `SimulationResult`.
Jobs stay in their own region (each region has its own fleet and queue). Policies see only
what is known at submit time (requested runtime, request, priority, deadline); the true
runtime decides only when the simulator ends a job. The loop never asks a policy its name: it
calls the one method of each family and checks every placement through `FleetState`.

Every job belongs to a queue class (engine.scenario.queues). The ledger (engine.sim.state.ledger)
tracks who holds what and decayed usage for fairness orders, quotas and preemption.

The loop knows arrivals, finishes and the scheduling pass; every other process of the world (timers,
load-shifting holds, spot interruptions, outages, reclaims by the clock, cloud bursts, users giving up,
fragmentation samples) is a world process (engine.sim.processes.base) listed in the registration table
(engine.sim.processes.table): it declares its event kinds and the hooks it needs, and the loop calls
them. What the loop does per batch of events at the same time t, step by step, is told in
engine.sim.cycle's docstring.
A run that takes more event batches than its work budget (engine.sim.budget: 50 per job) stops with
WorkBudgetExceeded naming what in its scenario made the events. An evicted job loses the work since its last checkpoint, rejoins its queue with the rest, and its
old finish is ignored; each piece of running is a segment of the result.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from engine.core.fleet_view import PodRequest
from engine.core.reasons import CAPACITY, DATA_WAIT, FAILED, RESTORING, WAITING
from engine.core.traits import traits_of
from engine.core.views import QueueView
from engine.core.vocabulary import FLEXIBLE_CLASSES
from engine.policies.bundle import Policies
from engine.policies.ordering import queue_order
from engine.policies.registry import make
from engine.scenario.queues import assign_queues
from engine.scenario.sharing import SharingSetup
from engine.sim.budget import CENSUS, budget, overrun
from engine.sim.cycle.adaptive import Adaptive
from engine.sim.cycle.arrivals import Arrivals
from engine.sim.cycle.backfill_pass import backfill
from engine.sim.cycle.batch_plan import BatchPlan
from engine.sim.cycle.cluster_step import ClusterStep
from engine.sim.cycle.order_cache import OrderCache
from engine.sim.cycle.patience import Patience
from engine.sim.cycle.sharing import Sharing
from engine.sim.cycle.starts import Starts
from engine.sim.cycle.user_history import UserHistory
from engine.sim.output.collector import collector_paused
from engine.sim.output.decision_log import DecisionLog
from engine.sim.output.result import SimulationResult
from engine.sim.output.run_tables import run_tables
from engine.sim.processes import table
from engine.sim.processes.router import Router
from engine.sim.state.compact import shared_list
from engine.sim.state.events import ARRIVAL, DEFERRED, FAILURE, REPASS, EventQueue
from engine.sim.state.queue import WaitingQueue
from engine.sim.state.region import RegionFleet
from engine.sim.state.shapes import job_shapes
from engine.sim.state.workload import Workload
from engine.world.facts import RegionFacts, World
from engine.world.latency import Latency


class _Run(Arrivals, Starts, DecisionLog):
    """State of one simulation run (see the module docstring for the loop)."""

    def __init__(self, w: Workload, policies: Policies, seed: int, timer_s: float, world: World | None,
                 sharing: SharingSetup | None = None) -> None:
        self.w, self.p, self.timer_s = w, policies, float(timer_s)
        self.gang = policies.gang or make("gang", "lowest-index")
        self.gang_sees_time = getattr(self.gang, "sees_time", False)  # engine.sim.cycle.starts._gang_nodes
        # the cluster step (engine.sim.cycle.cluster_step): None under an inert cluster policy (`any`, the default)
        self.clusters = None if traits_of(policies.cluster).inert else ClusterStep(self, policies.cluster)
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        names = sorted(set(w.fleet["region"]) | set(w.region))
        added = table.fleet_rows(w.fleet, world)  # a world process's nodes (cloud bursts)
        fleet = pd.concat([w.fleet, *added], ignore_index=True) if added else w.fleet
        self.regions = {r: RegionFleet(fleet[fleet["region"] == r]) for r in names}
        self.region_index = {r: i for i, r in enumerate(names)}
        self.units = (w.nodes * w.num_gpu * w.gpu_milli).astype(np.float64)
        self.sharing_setup = sharing or SharingSetup()
        queues = self.sharing_setup.queues
        qos = w.qos if w.qos is not None else np.full(len(w), "", object)
        self.qclass = assign_queues(queues, w.workload_class, qos, w.gpus, w.requested_s)  # each job's queue class
        # may the job use spot nodes: its queue class says (interruptible work only); a job that falls back
        # to on-demand after its interruptions no longer may (engine.sim.processes.spot); the rule holds
        # when the scenario's [spot] says so (engine.scenario.spot.SpotModel.keeps_work_off_spot)
        spot_ok = np.array([q.spot or not self.sharing_setup.spot.keeps_work_off_spot for q in queues],
                           bool)[self.qclass]
        self.spot_ok = spot_ok.tolist()
        shapes = job_shapes(w, list(self.regions.values()), spot_ok)
        self.shape, self.shape_pools, self.shape_fits = shapes.shape, shapes.pools, shapes.fits
        self.asked_shape = shapes.asked  # under right-sizing, the shape of each job's full request
        at, homes = pd.factorize(w.region, use_na_sentinel=False)  # each job's home region, looked up once per region
        fleets = np.empty(len(homes), object)
        for i, r in enumerate(homes):
            fleets[i] = self.regions[r]
        self.region_of = fleets[at].tolist()
        home = np.array([self.region_index[r] for r in homes], np.int64)[at]
        self.home = home.tolist()  # each job's home region, an index into the region names
        self.flexible = np.isin(w.workload_class, FLEXIBLE_CLASSES).tolist()
        located, where = pd.factorize(w.data_location if w.data_location is not None else np.full(len(w), None))
        self.data_region = np.array([self.region_index.get(r, -1) for r in where] + [-1], np.int64)[located].tolist()
        self.data_gb = shared_list(w.data_size_gb if w.data_size_gb is not None else np.zeros(len(w)))
        self.transfer_gbps = float(world.data.transfer_gbps) if world is not None else 0.0
        self.data_moves = None  # [data] replicas, prefetch, ...: engine.sim.processes.data_moves attaches itself
        self.data_gate = False  # prefetch: a job may be queued before its data is there
        self.transferred = [False] * len(w)  # its data was moved (the transfer delay is behind it)
        self.pool = self.shape_pools[self.shape, home] if len(w) else np.zeros(0, np.int64)
        self.never = (~self.shape_fits[self.shape, home]).tolist() if len(w) else []
        self.requested_s = w.requested_s.astype(np.float64)  # longer for a degraded job (engine.sim.cycle.arrivals)
        self.view = QueueView(index=np.arange(len(w)), submit_s=w.submit_s, requested_s=self.requested_s,
                              size=w.gpus, priority=w.priority, deadline_s=w.deadline_s, fail_prob=w.fail_prob)
        self.static = not traits_of(policies.order).time_dependent
        # The queue's keys: ranks under a time-independent order, job indices otherwise.
        self.key_job = queue_order(policies.order, self.view, 0.0) if self.static else np.arange(len(w))
        self.job_key = np.empty(len(w), np.int64)
        self.job_key[self.key_job] = np.arange(len(w))
        self.queues = {r: WaitingQueue(len(w)) for r in names}
        self.freed = dict.fromkeys(names, True)
        self.arrived: dict[str, list[int]] = {r: [] for r in names}
        self.blocked_head = dict.fromkeys(names, -1)
        self.start = np.full(len(w), np.nan)
        self.end = np.full(len(w), np.nan)
        self.reason = np.full(len(w), WAITING, np.int8)
        self.parked = np.zeros(len(w), bool)  # held back by its quota (engine.sim.cycle.quota_gate)
        self.pods: dict[int, tuple | np.ndarray] = {}  # (placement, request), or whole gang nodes
        self.slot = [0] * len(w)  # each running job's slot in its region (engine.sim.state.region)
        self.alloc_gpus = np.zeros(len(w))
        self.nodes_of: dict[int, object] = {}
        self.log_t: list[float] = []  # the decision log, one entry per position: time,
        self.log_j: list[int] = []  # job and decision code (engine.core.reasons.DECISIONS)
        self.log_c: list[int] = []
        self.timeline = ([], [], [], [])  # one sample per pass, in columns: time, region index, busy GPUs, queued jobs
        self.events = EventQueue(w.submit_s)
        self.backfills = not traits_of(policies.backfill).inert
        self.plans_ahead = self.backfills or self.gang_sees_time  # running jobs' expected ends read: kept in slots
        # EASY++ (engine.policies.backfill_predicted): runtimes predicted from each user's finished jobs
        self.history = UserHistory(w) if getattr(policies.backfill, "predicts", False) else None
        self.adaptive = None  # set below when the backfill policy switches strategy (engine.sim.cycle.adaptive)
        self.admits_all = traits_of(policies.admission).inert  # admits every job as asked: not asked
        self.requests: dict[tuple, PodRequest] = {}
        # Python copies of the per-job figures the loop reads one at a time (cheaper than numpy scalars)
        self.width, self.pool_list = shared_list(w.nodes), shared_list(self.pool)
        self.units_list = shared_list(self.units)
        self.submit, self.requested = w.submit_s.tolist(), shared_list(self.requested_s)
        self.overrun = w.overrun_s.tolist() if w.overrun_s is not None else [math.nan] * len(w)
        self.run_s, self.region_name = w.run_s.astype(np.float64).tolist(), list(w.region)
        self.failed = w.failed.astype(bool).tolist()
        self.shape_list = self.shape.tolist()
        self.gpus = shared_list(w.gpus)
        self.num_gpu, self.cpu_milli = shared_list(w.num_gpu), shared_list(w.cpu_milli)
        self.memory_mib, self.gpu_milli = shared_list(w.memory_mib), shared_list(w.gpu_milli)
        self.gpu_type = list(w.gpu_type)
        self.key_of, self.job_at = self.job_key.tolist(), self.key_job.tolist()  # job_key and key_job as lists
        self.queued_gpus = dict.fromkeys(names, 0.0)
        self.latency_ms = np.zeros(len(w))  # from the job's home to where it runs (engine.world.latency)
        self.latency_slo_ms = ((world.latency if world else None) or Latency()).slo_ms
        self.world = world  # its regions' zones set the spot interruptions' local hours (engine.sim.processes.spot)
        self._facts: RegionFacts | None = None
        routing = policies.routing
        self.router = None if traits_of(routing).inert else Router(self, routing, self.region_facts())
        self.sharing = Sharing(self, self.sharing_setup, world)
        self.orders = OrderCache(policies.order, len(w))
        self.batch = BatchPlan(self)  # batch placement (engine.sim.cycle.batch_plan)
        self.remaining = list(self.run_s)  # work left per job, s (less after checkpointed evictions)
        self.n_jobs = max(len(w), 1)
        self.generation = [0] * len(w)  # evictions so far: a finish event carries the one it was planned in
        self.queued_gpu_s = dict.fromkeys(names, 0.0)
        self.patience = Patience(self, w.patience_s)  # users who give up on jobs not started in time
        self.links = None  # an [interconnect]'s pace of multi-node jobs, set when attached (engine.sim.processes.interconnect)
        self.chains = None  # staged workflows, set when attached (engine.sim.processes.chains)
        self.dataset_archive = None  # [roles]' archived datasets, set when attached (engine.sim.processes.dataset_archive)
        self.archive = None  # [roles]' archived checkpoints, set when attached (engine.sim.processes.archive)
        self.partitions = None  # [partitions]: MIG instances and interference, set when attached (engine.sim.processes.partitions)
        self.processes = table.attach(self, [self.patience])  # engine.sim.processes.table
        if getattr(policies.backfill, "switches_strategy", False):
            self.adaptive = Adaptive(self, policies.backfill, simulate)

    def region_facts(self) -> RegionFacts:
        """The regions' calendars, prices and carbon over the run's span (built once, when asked)."""
        if self._facts is None:
            w = self.w
            span = (float(w.submit_s.max()) if len(w) else 0.0) + 8 * 86_400.0  # + a week of holds and a day of run
            self._facts = RegionFacts(self.world or World(), list(self.regions), w.origin_utc, span)
        return self._facts

    def down(self, region: str) -> bool:
        """Whether a world process holds `region` from scheduling now (an outage)."""
        return any([holds(region) for holds in self.processes.holds])  # a list: cheaper for one or two

    def run(self, name: str = "scenario") -> None:
        events, queues, regions, hooks, last = self.events, self.queues, self.regions, self.processes, 0.0
        handler, on_arrival, before_batch, after_batch = hooks.handler, hooks.on_arrival, hooks.before_batch, \
            hooks.after_batch
        names, region_name, index = list(self.regions), self.region_name, self.region_index
        at, where, busy, queued = (column.append for column in self.timeline)
        allowed, batches, census = budget(self.n_jobs), 0, Counter()
        while True:
            now, batch = events.pop_batch()
            if not batch:
                break
            batches += 1
            if batches > allowed:   # engine.sim.budget: count what the run is spending itself on, then stop
                census.update(kind for kind, _ in batch)
                if batches > allowed + CENSUS:
                    raise overrun(name, self.n_jobs, now, census, self.processes.classes)
            for hook in before_batch:
                hook(now)
            last = now
            touched = {}
            for kind, j in batch:
                if kind <= FAILURE:
                    if (j := self._current(j)) >= 0:
                        touched[region_name[j]] = True
                        self._finish(j, now, kind == FAILURE)
                elif kind == ARRIVAL or kind == DEFERRED:
                    if kind == DEFERRED or not on_arrival or not any(hook(j, now) for hook in on_arrival):
                        touched[self._arrive(j, now)] = True
                elif kind == REPASS:
                    touched[names[j]] = True
                else:
                    touched.update(dict.fromkeys(handler[kind](kind, j, now), True))
            for region in touched:
                self._schedule(region, now)
                at(now)
                where(index[region])
                busy(regions[region].busy_milli / 1000.0)
                queued(queues[region].count)
            for hook in after_batch:
                hook(now)
        for hook in hooks.finish:
            hook(last)

    def _current(self, payload: int) -> int:
        """The job of a finish event, or -1 for a finish planned before the job was evicted."""
        j, generation = payload % self.n_jobs, payload // self.n_jobs
        return j if generation == self.generation[j] else -1

    def _finish(self, j: int, now: float, failed: bool) -> None:
        self.release(j, now)
        self.end[j] = now
        if self.history is not None:
            self.history.finished(j, now - self.start[j])
        if failed:
            self.log(now, j, FAILED)
        if self.processes.on_finish:  # none unless a process listens (chains)
            for hook in self.processes.on_finish:
                hook(j, now)

    def release(self, j: int, now: float) -> None:
        """Job j stops holding its pods (finished, failed or evicted)."""
        region, fleet, pods = self.region_name[j], self.region_of[j], self.pods.pop(j)
        if isinstance(pods, tuple):
            fleet.release(*pods)
        else:
            fleet.release_whole(pods)
        if self.plans_ahead:
            fleet.vacate_slot(self.slot[j])
        self.freed[region] = True
        self.sharing.stopped(j, region, now)
        if self.processes.on_release:  # none unless a process listens (partitions, archived datasets)
            for hook in self.processes.on_release:
                hook(j, now)

    def work_done(self, j: int, running_s: float) -> float:
        """The work done by `running_s` seconds of job j's current piece of running (its pace set by an
        [interconnect] or the co-tenants of a shared GPU; else the running itself)."""
        if self.partitions is not None and self.partitions.paced(j):
            return self.partitions.work_s(j, running_s)
        return running_s if self.links is None else self.links.work_s(j, running_s)

    def unhold(self, j: int, fleet: RegionFleet) -> None:
        """Release job j's pods for an eviction plan (`rehold` puts them back exactly)."""
        pods = self.pods[j]
        fleet.release(*pods) if isinstance(pods, tuple) else fleet.release_whole(pods)

    def rehold(self, j: int, fleet: RegionFleet) -> None:
        pods = self.pods[j]
        fleet.allocate(*pods) if isinstance(pods, tuple) else fleet.allocate_whole(pods)

    def _schedule(self, region: str, now: float) -> None:
        hooks = self.processes
        if hooks.holds and self.down(region):
            return
        sharing = self.sharing
        if sharing.vip[region]:
            sharing.schedule_vip(region, self.regions[region], now)
        while self._pass(region, now):
            pass
        if self.batch.on:
            self.batch.clear()
        for hook in hooks.after_pass:
            hook(region, now)

    def _pass(self, region: str, now: float) -> bool:
        """One scheduling pass of `region`; True when it evicted jobs for the head (pass again)."""
        # Starting jobs only takes resources, so a job that did not fit since the region's last
        # finish still does not fit: only the new arrivals need a try unless something was freed.
        fresh, new = self.freed[region], self.arrived[region]
        self.freed[region], self.arrived[region] = False, []
        queue = self.queues[region]
        if not queue.count:
            return False
        fleet, blocked, rest = self.regions[region], self.blocked_head[region], None
        parked = self.parked
        if self.static:
            job_at = self.job_at
            if self.batch.on and (fresh or new):  # else nothing can start: no plan is needed
                self.batch.plan(fleet, map(job_at.__getitem__, queue.keys().tolist()))
            while queue.count:
                j = job_at[queue.lo]
                if (not fresh and j == blocked) or not self.try_start(j, now, fleet, False):
                    if parked[j]:
                        continue
                    break
                queue.remove(self.key_of[j])  # not queue.lo: a reclaim may have requeued jobs ahead
            if not queue.count:
                return False
            head = job_at[queue.lo]
        else:
            # nothing was freed and no arrival has room: no job can start in order; nor by backfilling
            # unless an arrival became the head (its reservation differs from the blocked head's)
            stuck = not fresh and not self.sharing.preempts and self._none_fit(new, fleet)
            if stuck and (not self.backfills or queue.count == 1):
                self.wait_for_capacity(new, now)
                return False
            shares = lambda: self.sharing.shares(region, now)  # noqa: E731 (asked only when jobs are keyed)
            # without evictions or a quota gate, a started job never comes back and a failed try changes
            # no ledger: a lone job is keyed only if it does not start (engine.sim.cycle.order_cache)
            defer = not self.sharing.evicting and not self.sharing.gated
            order = self.orders.order(self.view, shares, region, queue, now, defer)
            if stuck and order[0] == blocked:  # the head did not change: the static path's answer too
                self.orders.settle(self.view, shares, queue, now)
                self.wait_for_capacity(new, now)
                return False
            ordered = order.tolist()
            if self.batch.on and (fresh or new):
                self.batch.plan(fleet, ordered)
            k = 0
            while k < len(ordered) and (fresh or ordered[k] != blocked):
                if self.try_start(ordered[k], now, fleet, False):
                    queue.remove(ordered[k])
                elif not parked[ordered[k]]:
                    break
                k += 1
            self.orders.settle(self.view, shares, queue, now)
            if k == len(ordered):
                return False
            rest = order[k + 1:]
            head = ordered[k]
        self.blocked_head[region] = head
        if self.partitions is not None:
            self.partitions.head_blocked(head, fleet, now)
        restoring = self.archive is not None and self.archive.restoring(head, now)  # evicting would not help it
        if self.sharing.preempts and not restoring and self.sharing.make_room(head, region, fleet, now):
            self.freed[region] = True
            if self.try_start(head, now, fleet, False):  # before its victims, back in the queue, can
                queue.remove(self.key_of[head])  # take the room again
            return True
        self.block(now, head, DATA_WAIT if self.data_gate and self.data_moves.holds_back(head, now)
                   else RESTORING if restoring else CAPACITY)
        if queue.count > 1 and (fresh or new or head != blocked) and self.backfills:
            if rest is not None and self.sharing.gated:  # only the quota gate parks jobs
                rest = rest[~parked[rest]]
            backfill(self, region, fleet, head, now, None if fresh or head != blocked else new, rest)
        return False


def simulate(workload: Workload, policies: Policies, seed: int = 0, name: str = "scenario",
             timer_s: float = 0.0, world: World | None = None, sharing: SharingSetup | None = None) -> SimulationResult:
    """Replay `workload` under `policies`; same inputs and seed, same result. `timer_s` > 0 adds a
    scheduling pass every timer_s seconds while jobs wait; `world` gives the router the regions'
    calendars, prices, carbon and residency rules (None: UTC, price book, no residency rules);
    `sharing` the queue classes, quota entries and team weights (None: the default queue classes,
    weight 1 per team)."""
    with collector_paused():
        run = _Run(workload, policies, seed, timer_s, world, sharing)
        run.run(name)
        result = run_tables(run, name)
        vars(run).clear()  # the run is in cycles with its collaborators: freed now, not walked by the collector
        return result

"""Sharing the fleet among teams inside a run: queue classes, the ledger, quotas and preemption.

`Sharing` is the part of the simulator's state that decides who may hold what (engine.sim.simulator
calls it at every start, stop and pass):
- queue classes: each job's queue class (engine.scenario.queues), its tier and checkpoint interval;
- the ledger (engine.sim.state.ledger): holdings per region and team, decayed usage; kept only when a
  policy reads it (a time-dependent order, a quota or preemption);
- the quota gate (engine.sim.cycle.quota_gate): parks jobs over quota, returns them as room frees;
- preemption (engine.sim.cycle.preempt with the preemption policy): evictions for a blocked head, for a
  quota owner reclaiming lent quota, and for jobs of guaranteed queues (scheduled first); spot
  reclamation (engine.sim.processes.spot) evicts the jobs of interrupted spot nodes;
- reclaim by the clock (engine.sim.processes.reclaim_clock): quota holders that lend only outside their
  working windows and take their quota back at each window's start;
- segments: every piece of running, with the work lost when a piece ends in an eviction.
Evicted work: with checkpoint interval c > 0, a piece that ran p seconds keeps floor(p / c) x c
seconds of progress and loses the rest; with c = 0 it loses all p seconds.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from engine.core.reasons import CAPACITY, NEVER, PREEMPTED, QUOTA, WAITING
from engine.core.traits import setting, traits_of
from engine.policies.preemption import NoPreemption, PreemptRequest
from engine.policies.quota import NoQuota
from engine.scenario.sharing import SharingSetup
from engine.sim.cycle.preempt import Planner
from engine.sim.cycle.quota_gate import OK, RECLAIM, QuotaGate
from engine.sim.processes.reclaim_clock import ClockReclaim, clocks
from engine.sim.state.compact import shared_list
from engine.sim.state.events import REPASS
from engine.sim.state.ledger import Ledger
from engine.sim.state.running_view import RunningViews
from engine.world.facts import World

PREEMPTED_OUTCOME, RUNNING_OUTCOME = "preempted", "running"



class Sharing(ClockReclaim):
    def __init__(self, run, setup: SharingSetup, world: World | None = None) -> None:
        """`world` gives the calendars of reclaim by the clock (None: every region on UTC)."""
        w, p = run.w, run.p
        self.run = run
        self.queues = setup.queues
        n = len(w)
        empty = np.full(n, "", object)
        self.qclass = run.qclass  # each job's queue class (engine.scenario.queues.assign_queues)
        self.qclass_list = self.qclass.tolist()
        classes = self.queues
        self.tier = np.array([q.priority for q in classes])[self.qclass] if n else np.zeros(0)
        # per class, then per job
        self.guaranteed_mask = np.array([q.guaranteed for q in classes], bool)[self.qclass]
        self.guaranteed = self.guaranteed_mask.tolist()
        self.preemptible = np.array([q.preemptible for q in classes], bool)[self.qclass]
        self.policy = p.preemption or NoPreemption()
        self.preempts = not traits_of(self.policy).inert
        ckpt = np.array([q.checkpoint_s for q in classes])[self.qclass] if n else np.zeros(0)
        if self.policy.checkpoint_s >= 0:
            ckpt = np.full(n, float(self.policy.checkpoint_s))
        self.checkpoint = shared_list(ckpt)
        self.class_max = [q.max_queued for q in classes]
        self.class_count = {r: [0] * len(classes) for r in run.regions}
        self.names = list(run.regions)
        self.index = {r: i for i, r in enumerate(self.names)}
        quota = p.quota or NoQuota()
        self.gated = not traits_of(quota).inert
        self.on = self.gated or self.preempts or traits_of(p.order).time_dependent
        half_life = float(setting(p.order, "order", "half_life_s"))
        self.members = traits_of(p.order).reads_members
        self.cpus = shared_list(w.cpu_milli * w.nodes / 1000.0)
        self.memory = shared_list(w.memory_mib * w.nodes / 1024.0)
        self.ledger = Ledger(w.team, w.user if w.user is not None else empty,
                             w.project if w.project is not None else empty, self.qclass, len(classes),
                             list(run.regions.values()), setup.weights, setup.orgs, half_life, run.seed,
                             self.cpus, self.memory, self.members)
        lg = self.ledger
        run.view = replace(run.view, team=lg.team, user=lg.user, project=lg.project, queue_class=self.qclass,
                           qos=self.tier, cpus=w.cpu_milli * w.nodes / 1000.0,
                           memory_gib=w.memory_mib * w.nodes / 1024.0)
        self.by_queue = setting(quota, "quota", "by") == "queue"
        self.holder = self.qclass if self.by_queue else lg.team
        self.holder_list, self.tier_list = self.holder.tolist(), shared_list(self.tier)
        self.priority_list = shared_list(w.priority.astype(np.float64))
        if self.gated:
            holders = tuple(q.name for q in classes) if self.by_queue else lg.teams
            weights = np.ones(len(holders)) if self.by_queue else lg.weight
            entries = {r: {e.holder: e for e in setup.quotas if e.region in (None, r)} for r in self.names}
            self.gate = QuotaGate(quota, self.holder, holders, weights, list(run.regions.items()), entries)
            self.reclaims = self.preempts and bool(getattr(self.policy, "reclaim", False))
        self.planner = self._planner() if self.preempts else None  # or when a process evicts nodes (need_planner)
        self.suspects: dict[PreemptRequest, list[int]] = {}  # per request: see `_candidates`
        self.evicting = self.preempts  # a started job may come back to a queue (need_planner, evicts_regions)
        self.vip: dict[str, list[int]] = {r: [] for r in run.regions}
        self.seg_start = np.full(n, math.nan)  # start of each job's current (or last) piece
        self.preemptions = np.zeros(n, np.int64)
        self.running_views = RunningViews(self)  # reads seg_start and preemptions as they change
        self.lost_gpu_s = np.zeros(n)
        self.segments: list[tuple] = []  # stopped pieces: job, region, nodes (indices), start, end, gpus, lost_s, outcome
        self.clocks = clocks(self, world or World()) if self.gated else []
        self.idle_since = math.inf
        if self.clocks:
            for c in self.clocks:
                if c.windows.inside(0.0):
                    self.gate.withhold(c.region, c.holder)
                    c.withheld = True
            self._next_clock(0.0)

    def need_planner(self) -> None:
        """A world process evicts the jobs of nodes (spot interruptions): keep the planner's occupants."""
        self.evicting = True
        if self.planner is None:
            self.planner = self._planner()

    def _planner(self) -> Planner:
        return Planner(self.run.regions, self.qclass_list, len(self.queues))

    def evicts_regions(self) -> None:
        """A world process evicts all the running jobs of a region (outages, engine.sim.processes.outage:
        it reads them from the run's pods then, so no planner books every start and stop for it)."""
        self.evicting = True

    # -- holdings -----------------------------------------------------------------------------

    def usage(self, region: str) -> list[float]:
        """GPUs held now in `region` per quota holder (the ledger's own list: read only, it changes
        at every start and stop)."""
        i = self.index[region]
        return self.ledger.queue_gpus[i] if self.by_queue else self.ledger.gpus[i]

    def started(self, j: int, region: str, nodes, now: float) -> None:
        self.seg_start[j] = now
        if self.on:
            i = self.index[region]
            self.ledger.hold(j, i, float(self.run.alloc_gpus[j]), now, +1)
            if self.gated:
                self.gate.moved(i, self.holder_list[j], self.usage(region))
        if self.planner is not None:
            self.planner.occupy(region, j, nodes, +1)

    def stopped(self, j: int, region: str, now: float) -> None:
        if self.on:
            i = self.index[region]
            self.ledger.hold(j, i, float(self.run.alloc_gpus[j]), now, -1)
        if self.planner is not None:
            self.planner.occupy(region, j, self.run.nodes_of[j], -1)
        if self.gated:
            i = self.index[region]
            self.gate.moved(i, self.holder_list[j], self.usage(region))
            if self.gate.count[i]:
                run = self.run
                for k in self.gate.release(self.usage(region), i, self.reclaims):
                    run.requeue(k, region)

    def withdraw(self, j: int, region: str) -> None:
        """Parked job j leaves the quota gate (its user gave up)."""
        self.gate.withdraw(self.index[region], j)

    def shares(self, region: str, now: float):
        return self.ledger.view(self.index[region], now) if self.on else None

    # -- arrivals -------------------------------------------------------------------------------

    def joins_vip(self, j: int, region: str) -> bool:
        """Jobs of guaranteed queues wait apart (scheduled first) when preemption is on."""
        if self.preempts and self.guaranteed[j]:
            self.vip[region].append(j)
            return True
        return False

    def class_full(self, j: int, region: str) -> tuple[int, int]:
        q = self.qclass_list[j]
        return self.class_count[region][q], self.class_max[q]

    def count(self, j: int, region: str, sign: int) -> None:
        """Job j joins (+1) or leaves (-1) its class's waiting count in `region`; counted only when an
        admission policy reads `class_full` (engine.sim.simulator._Run.count_waiting)."""
        self.class_count[region][self.qclass_list[j]] += sign

    # -- the gate ------------------------------------------------------------------------------

    def exceeds_quota(self, j: int, region: str) -> bool:
        """Whether job j needs more GPUs than its quota holder can ever hold in `region` (the gate
        would park it for good; jobs of guaranteed queues, when preemption is on, pass ungated). A
        gang job holds whole nodes: at least the GPUs of the smallest nodes big enough for it."""
        if self._ungated(j):
            return False
        run = self.run
        gpus = run.gpus[j]
        if run.width[j] > 1:
            gpus = run.regions[region].fewest_whole_gpus(run.num_gpu[j], run.cpu_milli[j], run.memory_mib[j],
                                                         run.pool_list[j], run.width[j])
        return self.gate.exceeds(self.index[region], j, gpus)

    def _ungated(self, j: int) -> bool:
        """No quota gate, or job j is of a guaranteed queue with preemption on (it passes ungated)."""
        return not self.gated or self.guaranteed[j] and self.preempts

    def passes(self, j: int, region: str, gpus: float) -> bool:
        """Whether job j holding `gpus` in `region` passes the quota gate now as things stand (no
        reclaim, nothing parked: a question, not a decision)."""
        return self._ungated(j) or self.gate.check(self.usage(region), self.index[region], j, gpus) == OK

    def blocks(self, j: int, region: str, now: float, gpus: float | None = None) -> bool:
        """Whether the quota gate holds job j back now, holding `gpus` (default: what it asks for; a
        gang job holds its whole nodes): then it is parked with its reason (after a reclaim attempt
        when its holder is owed its lent quota)."""
        if self._ungated(j):
            return False
        i, run = self.index[region], self.run
        gpus = run.gpus[j] if gpus is None else gpus
        code = self.gate.check(self.usage(region), i, j, gpus)
        if code == RECLAIM and self.reclaims:
            code = self._reclaim(j, region, now, gpus)
        if code == OK:
            return False
        if code == RECLAIM:  # owed lent quota that no eviction could bring back now
            code = QUOTA
        run.park(j, region, code, now)
        self.gate.park(i, j, int(run.job_key[j]), float(run.gpus[j]))
        return True

    def _reclaim(self, j: int, region: str, now: float, gpus: float) -> int:
        """Evict borrowers of j's cohort, in the policy's order, until j's start passes the gate."""
        i = self.index[region]
        usage, holder = self.usage(region), self.holder_list
        for v in self._choose(j, region, now, reclaim=True):
            if not self.gate.borrows(usage, i, holder[v]):  # its holder does not borrow (any more)
                continue
            self.evict(v, now)
            code = self.gate.check(usage, i, j, gpus)
            if code != RECLAIM:
                return code
        return RECLAIM  # the gate's answer after the last eviction, or the caller's when none was evicted

    # -- preemption ----------------------------------------------------------------------------

    def _choose(self, j: int, region: str, now: float, reclaim: bool) -> list[int]:
        request = PreemptRequest(self.tier_list[j], self.priority_list[j], self.guaranteed[j] and self.preempts,
                                 reclaim)
        return self._candidates(region, now, self.holder_list[j], request)

    def _candidates(self, region: str, now: float, h: int, request: PreemptRequest) -> list[int]:
        """The running jobs of `region` the policy would evict for `request` of holder h, in its order.
        Empty when no job of the queue classes it could ever choose for `request` runs there (a policy's
        `suspects` names those jobs; without it, every class): the policy is not asked then."""
        classes = self.suspects.get(request)
        if classes is None:
            classes = self.suspects[request] = self._suspect_classes(request)
        running = self.planner.classes[region]
        for c in classes:
            if running[c]:
                return self.running_views.choose(region, now, h, request)
        return []

    def _suspect_classes(self, request: PreemptRequest) -> list[int]:
        """The queue classes of the jobs the policy could ever choose for `request`."""
        suspects = setting(self.policy, "preemption", "suspects")
        if suspects is None:
            return list(range(len(self.queues)))
        return np.unique(self.qclass[suspects(request, self.running_views.figures)]).tolist()

    def make_room(self, j: int, region: str, fleet, now: float) -> bool:
        """Evict jobs so that j fits now (the policy's choice, the planner's fewest); whether it did."""
        if not self.preempts:
            return False
        reclaim = False
        if self.gated and self.reclaims:
            h = self.holder_list[j]
            nominal = self.gate.limits[self.index[region]][1]
            reclaim = self.usage(region)[h] + self.run.gpus[j] <= nominal[h] + 1e-9
        victims = self._choose(j, region, now, reclaim)
        if not victims:
            return False
        run = self.run
        mig = run.partitions is not None and run.partitions.takes[j]  # its instance's slices decide
        if not mig and sum(run.units_list[v] for v in victims) + fleet.pool_free[run.pool_list[j]] < run.units_list[j]:
            return False
        plan = self.planner.plan(run, j, fleet, region, victims)
        if not plan:
            return False
        for v in plan:
            self.evict(v, now)
        return True

    def evict(self, v: int, now: float, requeue: bool = True, checkpointed: bool = False) -> float:
        """Stop job v now, keeping the work up to its last checkpoint (`checkpointed`: it checkpoints
        now, keeping all its work), and queue it again (without `requeue`: it can never run again, and
        is recorded "never-fits"); returns the seconds of work kept."""
        run = self.run
        region = run.region_name[v]
        start = float(self.seg_start[v])
        progress = now - start
        every = self.checkpoint[v]
        saved = progress if checkpointed else math.floor(progress / every) * every if every > 0 else 0.0
        lost = progress - saved
        run.remaining[v] -= run.work_done(v, saved)
        self.lost_gpu_s[v] += lost * run.alloc_gpus[v]
        self.preemptions[v] += 1
        self.segments.append((v, region, run.nodes_of[v], start, now, run.alloc_gpus[v], lost, "preempted"))
        if run.archive is not None and run.remaining[v] < run.run_s[v]:  # it has a checkpoint to keep
            run.archive.evicted(v, region, now)
        run.release(v, now)
        run.generation[v] += 1
        run.log(now, v, PREEMPTED)
        if requeue:
            run.reason[v] = WAITING
            run.count_waiting(v, region, +1)
            if not self.joins_vip(v, region):
                run.requeue(v, region)
        else:
            run.decide(now, v, NEVER)
        run.events.push(now, REPASS, self.index[region])
        return saved

    def schedule_vip(self, region: str, fleet, now: float) -> None:
        """Start the waiting jobs of guaranteed queues, evicting other work where they must."""
        waiting = self.vip[region]
        run = self.run
        for j in list(waiting):
            restoring = run.archive is not None and run.archive.restoring(j, now)  # evicting would not help it
            if run.try_start(j, now, fleet, False) or (not restoring and self.make_room(j, region, fleet, now)
                                                      and run.try_start(j, now, fleet, False)):
                waiting.remove(j)
            else:
                run.block(now, j, CAPACITY)

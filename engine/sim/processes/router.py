"""The global router of the simulator: picks each job's region at submit (issue 4's hierarchy:
global -> region -> node; the region's own policies then queue and place the job).

The routing policy (engine.policies.routing) scores every region for the job from a
`RegionsView` (engine.core.views); the router sends the job to the best-scoring region that could
hold it (`fits`), ties to the home region first, then the lowest index; when every score is -inf
the job stays home, unless the regions that could hold it are all down (an outage:
engine.sim.processes.outage): then it waits in one of them, home first. Facts that do not change during a
run are computed once per job shape (GPU model, GPUs, CPU, memory, nodes) and region: the job's
resource pool there, the GPUs installed in it, whether it fits there, and its GPU model's on-demand
price there; those of a quarter-hour (at work, carbon, the price after off-peak discounts) once per
quarter. The arrays a view shares between jobs are read-only, and the argmax is a loop over the regions
(a handful: cheaper than numpy at that size). The queued GPUs are the values of the run's `queued_gpus`,
a dict keyed in region order. With world processes that hold regions (outages) each hook is asked once
per region and job; the fit masks without the regions down are kept per (shape, regions down), the role
masks per (home, inference, home down).

An inflexible job whose home is eligible and up stays there without a view when the policy promises as
much (`keeps_inflexible_home`, engine.core.traits), and so does any job whose home is eligible, up, open to
it by its roles and has its GPUs free when the policy promises that (`keeps_home_when_free`: overflow,
follow-the-sun and latency-aware; most jobs of the sample), inference excepted while some region is an edge
one.

A policy that `relaxes` soft constraints (engine.policies.constraints) decides with its scores the
constraints each region fails; the router records those of the region it sends the job to, each as a
"relaxed-<constraint>" decision in the log and a row of `relaxed` (time, job, region, constraint, cost).

With [roles] (engine.world.roles) a region the job may not go to by its roles (an edge region for work
other than inference, a region outside the overflow or, while home is down, disaster recovery ones)
counts as one that cannot hold it, and the view marks the edge regions (latency-aware tries them first).

Under a scenario's `calendar = "team"` (engine.world.team_hours) the view's `at_work` is the job's: its
home on its team's calendar when the teams table lists the team, every other region at work while a team
homed there is.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from engine.core.reasons import RELAXED
from engine.core.traits import setting, traits_of
from engine.core.views import RegionsView, RouteRequest
from engine.policies.routing import SLACK_GPUS
from engine.world.facts import RegionFacts
from engine.world.roles import RoleMasks


class Router:
    """Routes the jobs of one run; `route(j, now)` returns the region index chosen for job j."""

    def __init__(self, run, policy, facts: RegionFacts) -> None:
        w = run.w
        self.run, self.policy = run, policy
        self.names = list(run.regions)
        self.fleets = [run.regions[n] for n in self.names]
        self.facts = facts
        self.allowed = self.facts.allowed(pd.DataFrame({"job_id": w.job_id, "residency": w.residency
                                                        if w.residency is not None else None}))
        self.pool_in, self.fits_in = run.shape_pools, run.shape_fits
        given = run.shape if run.asked_shape is None else np.concatenate([run.shape, run.asked_shape])
        first = np.unique(given, return_index=True)[1] % max(len(w), 1)  # every shape, a full request's too
        self.price_in = np.array([[self.facts.usd_per_gpu_hour(n, w.gpu_type[j]) for n in self.names]
                                  for j in first]).reshape(len(first), len(self.names))
        self.capacity = [f.pool_capacity for f in self.fleets]
        self.classes = [str(c) for c in w.workload_class]
        self.teams = w.team
        self.home, self.flexible = run.home, run.flexible
        self.data_region = run.data_region
        self.deadline = w.deadline_s.tolist()
        self.relaxes = traits_of(policy).relaxes
        stays = not self.relaxes and setting(policy, "routing", "keeps_inflexible_home")
        # per job: an inflexible job allowed at home, which the policy keeps home while home can hold it
        self.stays = (~np.asarray(run.flexible, bool) & self.allowed[np.arange(len(w)), run.home]).tolist() \
            if stays and len(w) else [False] * len(w)
        self.home_when_free = not self.relaxes and setting(policy, "routing", "keeps_home_when_free")
        self.relaxed: list[tuple[float, int, int, str, float]] = []  # (time, job, region, constraint, cost)
        roles = facts.world.roles
        self.roles = RoleMasks(roles, self.names) if roles is not None else None
        # keeps_home_when_free leaves out inference while some region is an edge one (latency-aware tries those first)
        self.edge_first = self.roles is not None and bool(self.roles.edge.any())
        self._names = tuple(self.names)
        # per home region: the view's last fields (round-trip times from it, the SLO, egress prices, edge regions)
        edge = None if self.roles is None else self.roles.edge
        self._tails = [(row, facts.latency.slo_ms, facts.egress_usd_per_gb, edge) for row in facts.latency_ms]
        self._shapes: dict[int, tuple] = {}  # shape -> _shape_facts
        self._may_go: dict[tuple, np.ndarray] = {}  # (home, inference, home down) -> RoleMasks.may_go
        self._up: dict[tuple, np.ndarray] = {}  # (shape, *down per region) -> fits, down regions excluded
        self._quarter, self._from_s, self._until_s = -1, math.inf, -math.inf  # the columns' quarter (_at_quarter)

    def route(self, j: int, now_s: float) -> int:
        if not self.relaxes:
            return self._route(j, now_s)[0]
        r, routed = self._route(j, now_s)
        for name, cost in routed.relaxed_at(r):
            self.run.log(now_s, j, RELAXED[name])
            self.relaxed.append((now_s, j, r, name, cost))
        return r

    def _route(self, j: int, now_s: float):
        """(the region chosen for job j, the policy's decision when it relaxes, else None)."""
        run, names = self.run, self.names
        shape = run.shape_list[j]
        pools, capacity, fits = self._shapes.get(shape) or self._shape_facts(shape)
        home = self.home[j]
        if self.stays[j] and fits[home] and not (run.processes.holds and run.down(names[home])):
            return home, None  # the policy's promise (keeps_inflexible_home): no view to build
        if not self._from_s <= now_s < self._until_s:
            self._at_quarter(now_s)
        may_go, holds = None, run.processes.holds
        if holds:  # a region that is down cannot hold anything now
            down = _down(holds, names)
            key = (shape, *down)
            up = self._up.get(key)
            if up is None:
                up = self._up[key] = _frozen(fits & ~np.array(down))
            fits = up
        if self.roles is not None:
            home_down = bool(holds) and down[home]
            key = (home, self.classes[j] == "inference", home_down)
            may_go = self._may_go.get(key)
            if may_go is None:
                may_go = self._may_go[key] = _frozen(self.roles.may_go(*key))
            fits = fits & may_go
        if self.home_when_free and fits[home] and self.allowed[j, home] \
                and self.fleets[home].pool_free[pools[home]] / 1000.0 >= run.gpus[j] - SLACK_GPUS \
                and not (self.edge_first and self.classes[j] == "inference"):
            return home, None  # the policy's promise (keeps_home_when_free): no view to build
        price = self._prices.get(shape)
        if price is None:
            price = self._prices[shape] = _frozen(self.price_in[shape] * self._factor)
        view = RegionsView.of(self._names, np.array([f.pool_free[p] / 1000.0 if p >= 0 else 0.0
                                                     for f, p in zip(self.fleets, pools)]),
                              capacity, np.fromiter(run.queued_gpus.values(), np.float64, len(names)),
                              self._at_work(j, home),
                              price, self._g_co2e, self.allowed[j], fits, *self._tails[home])
        job = RouteRequest.of(j, home, run.gpus[j], self.classes[j], self.flexible[j], run.requested[j],
                              run.submit[j], self.data_region[j], run.data_gb[j], self.deadline[j])
        routed = self.policy.decide(job, view, now_s) if self.relaxes else None
        raw = np.asarray(routed.scores if routed else self.policy.scores(job, view, now_s), np.float64)
        scores, fit = raw.tolist(), fits.tolist()
        best, first = _best(scores, fit)
        if not math.isfinite(best):
            if run.processes.holds:
                return self._while_down(j, shape, home, raw, may_go), routed
            return home, routed
        return (home if fit[home] and scores[home] == best else first), routed

    def _shape_facts(self, shape: int) -> tuple:
        """(pool per region, installed GPUs of the pool per region, fits per region) of a job shape, read at
        its first routing: every process is attached then (bursts' held-down nodes are out of capacity)."""
        pools = self.pool_in[shape].tolist()
        capacity = _frozen(np.array([c[p] / 1000.0 if p >= 0 else 0.0 for c, p in zip(self.capacity, pools)]))
        facts = self._shapes[shape] = (pools, capacity, _frozen(self.fits_in[shape].copy()))
        return facts

    def _at_quarter(self, now_s: float) -> None:
        """The columns of the quarter of `now_s` that every job routed in it sees (prices per shape built on
        first use)."""
        q = self.facts.quarter(now_s)
        self._from_s, self._until_s = self.facts.quarter_span(q)
        self._quarter, self._prices = q, {}
        self._factor = self.facts.price_factor[:, q].copy()
        self._g_co2e = _frozen(self.facts.g_co2e[:, q].copy())
        self._region_at_work = _frozen(self.facts.at_work[:, q].copy())

    def _at_work(self, j: int, home: int) -> np.ndarray:
        """Each region at work at the current quarter, as job j sees it: its home on its team's calendar
        (RegionFacts.work_row: under `calendar = "team"`), every other region on its own."""
        if not self.facts.team_at_work:
            return self._region_at_work
        at_work = self._region_at_work.copy()
        at_work[home] = self.facts.work_row(self.teams[j], home)[self._quarter]
        return at_work

    def _while_down(self, j: int, shape: int, home: int, raw: np.ndarray, may_go: np.ndarray | None) -> int:
        """Where job j waits when no region can hold it now because the ones that could are down: home
        if its fleet could hold the job, else the best-scoring (then lowest) region that could and
        that its residency (and its roles, `may_go`) allows; home when there is none (the job never fits)."""
        could = self.fits_in[shape] & np.asarray(self.allowed[j], bool)
        if may_go is not None:
            could &= may_go
        if could[home] or not could.any():
            return home
        ranked = np.where(could, np.where(np.isfinite(raw), raw, np.finfo(np.float64).min), -np.inf)
        return int(np.flatnonzero(ranked == ranked.max())[0])


def _frozen(array: np.ndarray) -> np.ndarray:
    """`array`, read-only: the router hands the same array to every job of a shape or quarter."""
    array.flags.writeable = False
    return array


def _down(holds: list, names: list[str]) -> list[bool]:
    """Per region: whether a world process holds it now (run.down, one hook at a time over every region)."""
    down = [False] * len(names)
    for hold in holds:
        down = [was or hold(name) for was, name in zip(down, names)]
    return down


def _best(scores: list[float], fits: list[bool]) -> tuple[float, int]:
    """The highest score among the regions that fit and the first region holding it ((-inf, -1) when
    none fits; NaN when a fitting region scores NaN: no best)."""
    best, first = -math.inf, -1
    for i, (score, fine) in enumerate(zip(scores, fits)):
        if fine:
            if score != score:
                return math.nan, -1
            if score > best:
                best, first = score, i
    return best, first

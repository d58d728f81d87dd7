"""Constraint routing (family "routing", key "soft-constraints"): hard constraints never break, soft
ones carry weights and are relaxed in a stated order when a job cannot be placed under all of them.

The source document's "constraint satisfaction ... with hard and soft constraints and constraint
relaxation for over-constrained problems"; the relaxation is the classic one of hierarchical
constraint solving (Borning, Freeman-Benson and Wilson, "Constraint hierarchies", LISP and Symbolic
Computation 5, 1992): required constraints must hold, preferential ones are given up from the
weakest level up until a solution exists. Decided once per job at submit, like every router.

Hard (a region failing one gets -inf, whatever the weights):
- residency: the job's data-residency tag allows the region (`regions.allowed`);
- GPU type: the region's fleet could hold the job, its GPU model included (`regions.fits`);
- deadline: a job with a deadline leaves its *base* region only for one where it starts now and its
  requested runtime ends by the deadline (the transfer of its input data is not counted);
- guaranteed capacity: a job leaves its base region only for one where, once it starts, at least
  `reserve_fraction` of the region's GPUs stay free for the region's own guaranteed work.
The base region is home when home is eligible, else the eligible region with the most free GPUs, then
the fewest queued (the routing module's fallback); when no region is eligible, every score is -inf.

Soft (a constraint of weight 0 is off):
- data-locality: the job runs where its input data is (any region for a job without data);
  relaxing it costs the egress dollars of moving the data;
- latency: an inference or development job runs within `slo_ms` round-trip of its home, where its
  users are (other work meets it anywhere); relaxing costs the milliseconds above the SLO (NaN when
  the round trip is unknown: no latency pair);
- carbon: the region's grid intensity now is within `carbon_slack_fraction` above the lowest among
  the hard-feasible regions; relaxing costs the g CO2e/kWh above that lowest;
- cost: the job's GPU model costs within `cost_slack_fraction` above the cheapest hard-feasible
  region; relaxing costs the extra dollars over its requested runtime (egress is not counted here: it
  is the data-locality constraint's cost, so a move is never charged twice);
- team-affinity: the job runs in its team's home region (its home); relaxing costs its requested
  GPU-hours, run away from the team.
Those two costs are NaN (unknown) for a job without a finite runtime request (a service).
An unknown (NaN) intensity or price fails its constraint unless no hard-feasible region knows one.

The rule: with the active constraints in `relax_order` (c1, ..., cn), for k = 0..n the candidates are
the hard-feasible regions meeting c(k+1)..cn; the first k whose candidates include one free for the
job now (at least its GPUs free) routes it there: the candidate free for it with the highest weighted
score (the sum of the weights of the constraints it meets, relaxed ones included), then the most free
GPUs, then home, then the lowest index. When no k gives a free candidate, the job waits in the
candidate of the smallest k that has one, by the same score, then home, then the fewest queued GPUs
per installed GPU, then the lowest index. Either way the constraints the chosen region fails are the
ones relaxed; the router records each (engine.sim.processes.router): the job, the time, the
constraint and its cost. Scores: 1 for the chosen region, 0 for the other hard-feasible ones, -inf
for the rest.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.core.reasons import SOFT_CONSTRAINTS
from engine.core.views import RegionsView, RouteRequest
from engine.policies.registry import register
from engine.policies.routing import FAMILY, eligible, move_usd

SOFT = SOFT_CONSTRAINTS
COST_UNITS = {"data-locality": "USD of egress", "latency": "ms over the SLO", "carbon": "g CO2e/kWh over the lowest",
              "cost": "USD over the cheapest", "team-affinity": "GPU-hours away from the team"}
HARD = frozenset(("residency", "gpu-type", "deadline", "guaranteed-capacity"))  # never relaxed, never weighted
LATENCY_BOUND = frozenset(("inference", "development"))  # the classes with users waiting on answers
DEFAULT_ORDER = "carbon,cost,team-affinity,data-locality,latency"
_SLACK = 1e-9


@dataclass(frozen=True)
class Routed:
    """A decision: `scores` (one per region, as `scores` returns them), `region` (the chosen index; -1
    when no region is eligible) and `relaxed` (per region, the (constraint, cost) pairs the region
    fails, in `relax_order`)."""

    scores: np.ndarray
    region: int
    relaxed: tuple[tuple[tuple[str, float], ...], ...]


def _weight(default: float, what: str):
    return field(default=default, metadata={"help": f"weight of {what}, >= 0 (0: off)"})


@register(FAMILY, "soft-constraints", relaxes=True)
@dataclass(frozen=True)
class SoftConstraints:
    """Hard constraints never broken, weighted soft constraints relaxed in `relax_order`; see the
    module docstring for the definition (constraint hierarchies, Borning et al. 1992)."""

    w_data_locality: float = _weight(1.0, "running where the job's input data is")
    w_latency: float = _weight(1.0, "inference and development within the latency SLO of home")
    w_carbon: float = _weight(0.5, "a grid intensity near the lowest")
    w_cost: float = _weight(0.5, "a GPU price near the cheapest")
    w_team_affinity: float = _weight(0.25, "running in the team's home region")
    carbon_slack_fraction: float = field(default=0.2, metadata={
        "help": "how far above the lowest grid intensity still meets the carbon constraint, 0-1"})
    cost_slack_fraction: float = field(default=0.1, metadata={
        "help": "how far above the cheapest GPU price still meets the cost constraint, 0-1"})
    reserve_fraction: float = field(default=0.1, metadata={
        "help": "share of a region's GPUs a job from elsewhere must leave free (guaranteed capacity), 0-1"})
    relax_order: str = field(default=DEFAULT_ORDER, metadata={
        "help": "the soft constraints in the order they are relaxed, first relaxed first, comma-separated: "
                + ", ".join(SOFT)})

    def __post_init__(self) -> None:
        for name in ("w_data_locality", "w_latency", "w_carbon", "w_cost", "w_team_affinity"):
            value = getattr(self, name)
            if not (0.0 <= value < math.inf):
                raise ValueError(f"routing policy 'soft-constraints': {name} must be a finite number >= 0, "
                                 f"got {value!r}")
        for name in ("carbon_slack_fraction", "cost_slack_fraction", "reserve_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"routing policy 'soft-constraints': {name} must be between 0 and 1, "
                                 f"got {getattr(self, name)!r}")
        order = self.order()
        hard = sorted(set(order) & HARD)
        if hard:
            raise ValueError(f"routing policy 'soft-constraints': {', '.join(hard)} is a hard constraint and is "
                             f"never relaxed; relax_order names the soft ones: {', '.join(SOFT)}")
        if sorted(order) != sorted(SOFT):
            raise ValueError(f"routing policy 'soft-constraints': relax_order must name each of {', '.join(SOFT)} "
                             f"once, got {self.relax_order!r}")

    def order(self) -> tuple[str, ...]:
        """`relax_order` as a tuple of constraint names."""
        return tuple(part.strip() for part in str(self.relax_order).split(","))

    def weights(self) -> dict[str, float]:
        return {"data-locality": self.w_data_locality, "latency": self.w_latency, "carbon": self.w_carbon,
                "cost": self.w_cost, "team-affinity": self.w_team_affinity}

    def scores(self, job: RouteRequest, regions: RegionsView, now_s: float) -> np.ndarray:
        return self.decide(job, regions, now_s).scores

    @cached_property
    def active(self) -> tuple[tuple[str, float], ...]:
        """The soft constraints of weight > 0 with their weights, in `relax_order` (read once per policy)."""
        weights = self.weights()
        return tuple((c, weights[c]) for c in self.order() if weights[c] > 0)

    def decide(self, job: RouteRequest, regions: RegionsView, now_s: float) -> Routed:
        n = len(regions)
        ok = eligible(regions)
        if not any(ok):
            return Routed(np.full(n, -np.inf), -1, ((),) * n)
        free, capacity = regions.free_gpus.tolist(), regions.capacity_gpus.tolist()
        queued = regions.queued_gpus.tolist()
        need = job.gpus - _SLACK
        hard = self._hard(job, ok, free, capacity, queued, now_s)
        met, costs = self._soft(job, regions, hard)
        active = self.active
        value, level, relaxed = [], [], []  # per region: weighted score, the first k it is a candidate at, its relaxed
        for i in range(n):
            kept, fails, first = [], [], 0
            for k, (c, w) in enumerate(active):
                if met[c][i]:
                    kept.append(w)
                else:
                    fails.append((c, costs[c][i]))
                    first = k + 1
            value.append(sum(kept))
            level.append(first if hard[i] else math.inf)
            relaxed.append(tuple(fails))
        room = [level[i] if free[i] >= need else math.inf for i in range(n)]
        k = min(room)
        if k < math.inf:  # the first k with a candidate free for the job
            chosen = max((i for i in range(n) if room[i] <= k), key=lambda i: (value[i], free[i], i == job.home, -i))
        else:  # none: it waits in a candidate of the first k with one
            k = min(level)
            chosen = -1 if k == math.inf else max(
                (i for i in range(n) if level[i] <= k),
                key=lambda i: (value[i], i == job.home, -queued[i] / capacity[i] if capacity[i] > 0 else 0.0, -i))
        scores = np.array([(1.0 if i == chosen else 0.0) if hard[i] else -np.inf for i in range(n)], np.float64)
        return Routed(scores, chosen, tuple(relaxed))

    def _hard(self, job: RouteRequest, ok: list[bool], free: list[float], capacity: list[float],
              queued: list[float], now_s: float) -> list[bool]:
        """Per region: every hard constraint holds (see the module docstring; the base region always)."""
        base = job.home if ok[job.home] else max(
            (i for i in range(len(ok)) if ok[i]), key=lambda i: (free[i], -queued[i], -i))
        on_time = math.isinf(job.deadline_s) or now_s + job.requested_s <= job.deadline_s
        return [fine and (i == base or (
            free[i] - job.gpus >= self.reserve_fraction * capacity[i] - _SLACK
            and (math.isinf(job.deadline_s) or (on_time and free[i] >= job.gpus - _SLACK))))
            for i, fine in enumerate(ok)]

    def _soft(self, job: RouteRequest, regions: RegionsView, hard: list[bool]):
        """Per constraint, per region: whether it holds there, and what relaxing it there costs."""
        n, home, slo = len(regions), job.home, regions.slo_ms
        gpu_h = job.gpus * job.requested_s / 3600.0 if math.isfinite(job.requested_s) else math.nan
        if job.workload_class in LATENCY_BOUND:
            latency = regions.latency_ms.tolist() if regions.latency_ms is not None else [0.0] * n
            near = [ms <= slo for ms in latency]
            over = [(ms - slo if math.isfinite(ms) else math.nan) if ms > slo else 0.0 for ms in latency]
        else:  # no users waiting on it: met everywhere, at no cost
            near, over = [True] * n, [0.0] * n
        no_data = job.data_region < 0 or job.data_gb <= 0
        carbon, carbon_cost = _near_lowest(regions.g_co2e_per_kwh.tolist(), hard, self.carbon_slack_fraction)
        price, price_cost = _near_lowest(regions.usd_per_gpu_hour.tolist(), hard, self.cost_slack_fraction)
        met = {"data-locality": [True] * n if no_data else [i == job.data_region for i in range(n)],
               "latency": near, "carbon": carbon, "cost": price,
               "team-affinity": [i == home for i in range(n)]}
        costs = {"data-locality": move_usd(job, regions), "latency": over,
                 "carbon": carbon_cost, "cost": [extra * gpu_h for extra in price_cost],
                 "team-affinity": [0.0 if i == home else gpu_h for i in range(n)]}
        return met, costs


def _near_lowest(values: list[float], hard: list[bool], slack: float) -> tuple[list[bool], list[float]]:
    """Per region: the value is known and at most (1 + slack) x the lowest known one over the hard-feasible
    regions (every region meets it when none is known), and how far above that lowest it is (NaN: unknown)."""
    known = [v for v, fine in zip(values, hard) if fine and v == v]
    if not known:
        return [True] * len(values), [0.0] * len(values)
    low = min(known)
    return [v == v and v <= low * (1.0 + slack) + _SLACK for v in values], [v - low for v in values]

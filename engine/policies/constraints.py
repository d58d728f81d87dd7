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

The rule runs compiled (engine.policies.constraints_kernels, numba): one call per job instead of a few
dozen list walks over the regions; `decide` hands it the view's columns as they are (RegionsView's bool
and float64 arrays: no conversion per job) and builds the `Routed`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.core.reasons import SOFT_CONSTRAINTS
from engine.core.views import RegionsView, RouteRequest, assembled
from engine.policies.registry import register
from engine.policies.routing import FAMILY

SOFT = SOFT_CONSTRAINTS
COST_UNITS = {"data-locality": "USD of egress", "latency": "ms over the SLO", "carbon": "g CO2e/kWh over the lowest",
              "cost": "USD over the cheapest", "team-affinity": "GPU-hours away from the team"}
HARD = frozenset(("residency", "gpu-type", "deadline", "guaranteed-capacity"))  # never relaxed, never weighted
LATENCY_BOUND = frozenset(("inference", "development"))  # the classes with users waiting on answers
DEFAULT_ORDER = "carbon,cost,team-affinity,data-locality,latency"
# engine.policies.constraints_kernels, imported with the first decision: numba costs a process about 0.2 s, which
# runs without this policy need not pay
kernels = None


@dataclass(frozen=True)
class Routed:
    """A decision: `scores` (one per region, as `scores` returns them), `region` (the chosen index; -1
    when no region is eligible), and per region and active constraint (`names`, in `relax_order`) whether
    the region fails it (`fails`) and what relaxing it there costs (`costs`). `relaxed` gives, per region,
    the (constraint, cost) pairs the region fails, in `relax_order`; `relaxed_at(i)` those of region i."""

    scores: np.ndarray
    region: int
    names: tuple[str, ...]
    fails: np.ndarray
    costs: np.ndarray

    def relaxed_at(self, i: int) -> tuple[tuple[str, float], ...]:
        fails = self.fails[i].tolist()
        if True not in fails:
            return ()
        return tuple((name, cost) for name, fail, cost in zip(self.names, fails, self.costs[i].tolist()) if fail)

    @cached_property
    def relaxed(self) -> tuple[tuple[tuple[str, float], ...], ...]:
        return tuple(self.relaxed_at(i) for i in range(len(self.scores)))


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

    @cached_property
    def _columns(self) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
        """The active constraints' names, their columns in SOFT order and their weights (the kernel's)."""
        return (tuple(c for c, _ in self.active), np.array([SOFT.index(c) for c, _ in self.active], np.int64),
                np.array([w for _, w in self.active], np.float64))

    def decide(self, job: RouteRequest, regions: RegionsView, now_s: float) -> Routed:
        names, columns, weights = self._columns
        global kernels
        if kernels is None:
            from engine.policies import constraints_kernels as kernels
        latency, egress = regions.latency_ms, regions.egress_usd_per_gb
        chosen, scores, fails, costs = kernels.decide(  # the view's arrays as they are: bool and float64
            regions.allowed, regions.fits, regions.free_gpus, regions.capacity_gpus, regions.queued_gpus,
            latency if latency is not None else np.zeros(len(regions)), float(regions.slo_ms),
            regions.g_co2e_per_kwh, regions.usd_per_gpu_hour,
            egress if egress is not None else np.zeros(len(regions)), egress is not None,
            int(job.home), float(job.gpus), float(job.requested_s), float(job.deadline_s), int(job.data_region),
            float(job.data_gb), job.workload_class in LATENCY_BOUND, float(now_s), columns, weights,
            float(self.reserve_fraction), float(self.carbon_slack_fraction), float(self.cost_slack_fraction))
        return assembled(Routed, (scores, chosen, names, fails, costs))

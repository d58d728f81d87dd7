"""Batch placement policies by local search ("placement" family, trait `batch`): greedy, hill climbing,
simulated annealing, tabu search and a hybrid.

Each places a scheduling pass's batch of pods together (`plan`, engine.policies.placement_batch,
which defines the plan's cost) and a lone pod as best-fit does (`choose`). The searches start from
the greedy plan, move pods by relocations and swaps (engine.policies.placement_moves), draw from
the run's random stream (so a seed gives one answer) and stop after `max_moves` moves per pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.fleet_view import FleetView, Placement, PodRequest
from engine.policies.placement import _check_cpu_weight, _cpu_weight, _place, leftover_top
from engine.policies.placement_batch import BatchFleet, greedy
from engine.policies.placement_moves import anneal, hill_climb, tabu
from engine.policies.registry import register


def _batch_pods():
    return field(default=64, metadata={"help": "pods of a pass placed together: the first single-node jobs of "
                                               "the ordered queue", "unit": "pods", "min": 1, "max": 4096})


def _moves(default: int):
    return field(default=default, metadata={"help": "moves tried per pass (the search's time bound)",
                                            "unit": "moves", "min": 0, "max": 1_000_000})


@dataclass(frozen=True)
class BatchBase:
    """What every batch policy shares: best-fit's CPU weight (a lone pod goes where best-fit puts it)
    and the batch size."""

    cpu_weight: float = _cpu_weight()
    batch_pods: int = _batch_pods()

    def __post_init__(self) -> None:
        _check_cpu_weight(self)

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        return _place(view, leftover_top(view, request, self.cpu_weight, True), request)


@dataclass(frozen=True)
class _Batch(BatchBase):
    """The greedy plan, improved by `improve` (the searches)."""

    def plan(self, view: FleetView, requests: list[PodRequest], rng: np.random.Generator,
             gang_waiting: bool = False) -> list[Placement | None]:
        start = greedy(view, requests, self.cpu_weight, True, gang_waiting)
        return self.improve(start, rng).placements()

    def improve(self, batch: BatchFleet, rng: np.random.Generator) -> BatchFleet:
        return batch



@register("placement", "greedy", batch=True)
@dataclass(frozen=True)
class Greedy(_Batch):
    """Best-fit pod by pod over the pass's batch in queue order (today's best-fit, planned for the
    whole batch at once): the start every search improves on. Best-fit's score is the Kubernetes
    scheduler's least-allocated leftover as the FGD paper's simulator scores it (Weng et al., ATC'23)."""


@register("placement", "hill-climbing", batch=True)
@dataclass(frozen=True)
class HillClimbing(_Batch):
    """Hill climbing from the greedy plan: a random relocate or swap is kept when it lowers the plan's
    cost (engine.policies.placement_moves.hill_climb; first-improvement hill climbing as in Burke and
    Kendall (eds.), Search Methodologies, 2014, ch. "Local search")."""

    max_moves: int = _moves(300)

    def improve(self, batch: BatchFleet, rng: np.random.Generator) -> BatchFleet:
        return hill_climb(batch, rng, self.max_moves, self.cpu_weight)


@register("placement", "simulated-annealing", batch=True)
@dataclass(frozen=True)
class SimulatedAnnealing(_Batch):
    """Simulated annealing from the greedy plan (Kirkpatrick et al., Science 1983): a move that raises
    the cost by d is kept with probability exp(-d / T), T cooling geometrically from
    start_temperature to 1 % of it; ends on the best plan seen."""

    max_moves: int = _moves(300)
    start_temperature: float = field(default=200.0, metadata={
        "help": "the first temperature, in the cost's fragmented GPU milli", "unit": "milli-GPU", "min": 0.0, "max": 1e6})

    def improve(self, batch: BatchFleet, rng: np.random.Generator) -> BatchFleet:
        return anneal(batch, rng, self.max_moves, self.cpu_weight, self.start_temperature)


@register("placement", "tabu-search", batch=True)
@dataclass(frozen=True)
class TabuSearch(_Batch):
    """Tabu search from the greedy plan (Glover 1989): each step takes the cheapest of `neighbours`
    random moves whose pods were not moved in the last `tenure` steps (unless it beats the best);
    ends on the best plan seen."""

    max_moves: int = _moves(300)
    tenure: int = field(default=5, metadata={"help": "steps a moved pod stays tabu", "unit": "steps",
                                             "min": 0, "max": 10_000})
    neighbours: int = field(default=6, metadata={"help": "moves tried per step", "unit": "moves",
                                                 "min": 1, "max": 1_000})

    def improve(self, batch: BatchFleet, rng: np.random.Generator) -> BatchFleet:
        return tabu(batch, rng, self.max_moves, self.cpu_weight, self.tenure, self.neighbours)


@register("placement", "hybrid", batch=True)
@dataclass(frozen=True)
class Hybrid(_Batch):
    """Greedy, then hill climbing only when it is worth it: a pod of the batch was left out, a gang job
    waits (whole free nodes matter), or the greedy plan leaves more than trigger_fraction of the free
    GPU milli on the nodes it uses fragmented (a constructive heuristic with local search where it
    pays, the hybrid of Burke and Kendall (eds.), Search Methodologies, 2014)."""

    max_moves: int = _moves(300)
    trigger_fraction: float = field(default=0.1, metadata={
        "help": "fragmented share of the used nodes' free GPU milli above which the plan is improved"})

    def improve(self, batch: BatchFleet, rng: np.random.Generator) -> BatchFleet:
        if batch.unplaced or batch.gang_waiting or _fragmented_share(batch) > self.trigger_fraction:
            return hill_climb(batch, rng, self.max_moves, self.cpu_weight)
        return batch


def _fragmented_share(batch: BatchFleet) -> float:
    """Fragmented milli over free GPU milli on the nodes the batch uses (the measure of the cost)."""
    nodes = sorted({n for n in batch.where if n >= 0})
    free = float(batch.gpu_total[nodes].sum()) if nodes else 0.0
    return sum(batch.fragmented(n) for n in nodes) / free if free else 0.0

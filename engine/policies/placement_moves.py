"""Local search over a batch placement (engine.policies.placement_batch): the moves and the three searches.

A move changes where one or two pods of the batch are, on the scratch fleet, and can be undone:
- relocate: a pod (placed or not) to another node where it fits now, GPUs tightest-fit;
- swap: two placed pods on different nodes trade nodes (both must fit after both left); an unplaced
  pod takes a placed pod's node, and the displaced pod goes to its best-fit node if it has one.
The searches start from the greedy plan and are bounded by a number of moves tried per pass (a
count, not a clock, so that a seed gives the same plan on any machine). Each returns the best plan
it saw, so never a worse one than its start. Sources: hill climbing and simulated annealing
(Kirkpatrick, Gelatt and Vecchi, Science 1983) and tabu search (Glover, ORSA J. Computing 1989),
as surveyed for scheduling by Burke and Kendall (eds.), Search Methodologies, 2nd ed., 2014.
"""
from __future__ import annotations

import math

import numpy as np

from engine.policies.placement_batch import BatchFleet, best_fit_node, fits_now

Undo = list[tuple[int, int, tuple[int, ...]]]  # (pod, its node before, its GPUs before)


def random_move(batch: BatchFleet, rng: np.random.Generator, cpu_weight: float) -> Undo | None:
    """Apply one random move; its undo list, or None when the drawn move was impossible (nothing changed)."""
    n = len(batch.requests)
    if not n:
        return None
    i = int(rng.integers(n))
    if rng.random() < 0.5:
        return _relocate(batch, i, rng)
    placed = [k for k in range(n) if batch.where[k] >= 0 and batch.where[k] != batch.where[i]]
    if not placed:
        return _relocate(batch, i, rng)
    return _swap(batch, i, placed[int(rng.integers(len(placed)))], cpu_weight)


def undo(batch: BatchFleet, moved: Undo) -> None:
    """Put the moved pods back where they were."""
    for pod, _, _ in moved:
        if batch.where[pod] >= 0:
            batch.remove(pod)
    for pod, node, gpus in moved:
        if node >= 0:
            batch.put(pod, node, gpus)


def _relocate(batch: BatchFleet, i: int, rng: np.random.Generator) -> Undo | None:
    before = [(i, batch.where[i], batch.gpus[i])]
    if batch.where[i] >= 0:
        batch.remove(i)
    nodes = batch.candidates[i]
    if rng.random() < 0.5:  # half the time among the nodes the batch already uses: consolidation
        nodes = nodes[np.isin(nodes, [n for n in batch.where if n >= 0])]
    nodes = nodes[fits_now(batch, i, nodes) & (nodes != before[0][1])]
    if not len(nodes):
        undo(batch, before)
        return None
    batch.place(i, int(nodes[rng.integers(len(nodes))]))
    return before


def _swap(batch: BatchFleet, i: int, k: int, cpu_weight: float) -> Undo | None:
    a, b = batch.where[i], batch.where[k]
    before = [(i, a, batch.gpus[i]), (k, b, batch.gpus[k])]
    if a >= 0:
        batch.remove(i)
    batch.remove(k)
    if not _fits_candidate(batch, i, b):
        undo(batch, before)
        return None
    batch.place(i, b)
    target = a if a >= 0 else best_fit_node(batch, k, cpu_weight)
    if target >= 0 and _fits_candidate(batch, k, target):
        batch.place(k, target)
    elif a >= 0:
        undo(batch, before)
        return None
    return before


def _fits_candidate(batch: BatchFleet, i: int, node: int) -> bool:
    nodes = batch.candidates[i]
    at = int(np.searchsorted(nodes, node))
    return at < len(nodes) and nodes[at] == node and batch.fits(i, node)


def hill_climb(batch: BatchFleet, rng: np.random.Generator, moves: int, cpu_weight: float) -> BatchFleet:
    """Keep a random move when it lowers the cost, else undo it."""
    for _ in range(moves):
        cost = batch.cost
        moved = random_move(batch, rng, cpu_weight)
        if moved is not None and batch.cost > cost - 1e-9:
            undo(batch, moved)
    return batch


def anneal(batch: BatchFleet, rng: np.random.Generator, moves: int, cpu_weight: float,
           start_temperature: float) -> BatchFleet:
    """Simulated annealing: a better move is kept, a worse one with probability exp(-increase / T), one
    that costs the same is not; T falls geometrically from `start_temperature` to 1 % of it over
    the moves. Ends on the best plan seen."""
    best, best_cost = batch.snapshot(), batch.cost
    cooling = 0.01 ** (1.0 / max(moves, 1))
    temperature = start_temperature
    for _ in range(moves):
        cost = batch.cost
        moved = random_move(batch, rng, cpu_weight)
        temperature *= cooling
        if moved is None:
            continue
        rise = batch.cost - cost
        if rise >= -1e-9 and (rise <= 1e-9 or temperature <= 0 or rng.random() >= math.exp(-rise / temperature)):
            undo(batch, moved)   # a move that changes nothing is not taken: drifting spreads pods
        elif batch.cost < best_cost - 1e-9:
            best, best_cost = batch.snapshot(), batch.cost
    batch.restore(best)
    return batch


def tabu(batch: BatchFleet, rng: np.random.Generator, moves: int, cpu_weight: float, tenure: int,
         neighbours: int) -> BatchFleet:
    """Tabu search: each step tries `neighbours` random moves and takes the cheapest whose pods were
    not moved in the last `tenure` steps (or that beats the best plan so far), even if it costs more;
    a move that leaves the cost as it is is not a step.
    Ends on the best plan seen; the moves tried count against the budget."""
    best, best_cost = batch.snapshot(), batch.cost
    last_moved: dict[int, int] = {}
    step, tried = 0, 0
    while tried < moves:
        step += 1
        choice, current = None, batch.cost
        for _ in range(neighbours):
            tried += 1
            moved = random_move(batch, rng, cpu_weight)
            if moved is None:
                continue
            cost, after = batch.cost, batch.snapshot()
            undo(batch, moved)
            if abs(cost - current) <= 1e-9:   # changes nothing: not a step (drifting spreads pods)
                continue
            banned = any(step - last_moved.get(pod, -tenure - 1) <= tenure for pod, _, _ in moved)
            if (not banned or cost < best_cost - 1e-9) and (choice is None or cost < choice[0] - 1e-9):
                choice = (cost, after, moved)
        if choice is None:
            continue
        batch.restore(choice[1])
        for pod, _, _ in choice[2]:
            last_moved[pod] = step
        if batch.cost < best_cost - 1e-9:
            best, best_cost = batch.snapshot(), batch.cost
    batch.restore(best)
    return batch

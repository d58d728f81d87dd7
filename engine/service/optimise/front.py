"""A study's trade-off: the Pareto front of its feasible trials, the hypervolume the front covered
after each generation, and a front point as a scenario file usable everywhere else.

Every objective is turned into "lower is better" (a figure where higher is better is negated).
A trial is on the front when it ran, breaks no hard constraint, and no other such trial is at least
as good in every objective and better in one. The hypervolume scales each objective to [0, 1] over
the range the feasible trials spanned (a constant objective scales to 0) and measures the volume the
front dominates up to the reference point 1.1 in every objective (Optuna's WFG implementation):
it grows as generations find better trade-offs and never falls.
"""
from __future__ import annotations

import numpy as np
from optuna._hypervolume import compute_hypervolume

from engine.scenario import files

REFERENCE = 1.1


def losses(trials, objectives) -> np.ndarray:
    """trials x objectives, every objective lower-is-better."""
    signs = np.array([-1.0 if o.higher else 1.0 for o in objectives])
    return np.array([[t.measured.values[o.name] for o in objectives] for t in trials], float).reshape(
        len(trials), len(objectives)) * signs


def _dominated(points: np.ndarray) -> np.ndarray:
    """Per row: is another row at least as good everywhere and better somewhere."""
    out = np.zeros(len(points), bool)
    for i, p in enumerate(points):
        others = np.delete(points, i, axis=0)
        out[i] = bool(np.any(np.all(others <= p, axis=1) & np.any(others < p, axis=1)))
    return out


def pareto_front(trials, objectives) -> list[int]:
    """The numbers of the feasible, non-dominated trials, in trial order (one of equal points: the first)."""
    feasible = [t for t in trials if t.measured.feasible]
    if not feasible:
        return []
    points = losses(feasible, objectives)
    _, first = np.unique(points, axis=0, return_index=True)
    kept = [feasible[i] for i in sorted(first)]
    keep = ~_dominated(losses(kept, objectives))
    return sorted(t.number for t, k in zip(kept, keep) if k)


def hypervolume_history(trials, objectives) -> list[float]:
    """After each generation (0, 1, ...): the hypervolume of the front of the feasible trials so far."""
    feasible = [t for t in trials if t.measured.feasible]
    generations = max((t.generation for t in trials), default=-1) + 1
    if not feasible:
        return [0.0] * generations
    points = losses(feasible, objectives)
    low, high = points.min(axis=0), points.max(axis=0)
    scaled = np.divide(points - low, high - low, out=np.zeros_like(points), where=high > low)
    reference = np.full(len(objectives), REFERENCE)
    history = []
    for g in range(generations):
        mine = scaled[[t.generation <= g for t in feasible]]
        if not len(mine):
            history.append(0.0)
            continue
        unique = np.unique(mine, axis=0)
        history.append(float(compute_hypervolume(unique[~_dominated(unique)], reference)))
    return history


def scenario_toml(study, params: dict, name: str) -> str:
    """The scenario of a trial's `params` as TOML: the base scenario with them set, named `name`, with a
    comment saying where it came from. It loads with Scenario.load like any bundled scenario."""
    lines = (f"Found by `meridian optimise` ({study.name}, {study.source}): the base scenario with",
             *(f"  {key} = {value!r}" for key, value in params.items()))
    return files.scenario_toml(study.scenario(params, name), lines)

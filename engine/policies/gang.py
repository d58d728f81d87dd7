"""Gang placement policies (family "gang"): which whole nodes a multi-node job takes.

A gang job needs `width` (>= 1) whole nodes, all or nothing. Every policy has one method,
`choose_nodes(view, free_nodes, width, rng) -> ndarray | None`: `free_nodes` are the ascending
indices of the entirely free nodes big enough for one pod of the job (the simulator computes
them); the answer is `width` distinct ascending indices drawn from `free_nodes`, or None when
there are fewer than `width`. Policies never change `view` or `free_nodes`; the simulator takes
the nodes through its checked `allocate_whole`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.fleet_view import FleetView
from engine.policies.registry import register

FAMILY = "gang"


@register(FAMILY, "lowest-index")
@dataclass(frozen=True)
class LowestIndexGang:
    """The `width` free nodes with the lowest indices, wherever they are."""

    def choose_nodes(self, view: FleetView, free_nodes: np.ndarray, width: int, rng) -> np.ndarray | None:
        if len(free_nodes) < width:
            return None
        return free_nodes[:width].copy()  # a copy: the answer outlives free_nodes


@register(FAMILY, "topology")
@dataclass(frozen=True)
class TopologyGang:
    """Topology-aware: keep a gang inside one rack (`view.rack`) when it can, else span few racks.

    If some rack holds at least `width` of the free nodes, the gang goes to the rack with the
    fewest free nodes that still suffice (best fit: big free racks stay whole for wider gangs;
    ties: lowest rack id), on its lowest-index free nodes. Otherwise it spans the fewest racks:
    racks by most free nodes first (ties: lowest rack id), each contributing its lowest-index free
    nodes, until `width` are taken. Deterministic; uses no randomness.
    """

    def choose_nodes(self, view: FleetView, free_nodes: np.ndarray, width: int, rng) -> np.ndarray | None:
        if len(free_nodes) < width:
            return None
        free_nodes = np.asarray(free_nodes, np.int64)
        racks = view.rack[free_nodes]
        ids, counts = np.unique(racks, return_counts=True)      # ids ascending
        suffice = np.flatnonzero(counts >= width)
        if len(suffice):
            rack = ids[suffice[np.argmin(counts[suffice])]]       # argmin: first, so lowest id on ties
            return free_nodes[racks == rack][:width]
        by_size = np.lexsort((ids, -counts))                      # most free first, then lowest id
        taken = np.cumsum(counts[by_size])
        used = by_size[:np.searchsorted(taken, width) + 1]
        last_share = width - (taken[len(used) - 2] if len(used) > 1 else 0)
        chosen = [free_nodes[racks == r] for r in ids[used[:-1]]]
        chosen.append(free_nodes[racks == ids[used[-1]]][:last_share])
        return np.sort(np.concatenate(chosen))

"""Contiguous gang placement: a multi-node job takes a run of adjacent nodes in the node order.

The node order is rack, then index within the rack (the fleet table's order: its slot), one line
across the fleet; a gang of width w needs w free nodes at consecutive positions of that line (a node
that is busy, or too small for the job's pod, breaks a run). Three choices among the runs of free
nodes long enough:
- "contiguous-first-fit": the first such run, its first w nodes;
- "contiguous-best-fit": the shortest such run (ties: the first), so long runs stay whole for wide
  gangs; its first w nodes;
- "contiguous-strip": a skyline heuristic for the node x time plane, after the best-fit heuristic
  for orthogonal strip packing (Burke, Kendall and Whitwell, Operations Research 52(4), 2004): the
  gang is a rectangle w nodes wide and its requested runtime tall, placed at the left or right end of
  a run so that it abuts a neighbour; it goes where its expected end is closest to the expected free
  time of the neighbour it abuts (a flat skyline leaves no thin slivers of idle time), then where it
  leaves the shortest remainder of the run, then first. A fleet edge counts as a perfect neighbour.
  Without the times (the simulator passes `free_at` and `end_s`) it is best-fit.
Contiguity costs waiting: free nodes that are not adjacent cannot hold the gang
(benchmarks/bench_backfill_variants.py measures it against the non-contiguous policies).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from engine.core.fleet_view import FleetView
from engine.policies.gang import FAMILY
from engine.policies.registry import register


def line(view: FleetView) -> np.ndarray:
    """The node order: node indices by rack, then index."""
    return np.lexsort((np.arange(len(view.rack)), view.rack))


def runs_of(view: FleetView, free_nodes: np.ndarray) -> list[np.ndarray]:
    """The maximal runs of free nodes at consecutive positions of the node order, in that order."""
    free_nodes = np.asarray(free_nodes, np.int64)
    if not len(free_nodes):
        return []
    order = line(view)
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order))
    at = np.sort(position[free_nodes])
    breaks = np.flatnonzero(np.diff(at) != 1) + 1
    return [order[run] for run in np.split(at, breaks)]


@dataclass(frozen=True)
class _Contiguous:
    sees_time: ClassVar[bool] = False

    def choose_nodes(self, view: FleetView, free_nodes: np.ndarray, width: int, rng, *,
                     free_at: np.ndarray | None = None, end_s: float | None = None) -> np.ndarray | None:
        runs = [run for run in runs_of(view, free_nodes) if len(run) >= width]
        if not runs:
            return None
        return np.sort(self.pick(view, runs, width, free_at, end_s))

    def pick(self, view, runs, width, free_at, end_s) -> np.ndarray:
        return runs[0][:width]


@register(FAMILY, "contiguous-first-fit")
@dataclass(frozen=True)
class ContiguousFirstFit(_Contiguous):
    """Contiguous gang placement, first fit: the first run of adjacent free nodes (rack, then index)
    long enough for the gang, its first nodes. See engine/policies/gang_contiguous.py."""


@register(FAMILY, "contiguous-best-fit")
@dataclass(frozen=True)
class ContiguousBestFit(_Contiguous):
    """Contiguous gang placement, best fit: the shortest run of adjacent free nodes long enough (ties:
    the first), its first nodes, keeping long runs whole. See engine/policies/gang_contiguous.py."""

    def pick(self, view, runs, width, free_at, end_s) -> np.ndarray:
        return min(runs, key=len)[:width]


@register(FAMILY, "contiguous-strip")
@dataclass(frozen=True)
class ContiguousStrip(_Contiguous):
    """Contiguous gang placement by a skyline strip-packing heuristic in the node x time plane (after
    Burke, Kendall and Whitwell, Oper. Res. 2004): against the neighbour whose expected free time is
    closest to the gang's expected end, then the shortest remainder. See engine/policies/gang_contiguous.py."""

    sees_time: ClassVar[bool] = True

    def pick(self, view, runs, width, free_at, end_s) -> np.ndarray:
        if free_at is None or end_s is None:
            return min(runs, key=len)[:width]
        order = line(view)
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        best, chosen = None, None
        for k, run in enumerate(runs):
            first, last = position[run[0]], position[run[-1]]
            left = order[first - 1] if first > 0 else None
            right = order[last + 1] if last + 1 < len(order) else None
            for on_right, nodes, neighbour in ((False, run[:width], left), (True, run[len(run) - width:], right)):
                gap = 0.0 if neighbour is None else abs(end_s - float(free_at[neighbour]))
                score = (gap, len(run) - width, k, on_right)
                if best is None or score < best:
                    best, chosen = score, nodes
        return chosen

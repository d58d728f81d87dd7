"""A scheduling pass's batch of pods placed together: the scratch fleet the batch placement policies
(engine.policies.placement_search, engine.policies.placement_milp) work on, their cost and the greedy plan.

A batch placement policy has, besides `choose` (one pod, as every placement policy), `plan(view,
requests, rng, gang_waiting=False) -> list[Placement | None]`: where each pod of the batch (the
first single-node jobs of the pass's ordered queue) goes, all of them together, on the fleet as it
is at the start of the pass. The plan never over-allocates: its placements fit the fleet all at
once. The simulator calls `plan` once per pass and takes each job's planned placement when the job
is tried, if it still fits then (engine.sim.cycle.batch_plan); otherwise it asks `choose`.

The cost of a plan (lower is better) puts placing pods first, then the fleet's shape:
    cost = PLACED_FIRST x unplaced + fragmented + broken + NODE_USED x nodes used
- unplaced: the GPU milli of the batch's pods left out (a CPU-only pod counts 1): no fragmentation
  saved is worth leaving a pod waiting;
- fragmented: how much the batch adds to the fragmentation of the nodes it uses, in GPU milli: FGD's
  measure for the fleet's target workload when the fleet tracks one (engine.core.fragmentation, Weng
  et al., USENIX ATC'23), else the free milli left on partly used GPUs;
- nodes used: how many nodes the batch's pods are on, weighed little (NODE_USED): among equally
  fragmenting plans the one on fewer nodes, so that a search does not spread pods for nothing;
- broken: when a gang job waits, the GPU milli of the entirely free nodes the batch starts to use
  (a gang job needs whole free nodes).
Without `shape` (the exact policy) the cost is the unplaced milli alone.
"""
from __future__ import annotations

import numpy as np

from engine.core.fleet_view import MILLI, FleetView, Placement, PodRequest, fits_on

PLACED_FIRST = 1e9  # a milli left out costs more than any fragmentation (fleets under a million GPUs)
NODE_USED = 1e-3   # a node in use: less than any change of fragmentation worth counting


class BatchFleet:
    """Scratch copies of the fleet's free resources, the batch's pods and where each one is.

    `where[i]`: the pod's node (-1: not placed) and `gpus[i]` its GPU indices there. The fleet's
    static limits (GPU model, spot) and its state at the start are applied once: `candidates[i]`
    are the nodes pod i fits on before the batch takes anything (taking only shrinks the room)."""

    def __init__(self, view: FleetView, requests: list[PodRequest], shape: bool, gang_waiting: bool):
        self.view, self.requests = view, requests
        self.shape, self.gang_waiting = shape, gang_waiting
        self.cpu = view.cpu_free.astype(np.int64)
        self.memory = view.memory_free.astype(np.int64)
        self.gpu = view.gpu_free.astype(np.int64)
        self.gpu_total = view.gpu_free_total.astype(np.int64)
        self.candidates = [np.flatnonzero(fits_on(view, r)) for r in requests]
        self.value = [max(r.total_gpu_milli, 1) for r in requests]
        self.where = [-1] * len(requests)
        self.gpus: list[tuple[int, ...]] = [()] * len(requests)
        self.unplaced = sum(self.value)
        self.entire = (view.gpu_idle == view.gpu_count) & (view.cpu_free == view.cpu_total)
        self._frag0: dict[int, float] = {}
        self._frag: dict[int, float] = {}
        self.node_cost = 0.0  # fragmented + broken over the touched nodes

    # -- moves --------------------------------------------------------------------------------
    def fits(self, i: int, node: int) -> bool:
        r = self.requests[i]
        if self.cpu[node] < r.cpu_milli or self.memory[node] < r.memory_mib:
            return False
        return not r.num_gpu or int(np.count_nonzero(self.gpu[node] >= r.gpu_milli)) >= r.num_gpu

    def place(self, i: int, node: int) -> None:
        """Put pod i (not placed) on `node` (where it fits), its GPUs tightest-fit."""
        r = self.requests[i]
        before = self._node_term(node)
        free = self.gpu[node].tolist()
        fits = [g for g, f in enumerate(free) if f >= r.gpu_milli] if r.num_gpu else []
        self._take(i, node, tuple(sorted(sorted(fits, key=free.__getitem__)[: r.num_gpu])), -1, before)

    def remove(self, i: int) -> None:
        """Take placed pod i off its node."""
        node = self.where[i]
        self._take(i, node, self.gpus[i], +1, self._node_term(node))

    @property
    def cost(self) -> float:
        return PLACED_FIRST * self.unplaced + self.node_cost

    def snapshot(self) -> tuple[list[int], list[tuple[int, ...]]]:
        return list(self.where), list(self.gpus)

    def restore(self, snap: tuple[list[int], list[tuple[int, ...]]]) -> None:
        """Go back to a snapshot's assignment (pods off, then on with the snapshot's GPUs)."""
        where, gpus = snap
        for i in range(len(self.requests)):
            if self.where[i] >= 0 and (self.where[i] != where[i] or self.gpus[i] != gpus[i]):
                self.remove(i)
        for i in range(len(self.requests)):
            if where[i] >= 0 and self.where[i] < 0:
                self.put(i, where[i], gpus[i])

    def put(self, i: int, node: int, gpus: tuple[int, ...]) -> None:
        """Put pod i (not placed) on `node` on the given GPUs (which must have room)."""
        self._take(i, node, gpus, -1, self._node_term(node))

    def _take(self, i: int, node: int, gpus: tuple[int, ...], sign: int, before: float) -> None:
        """Pod i's resources on `node`: taken (sign -1, it is placed there) or given back (+1)."""
        r = self.requests[i]
        for g in gpus:
            self.gpu[node, g] += sign * r.gpu_milli
        self.gpu_total[node] += sign * r.total_gpu_milli
        self.cpu[node] += sign * r.cpu_milli
        self.memory[node] += sign * r.memory_mib
        self.where[i], self.gpus[i] = (node, gpus) if sign < 0 else (-1, ())
        self.unplaced += sign * self.value[i]
        self._frag.pop(node, None)
        self.node_cost += self._node_term(node) - before

    def placements(self) -> list[Placement | None]:
        return [Placement(n, g, r.gpu_milli) if n >= 0 else None
                for n, g, r in zip(self.where, self.gpus, self.requests)]

    # -- cost of a node -----------------------------------------------------------------------
    def _node_term(self, node: int) -> float:
        if not self.shape:
            return 0.0
        if node not in self._frag0:
            self._frag0[node] = self.fragmented(node)
        if node not in self._frag:
            self._frag[node] = self.fragmented(node)
        term = self._frag[node] - self._frag0[node] + (NODE_USED if self._used(node) else 0.0)
        if self.gang_waiting and self.entire[node] and self._used(node):
            term += MILLI * int(self.view.gpu_count[node])
        return term

    def _used(self, node: int) -> bool:
        """Whether the batch takes anything on `node`."""
        return bool(self.cpu[node] < self.view.cpu_free[node] or self.gpu_total[node] < self.view.gpu_free_total[node]
                    or self.memory[node] < self.view.memory_free[node])

    def fragmented(self, node: int) -> float:
        """The node's fragmented GPU milli now (the cost's measure, before any difference is taken)."""
        index, row = self.view.fragmentation, self.gpu[node]
        if index is None:
            return float(row[(row > 0) & (row < MILLI)].sum())
        after = index.weighted_after(np.array([node]), self.cpu[node:node + 1], row[None, :])
        return float(after[0]) / index.total_weight


def best_fit_node(batch: BatchFleet, i: int, cpu_weight: float) -> int:
    """Best-fit's node for pod i on the scratch fleet (engine.policies.placement.BestFit's score:
    100 x (1 - leftover), truncated, ties to the lowest index), -1 if it fits nowhere."""
    view, r, nodes = batch.view, batch.requests[i], batch.candidates[i]
    nodes = nodes[fits_now(batch, i, nodes)]
    if not len(nodes):
        return -1
    left = ((batch.cpu[nodes] - r.cpu_milli) / max(view.max_cpu_milli, 1) * cpu_weight
            + (batch.gpu_total[nodes] - r.total_gpu_milli) / max(view.max_gpu_milli, 1) * (1 - cpu_weight))
    return int(nodes[np.argmax(np.trunc((1.0 - left) * 100))])


def fits_now(batch: BatchFleet, i: int, nodes: np.ndarray) -> np.ndarray:
    """Which of `nodes` (candidates of pod i) have room for it on the scratch fleet now."""
    r = batch.requests[i]
    ok = (batch.cpu[nodes] >= r.cpu_milli) & (batch.memory[nodes] >= r.memory_mib)
    if r.num_gpu:
        ok &= (batch.gpu[nodes] >= r.gpu_milli).sum(axis=1) >= r.num_gpu
    return ok


def greedy(view: FleetView, requests: list[PodRequest], cpu_weight: float, shape: bool,
           gang_waiting: bool) -> BatchFleet:
    """Best-fit pod by pod in queue order on the scratch fleet (a pod that fits nowhere is left out)."""
    batch = BatchFleet(view, requests, shape, gang_waiting)
    for i in range(len(requests)):
        node = best_fit_node(batch, i, cpu_weight)
        if node >= 0:
            batch.place(i, node)
    return batch

"""Placement policies ("placement" family): which node, and which GPUs on it, a pod gets.

Every policy has one method, `choose(view, request, rng) -> Placement | None` (None: nothing
fits), vectorised over nodes. Score-based policies follow the Kubernetes scheduler framework the
FGD paper's simulator uses (Weng et al., USENIX ATC'23): each feasible node gets an integer score
0-100 (the formula's value, truncated) and the top score wins; among equal top scores the node
listed first in the fleet wins (lowest index), which is how the paper's simulator behaves (it
lists its nodes in a random order per seed; uniformly random tie-breaking does not reproduce its
results). Only `random` draws from `rng`. Inside a node the GPUs are taken tightest-fit (fewest
free milli first, lowest index among equals) unless the policy says otherwise. Scores normalise
by the largest node in the fleet (`FleetView.max_cpu_milli`, `max_gpu_milli`; 128,000 and 8,000
on the openb cluster, the constants of the paper's code).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.fleet_view import MILLI, FleetView, Placement, PodRequest, fit_args, fits_on
from engine.core.fragmentation import FragmentationIndex, TargetWorkload
from engine.core.kernel_entry import Entries
from engine.policies.registry import register

# engine.policies.leftover_kernels, imported with the first first-fit, leftover score or tightest-fit GPU
# choice: loading numba's cache costs a process about 0.2 s, which code that never places need not pay
kernels = None


def feasible(view: FleetView, request: PodRequest) -> np.ndarray:
    """Nodes where `request` fits now (the fleet's one fit rule, engine.core.fleet_view.fits_on)."""
    return fits_on(view, request)


def tightest_gpus(view: FleetView, node: int, request: PodRequest) -> tuple[int, ...]:
    """The request's GPUs on `node`: fewest free milli first (that still fit), lowest index among equals
    (engine.policies.leftover_kernels.tightest)."""
    if not request.num_gpu:
        return ()
    if kernels is None:
        _load_kernels()
    return tuple(kernels.tightest(view.gpu_free[node], request.gpu_milli, request.num_gpu).tolist())


def pick_top(nodes: np.ndarray, scores: np.ndarray) -> int | None:
    """The node with the highest score (`nodes` ascending, so ties go to the lowest index); None if none."""
    return int(nodes[np.argmax(scores)]) if len(nodes) else None


def leftover_top(view: FleetView, request: PodRequest, cpu_weight: float, least: bool, ok=None) -> int | None:
    """The feasible node (of those where `ok`, when given) with the highest leftover score, lowest
    index first among equals; None if none. The score (engine.policies.leftover_kernels): 100 x
    (1 - leftover) for the least leftover (best-fit), 100 x leftover for the most (worst-fit), truncated."""
    if kernels is None:
        _load_kernels()
    node = kernels.leftover_top(fits_on(view, request) if ok is None else ok, view._block, request.figures, False,
                                max(view.max_cpu_milli, 1), max(view.max_gpu_milli, 1), cpu_weight, least)
    return node if node >= 0 else None


def _load_kernels() -> None:
    global kernels
    from engine.policies import leftover_kernels
    kernels = leftover_kernels


_fit_calls = Entries()  # leftover_kernels' entry points at fit_args' argument types


def _fit_call(name: str, args: tuple, block: np.ndarray):
    """leftover_kernels' kernel `name` on `args`: fit_args' arrays (a small fleet's read-only C-order
    `block`, a read-only bool mask, a request's `figures`), then Python ints, floats and bools in fixed
    places. With those types fixed, the call goes to the kernel's entry point (engine.core.kernel_entry),
    without numba's dispatch; a block of another layout (a view of a large fleet's column-major state,
    seen without its fit masks) goes through the dispatcher."""
    if kernels is None:
        _load_kernels()
    if not block.flags.c_contiguous:
        return getattr(kernels, name)(*args)
    return (_fit_calls.get(name) or _fit_calls.made(name, getattr(kernels, name), args))(*args)


def leftover_place(view: FleetView, request: PodRequest, cpu_weight: float, least: bool, ok=None) -> Placement | None:
    """`leftover_top`'s node and the request's GPUs on it (`tightest_gpus`), in one compiled call (the fit
    rule in it too, on a fleet that keeps no fit masks); None if none."""
    if kernels is None:
        _load_kernels()
    scales = max(view.max_cpu_milli, 1), max(view.max_gpu_milli, 1)
    fit = fit_args(view, request) if ok is None else None
    if fit is not None:
        block, allowed, figures = fit
        node, gpus = _fit_call("leftover_place", (allowed, block, figures, True, *scales, float(cpu_weight),
                                                  bool(least)), block)
    else:
        node, gpus = kernels.leftover_place(fits_on(view, request) if ok is None else ok, view._block,
                                            request.figures, False, *scales, cpu_weight, least)
    return Placement(node, tuple(gpus.tolist()), request.gpu_milli) if node >= 0 else None


def _place(view: FleetView, node: int | None, request: PodRequest) -> Placement | None:
    if node is None:
        return None
    return Placement(node, tightest_gpus(view, node, request), request.gpu_milli)


def _cpu_weight():
    return field(default=0.5, metadata={"help": "weight of CPU (vs GPU) in the leftover score, 0-1"})


def _check_cpu_weight(policy) -> None:
    """Reject a cpu_weight outside [0, 1] (or NaN): the leftover score mixes CPU and GPU shares by it."""
    if not 0.0 <= policy.cpu_weight <= 1.0:
        raise ValueError(f"placement policy {policy.registry_key!r}: cpu_weight must be between 0 and 1 "
                         f"(inclusive), got {policy.cpu_weight!r}")


@register("placement", "first-fit")
@dataclass(frozen=True)
class FirstFit:
    """The lowest-indexed node that fits; its lowest-indexed GPUs that fit (engine.policies.leftover_kernels)."""

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        fit = fit_args(view, request)
        if fit is not None:
            node, gpus = _fit_call("fit_first_place", fit, fit[0])
        else:
            if kernels is None:
                _load_kernels()
            node, gpus = kernels.first_place(feasible(view, request), view.gpu_free, request.gpu_milli,
                                             request.num_gpu)
        return Placement(node, tuple(gpus.tolist()), request.gpu_milli) if node >= 0 else None


@register("placement", "best-fit")
@dataclass(frozen=True)
class BestFit:
    """Least leftover: score = 100 x (1 - [w (cpuFree - cpuReq)/maxCpu + (1 - w)(gpuFree - gpuReq)/maxGpu])."""

    cpu_weight: float = _cpu_weight()

    def __post_init__(self) -> None:
        _check_cpu_weight(self)

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        return leftover_place(view, request, self.cpu_weight, True)


@register("placement", "cheapest-tier")
@dataclass(frozen=True)
class CheapestTier:
    """Best-fit among the nodes of the cheapest pricing tier that fits: reserved capacity (paid whether
    used or not) first, then spot, then on-demand (engine.core.fleet_view.TIER_RANK), so paid-by-use
    capacity runs only when the committed capacity is full. Without tiers it is best-fit."""

    cpu_weight: float = _cpu_weight()

    def __post_init__(self) -> None:
        _check_cpu_weight(self)

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        ok = feasible(view, request)
        if view.tier_rank is not None and ok.any():
            ok = ok & (view.tier_rank == view.tier_rank[ok].min())
        return leftover_place(view, request, self.cpu_weight, True, ok)


@register("placement", "worst-fit")
@dataclass(frozen=True)
class WorstFit:
    """Spread: most leftover, score = 100 x [w (cpuFree - cpuReq)/maxCpu + (1 - w)(gpuFree - gpuReq)/maxGpu]."""

    cpu_weight: float = _cpu_weight()

    def __post_init__(self) -> None:
        _check_cpu_weight(self)

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        return leftover_place(view, request, self.cpu_weight, False)


@register("placement", "dot-product")
@dataclass(frozen=True)
class DotProduct:
    """Tetris alignment: score = 100 x (1 - (free . request) / 2), both vectors (CPU, total GPU milli)
    normalised by the largest node; the least aligned node wins (it keeps big free vectors whole)."""

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        nodes = feasible(view, request).nonzero()[0]
        cpu_max, gpu_max = max(view.max_cpu_milli, 1), max(view.max_gpu_milli, 1)
        dot = (view.cpu_free[nodes] / cpu_max) * (request.cpu_milli / cpu_max) \
            + (view.gpu_free_total[nodes] / gpu_max) * (request.total_gpu_milli / gpu_max)
        scores = np.trunc(100 * (1 - dot / 2))
        return _place(view, pick_top(nodes, scores), request)


@register("placement", "gpu-packing")
@dataclass(frozen=True)
class GpuPacking:
    """Prefer partly used GPUs (score 50-100, fuller GPU higher), then idle GPUs on partly used nodes
    (33-50), then idle nodes (0-33, smaller nodes higher). CPU-only pods: all nodes tie."""

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        nodes = feasible(view, request).nonzero()[0]
        scores = np.zeros(len(nodes), np.int64)
        if request.num_gpu and len(nodes):
            free = view.gpu_free[nodes]
            key = np.sort(np.where(free >= request.gpu_milli, free, 2 * MILLI), axis=1)[:, : request.num_gpu]
            idle_taken = (key == MILLI).sum(axis=1)
            on_shared = np.maximum(100 - (key * 100 // MILLI).sum(axis=1) // 10, 50)
            used_node = np.where(idle_taken > 0, np.maximum(50 - idle_taken, 33), on_shared)
            idle = view.gpu_idle[nodes]
            scores = np.where(idle == view.gpu_count[nodes], np.maximum(33 - idle, idle), used_node)
        return _place(view, pick_top(nodes, scores), request)


@register("placement", "gpu-clustering")
@dataclass(frozen=True)
class GpuClustering:
    """Keep pods of one GPU shape together: nodes hosting only this shape (75-100), this shape among
    others (50-75), empty of GPU pods (25-50), other shapes only (0-25); fuller nodes higher inside each band."""

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        nodes = feasible(view, request).nonzero()[0]
        scores = np.zeros(len(nodes), np.int64)
        if request.num_gpu and len(nodes):
            gpu_max = max(view.max_gpu_milli, 1)
            pods = view.gpu_pods[nodes]
            shapes = (pods > 0).sum(axis=1)
            same = pods[:, request.shape_slot] > 0
            band = np.where(same, np.where(shapes == 1, 75, 50), np.where(shapes == 0, 25, 0))
            scores = 25 * (gpu_max - view.gpu_free_total[nodes]) // gpu_max + band
        return _place(view, pick_top(nodes, scores), request)


@register("placement", "random")
@dataclass(frozen=True)
class RandomPlacement:
    """A uniformly random feasible node; a random fitting GPU for a shared GPU, else the lowest-indexed idle ones."""

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        nodes = feasible(view, request).nonzero()[0]
        if not len(nodes):
            return None
        node = int(nodes[rng.integers(len(nodes))])
        if not request.shares_gpu:
            return _place(view, node, request)
        fits = np.flatnonzero(view.gpu_free[node] >= request.gpu_milli)
        return Placement(node, (int(fits[rng.integers(len(fits))]),), request.gpu_milli)


@register("placement", "fgd")
@dataclass(frozen=True)
class FragmentationGradientDescent:
    """FGD: the node (and GPU) whose fragmentation for the target workload grows least.

    score = 100 x sigmoid((F_before - F_after) / 1000) per candidate, F in milli-GPU (see
    `engine.core.fragmentation`). A shared-GPU pod tries every GPU that fits and keeps the best
    (lowest index among equal scores); other pods take their GPUs tightest-fit. The target
    workload is the one the fleet state tracks; without one, the pod's own shape is the target.
    """

    def choose(self, view: FleetView, request: PodRequest, rng: np.random.Generator) -> Placement | None:
        nodes = feasible(view, request).nonzero()[0]
        if not len(nodes):
            return None
        index = view.fragmentation or _own_shape_index(view, request)
        before = index.weighted[nodes]
        cpu_after = view.cpu_free[nodes] - request.cpu_milli
        if request.shares_gpu:
            return self._share(view, index, nodes, cpu_after, request)
        if not request.num_gpu:
            after = index.weigh(nodes, cpu_after, index.free[nodes], index.count_ge[nodes], index.usable[nodes])
        elif request.gpu_milli == MILLI:
            after = index.weighted_after_whole(nodes, cpu_after, request.num_gpu)
        else:
            after = index.weighted_after(nodes, cpu_after, _after_tightest(view.gpu_free[nodes], request))
        return _place(view, pick_top(nodes, _score(before - after, index)), request)

    @staticmethod
    def _share(view, index, nodes, cpu_after, request) -> Placement:
        free = view.gpu_free[nodes]
        by_free = np.argsort(free, axis=1, kind="stable")   # equal free values: lowest GPU index first
        ordered = np.take_along_axis(free, by_free, axis=1)
        first = np.ones(free.shape, bool)
        first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        rows, slots = np.nonzero(first & (ordered >= request.gpu_milli))   # one GPU per distinct free value
        gpus = by_free[rows, slots]
        after = index.weighted_after_share(nodes[rows], cpu_after[rows], free[rows, gpus], request.gpu_milli)
        grid = np.full(free.shape, -1.0)
        grid[rows, gpus] = _score(index.weighted[nodes[rows]] - after, index)
        best = grid.max(axis=1)
        node = pick_top(nodes, best)
        row = int(np.searchsorted(nodes, node))
        return Placement(node, (int(grid[row].argmax()),), request.gpu_milli)


def _score(weighted_drop: np.ndarray, index: FragmentationIndex) -> np.ndarray:
    """100 x sigmoid(fragmentation drop in GPUs), truncated: 50 when fragmentation does not change."""
    return np.trunc(100.0 / (1.0 + np.exp(-weighted_drop / index.total_weight / MILLI)))


def _after_tightest(free: np.ndarray, request: PodRequest) -> np.ndarray:
    """Per-GPU free rows after taking the request's GPUs tightest-fit on each row."""
    key = np.where(free >= request.gpu_milli, free, 2 * MILLI + 1)
    chosen = np.argsort(key, axis=1, kind="stable")[:, : request.num_gpu]
    after = free.copy()
    np.put_along_axis(after, chosen, np.take_along_axis(free, chosen, axis=1) - request.gpu_milli, axis=1)
    return after


def _own_shape_index(view: FleetView, request: PodRequest) -> FragmentationIndex:
    target = TargetWorkload.of([(request.cpu_milli, request.gpu_milli, request.num_gpu, request.gpu_models)], [1])
    return FragmentationIndex(target, np.asarray(view.gpu_model), view.model_names,
                              np.asarray(view.cpu_free), np.asarray(view.gpu_free))

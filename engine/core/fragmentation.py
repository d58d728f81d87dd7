"""FGD's GPU fragmentation measure (Weng et al., USENIX ATC'23), per node, in numpy arrays.

Target workload M: typical pod shapes m (CPU milli, per-GPU milli, GPU count, allowed models)
with popularity p_m. Fragmentation of node n for M, in milli-GPU:
    F_n(M) = sum_m p_m F_n(m), where F_n(m) = all free GPU milli of n if m cannot run on n
    (too little CPU, fewer than m's GPU count of GPUs with m's per-GPU milli free, a GPU model m
    does not allow, or m is CPU-only), else the free milli on GPUs with less than m's per-GPU milli.
Memory plays no part. The arithmetic is exact: p_m = w_m / W with integer pod counts w_m, and
`weighted` holds W x F_n as int64 (so a pod that changes nothing changes F by exactly 0).

Rewritten with U_r = free milli on GPUs with at least r free and C_r = how many such GPUs:
    W x F_n = W x free_n - sum over GPU shapes m that can run of w_m x U_{r_m}.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_COVERAGE = 0.95


@dataclass(frozen=True)
class TargetWorkload:
    """Pod shapes and their weights (pod counts); popularity = weight / weight.sum().

    cpu_milli, gpu_milli (per GPU), num_gpu, weight: int64 arrays, one entry per shape;
    gpu_models: one tuple of allowed models per shape (empty: any model).
    """

    cpu_milli: np.ndarray
    gpu_milli: np.ndarray
    num_gpu: np.ndarray
    gpu_models: tuple[tuple[str, ...], ...]
    weight: np.ndarray

    @classmethod
    def typical(cls, cpu_milli, gpu_milli, num_gpu, gpu_models, coverage: float = DEFAULT_COVERAGE):
        """The most popular shapes among the given pods that together cover `coverage` of them.

        Shapes are ranked by pod count, ties by (cpu, gpu milli, GPU count, models) descending, and
        taken one at a time until the running count reaches coverage x pods (CPU-only shapes too).
        """
        counts: dict[tuple, int] = {}
        for key in zip(map(int, cpu_milli), map(int, gpu_milli), map(int, num_gpu), map(tuple, gpu_models)):
            counts[key] = counts.get(key, 0) + 1
        return cls.most_popular(counts, coverage)

    @classmethod
    def most_popular(cls, counts: dict[tuple, int], coverage: float = DEFAULT_COVERAGE) -> "TargetWorkload":
        """`typical` from the pod count of each shape (cpu, gpu milli, GPU count, models tuple), the
        shapes in the order they first occur."""
        if not 0 < coverage <= 1:
            raise ValueError(f"coverage must be in (0, 1], got {coverage}")
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0][:3], "|".join(kv[0][3])), reverse=True)
        total, kept, running = sum(counts.values()), [], 0
        for key, count in ranked:
            if running >= coverage * total:
                break
            kept.append((key, count))
            running += count
        return cls.of([k for k, _ in kept], [c for _, c in kept])

    @classmethod
    def of(cls, shapes, weights) -> "TargetWorkload":
        """From (cpu_milli, gpu_milli, num_gpu, gpu_models) tuples and their integer weights."""
        shapes = list(shapes)
        column = lambda i: np.array([s[i] for s in shapes], dtype=np.int64)  # noqa: E731
        weight = np.asarray(weights, dtype=np.int64)
        if len(weight) != len(shapes) or (weight <= 0).any():
            raise ValueError("one positive integer weight per shape is required")
        return cls(column(0), column(1), column(2), tuple(tuple(s[3]) for s in shapes), weight)

    @property
    def popularity(self) -> np.ndarray:
        return self.weight / self.weight.sum()


class FragmentationIndex:
    """Per-node fragmentation for one target workload, refreshed node by node as the state changes.

    GPU shapes are grouped by (per-GPU milli r, GPU count k, models); `thresholds` holds each
    group's r. Arrays (nodes first): free (free GPU milli), count_ge / usable (C_r and U_r per
    group), weighted (W x F_n, int64); `frag_milli` is F_n. A group's weight on a node with c CPU
    milli free is the weight of its shapes needing at most c, looked up in a cumulative table.
    """

    def __init__(self, target: TargetWorkload, gpu_model: np.ndarray, model_names: tuple[str, ...],
                 cpu_free: np.ndarray, gpu_free: np.ndarray):
        self.target = target
        self.total_weight = int(target.weight.sum())
        gpu = np.flatnonzero(target.gpu_milli > 0)
        gpu = gpu[np.argsort(target.cpu_milli[gpu], kind="stable")]
        keys = [(int(target.gpu_milli[m]), int(target.num_gpu[m]), target.gpu_models[m]) for m in gpu]
        groups = sorted(set(keys))
        self.thresholds = np.array([g[0] for g in groups], np.int64)
        self._k = np.array([g[1] for g in groups], np.int64)
        weights = np.zeros((len(gpu) + 1, len(groups)), np.int64)
        for row, (key, m) in enumerate(zip(keys, gpu), start=1):
            weights[row, groups.index(key)] = target.weight[m]
        self._cpu_needed = target.cpu_milli[gpu]
        self._weight_upto = np.cumsum(weights, axis=0)   # row j: weights of the j least CPU-hungry shapes
        self.access = np.ones((len(gpu_model), len(groups)), bool)
        for q, (_, _, allowed) in enumerate(groups):
            if allowed:
                self.access[:, q] = np.isin(gpu_model, [model_names.index(m) for m in allowed if m in model_names])
        self._restricted = not self.access.all()
        n, r = len(gpu_model), len(self.thresholds)
        self.free = np.zeros(n, np.int64)
        self.count_ge = np.zeros((n, r), np.int64)
        self.usable = np.zeros((n, r), np.int64)
        self.weighted = np.zeros(n, np.int64)
        self.refresh(np.arange(n), cpu_free, gpu_free)

    @property
    def frag_milli(self) -> np.ndarray:
        """F_n(M) per node, milli-GPU."""
        return self.weighted / self.total_weight

    def refresh(self, nodes: np.ndarray, cpu_free: np.ndarray, gpu_free: np.ndarray) -> None:
        """Recompute the rows of `nodes` from the state's arrays (engine.core.frag_kernels)."""
        if _kernels is None:
            _load_kernels()
        _kernels.refresh(np.asarray(nodes, np.int64), cpu_free, gpu_free, self.thresholds, self._cpu_needed,
                         self._weight_upto, self._k, self.access, self._restricted, self.total_weight, self.free,
                         self.count_ge, self.usable, self.weighted)

    def gpu_terms(self, gpu_free: np.ndarray):
        """(free, C_r, U_r) for rows of per-GPU free milli (-1 = absent GPU) (engine.core.frag_kernels)."""
        if _kernels is None:
            _load_kernels()
        return _kernels.gpu_terms(np.asarray(gpu_free, np.int64), self.thresholds)

    def weigh(self, nodes, cpu_free, free, count_ge, usable) -> np.ndarray:
        """W x F for candidate node states: nodes (their GPU models), CPU free, free, C_r, U_r."""
        if _kernels is None:
            _load_kernels()
        return _kernels.weigh(np.asarray(nodes, np.int64), np.asarray(cpu_free, np.int64), np.asarray(free, np.int64),
                              np.asarray(count_ge, np.int64), np.asarray(usable, np.int64), self._cpu_needed,
                              self._weight_upto, self._k, self.access, self._restricted, self.total_weight)

    def weighted_after_share(self, nodes, cpu_after, gpu_before, gpu_milli: int) -> np.ndarray:
        """W x F after taking gpu_milli from one GPU with gpu_before free, per (node, GPU) candidate."""
        thresholds = self.thresholds
        before, after = gpu_before[:, None], gpu_before[:, None] - gpu_milli
        lost_ge, kept_ge = before >= thresholds, after >= thresholds
        count_ge = self.count_ge[nodes] - lost_ge + kept_ge
        usable = self.usable[nodes] - before * lost_ge + after * kept_ge
        return self.weigh(nodes, cpu_after, self.free[nodes] - gpu_milli, count_ge, usable)

    def weighted_after_whole(self, nodes, cpu_after, num_gpu: int) -> np.ndarray:
        """W x F after taking num_gpu idle GPUs (1000 milli each) on each node."""
        taken = 1000 * num_gpu
        return self.weigh(nodes, cpu_after, self.free[nodes] - taken, self.count_ge[nodes] - num_gpu,
                          self.usable[nodes] - taken)

    def weighted_after(self, nodes, cpu_after, gpu_after: np.ndarray) -> np.ndarray:
        """W x F for arbitrary new per-GPU free rows (the general case)."""
        return self.weigh(nodes, cpu_after, *self.gpu_terms(gpu_after))


# engine.core.frag_kernels, imported with the first refresh: code that only builds a target workload need
# not load numba
_kernels = None


def _load_kernels() -> None:
    global _kernels
    from engine.core import frag_kernels
    _kernels = frag_kernels

"""The right-sizing rules: the smallest GPU count a job's shape allows that holds a need, and the
whole GiB of memory that hold a need with a safety margin.

Shared by the retrospective right-sizing (engine.analysis.telemetry.rightsize, the need measured
after the run), right-sizing at submit (engine.predict.size_source, the need predicted) and the
memory model's accuracy (engine.service.memory_accuracy).
"""
from __future__ import annotations

import numpy as np

_EPS = 1e-9   # a need of 2.0000000001 GPUs is 2 GPUs


def recommended_gpus(gpus: np.ndarray, need: np.ndarray, nodes: np.ndarray, fractional: np.ndarray) -> np.ndarray:
    """Per job, r for g = `gpus` asked on k = `nodes` nodes and need n: g for a `fractional` job (a
    share of a GPU is not cut); else, between 1 and g, ceil(n) whole GPUs when n fits one node
    (n <= g / k), or ceil(n / (g / k)) whole nodes of g / k GPUs for a multi-node gang."""
    per_node = gpus / np.maximum(nodes, 1.0)
    whole_gpus = np.ceil(need - _EPS)
    whole_nodes = np.ceil(need / per_node - _EPS) * per_node
    sized = np.where(need <= per_node + _EPS, whole_gpus, whole_nodes)
    return np.where(fractional, gpus, np.clip(sized, 1.0, gpus))


def memory_gib(need_gib: np.ndarray, margin_pct: float) -> np.ndarray:
    """Whole GiB that hold each predicted need with `margin_pct` percent to spare: ceil(need x (1 + margin / 100))."""
    return np.ceil(need_gib * (1.0 + margin_pct / 100.0) - _EPS)

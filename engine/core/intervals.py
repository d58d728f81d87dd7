"""Exact arithmetic on weighted time intervals: integrals over bins and peak concurrency.

An allocation holds `weight` units (GPUs, busy nodes ...) over the half-open interval
[start, end). The load at time t is L(t) = sum_i w_i * 1[s_i <= t < e_i], a step function.
Everything here is vectorised with numpy (sort + cumulative sums + searchsorted); there is no
Python loop over intervals. Times are floats in one unit (the callers use hours since the
analysis window's start), so an integral comes out in weight x hours (e.g. GPU-hours).
"""
from __future__ import annotations

import numpy as np


def _ramp_sum(points: np.ndarray, weights: np.ndarray, at: np.ndarray) -> np.ndarray:
    """R(t) = sum_i w_i * max(t - p_i, 0) evaluated at every t in `at`.

    With points sorted, R(t) = t * W(t) - WP(t), where W and WP are the cumulative sums of
    w_i and w_i * p_i over the points p_i <= t (found by binary search).
    """
    order = np.argsort(points, kind="stable")
    p = points[order]
    w = weights[order]
    cum_w = np.concatenate(([0.0], np.cumsum(w)))
    cum_wp = np.concatenate(([0.0], np.cumsum(w * p)))
    k = np.searchsorted(p, at, side="right")
    return at * cum_w[k] - cum_wp[k]


def integrate(starts, ends, weights, edges) -> np.ndarray:
    """Integral of the load over each bin [edges[k], edges[k+1]); length len(edges) - 1.

    F(t) = integral of L from -inf to t = sum_i w_i * (max(t - s_i, 0) - max(t - e_i, 0)),
    and bin k gets F(edges[k+1]) - F(edges[k]). Exact up to float rounding; results are
    clipped at 0 to drop rounding noise on empty bins.
    """
    starts = np.asarray(starts, dtype=float)
    ends = np.asarray(ends, dtype=float)
    weights = np.asarray(weights, dtype=float)
    edges = np.asarray(edges, dtype=float)
    if len(edges) < 2:
        return np.zeros(0)
    if len(starts) == 0:
        return np.zeros(len(edges) - 1)
    cumulative = _ramp_sum(starts, weights, edges) - _ramp_sum(ends, weights, edges)
    return np.maximum(np.diff(cumulative), 0.0)


def peak_concurrency(starts, ends, weights) -> float:
    """Largest total weight held at any instant (0 when there are no intervals).

    Events are swept in time order; at equal times ends come before starts, because an
    interval that ends at t no longer holds its weight at t (half-open intervals).
    """
    starts = np.asarray(starts, dtype=float)
    ends = np.asarray(ends, dtype=float)
    weights = np.asarray(weights, dtype=float)
    if len(starts) == 0:
        return 0.0
    times = np.concatenate((starts, ends))
    deltas = np.concatenate((weights, -weights))
    is_start = np.concatenate((np.ones(len(starts)), np.zeros(len(ends))))
    order = np.lexsort((is_start, times))
    level = np.cumsum(deltas[order])
    return float(max(level.max(), 0.0))


def overlap_hours(edges, window_start: float, window_end: float) -> np.ndarray:
    """Length of each bin [edges[k], edges[k+1]) that lies inside [window_start, window_end)."""
    edges = np.asarray(edges, dtype=float)
    lo = np.clip(edges[:-1], window_start, window_end)
    hi = np.clip(edges[1:], window_start, window_end)
    return hi - lo

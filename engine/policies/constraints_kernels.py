"""The soft-constraints rule (engine.policies.constraints), compiled with numba: one call per routed job
instead of a few dozen Python list walks over the regions.

`decide` takes the view's columns and the job's fields and returns the chosen region (-1: none is
eligible), the regions' scores, and per region and active constraint (in relax
order) whether the region fails it and what relaxing it there costs. Constraint columns are numbered as in
`engine.core.reasons.SOFT_CONSTRAINTS`: data-locality, latency, carbon, cost, team-affinity. float64
throughout, compared and summed in the order the rule states, so the answers are the Python rule's bit
for bit. Cached on disk by numba's `cache=True` (in engine/core/jit.py's folder).
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.jit import njit

DATA, LATENCY, CARBON, COST, TEAM = 0, 1, 2, 3, 4  # columns, in SOFT_CONSTRAINTS order
_SLACK = 1e-9


@njit(cache=True)
def decide(allowed, fits, free, capacity, queued, latency, slo, carbon, price, egress, has_egress, home, gpus,
           requested_s, deadline_s, data_region, data_gb, latency_bound, now_s, active, weights,
           reserve, carbon_slack, cost_slack):
    """(chosen region, scores, fails (regions x active), costs (regions x active)); scores 1 for the chosen
    region, 0 for the other hard-feasible ones, -inf for the rest; when no region is eligible (residency
    and fit) every score is -inf and no region fails anything."""
    n, m = len(allowed), len(active)
    ok = allowed & fits
    scores, fails, costs = np.full(n, -np.inf), np.zeros((n, m), np.bool_), np.zeros((n, m))
    if not ok.any():
        return -1, scores, fails, costs
    need = gpus - _SLACK
    hard = _hard(ok, free, capacity, queued, home, gpus, requested_s, deadline_s, now_s, reserve)
    met, cost = _soft(hard, latency, slo, carbon, price, egress, has_egress, home, gpus, requested_s,
                      data_region, data_gb, latency_bound, carbon_slack, cost_slack)
    value, level = np.zeros(n), np.full(n, np.inf)
    for i in range(n):
        first = 0
        for k in range(m):
            c = active[k]
            costs[i, k] = cost[i, c]
            if met[i, c]:
                value[i] += weights[k]
            else:
                fails[i, k] = True
                first = k + 1
        if hard[i]:
            level[i] = first
    chosen, best = -1, np.inf
    for i in range(n):  # the first k with a candidate free for the job
        if free[i] >= need and level[i] < best:
            best = level[i]
    if best < np.inf:
        for i in range(n):
            if free[i] >= need and level[i] <= best and (chosen < 0 or _ahead(
                    value[i], free[i], i == home, value[chosen], free[chosen], chosen == home)):
                chosen = i
        return chosen, _scores(hard, chosen), fails, costs
    for i in range(n):  # none: it waits in a candidate of the first k with one
        best = min(best, level[i])
    if best < np.inf:
        for i in range(n):
            if level[i] <= best and (chosen < 0 or _ahead(value[i], i == home, -_per_gpu(queued, capacity, i),
                                                          value[chosen], chosen == home,
                                                          -_per_gpu(queued, capacity, chosen))):
                chosen = i
    return chosen, _scores(hard, chosen), fails, costs


@njit(cache=True)
def _scores(hard, chosen):
    scores = np.where(hard, 0.0, -np.inf)
    if chosen >= 0:
        scores[chosen] = 1.0
    return scores


@njit(cache=True)
def _ahead(a0, a1, a2, b0, b1, b2):
    """(a0, a1, a2) > (b0, b1, b2), compared as Python compares tuples; the earlier region wins ties."""
    if a0 != b0:
        return a0 > b0
    if a1 != b1:
        return a1 > b1
    return a2 > b2


@njit(cache=True)
def _per_gpu(queued, capacity, i):
    return queued[i] / capacity[i] if capacity[i] > 0 else 0.0


@njit(cache=True)
def _hard(ok, free, capacity, queued, home, gpus, requested_s, deadline_s, now_s, reserve):
    """Per region: every hard constraint holds (the base region always)."""
    n = len(ok)
    base = home
    if not ok[home]:
        base = -1
        for i in range(n):
            if ok[i] and (base < 0 or _ahead(free[i], -queued[i], 0.0, free[base], -queued[base], 0.0)):
                base = i
    no_deadline = math.isinf(deadline_s)
    on_time = no_deadline or now_s + requested_s <= deadline_s
    hard = np.zeros(n, np.bool_)
    for i in range(n):
        hard[i] = ok[i] and (i == base or (free[i] - gpus >= reserve * capacity[i] - _SLACK and (
            no_deadline or (on_time and free[i] >= gpus - _SLACK))))
    return hard


@njit(cache=True)
def _soft(hard, latency, slo, carbon, price, egress, has_egress, home, gpus, requested_s, data_region, data_gb,
          latency_bound, carbon_slack, cost_slack):
    """Per region and constraint column: whether it holds there, and what relaxing it there costs."""
    n = len(hard)
    met, cost = np.zeros((n, 5), np.bool_), np.zeros((n, 5))
    gpu_h = gpus * requested_s / 3600.0 if math.isfinite(requested_s) else np.nan
    no_data = data_region < 0 or data_gb <= 0
    egress_usd = 0.0
    if not no_data and has_egress:
        egress_usd = egress[data_region]
        egress_usd = data_gb * (egress_usd if egress_usd == egress_usd else 0.0)
    carbon_low, price_low = _lowest(carbon, hard), _lowest(price, hard)
    for i in range(n):
        met[i, DATA] = no_data or i == data_region
        cost[i, DATA] = 0.0 if no_data or i == data_region else egress_usd
        if latency_bound:
            ms = latency[i]
            met[i, LATENCY] = ms <= slo
            cost[i, LATENCY] = (ms - slo if math.isfinite(ms) else np.nan) if ms > slo else 0.0
        else:
            met[i, LATENCY] = True
        met[i, CARBON], cost[i, CARBON] = _near(carbon[i], carbon_low, carbon_slack)
        met[i, COST], extra = _near(price[i], price_low, cost_slack)
        cost[i, COST] = extra * gpu_h
        met[i, TEAM] = i == home
        cost[i, TEAM] = 0.0 if i == home else gpu_h
    return met, cost


@njit(cache=True)
def _lowest(values, hard):
    """The lowest known (non-NaN) value over the hard-feasible regions; NaN when none is known."""
    low = np.nan
    for i in range(len(values)):
        v = values[i]
        if hard[i] and v == v and not v >= low:
            low = v
    return low


@njit(cache=True)
def _near(value, low, slack):
    """(the value is known and at most (1 + slack) x the lowest, how far above it is); (True, 0.0) when no
    hard-feasible region knows one."""
    if low != low:
        return True, 0.0
    return value == value and value <= low * (1.0 + slack) + _SLACK, value - low

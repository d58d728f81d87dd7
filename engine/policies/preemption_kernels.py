"""The priority preemption rule (engine.policies.preemption.PriorityPreemption.choose), compiled with
numba: one pass over the running jobs instead of a dozen numpy calls, the eligible jobs kept in
cheapest-first order as they are found (lowest tier, lowest priority, latest start, then position:
np.lexsort's stable order, a NaN key after every number). Cached on disk by numba's `cache=True` (in
engine/core/jit.py's folder).
"""
from __future__ import annotations

import numpy as np

from engine.core.jit import njit
from engine.core.order_kernels import below


@njit(cache=True)
def _cheaper(tier, priority, start_s, i, p):
    """Running job i goes before job p: lower tier, then lower priority, then later start."""
    if below(tier[i], tier[p]):
        return True
    if below(tier[p], tier[i]):
        return False
    if below(priority[i], priority[p]):
        return True
    if below(priority[p], priority[i]):
        return False
    return below(-start_s[i], -start_s[p])


@njit(cache=True)
def victims(tier, priority, start_s, ran_s, preemptions, borrowing, same_holder, preemptible, guaranteed,
            req_tier, req_priority, req_guaranteed, req_reclaim, only_preemptible, reclaim, min_runtime_s,
            max_preemptions):
    """Positions of the running jobs the rule evicts for the request (req_*), cheapest first: for a
    guaranteed request every non-guaranteed job; else those of a lower tier (or the same tier and a
    lower priority), only preemptible ones when `only_preemptible`, or with `reclaim` and a reclaiming
    request those whose holder borrows (not the request's), that are not guaranteed, ran at least
    `min_runtime_s` and were evicted fewer than `max_preemptions` times."""
    out = np.empty(len(tier), np.int64)
    m = 0
    for i in range(len(tier)):
        if req_guaranteed:
            ok = not guaranteed[i]
        else:
            lower = tier[i] < req_tier or (tier[i] == req_tier and priority[i] < req_priority)
            if only_preemptible:
                lower = lower and preemptible[i]
            if reclaim and req_reclaim:
                lower = lower or (borrowing[i] and not same_holder[i])
            ok = lower and not guaranteed[i] and ran_s[i] >= min_runtime_s and preemptions[i] < max_preemptions
        if ok:  # insertion after every job that is not dearer: ties keep the lower position first
            k = m
            while k > 0 and _cheaper(tier, priority, start_s, i, out[k - 1]):
                out[k] = out[k - 1]
                k -= 1
            out[k] = i
            m += 1
    return out[:m]


@njit(cache=True)
def victims_among(jobs, tier, priority, start_s, preemptions, holder, preemptible, guaranteed, borrowing, h, now_s,
                  req_tier, req_priority, req_guaranteed, req_reclaim, only_preemptible, reclaim, min_runtime_s,
                  max_preemptions):
    """`victims` over the running `jobs` (ids), as job ids, their figures gathered from the run's per-job
    arrays in the same call: ran_s = now_s - start, same_holder = holder == h, `borrowing` per holder."""
    start, held = start_s[jobs], holder[jobs]
    return jobs[victims(tier[jobs], priority[jobs], start, now_s - start, preemptions[jobs], borrowing[held],
                        held == h, preemptible[jobs], guaranteed[jobs], req_tier, req_priority, req_guaranteed,
                        req_reclaim, only_preemptible, reclaim, min_runtime_s, max_preemptions)]

"""The availability profile's construction, searches and updates, compiled with numba (engine.policies.profile).

Each kernel works on a profile's step arrays `t` (start times, ascending) and `f` (free units from
each start), of which the first `n` entries are in use; the arrays have room for at least two more
steps (a reservation splits at most two). Arithmetic is float64 throughout, as in Python, so the
answers are the same bit for bit. Compiled on first use and cached on disk by numba's `cache=True`
(in engine/core/jit.py's folder), so a new process does not pay the compile again.
"""
from __future__ import annotations

import math

import numpy as np

from engine.core.jit import njit


@njit(cache=True)
def steps(times, free):
    """(t, f, n): the steps of `times` and `free`, keeping the last value at each run of equal times,
    in arrays with room to grow (twice the steps, at least 16)."""
    n = 0
    for i in range(len(times)):
        if i == 0 or times[i] != times[i - 1]:
            n += 1
    room = max(2 * n, 16)
    t, f = np.zeros(room), np.zeros(room)
    n = 0
    for i in range(len(times)):
        if n and t[n - 1] == times[i]:
            f[n - 1] = free[i]
        else:
            t[n] = times[i]
            f[n] = free[i]
            n += 1
    return t, f, n


@njit(cache=True)
def expected(now, free_units, end_s, units):
    """`steps` of the free units from `now` as running jobs end: `free_units` from now, plus each job's
    `units` from its end in `end_s` (clamped to now), earliest first (equal ends: given order)."""
    order = np.argsort(end_s, kind="mergesort")
    times, free = np.empty(len(order) + 1), np.empty(len(order) + 1)
    times[0], free[0] = now, free_units
    total = 0.0
    for k in range(len(order)):
        times[k + 1] = max(end_s[order[k]], now)
        total += units[order[k]]
        free[k + 1] = free_units + total
    return steps(times, free)


@njit(cache=True)
def expected_reserving(now, free_units, end_s, units, need, length):
    """`expected`, then `reserve_earliest` of `need` units for `length` (>= 0) seconds in it (the room
    `steps` leaves is at least two steps)."""
    t, f, n = expected(now, free_units, end_s, units)
    return t, f, reserve_earliest(t, f, n, need, length)


@njit(cache=True)
def earliest(t, f, n, need, length):
    """The earliest step start from which `need` units stay free for `length` (>= 0) seconds; +inf
    when there is none."""
    return earliest_from(t, f, n, 0, need, length)


@njit(cache=True)
def earliest_from(t, f, n, i, need, length):
    """`earliest` among the steps from index i on. Only the first step of each run of steps with
    enough units can be the answer: a later start in the run meets the same next short step sooner
    (so a walk that starts inside a run answers as one from its first step would)."""
    while i < n:
        if f[i] >= need:
            k = i + 1
            while k < n and f[k] >= need:
                k += 1
            if k == n or t[k] >= t[i] + length:
                return t[i]
            i = k + 1
        else:
            i += 1
    return math.inf


@njit(cache=True)
def _bisect(t, n, x, right):
    """bisect.bisect_right (right) or bisect_left of x in t[:n]."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if x < t[mid] or (not right and x == t[mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _breakpoint(t, f, n, at):
    """(index of the step starting at `at`, steps in use), splitting the step holding `at` if needed."""
    lo = _bisect(t, n, at, True)
    if t[lo - 1] == at:
        return lo - 1, n
    for k in range(n, lo, -1):
        t[k] = t[k - 1]
        f[k] = f[k - 1]
    t[lo] = at
    f[lo] = f[lo - 1]
    return lo, n + 1


@njit(cache=True)
def reserve(t, f, n, at, need, length):
    """Take `need` units from `at` (a step start or later) for `length` (>= 0) seconds; nothing when
    `at` is +inf. Returns the steps in use."""
    if math.isinf(at):
        return n
    end = at + length
    lo, n = _breakpoint(t, f, n, at)
    if math.isinf(end):
        hi = n
    else:
        hi, n = _breakpoint(t, f, n, end)
    for k in range(lo, hi):
        f[k] = f[k] - need
    return n


@njit(cache=True)
def reserve_earliest(t, f, n, need, length):
    """`reserve` at `earliest`: a skipped candidate's reservation (conservative backfilling)."""
    return reserve(t, f, n, earliest(t, f, n, need, length), need, length)


@njit(cache=True)
def scan(t, f, n, now, req, units, fits, refused, protect, passed, start, stop):
    """The walk of a backfilling pass with reservations over candidates start..stop-1 in queue order:
    one whose units are not free now (`fits` False) reserves at its earliest when it is protected
    (`protect[k]`; conservative protects every candidate, selective those whose expansion factor
    reached its threshold); one whose units are free but would dip below a reservation during
    [now, now + req) is marked `refused` and, protected, reserves at its earliest; the first the
    profile allows stops the walk, unless it is `passed` (its shape found no room this pass): that one
    is skipped, as a candidate left queued is (protected, it reserves at its earliest; not refused).
    Returns (steps in use, the stopping candidate's index or `stop`); room for two steps per candidate.

    A reservation only lowers the profile, so a candidate needing at least the units and the time
    of the last one that reserved cannot start before it: its search starts at that one's start
    (a step, made by the reservation), not at now. The answer is the same: any earlier start it
    could take would also have been open to the last one, earlier than its earliest. A candidate
    with no units here (another pool's) reserves nothing: its reservation would change no step's
    units, only split steps in two of the same units, which no search or test tells apart; skipping
    it keeps the last reservation's start, which still bounds the next search."""
    last_need, last_length, last_at = math.inf, math.inf, 0.0
    for k in range(start, stop):
        length = max(req[k], 0.0)
        if fits[k]:
            if not units[k] <= lowest(t, f, n, now, length):
                refused[k] = True
            elif not passed[k]:
                return n, k
        if protect[k] and units[k] != 0:
            need = units[k]
            if need < last_need or length < last_length:
                at = earliest(t, f, n, need, length)
            elif math.isinf(last_at):
                at = math.inf
            else:
                at = earliest_from(t, f, n, _bisect(t, n, last_at, False), need, length)
            n = reserve(t, f, n, at, need, length)
            last_need, last_length, last_at = need, length, at
    return n, stop


@njit(cache=True)
def lowest(t, f, n, now, length):
    """The fewest units free over [now, now + length) (length >= 0), the step holding `now` included
    (a zero length looks at that step only)."""
    first = max(_bisect(t, n, now, True) - 1, 0)
    last = max(_bisect(t, n, now + length, False) - 1, first)
    least = f[first]
    for k in range(first + 1, last + 1):
        if f[k] < least:
            least = f[k]
    return least

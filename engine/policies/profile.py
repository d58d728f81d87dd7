"""Free resource units over time, a step function: the availability profile of backfilling.

`Profile.expected(now_s, free_units, end_s, units)` is what a pool will have free if nothing else
starts: `free_units` from now, plus each running job's units from its expected end (start +
requested runtime, in seconds; an end already past is expected now). `earliest` finds when a job
can start without going below zero anywhere in its run; `reserve` takes its units for that run.
Units are whatever the caller counts (milli-GPU, processors, nodes), integers or floats; lengths
are seconds, +inf for a run of unknown length, never NaN.
Used by conservative backfilling (engine.policies.backfill) and the RLScheduler replay.
"""
from __future__ import annotations

import bisect
import math
from itertools import compress, count, islice, repeat
from operator import sub

import numpy as np

LARGE_STEPS = 256   # from this many steps on, a profile keeps numpy arrays instead of lists


class Profile:
    """`free[i]` units from `times[i]` (s) to `times[i + 1]`; the last step lasts for ever.

    Small profiles (an RLScheduler replay's tens of steps) are plain lists, where Python beats
    numpy's per-call overhead; once a profile reaches LARGE_STEPS steps (a conservative pass over
    thousands of queued jobs) it becomes an `_ArrayProfile`: float64 arrays and vectorised
    searches, same answers. Equal when their steps are equal. The list searches walk the steps
    with iterator chains (map, compress, islice), which run in C: a conservative pass asks
    `earliest` and `lowest` once per queued job it scans.
    """

    def __init__(self, times, free):
        self.times, self.free = [], []
        for t, f in zip(times, free):      # keep the last value at each distinct time
            if self.times and self.times[-1] == t:
                self.free[-1] = f
            else:
                self.times.append(t)
                self.free.append(f)
        if len(self.times) >= LARGE_STEPS:
            self._to_arrays()

    @classmethod
    def expected(cls, now_s: float, free_units: float, end_s, units) -> "Profile":
        """Free units from `now_s` if nothing else starts: running jobs give theirs back at their
        expected ends `end_s` (clamped to `now_s`), earliest first (equal ends: given order)."""
        end_s, units = np.asarray(end_s, np.float64), np.asarray(units)
        order = np.argsort(end_s, kind="stable")
        ends = np.maximum(end_s[order], now_s)
        free = free_units + np.cumsum(units[order])
        return cls([now_s, *ends.tolist()], [free_units, *free.tolist()])

    def __eq__(self, other) -> bool:
        return (isinstance(other, Profile) and np.array_equal(self.times, other.times)
                and np.array_equal(self.free, other.free))

    __hash__ = None

    def __repr__(self) -> str:
        return f"Profile(times={list(map(float, self.times))}, free={list(map(float, self.free))})"

    def earliest(self, need: float, length_s: float) -> float:
        """The earliest step start from which `need` units stay free for `length_s` seconds;
        +inf when there is none (more than the pool holds, or than an endless reservation leaves)."""
        times, free, n = self.times, self.free, len(self.times)
        need, length_s = float(need), max(length_s, 0.0)
        fits, short = need.__le__, need.__gt__  # free[k] >= need, free[k] < need
        i = next(compress(count(), map(fits, free)), n)  # the first step with enough units
        while i < n:
            k = next(compress(count(i + 1), map(short, islice(free, i + 1, None))), n)  # the next short step
            if k == n or times[k] >= times[i] + length_s:
                return times[i]
            i = next(compress(count(k + 1), map(fits, islice(free, k + 1, None))), n)  # no start before k works
        return math.inf

    def reserve(self, at_s: float, need: float, length_s: float) -> None:
        """Take `need` units from `at_s` (a step start or later) for `length_s` seconds; nothing
        when `at_s` is +inf."""
        if math.isinf(at_s):
            return
        end_s = at_s + max(length_s, 0.0)
        lo = self._breakpoint(at_s)
        hi = len(self.times) if math.isinf(end_s) else self._breakpoint(end_s)
        self._take(lo, hi, need)
        if len(self.times) >= LARGE_STEPS and type(self) is Profile:
            self._to_arrays()

    def lowest(self, now_s: float, length_s: np.ndarray) -> np.ndarray:
        """Per run length: the fewest units free over [now_s, now_s + length_s), the step holding
        now_s included (a zero length looks at that step only). Vectorised over `length_s`."""
        length_s = np.asarray(length_s, np.float64)
        if length_s.size == 1 and type(self.times) is list:  # one candidate (a sequential scan): no arrays
            first = max(bisect.bisect_right(self.times, now_s) - 1, 0)
            end_s = now_s + max(float(length_s.flat[0]), 0.0)
            last = max(bisect.bisect_left(self.times, end_s) - 1, first)
            return np.full(length_s.shape, float(min(islice(self.free, first, last + 1))))
        times, free = np.asarray(self.times, np.float64), np.asarray(self.free, np.float64)
        first = max(int(np.searchsorted(times, now_s, side="right")) - 1, 0)
        end_s = now_s + np.maximum(length_s, 0.0)
        last = np.maximum(np.searchsorted(times, end_s, side="left") - 1, first)
        if last.size == 1:
            return np.full(last.shape, free[first:int(last.flat[0]) + 1].min())
        return np.minimum.accumulate(free[first:])[last - first]

    def _take(self, lo: int, hi: int, need: float) -> None:
        self.free[lo:hi] = map(sub, self.free[lo:hi], repeat(need))

    def _breakpoint(self, t: float) -> int:
        """The index of the step starting at `t`, splitting the step holding `t` if needed."""
        i = bisect.bisect_right(self.times, t)
        if self.times[i - 1] != t:
            self.times.insert(i, t)
            self.free.insert(i, self.free[i - 1])
            return i
        return i - 1

    def _to_arrays(self) -> None:
        self.times, self.free = np.array(self.times, np.float64), np.array(self.free, np.float64)
        self.__class__ = _ArrayProfile


class _ArrayProfile(Profile):
    """A large profile: the same step function in float64 arrays, searched with numpy."""

    def earliest(self, need: float, length_s: float) -> float:
        # Only the first step of each run of steps with enough units can be the answer: a later
        # start in the run meets the same next short step sooner.
        edges = np.flatnonzero(np.diff(np.concatenate(([False], self.free >= need, [False]))))
        first, after = edges[::2], edges[1::2]          # a run's first step, and the step after it
        short_at = np.append(self.times, math.inf)[after]
        clear = np.flatnonzero(short_at >= self.times[first] + max(length_s, 0.0))
        return float(self.times[first[clear[0]]]) if len(clear) else math.inf

    def _take(self, lo: int, hi: int, need: float) -> None:
        self.free[lo:hi] -= need

    def _breakpoint(self, t: float) -> int:
        i = int(np.searchsorted(self.times, t, side="right"))
        if self.times[i - 1] == t:
            return i - 1
        self.times = np.concatenate((self.times[:i], (t,), self.times[i:]))
        self.free = np.concatenate((self.free[:i], self.free[i - 1:]))
        return i

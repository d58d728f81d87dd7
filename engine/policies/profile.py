"""Free resource units over time, a step function: the availability profile of backfilling.

`Profile.expected(now_s, free_units, end_s, units)` is what a pool will have free if nothing else
starts: `free_units` from now, plus each running job's units from its expected end (start +
requested runtime, in seconds; an end already past is expected now). `earliest` finds when a job
can start without going below zero anywhere in its run; `reserve` takes its units for that run.
Units are whatever the caller counts (milli-GPU, processors, nodes), as float64; lengths are
seconds, +inf for a run of unknown length, never NaN.
Used by conservative and selective backfilling (engine.policies.backfill, backfill_selective) and
the RLScheduler replay. The steps live in float64 arrays with room to grow; building them, the
searches and the updates are compiled (engine.policies.profile_kernels): a conservative pass builds
one profile and asks `earliest` and `reserve` once per queued job it scans, millions of times over a
long trace.
"""
from __future__ import annotations

import numpy as np

# engine.policies.profile_kernels, imported with the first Profile: numba costs a process about 0.2 s
# and 100 MB, which runs without a profile (most of them) need not pay
kernels = None


class Profile:
    """`free[i]` units from `times[i]` (s) to `times[i + 1]`; the last step lasts for ever. Equal
    when their steps are equal."""

    def __init__(self, times, free):
        if kernels is None:
            _load_kernels()
        self._t, self._f, self.n = kernels.steps(np.asarray(times, np.float64), np.asarray(free, np.float64))

    @property
    def times(self) -> np.ndarray:
        return self._t[:self.n]

    @property
    def free(self) -> np.ndarray:
        return self._f[:self.n]

    @classmethod
    def expected(cls, now_s: float, free_units: float, end_s, units,
                 head: tuple[float, float] | None = None) -> "Profile":
        """Free units from `now_s` if nothing else starts: running jobs give theirs back at their
        expected ends `end_s` (clamped to `now_s`), earliest first (equal ends: given order); with
        `head` (units, length in s), that reservation made at its earliest (`reserve_earliest`) in the
        same compiled call."""
        if kernels is None:
            _load_kernels()
        profile = cls.__new__(cls)
        end_s, units = np.asarray(end_s, np.float64), np.asarray(units, np.float64)
        if head is None:
            profile._t, profile._f, profile.n = kernels.expected(float(now_s), float(free_units), end_s, units)
        else:
            profile._t, profile._f, profile.n = kernels.expected_reserving(
                float(now_s), float(free_units), end_s, units, float(head[0]), max(float(head[1]), 0.0))
        return profile

    def __eq__(self, other) -> bool:
        return (isinstance(other, Profile) and np.array_equal(self.times, other.times)
                and np.array_equal(self.free, other.free))

    __hash__ = None

    def __repr__(self) -> str:
        return f"Profile(times={self.times.tolist()}, free={self.free.tolist()})"

    def earliest(self, need: float, length_s: float) -> float:
        """The earliest step start from which `need` units stay free for `length_s` seconds;
        +inf when there is none (more than the pool holds, or than an endless reservation leaves)."""
        return float(kernels.earliest(self._t, self._f, self.n, float(need), max(float(length_s), 0.0)))

    def reserve(self, at_s: float, need: float, length_s: float) -> None:
        """Take `need` units from `at_s` (a step start or later) for `length_s` seconds; nothing
        when `at_s` is +inf."""
        self._room()
        self.n = kernels.reserve(self._t, self._f, self.n, float(at_s), float(need), max(float(length_s), 0.0))

    def reserve_earliest(self, need: float, length_s: float) -> None:
        """`reserve` at `earliest` in one step (a skipped candidate's reservation)."""
        self._room()
        self.n = kernels.reserve_earliest(self._t, self._f, self.n, float(need), max(float(length_s), 0.0))

    def scan(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, fits: np.ndarray, refused: np.ndarray,
             protect: np.ndarray, passed: np.ndarray, start: int, stop: int) -> int:
        """The walk of a backfilling pass with reservations over candidates start..stop-1
        (engine.policies.profile_kernels.scan): the protected candidates passed over reserve at their
        earliest; the index of the first not `passed` whose units are free now and that the profile
        allows (stop: none)."""
        self._room(2 * max(stop - start, 0))
        self.n, k = kernels.scan(self._t, self._f, self.n, float(now_s), requested_s, units, fits, refused, protect,
                                 passed, start, stop)
        return int(k)

    def lowest_one(self, now_s: float, length_s: float) -> float:
        """The fewest units free over [now_s, now_s + length_s), the step holding now_s included."""
        return float(kernels.lowest(self._t, self._f, self.n, float(now_s), max(float(length_s), 0.0)))

    def lowest(self, now_s: float, length_s: np.ndarray) -> np.ndarray:
        """`lowest_one` per run length, vectorised over `length_s`."""
        length_s = np.asarray(length_s, np.float64)
        if length_s.size == 1:
            return np.full(length_s.shape, self.lowest_one(now_s, float(length_s.flat[0])))
        times, free = self.times, self.free
        first = max(int(np.searchsorted(times, now_s, side="right")) - 1, 0)
        end_s = now_s + np.maximum(length_s, 0.0)
        last = np.maximum(np.searchsorted(times, end_s, side="left") - 1, first)
        return np.minimum.accumulate(free[first:])[last - first]

    def _room(self, steps: int = 2) -> None:
        """At least `steps` free slots at the end (a reservation adds at most two steps)."""
        if self.n + steps > len(self._t):
            grow = max(len(self._t), steps)
            self._t = np.concatenate((self._t, np.zeros(grow)))
            self._f = np.concatenate((self._f, np.zeros(grow)))


def _load_kernels() -> None:
    global kernels
    from engine.policies import profile_kernels
    kernels = profile_kernels

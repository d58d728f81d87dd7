"""Calibrated runtime intervals: the P10-P90 interval made to cover 80 % of runtimes, also as the
workload drifts.

Two steps, each on the log of runtime (seconds, floored at 1 s), each side of the interval on its own
(10 % of runtimes should fall below the P10 and 10 % above the P90, so that the bounds keep their
meaning, not only the 80 % between them):

1. **Split conformal (CQR; Romano, Patterson and Candes, NeurIPS 2019)** at training: the interval's
   quantile models are fitted on the older part of the training rows and scored on the newest
   `CALIBRATION_SHARE` of them (time-ordered, never shuffled). Scores are how far a runtime falls
   outside its bound (`lower score = ln P10 - ln runtime`, `upper score = ln runtime - ln P90`;
   negative inside); each side's offset is the ceil((n + 1)(1 - alpha / 2)) / n empirical quantile of
   its scores, so that, were the future like the calibration rows, each bound would be crossed by at
   most alpha / 2 of runtimes. The calibrated bound is `P10 x exp(-offset_lo)` and `P90 x exp(offset_hi)`.

2. **Online quantile tracking (Angelopoulos, Candes and Tibshirani, "Conformal PID control", NeurIPS
   2023)** afterwards: the future is often not like the calibration rows (on HPC2N the newest 20 % of
   training covered 37 %). As jobs finish, in the order they end, each side's offset moves by
   `step x (missed - alpha / 2)` (missed = 1 when that job's runtime fell beyond the bound its own
   prediction gave, with the offsets in force at its submit), so it widens after misses and narrows
   while runtimes fall inside. The offsets stay within the scores' range B, and their total movement
   is step x (misses - alpha / 2 x T), so whatever the drift the share of the T predictions beyond each
   bound is within B / (step x T) of alpha / 2: the long-run coverage guarantee. A job's interval uses
   the offsets after every job that ended at or before its submit (the same "finished before" rule as
   the features, so a prediction never sees the future).

The step trades how fast the offsets follow a change against how far a burst of jobs predicted with
the same stale offsets pushes them: on the held-out 30 % of CTC-SP2, KTH-SP2, HPC2N and the sample,
steps of 0.005 to 0.02 all kept the coverage within 79-80 %, with median P90 / P10 widths growing
with the step (CTC-SP2 37x at 0.005, 40x at 0.01, 44x at 0.02; 0.1 gave 106x); 0.01 is the step
(benchmarks/RESULTS.md, issue 30).
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.2               # 1 - nominal coverage of the P10-P90 interval
CALIBRATION_SHARE = 0.2   # newest share of the training rows that calibrates (not fitted on)
STEP = 0.01               # online step, ln units per unit of (missed - alpha / 2); see the docstring
MIN_CALIBRATION = 20      # fewer calibration rows than this: no split step (offsets 0)


@dataclass(frozen=True)
class Offsets:
    """How far each bound is moved outward, in ln(seconds) (negative: inward)."""

    lower: float = 0.0
    upper: float = 0.0


def scores(low_log: np.ndarray, high_log: np.ndarray, actual_log: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower scores, upper scores) of runtimes against their raw bounds, all in ln(seconds)."""
    return np.asarray(low_log) - np.asarray(actual_log), np.asarray(actual_log) - np.asarray(high_log)


def split_offsets(low_log: np.ndarray, high_log: np.ndarray, actual_log: np.ndarray,
                  alpha: float = ALPHA) -> Offsets:
    """Step 1: each side's finite-sample conformal quantile of the calibration rows' scores (Offsets()
    with fewer than MIN_CALIBRATION rows)."""
    lower, upper = scores(low_log, high_log, actual_log)
    n = len(lower)
    if n < MIN_CALIBRATION:
        return Offsets()
    k = min(n, math.ceil((n + 1) * (1 - alpha / 2)))   # the k-th smallest score
    return Offsets(float(np.sort(lower)[k - 1]), float(np.sort(upper)[k - 1]))


@dataclass(frozen=True)
class Track:
    """Step 2's offsets as a step function of time: after the k-th outcome (at `end_s[k]`, ascending),
    the offsets are `lower[k]`, `upper[k]`; before the first, `start`."""

    start: Offsets
    end_s: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def at(self, when_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) offsets in force at each time: after every outcome that ended at or before it."""
        when = np.asarray(when_s, dtype=np.float64)
        if not len(self.end_s):
            return np.full(when.shape, self.start.lower), np.full(when.shape, self.start.upper)
        k = np.searchsorted(self.end_s, when, side="right") - 1
        return (np.where(k >= 0, self.lower[np.maximum(k, 0)], self.start.lower),
                np.where(k >= 0, self.upper[np.maximum(k, 0)], self.start.upper))

    @property
    def last(self) -> Offsets:
        """The offsets after the last outcome."""
        return Offsets(float(self.lower[-1]), float(self.upper[-1])) if len(self.end_s) else self.start


def track(start: Offsets, low_log: np.ndarray, high_log: np.ndarray, actual_log: np.ndarray, end_s: np.ndarray,
          submit_s: np.ndarray, middle_log: np.ndarray | None = None, alpha: float = ALPHA,
          step: float = STEP) -> Track:
    """Step 2 over outcomes (their raw bounds, runtimes, end and submit times, any order; NaN times are
    left out), starting from `start`. A job's miss is judged against the bound its own prediction showed:
    the offsets in force at its submit, the bounds kept on their side of `middle_log` (the P50, when the
    model has one) and the lower one at least ln 1 s, as `RuntimeModel.predict` keeps them; so the
    long-run share of shown intervals missed on each side is alpha / 2 although outcomes arrive only as
    jobs end."""
    lower, upper = scores(low_log, high_log, actual_log)
    end, submit = np.asarray(end_s, dtype=np.float64), np.asarray(submit_s, dtype=np.float64)
    keep = np.isfinite(end) & np.isfinite(submit) & np.isfinite(lower) & np.isfinite(upper)
    order = np.flatnonzero(keep)[np.argsort(end[keep], kind="stable")]
    low, high, actual = (np.asarray(a, dtype=np.float64)[order] for a in (low_log, high_log, actual_log))
    middle = np.asarray(middle_log, dtype=np.float64)[order] if middle_log is not None else None
    ends = end[order].tolist()
    path_lo, path_hi = [start.lower], [start.upper]   # path[k + 1]: after the k-th outcome
    lo, hi, half = start.lower, start.upper, alpha / 2
    for i, at in enumerate(submit[order].tolist()):
        used = bisect.bisect_right(ends, at, 0, i)   # outcomes this job's prediction had seen
        shown_lo, shown_hi = low[i] - path_lo[used], high[i] + path_hi[used]
        if middle is not None:
            shown_lo, shown_hi = min(shown_lo, middle[i]), max(shown_hi, middle[i])
        lo += step * ((actual[i] < max(shown_lo, 0.0)) - half)
        hi += step * ((actual[i] > shown_hi) - half)
        path_lo.append(lo)
        path_hi.append(hi)
    return Track(start, end[order], np.array(path_lo[1:]), np.array(path_hi[1:]))


def widen(low_s: np.ndarray, high_s: np.ndarray, lower: np.ndarray | float,
          upper: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """The calibrated bounds in seconds: P10 x exp(-lower), P90 x exp(upper)."""
    return np.asarray(low_s) * np.exp(-np.asarray(lower)), np.asarray(high_s) * np.exp(np.asarray(upper))

"""Run-time predictions and corrections of the EASY family (the SC'15 experiment's schedulers).

Predictors, evaluated when a job is submitted (whole seconds, at least 1):
- request: the user's requested time (EASY, EASY-SJBF);
- double: twice the requested time (Tsafrir, Etsion and Feitelson's "doubling", TPDS 2007);
- clairvoyant: the actual run time (a bound no real scheduler reaches);
- tsafrir: the mean of the user's last two completed run times (floored), at most the request; the
  request while the user has fewer than two completed jobs (EASY++, Tsafrir et al., TPDS 2007);
- given: a prediction per job computed before the run (`given`, by job index in log order): the
  walk-forward runtime model of `backfill_learned`.
Correctors, when a running job reaches its prediction and is still running (n = the correction's
number, from 1):
- request: the requested time;
- double: twice the current prediction (recursive doubling);
- tsafrir: the first prediction plus 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h,
  100 h for n = 1, 2, ..., at most the request (the request after that).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

TSAFRIR_STEPS_S = (0, 60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000)

Corrector = Callable[[int, int, int, int], int]   # (current prediction, first, request, n) -> new prediction


@dataclass
class Predictor:
    """A predictor by name; `fresh()` gives one with no history, for one simulation."""

    name: str
    given: tuple[int, ...] | None = field(default=None, repr=False)
    _last: dict[int, int] = field(default_factory=dict, repr=False)
    _previous: dict[int, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.name not in PREDICTORS:
            raise ValueError(f"unknown predictor {self.name!r}; choose from {', '.join(PREDICTORS)}")
        if (self.name == "given") != (self.given is not None):
            raise ValueError("the 'given' predictor needs its predictions (`given`), and only it takes them")

    def fresh(self) -> Predictor:
        return Predictor(self.name, self.given)

    def predict(self, run: int, requested: int, user: int, job: int = -1) -> int:
        """The prediction for a job submitted now (`run`: its actual run time, for the clairvoyant;
        `job`: its index in log order, for the given predictions)."""
        if self.name == "given":
            return self.given[job]
        if self.name == "request":
            return requested
        if self.name == "double":
            return 2 * requested
        if self.name == "clairvoyant":
            return run
        if user in self._previous:
            return max(1, min(requested, (self._last[user] + self._previous[user]) // 2))
        return requested

    def observe(self, user: int, run: int) -> None:
        """A job of `user` completed after `run` seconds (only the tsafrir predictor learns)."""
        if self.name == "tsafrir":
            if user in self._last:
                self._previous[user] = self._last[user]
            self._last[user] = run


PREDICTORS = ("request", "double", "clairvoyant", "tsafrir", "given")


def correct_request(current: int, first: int, requested: int, n: int) -> int:
    return requested


def correct_double(current: int, first: int, requested: int, n: int) -> int:
    return 2 * current


def correct_tsafrir(current: int, first: int, requested: int, n: int) -> int:
    if n >= len(TSAFRIR_STEPS_S):
        return requested
    return min(first + TSAFRIR_STEPS_S[n], requested)


CORRECTORS: dict[str, Corrector] = {"request": correct_request, "double": correct_double, "tsafrir": correct_tsafrir}

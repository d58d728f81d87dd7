"""The largest x at which a run still holds the service level: bracketing, then bisection.

`largest_passing(holds, tolerance)` asks `holds(x)` first at x = 1, then steps by STEP (x 1.5 up
while it holds, / 1.5 down while it does not) until the answer flips, which brackets the answer
between a passing x and a failing one; bisection then halves the bracket until it is narrower
than `tolerance` x the passing end, and the passing end is the answer. X stays within [1 / LIMIT,
LIMIT]; an answer at a limit is reported as `bounded` ("at least 16" or "below 1/16").

The answer assumes `holds` is monotone (holds for every x below one where it holds). Bracketing and
bisection alone never ask a point that could contradict it, so the search asks one more: a step
above the first failing x, which must fail too. Every point asked is kept; `monotone` is False when
some failing x lies below a passing one, and the answer is then the bisection's, which a planner
should read with care (the search says so).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

STEP = 1.5
LIMIT = 16.0
DEFAULT_TOLERANCE = 0.02


@dataclass(frozen=True)
class Point:
    """One evaluation: x, whether the level held, and what broke it ("" when it held)."""

    x: float
    held: bool
    worst: str = ""


@dataclass(frozen=True)
class Search:
    """The largest passing x found, every point asked (in order), and how far to trust it."""

    value: float
    points: tuple[Point, ...]
    monotone: bool
    bounded: bool

    @property
    def evaluations(self) -> int:
        return len(self.points)


def largest_passing(holds: Callable[[float], Point], tolerance: float = DEFAULT_TOLERANCE) -> Search:
    """See the module docstring; `holds(x)` returns the Point of x."""
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance must be in (0, 1), got {tolerance}")
    points: list[Point] = []

    def ask(x: float) -> bool:
        point = holds(x)
        points.append(point)
        return point.held

    x = 1.0
    if ask(x):
        lo, hi = x, None
        while hi is None and lo * STEP <= LIMIT + 1e-9:
            x = lo * STEP
            if ask(x):
                lo = x
            else:
                hi = x
    else:
        lo, hi = None, x
        while lo is None and hi / STEP >= 1 / LIMIT - 1e-12:
            x = hi / STEP
            if ask(x):
                lo = x
            else:
                hi = x
    if lo is None or hi is None:
        return Search(lo if lo is not None else hi, tuple(points), _monotone(points), True)
    first_failure = hi
    while hi - lo > tolerance * lo:
        x = (lo + hi) / 2
        if ask(x):
            lo = x
        else:
            hi = x
    if first_failure * STEP <= LIMIT + 1e-9 and not any(p.x > first_failure for p in points):
        ask(first_failure * STEP)   # the check of monotonicity: above a failure it must fail
    return Search(lo, tuple(points), _monotone(points), False)


def _monotone(points: list[Point]) -> bool:
    """No failing x below a passing one."""
    passing = [p.x for p in points if p.held]
    failing = [p.x for p in points if not p.held]
    return not passing or not failing or min(failing) > max(passing)

"""Selective backfilling (Srinivasan, Kettimuthu, Subramani and Sadayappan, "Selective reservation
strategies for backfill job scheduling", JSSPP 2002): a waiting job gets a reservation only once it
needs one.

A job's expansion factor is (wait + requested runtime) / requested runtime. At each pass the head and
every candidate whose expansion factor has reached the threshold are protected: in queue order, each
protected job that cannot start now reserves the earliest time its units stay free for its requested
runtime (as under conservative backfilling), so no job behind it may delay it. An unprotected job
holds nothing: any job behind it that fits now may start. The threshold is `threshold_x`, or with
`adaptive` the mean expansion factor at start of the region's last 50 started jobs (the paper's
adaptive threshold: the running average slowdown; `threshold_x` until a job has started). Starvation
is bounded: a waiting job's expansion factor grows with its wait until it is protected.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from engine.policies.backfill import FAMILY, compiled, flags
from engine.policies.backfill_order import Waiting
from engine.policies.profile import Profile
from engine.policies.registry import register


@dataclass
class SelectiveWindow:
    """The free units over time with the protected jobs' reservations; sequential, in queue order.
    Before `plan` (or with no candidates) nothing is protected; `at` is the candidate the last
    `scan` stopped at, whose start or skip comes next."""

    sequential: ClassVar[bool] = True
    by_pool: ClassVar[bool] = False
    profile: Profile
    threshold_x: float
    head_units: float
    adaptive: bool = False
    protect: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), compare=False)  # set by `plan`
    at: int = -1
    limit: int = 0

    @property
    def wants_recent(self) -> bool:
        return self.adaptive

    def plan(self, now_s: float, waiting: Waiting) -> tuple["SelectiveWindow", np.ndarray]:
        threshold = waiting.recent_xfactor if self.adaptive and math.isfinite(waiting.recent_xfactor) \
            else self.threshold_x
        rule = compiled("selective_kernels")
        if rule.expansion(float(waiting.head_wait_s), float(waiting.head_requested_s)) >= threshold:
            self.profile.reserve_earliest(self.head_units, waiting.head_requested_s)
        self.protect = rule.protected(np.asarray(waiting.wait_s, np.float64),
                                      np.asarray(waiting.requested_s, np.float64), float(threshold))
        return self, np.arange(len(waiting.requested_s))

    def allows(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, pools=None) -> np.ndarray:
        return np.asarray(units) <= self.profile.lowest(now_s, requested_s)

    def after_start(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "SelectiveWindow":
        self.profile.reserve(now_s, units, requested_s)
        return self

    def after_skip(self, now_s: float, requested_s: float, units: float, pool: int = 0) -> "SelectiveWindow":
        if 0 <= self.at < len(self.protect) and self.protect[self.at]:
            self.profile.reserve_earliest(units, requested_s)
        return self

    def scan(self, now_s: float, requested_s: np.ndarray, units: np.ndarray, fits: np.ndarray, refused: np.ndarray,
             start: int, stop: int, passed: np.ndarray | None = None) -> int:
        """From `start`, the first candidate not `passed` whose units are free now and stay free for its run
        around the reservations; the protected ones passed over reserve, the refused are marked."""
        self.at = self.profile.scan(now_s, requested_s, units, fits, refused, self.protect,
                                    flags(len(fits), False) if passed is None else passed, start, stop)
        return self.at


@register(FAMILY, "selective")
@dataclass(frozen=True)
class SelectiveBackfill:
    """Selective backfilling (Srinivasan et al., JSSPP 2002): a reservation only for the jobs whose
    expansion factor (wait + requested) / requested has reached `threshold_x` (or, `adaptive`, the
    running mean expansion factor of recently started jobs); the others may be overtaken by any job
    that fits now. See this module's docstring."""

    threshold_x: float = field(default=2.0, metadata={
        "unit": "x", "min": 1.0, "max": 1e6,
        "help": "expansion factor (wait + requested) / requested from which a job is protected"})
    adaptive: bool = field(default=False, metadata={
        "help": "threshold = mean expansion factor of the last 50 started jobs"})

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> SelectiveWindow:
        profile = Profile.expected(now_s, float(free_units), running_end_s, np.asarray(running_units, np.float64))
        return SelectiveWindow(profile, self.threshold_x, float(head_units), self.adaptive)

"""Timing policies (family "timing"): how long a job is held back at submit (load shifting).

Every policy has one method, `delay(job, view, now_s) -> seconds >= 0`: the simulator queues the
job at now + delay (decision "deferred" in the log), in the region the router picks then; the
job's wait counts from its submit. `view` is a `TimingView` (engine.core.views) of the job's
region. The simulator never lets a delay pass `view.latest_start_s` (deadline minus requested
runtime). Only flexible work (training, batch, HPO: `job.flexible`) is ever held back; the others
get 0. A policy that never delays registers with the trait `inert=True` (the simulator skips timing).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.core.views import RouteRequest, TimingView
from engine.policies.registry import register

FAMILY = "timing"


def _check(policy, name: str, low: float, high: float) -> None:
    value = getattr(policy, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"timing policy {policy.registry_key!r}: {name} must be between {low:g} and {high:g}, "
                         f"got {value!r}")


def _horizon(view: TimingView, max_delay_h: float) -> int:
    """How many candidates lie within max_delay_h of now."""
    return int(view.start_s.searchsorted(view.start_s[0] + max_delay_h * 3600.0, side="right"))


def _lowest_start(values: np.ndarray, view: TimingView, now_s: float, max_delay_h: float, min_saving_pct: float,
                  slack_pct: float = 0.0) -> float:
    """The delay to the candidate start within `max_delay_h` with the lowest of `values` (ties: the
    earliest), when it saves at least `min_saving_pct` (less `slack_pct`) against starting now; else 0."""
    within = values[:_horizon(view, max_delay_h)]
    best = int(within.argmin())  # the array methods: a held job asks once, about 70,000 times on the sample
    first = float(within[0])
    saving = 1.0 - float(within[best]) / first if first > 0 else 0.0
    return float(view.start_s[best] - now_s) if saving * 100.0 >= min_saving_pct - slack_pct else 0.0


@register(FAMILY, "immediate", inert=True)
@dataclass(frozen=True)
class Immediate:
    """No load shifting: every job queues at its submit time (the default)."""

    def delay(self, job: RouteRequest, view: TimingView, now_s: float) -> float:
        return 0.0


@register(FAMILY, "lowest-carbon-hour")
@dataclass(frozen=True)
class LowestCarbonHour:
    """Carbon-aware time shift: hold a flexible job back to the candidate start, within
    `max_delay_h`, with the lowest mean grid intensity over its requested runtime; only when that
    saves at least `min_saving_pct` against starting now (ties: the earliest)."""

    max_delay_h: float = field(default=12.0, metadata={"help": "hold a job back at most this many hours, 0-168"})
    min_saving_pct: float = field(default=10.0, metadata={
        "help": "hold back only to save at least this share of the job's carbon, 0-100 %"})

    def __post_init__(self) -> None:
        _check(self, "max_delay_h", 0.0, 168.0)
        _check(self, "min_saving_pct", 0.0, 100.0)

    def delay(self, job: RouteRequest, view: TimingView, now_s: float) -> float:
        if not job.flexible or not len(view.start_s):
            return 0.0
        return _lowest_start(view.g_co2e_per_kwh, view, now_s, self.max_delay_h, self.min_saving_pct)


@register(FAMILY, "off-peak")
@dataclass(frozen=True)
class OffPeak:
    """Price-aware time shift: hold a flexible job back to the candidate start, within `max_delay_h`,
    with the lowest mean price over its requested runtime (off-peak windows: engine.world.offpeak);
    only when that saves at least `min_saving_pct` against starting now (ties: the earliest)."""

    max_delay_h: float = field(default=12.0, metadata={"help": "hold a job back at most this many hours, 0-168"})
    min_saving_pct: float = field(default=10.0, metadata={
        "help": "hold back only to save at least this share of the job's GPU price, 0-100 %"})

    def __post_init__(self) -> None:
        _check(self, "max_delay_h", 0.0, 168.0)
        _check(self, "min_saving_pct", 0.0, 100.0)

    def delay(self, job: RouteRequest, view: TimingView, now_s: float) -> float:
        if not job.flexible or not len(view.start_s) or view.price_factor is None:
            return 0.0
        return _lowest_start(view.price_factor, view, now_s, self.max_delay_h, self.min_saving_pct, slack_pct=1e-9)


@register(FAMILY, "off-hours")
@dataclass(frozen=True)
class OffHours:
    """Peak shaving: a flexible job submitted while its region is at work waits for the region's
    next off-hours start, if that comes within `max_delay_h` (else it queues now)."""

    max_delay_h: float = field(default=12.0, metadata={"help": "hold a job back at most this many hours, 0-168"})

    def __post_init__(self) -> None:
        _check(self, "max_delay_h", 0.0, 168.0)

    def delay(self, job: RouteRequest, view: TimingView, now_s: float) -> float:
        if not job.flexible or not len(view.start_s) or not view.at_work[0]:
            return 0.0
        free = np.flatnonzero(~view.at_work[:_horizon(view, self.max_delay_h)])
        return float(view.start_s[free[0]] - now_s) if len(free) else 0.0

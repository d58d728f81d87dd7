"""Backfilling policies (family "backfill"): may a job behind a blocked head start now?

Every policy has one method, `window(head_units, free_units, running_end_s, running_units,
now_s) -> Window | None`. The simulator calls it when the queue's head does not fit; None means
"no backfilling this pass". A `Window` is the head job's reservation: a candidate further back
may start when it fits now (the simulator checks that by placing it) and `Window.allows` it.

Units are resource units of the head job's resource pool (milli-GPU of the GPU models the head
may use; processors in SWF replays); `running_end_s` are the running jobs' expected ends, start +
requested runtime (never the true runtime), seconds from time 0.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.policies.registry import register

FAMILY = "backfill"


@dataclass(frozen=True)
class Window:
    """The head's reservation: it starts at `shadow_s`; `extra_units` are free then beyond its need."""

    shadow_s: float
    extra_units: float

    def allows(self, now_s: float, requested_s: np.ndarray, units: np.ndarray) -> np.ndarray:
        """Candidates that cannot delay the head: done by the shadow time, or small enough for the extra."""
        return (now_s + requested_s <= self.shadow_s) | (units <= self.extra_units)

    def after_start(self, now_s: float, requested_s: float, units: float) -> "Window":
        """The window once a candidate started: one that outlives the shadow time uses up extra."""
        if now_s + requested_s <= self.shadow_s:
            return self
        return replace(self, extra_units=self.extra_units - units)


@register(FAMILY, "none")
@dataclass(frozen=True)
class NoBackfill:
    """No backfilling: a blocked head blocks everyone behind it."""

    def window(self, head_units, free_units, running_end_s, running_units, now_s) -> Window | None:
        return None


@register(FAMILY, "easy")
@dataclass(frozen=True)
class EasyBackfill:
    """EASY (Lifka 1995; Mu'alem and Feitelson 2001): one reservation, for the head job.

    The shadow time is when enough running jobs will have ended (by their requested runtimes) for
    the head to fit; the extra units are what is free at the shadow time beyond the head's need.
    A candidate may start if it fits now and either ends by the shadow time or fits in the extra.
    If the head cannot be satisfied even when every running job ends, the shadow time is +inf.
    """

    def window(self, head_units, free_units, running_end_s, running_units, now_s) -> Window | None:
        if free_units >= head_units:
            return Window(now_s, free_units - head_units)
        order = np.argsort(running_end_s, kind="stable")  # equal ends: earlier slot first
        available = free_units + np.cumsum(np.asarray(running_units, np.float64)[order])
        enough = np.flatnonzero(available >= head_units)
        if not len(enough):
            return Window(float("inf"), 0.0)
        first = enough[0]
        shadow = max(float(np.asarray(running_end_s)[order[first]]), now_s)
        return Window(shadow, float(available[first] - head_units))

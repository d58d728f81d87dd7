"""Lookahead backfilling (Shmueli and Feitelson, "Backfilling with lookahead to optimize the packing
of parallel jobs", JPDC 65(9), 2005; their LOS algorithm): fill the hole with the set of jobs that
uses it best, chosen by dynamic programming, not greedily.

The head's reservation is EASY's (shadow time, extra units). Among the first `max_candidates` waiting
jobs behind the head whose units are free now, the pass picks the set that uses the most units now,
subject to (1) their units fitting in the free units and (2) the units of those that would still run
at the shadow time (now + requested runtime > shadow) fitting in the extra units, so the head is not
delayed: a two-constraint 0-1 knapsack, solved exactly on a grid of units (their greatest common
divisor, or free units / MAX_CELLS when that is finer: jobs rounded up, room rounded down, so every
chosen set is feasible). Equal totals keep the set of earlier jobs. Only the chosen jobs are tried,
in queue order; candidates of other pools (0 units here) after them. Cost per decision: O(n x C x E)
for n candidates, C cells of free units and E cells of extra units (at most 50 x 129 x 129), in one
compiled call (engine.policies.lookahead_kernels).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.policies.backfill import FAMILY, EasyBackfill, Window, compiled
from engine.policies.backfill_order import Waiting
from engine.policies.registry import register


@dataclass(frozen=True)
class LookaheadWindow(Window):
    """EASY's window whose candidates `plan` narrows to the best-filling set (`best_set`)."""

    max_candidates: int = 50

    def plan(self, now_s: float, waiting: Waiting) -> tuple[Window, np.ndarray]:
        """The best-filling set (engine.policies.lookahead_kernels.best_set), then the 0-unit candidates."""
        units = np.asarray(waiting.units, np.float64)
        requested_s = np.asarray(waiting.requested_s, np.float64)
        return self, compiled("lookahead_kernels").order(units, requested_s, float(now_s), float(self.shadow_s),
                                                         float(waiting.free_units), float(self.extra_units),
                                                         self.max_candidates)


@register(FAMILY, "lookahead")
@dataclass(frozen=True)
class LookaheadBackfill:
    """Lookahead backfilling (Shmueli and Feitelson, JPDC 2005, LOS): EASY's reservation, and the set of
    candidates that best fills the hole without delaying it, by dynamic programming over the first
    `max_candidates`. See the module docstring for the definition and its cost."""

    max_candidates: int = field(default=50, metadata={"unit": "jobs", "min": 1, "max": 1000,
                                                      "help": "waiting jobs the dynamic programme considers"})

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> LookaheadWindow:
        easy = EasyBackfill().window(head_units, free_units, running_end_s, running_units, now_s,
                                     head_requested_s=head_requested_s, head_pool=head_pool)
        return LookaheadWindow(easy.shadow_s, easy.extra_units, self.max_candidates)

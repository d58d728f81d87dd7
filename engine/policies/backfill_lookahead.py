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
for n candidates, C cells of free units and E cells of extra units (at most 50 x 129 x 129).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.policies.backfill import FAMILY, EasyBackfill, Window
from engine.policies.backfill_order import Waiting
from engine.policies.registry import register

MAX_CELLS = 128


def best_set(units: np.ndarray, long: np.ndarray, free: float, extra: float) -> list[int]:
    """Positions of the set of jobs with the most total units such that all fit in `free` and the
    `long` ones fit in `extra` (both constraints on a grid; see the module docstring)."""
    units = np.asarray(units, np.float64)
    if not len(units) or free <= 0:
        return []
    extra = min(max(extra, 0.0), free)
    sizes = np.concatenate([units, [free]])
    whole = np.round(sizes).astype(np.int64)
    step = float(np.gcd.reduce(whole[whole > 0])) if np.array_equal(whole, sizes) else 1.0
    step = max(step, free / MAX_CELLS)
    cells = np.ceil(units / step - 1e-9).astype(np.int64)
    room, spare = int(free / step + 1e-9), int(extra / step + 1e-9)
    value = np.full((room + 1, spare + 1), 0.0)
    took = np.zeros((len(units), room + 1, spare + 1), bool)
    for i, (c, u) in enumerate(zip(cells.tolist(), units.tolist())):
        e = c if long[i] else 0
        if c > room or e > spare:
            continue
        candidate = np.full_like(value, -1.0)
        candidate[c:, e:] = value[:room + 1 - c, :spare + 1 - e] + u
        better = candidate > value
        took[i] = better
        value = np.where(better, candidate, value)
    chosen, r, s = [], room, spare
    for i in range(len(units) - 1, -1, -1):
        if took[i, r, s]:
            chosen.append(i)
            r -= cells[i]
            s -= cells[i] if long[i] else 0
    return sorted(chosen)


@dataclass(frozen=True)
class LookaheadWindow(Window):
    """EASY's window whose candidates `plan` narrows to the best-filling set (`best_set`)."""

    max_candidates: int = 50

    def plan(self, now_s: float, waiting: Waiting) -> tuple[Window, np.ndarray]:
        units = np.asarray(waiting.units, np.float64)
        here = np.flatnonzero((units > 0) & (units <= waiting.free_units))[:self.max_candidates]
        long = now_s + np.asarray(waiting.requested_s)[here] > self.shadow_s
        chosen = here[best_set(units[here], long, waiting.free_units, self.extra_units)]
        return self, np.concatenate([chosen, np.flatnonzero(units == 0)]).astype(np.int64)


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

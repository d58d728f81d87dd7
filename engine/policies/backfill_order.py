"""The order in which a backfill pass tries its candidates, and what a window may see of them.

By default the simulator tries the candidates behind a blocked head in queue order. A window with a
`plan(now_s, waiting) -> (window, order)` method is shown the waiting jobs first (`Waiting`: the head
and the candidates, their waits, requested runtimes, units and priorities) and returns the window to
use and the candidates to try, as positions into the candidates in the order to try them; a position
left out is not tried this pass (lookahead's unchosen jobs). The orders (`ORDERS`):

- "fcfs": queue order (textbook EASY);
- "shortest": shortest requested runtime first, SJBF (Tsafrir, Etsion and Feitelson 2007; Gaussier
  et al. SC'15's EASY-SJBF);
- "smallest": fewest units first;
- "best-fit": the candidate that leaves the fewest units free now first (units closest to the free
  units, among those that fit; those that do not fit last);
- "priority": highest priority first, then longest waiting (list scheduling's order, with aging).
Ties keep queue order (stable sorts), so every order is deterministic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.policies.backfill import FAMILY, EasyBackfill, Window
from engine.policies.registry import register

ORDERS = ("fcfs", "shortest", "smallest", "best-fit", "priority")


@dataclass(frozen=True)
class Waiting:
    """The blocked head and the candidates behind it in queue order, as a backfill pass sees them.
    Units are of the head's pool (a candidate of another pool counts 0); `free_units` are free now in
    that pool; `recent_xfactor` is the mean expansion factor (wait + requested) / requested at start of
    the region's most recently started jobs (NaN: none started yet)."""

    head_wait_s: float
    head_requested_s: float
    wait_s: np.ndarray
    requested_s: np.ndarray
    units: np.ndarray
    priority: np.ndarray
    free_units: float
    recent_xfactor: float = float("nan")


def check_order(order: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")


def candidate_order(order: str, waiting: Waiting) -> np.ndarray:
    """Positions of the candidates in the order `order` tries them (a permutation, stable)."""
    n = len(waiting.requested_s)
    if order == "fcfs":
        return np.arange(n)
    if order == "shortest":
        return np.argsort(waiting.requested_s, kind="stable")
    if order == "smallest":
        return np.argsort(waiting.units, kind="stable")
    if order == "best-fit":
        left = waiting.free_units - np.asarray(waiting.units, np.float64)
        return np.argsort(np.where(left >= 0, left, np.inf), kind="stable")
    return np.lexsort((-np.asarray(waiting.wait_s, np.float64), -np.asarray(waiting.priority, np.float64)))


@dataclass(frozen=True)
class OrderedWindow(Window):
    """EASY's window whose candidates are tried in `order` (ORDERS) rather than queue order."""

    order: str = "fcfs"

    def plan(self, now_s: float, waiting: Waiting) -> tuple[Window, np.ndarray]:
        return self, candidate_order(self.order, waiting)


@register(FAMILY, "easy-sjbf")
@dataclass(frozen=True)
class EasySjbf(EasyBackfill):
    """EASY whose candidates are tried in a chosen order; EASY-SJBF by default: shortest requested
    runtime first (Tsafrir, Etsion and Feitelson, "Backfilling using system-generated predictions
    rather than user runtime estimates", IEEE TPDS 18(6), 2007; the EASY-SJBF of Gaussier et al.,
    SC'15). The reservation is EASY's (Lifka 1995; Mu'alem and Feitelson 2001): the head's, at the
    shadow time; only the order in which the candidates claim the hole changes. `order` is one of
    ORDERS: "fcfs" is textbook EASY, "smallest", "best-fit" (fill the hole tightest first) and
    "priority" the other greedy orders of the backfilling literature."""

    order: str = field(default="shortest", metadata={"help": "candidate order: " + ", ".join(ORDERS)})

    def __post_init__(self) -> None:
        check_order(self.order)

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> OrderedWindow:
        easy = super().window(head_units, free_units, running_end_s, running_units, now_s,
                              head_requested_s=head_requested_s, head_pool=head_pool)
        return OrderedWindow(easy.shadow_s, easy.extra_units, self.order)

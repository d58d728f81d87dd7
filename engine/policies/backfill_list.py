"""List scheduling: backfilling with no reservation, aged so that nothing starves.

The waiting jobs form one list in priority order (highest priority first, then longest waiting:
the aging); every pass starts, in that order, any job that fits now (Graham's list scheduling, 1969;
the "no reservation" end of Feitelson and Weil's range, IPPS 1998, whose other end is conservative
backfilling: a reservation for every job, re-planned at every pass). Without a reservation a wide
job can wait for ever behind a stream of small ones, so once the head has waited `max_wait_s` it
gets EASY's reservation (the aging bound): no job waits much more than `max_wait_s` plus the
running jobs' requested runtimes before it is protected.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.policies.backfill import FAMILY, EasyBackfill, Window
from engine.policies.backfill_order import OrderedWindow, Waiting, candidate_order
from engine.policies.registry import register


@dataclass(frozen=True)
class ListWindow(Window):
    """No reservation (every candidate that fits now is allowed) until `plan` sees that the head has
    waited `max_wait_s`: then EASY's window for the head (`aged`). Candidates in priority order."""

    max_wait_s: float = math.inf
    aged: Window | None = None

    def plan(self, now_s: float, waiting: Waiting) -> tuple[Window, np.ndarray]:
        order = candidate_order("priority", waiting)
        if waiting.head_wait_s >= self.max_wait_s and self.aged is not None:
            return OrderedWindow(self.aged.shadow_s, self.aged.extra_units, "priority"), order
        return self, order


@register(FAMILY, "list")
@dataclass(frozen=True)
class ListScheduling:
    """List scheduling (Graham 1969; the no-reservation end of Feitelson and Weil, IPPS 1998): start
    any waiting job that fits now, highest priority first then longest waiting; once the head has
    waited `max_wait_s` it gets EASY's reservation so that nothing starves. See the module docstring."""

    max_wait_s: float = field(default=86_400.0, metadata={
        "help": "wait after which the head gets a reservation (the aging bound)"})

    def window(self, head_units, free_units, running_end_s, running_units, now_s, *,
               head_requested_s: float = math.inf, head_pool: int = 0) -> ListWindow:
        aged = EasyBackfill().window(head_units, free_units, running_end_s, running_units, now_s,
                                     head_requested_s=head_requested_s, head_pool=head_pool)
        return ListWindow(math.inf, math.inf, self.max_wait_s, aged)

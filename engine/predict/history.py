"""What each user had finished before each of their submits, as known at that submit.

A job's history counts only the same user's jobs that had *finished* by its submit time
(end <= submit), not merely been submitted; "last" means most recently finished (ordered by
end time, ties by row order). Jobs without a user, and rows without an end, add no history.
Everything is vectorised: finished jobs are sorted by (user, end) once, each submit finds its
place by binary search, and the windowed statistics are rolling windows within each user.
Times are seconds (float) on any common origin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class FinishedBefore:
    """Finished events sorted by (user, end) and, per query row, how many of them precede it.

    order: row indices of the events, sorted by (user, end, row).
    count: per query, the number of the user's events with end <= its submit.
    last: per query, the position in `order` of the most recent such event (-1 when count is 0).
    """

    order: np.ndarray
    count: np.ndarray
    last: np.ndarray

    @classmethod
    def build(cls, user: np.ndarray, submit_s: np.ndarray, end_s: np.ndarray,
              is_event: np.ndarray) -> "FinishedBefore":
        """`user`: integer codes (-1 = unknown); an event is a row with `is_event`, a user and an end."""
        is_event = is_event & (user >= 0) & np.isfinite(end_s)
        rows = np.flatnonzero(is_event)
        order = rows[np.lexsort((rows, end_s[rows], user[rows]))]
        times = np.concatenate([submit_s[np.isfinite(submit_s)], end_s[is_event]])
        origin = times.min() if len(times) else 0.0
        span = (times.max() - origin + 1.0) if len(times) else 1.0
        event_keys = user[order] * span + (end_s[order] - origin)
        known = (user >= 0) & np.isfinite(submit_s)
        query_keys = np.where(known, user * span + (submit_s - origin), -np.inf)
        upto = np.searchsorted(event_keys, query_keys, side="right")
        first = np.searchsorted(event_keys, np.where(known, user * span, -np.inf), side="left")
        count = np.where(known, upto - first, 0)
        return cls(order, count, np.where(count > 0, upto - 1, -1))

    def rolling(self, values: np.ndarray, user: np.ndarray, window: int, how: str) -> np.ndarray:
        """Per query, `how` ('mean' or 'median') of `values` over the user's last `window`
        finished events before its submit; NaN when it has none."""
        ordered = pd.Series(values[self.order])
        groups = ordered.groupby(user[self.order], sort=False)
        stat = getattr(groups.rolling(window, min_periods=1), how)()
        per_event = stat.droplevel(0).sort_index().to_numpy() if len(ordered) else np.zeros(0)
        out = np.full(len(self.count), np.nan)
        has = self.last >= 0
        out[has] = per_event[self.last[has]]
        return out

"""One region's waiting jobs, as a boolean mask over sort keys, with the waiting keys kept in order.

The key of a job is its rank in a time-independent queue order (so the keys, ascending, are the
queue in order) or its job index for time-dependent orders (re-ordered each pass). Adding and
removing a job are O(1): a scalar write to `mask`, and an add also goes to a list of keys added
since the last `keys()`. `keys()` merges those into `known`, the ascending waiting keys of its last
call (a plain append when they all come after it, the common case), and drops the keys removed
since, so its cost follows the jobs waiting now, not the span of keys that ever waited (which, at a
million jobs, holds the thousands started by backfilling behind a long-waiting head). `lo` is the
smallest waiting key (the head under a static order), `hi` one past the largest key added.
"""
from __future__ import annotations

from operator import lt

import numpy as np


class WaitingQueue:
    """The waiting jobs of one region, by key (0 <= key < size)."""

    def __init__(self, size: int) -> None:
        self.mask = np.zeros(size, bool)
        self.lo, self.hi, self.count = size, 0, 0
        self.known = np.zeros(0, np.int64)  # ascending; every key waiting at the last keys(), and no other
        self.added: list[int] = []  # keys added since then, in the order added
        self.top = -1  # the largest key put in `known` (removed since or not)
        self.removed = 0  # keys removed so far: while it holds, every key that waited still waits

    def __len__(self) -> int:
        return self.count

    def add(self, key: int) -> None:
        self.mask[key] = True
        self.added.append(key)
        self.count += 1
        if key < self.lo:
            self.lo = key
        if key >= self.hi:
            self.hi = key + 1

    def remove(self, key: int) -> None:
        """Take a waiting `key` out; moves `lo` on to the next waiting key."""
        self.mask[key] = False
        self.count -= 1
        self.removed += 1
        if not self.count:
            self.lo, self.hi = len(self.mask), 0
        elif key == self.lo:  # the next waiting key: usually the one after (jobs mostly start in key order)
            self.lo = key + 1 if self.mask[key + 1] else key + int(self.mask[key:self.hi].argmax())

    def remove_many(self, keys: np.ndarray) -> None:
        for key in sorted(keys.tolist()):
            self.remove(key)

    def keys(self) -> np.ndarray:
        """The waiting keys, ascending (int64; the caller must not write to it)."""
        known, added = self.known, self.added
        if added:
            self.added = []
            if added[0] > self.top and all(map(lt, added, added[1:])):
                known = np.concatenate((known, added))
                self.top = added[-1]
            else:  # a key re-added, or added out of order: sorted, each once
                known = np.unique(np.concatenate((known, added)))
                self.top = known[-1]
        self.known = known = known[self.mask[known]]
        return known

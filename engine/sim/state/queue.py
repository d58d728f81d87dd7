"""One region's waiting jobs, as a boolean mask over sort keys.

The key of a job is its rank in a time-independent queue order (so the mask, read from low to
high, is the queue in order) or its job index for time-dependent orders (re-ordered each pass).
Adding and removing a job are O(1) scalar writes; the waiting keys in order are one
`flatnonzero` over the span [lo, hi) of keys ever waiting, done in C. `lo` is the smallest
waiting key (the head under a static order), `hi` one past the largest key added.
"""
from __future__ import annotations

import numpy as np


class WaitingQueue:
    """The waiting jobs of one region, by key (0 <= key < size)."""

    def __init__(self, size: int) -> None:
        self.mask = np.zeros(size, bool)
        self.lo, self.hi, self.count = size, 0, 0

    def __len__(self) -> int:
        return self.count

    def add(self, key: int) -> None:
        self.mask[key] = True
        self.count += 1
        if key < self.lo:
            self.lo = key
        if key >= self.hi:
            self.hi = key + 1

    def remove(self, key: int) -> None:
        """Take a waiting `key` out; moves `lo` on to the next waiting key."""
        self.mask[key] = False
        self.count -= 1
        if not self.count:
            self.lo, self.hi = len(self.mask), 0
        elif key == self.lo:
            self.lo += int(self.mask[key:self.hi].argmax())

    def remove_many(self, keys: np.ndarray) -> None:
        for key in sorted(keys.tolist()):
            self.remove(key)

    def keys(self) -> np.ndarray:
        """The waiting keys, ascending (int64)."""
        return self.lo + self.mask[self.lo:self.hi].nonzero()[0]  # not np.flatnonzero: its wrappers cost more here

"""The simulator's event queue: arrivals from a sorted array, everything else from a heap.

An event is (time, kind, payload). The loop's own kinds are below: finishes and failures, deferred
arrivals (a job held back by the timing policy or moving its data), arrivals, and re-passes
(another scheduling pass of one region, after evictions put jobs back in its queue). Every other
kind belongs to the world process that declares it (engine.sim.processes.table lists them all). The
kind's number is its tie order at equal times: finishes and failures first (a job that ends at t
frees its resources for a job arriving at t), then timers (2), deferred arrivals, arrivals,
re-passes, spot interruptions (6), outages starting and ending (7, 8), clock edges of quota
lending (9), cloud burst nodes coming up, burst trigger checks and idle burst nodes going back
(10-12), users giving up (13); within a kind, insertion order. Every event of a batch is handled
before any scheduling pass, so a job whose user gives up at t never starts at t. Arrivals are
known up front and sorted by submit time, so they never enter the heap: `pop_batch` merges the
next arrivals with the heap's earliest events.
"""
from __future__ import annotations

import math
from heapq import heappop, heappush
from itertools import count

import numpy as np

FINISH = 0
FAILURE = 1
DEFERRED = 3
ARRIVAL = 4
REPASS = 5


class EventQueue:
    """Events of one run; `pop_batch` returns every event at the earliest time."""

    def __init__(self, arrival_s: np.ndarray | None = None) -> None:
        """`arrival_s[j]`: submit time of job j, non-decreasing in j (the workload's order)."""
        arrivals = [] if arrival_s is None else np.asarray(arrival_s, np.float64).tolist()
        if any(b < a for a, b in zip(arrivals, arrivals[1:])):
            raise ValueError("arrival times must be non-decreasing")
        self._arrivals = arrivals
        self._next = 0
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = count()  # insertion order, the last tie-break
        self.background_kinds: frozenset[int] = frozenset()  # kinds that alone do not keep a run going
        self.background_pending = 0  # events of those kinds in the heap

    def push(self, time_s: float, kind: int, payload: int) -> None:
        """Add an event of `kind` about `payload` (a job index; a region index for REPASS; what a world
        process's own kinds carry, its module says) at `time_s`."""
        heappush(self._heap, (time_s, kind, next(self._seq), payload))
        if kind in self.background_kinds:
            self.background_pending += 1

    def __len__(self) -> int:
        return len(self._heap) + len(self._arrivals) - self._next

    def peek_time(self) -> float:
        """Time of the next event, seconds (+inf when empty)."""
        heap_s = self._heap[0][0] if self._heap else float("inf")
        arrival_s = self._arrivals[self._next] if self._next < len(self._arrivals) else float("inf")
        return min(heap_s, arrival_s)

    def pending_arrivals(self) -> int:
        return len(self._arrivals) - self._next

    def pop_batch(self) -> tuple[float, list[tuple[int, int]]]:
        """(time_s, [(kind, payload), ...]) for every event at the earliest time, in tie order;
        (inf, []) when no event is left."""
        heap, batch, arrivals, j = self._heap, [], self._arrivals, self._next
        n, background = len(arrivals), self.background_kinds
        time_s = heap[0][0] if heap else math.inf
        if j < n and arrivals[j] < time_s:
            time_s = arrivals[j]
        while heap and heap[0][0] == time_s:
            _, kind, _, payload = heappop(heap)
            if kind in background:
                self.background_pending -= 1
            batch.append((kind, payload))
        while j < n and arrivals[j] == time_s:
            batch.append((ARRIVAL, j))
            j += 1
        self._next = j
        return time_s, batch

"""The simulator's event heap: (time_s, kind, seq, payload) entries, earliest first.

Ties are deterministic: at equal times, lower `kind` first (finishes before arrivals, so a job
that ends at t frees its resources for a job arriving at t), then insertion order (`seq`).
"""
from __future__ import annotations

import heapq

FINISH = 0
ARRIVAL = 1


class EventQueue:
    """A min-heap of events; `pop_batch` returns every event at the earliest time."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = 0

    def push(self, time_s: float, kind: int, payload: int) -> None:
        """Add an event of `kind` (FINISH or ARRIVAL) about item `payload` (a job index) at `time_s`."""
        heapq.heappush(self._heap, (time_s, kind, self._seq, payload))
        self._seq += 1

    def __len__(self) -> int:
        return len(self._heap)

    def peek_time(self) -> float:
        """Time of the next event, seconds (+inf when empty)."""
        return self._heap[0][0] if self._heap else float("inf")

    def pop_batch(self) -> tuple[float, list[tuple[int, int]]]:
        """(time_s, [(kind, payload), ...]) for every event at the earliest time, in tie order."""
        heap = self._heap
        time_s = heap[0][0]
        batch = []
        while heap and heap[0][0] == time_s:
            _, kind, _, payload = heapq.heappop(heap)
            batch.append((kind, payload))
        return time_s, batch

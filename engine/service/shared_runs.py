"""Heavy runs computed once per process and shared, through a bounded pool with a queue.

`SharedRuns(slots).run(key, compute, waiting)`: the first caller of a `key` computes it, once a slot of the
pool is free (at most `slots` computations at a time, first come first served); every other caller of the
same key meanwhile waits for that one computation instead of starting its own, and later callers get the
kept result (the last `size` results, least recently used dropped). While a caller waits, `waiting(place)`
is called about every `poll_s` seconds with its Place: its key's place in the queue (1 = next to start;
0 = running) and how many runs hold a slot. The dashboard's sessions share their simulations and headroom
searches through one (dashboard.data); `computed` counts the computations that finished.

A computation that raises an Exception passes it to every caller waiting for it and keeps nothing (the next
caller tries again); one stopped by anything else (the computing caller's thread was stopped) makes one of
the waiting callers compute it instead. Results are shared, not copied: callers must not modify them.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("meridian.shared")


@dataclass(frozen=True)
class Place:
    """Where a waiting caller's run stands: `queued` (1 = next to start; 0 = running) and `running` (runs
    holding a slot now)."""

    queued: int
    running: int

    def describe(self) -> str:
        if self.queued == 0:
            return "Running (shared by every session asking for the same run)..."
        ahead = self.queued - 1 + self.running
        return f"Queued: {_ordinal(self.queued)} in line, {ahead} run{'' if ahead == 1 else 's'} ahead..."


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class _Flight:
    """One computation in progress: set once, with its value, its exception, or None when it was stopped."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Exception | None = None
        self.stopped = False


class SharedRuns:
    def __init__(self, slots: int = 2, size: int = 64, poll_s: float = 0.5):
        if slots < 1:
            raise ValueError(f"slots must be at least 1, not {slots}")
        self.slots, self.size, self.poll_s = slots, size, poll_s
        self.computed = 0
        self._lock = threading.Condition()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()
        self._flights: dict[Hashable, _Flight] = {}
        self._queue: list[Hashable] = []
        self._running: set[Hashable] = set()

    def place(self, key: Hashable) -> Place | None:
        """Where `key`'s computation stands, None when none is queued or running."""
        with self._lock:
            return self._place(key)

    def _place(self, key: Hashable) -> Place | None:
        if key in self._running:
            return Place(0, len(self._running))
        return Place(self._queue.index(key) + 1, len(self._running)) if key in self._queue else None

    def run(self, key: Hashable, compute: Callable[[], Any], waiting: Callable[[Place], None] | None = None) -> Any:
        """`compute()`'s value for `key`: kept, awaited from the caller computing it, or computed here."""
        while True:
            with self._lock:
                if key in self._kept:
                    self._kept.move_to_end(key)
                    return self._kept[key]
                flight, owner = self._flights.get(key), False
                if flight is None:
                    flight, owner = self._flights.setdefault(key, _Flight()), True
                    self._queue.append(key)
            if owner:
                return self._compute(key, flight, compute, waiting)
            while not flight.done.wait(self.poll_s):
                place = self.place(key)
                if waiting is not None and place is not None:
                    waiting(place)
            if flight.error is not None:
                raise flight.error
            if not flight.stopped:
                return flight.value

    def _compute(self, key: Hashable, flight: _Flight, compute: Callable[[], Any], waiting) -> Any:
        try:
            self._take_slot(key, waiting)
        except BaseException:
            flight.stopped = True
            with self._lock:
                self._queue.remove(key)
                self._end(key, flight)
            raise
        try:
            start = time.perf_counter()
            value = compute()
        except Exception as exc:
            flight.error = exc
            raise
        except BaseException:
            flight.stopped = True
            raise
        else:
            flight.value = value
            log.info("computed %s in %.1f s", _short(key), time.perf_counter() - start)
            return value
        finally:
            with self._lock:
                self._running.discard(key)
                if flight.error is None and not flight.stopped:
                    self._kept[key] = flight.value
                    self.computed += 1
                    while len(self._kept) > self.size:
                        self._kept.popitem(last=False)
                self._end(key, flight)

    def _take_slot(self, key: Hashable, waiting) -> None:
        while True:
            with self._lock:
                if len(self._running) < self.slots and self._queue[0] == key:
                    self._queue.pop(0)
                    self._running.add(key)
                    return
                place = self._place(key)
            if waiting is not None:
                waiting(place)
            with self._lock:
                self._lock.wait(self.poll_s)

    def _end(self, key: Hashable, flight: _Flight) -> None:
        """(holding the lock) forget `key`'s flight, wake its waiters and the queue."""
        self._flights.pop(key, None)
        flight.done.set()
        self._lock.notify_all()


def _short(key: Hashable) -> str:
    text = repr(key)
    return text if len(text) <= 120 else text[:117] + "..."

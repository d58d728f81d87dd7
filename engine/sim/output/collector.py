"""Python's cyclic garbage collector, paused while a simulation runs.

The event loop makes no reference cycles, only many short-lived tuples (events, timeline rows),
whose count keeps triggering collections that walk the run's growing lists: about 6 % of an
HPC2N replay. Reference counting still frees everything as usual.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside the block, then on again if it was on. A run in another thread that
    starts meanwhile finds it off and leaves it to the first to turn back on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()

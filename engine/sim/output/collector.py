"""Python's cyclic garbage collector, paused while a simulation runs.

The event loop makes no reference cycles, only many short-lived tuples (events, timeline rows),
whose count keeps triggering collections that walk the run's growing lists: about 6 % of an
HPC2N replay. Reference counting still frees everything as usual.

Turned back on, the collector would first walk every object the run made (its young generation holds
them all, and the run is still alive when the block ends): 0.2 s after an HPC2N replay, to find nothing,
as most of them die with the run a moment later. `gc.freeze()` then `gc.unfreeze()` moves them to the
oldest generation without a pass instead; a full collection, much rarer, sees those still alive then.
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
            gc.freeze()  # the run's objects to the oldest generation without a pass: see the module docstring
            gc.unfreeze()
            gc.enable()

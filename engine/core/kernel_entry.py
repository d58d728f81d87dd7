"""A compiled kernel's entry point for fixed argument types: calling it skips numba's dispatcher.

On every call, numba's dispatcher works out the type of each argument (about 0.1 us per array) to pick
the compiled version to run. On the loop's hottest calls that is most of the call: taking or giving
back a pod (engine.sim.state.pod_kernels.move_pod, ten arguments) costs about 0.6 us of dispatch against
0.2 us of work. `entry(kernel, args)` compiles the version for the types of `args` (or loads it from
numba's disk cache, or finds it already loaded) and returns its entry point, which then takes arguments
of exactly those types. A caller that passes several variants keeps their entry points in an `Entries`,
keyed by what fixes the types (`entries.get(key) or entries.made(key, kernel, args)`).

The entry point checks nothing: an array of another dtype, number of dimensions or memory layout is
read as if it were of the resolved one. So it serves only callers that fix the types themselves: arrays
they own (a fleet state's block), arrays of one make (a request's `figures`), and arrays they convert
on each call (`np.ascontiguousarray(nodes, np.int64)`), keeping one entry per variant they pass (a
tuple of k GPU indices is a type per k).

With the environment variable MERIDIAN_CHECK_ENTRIES set, an entry point's first 256 calls and every 256th
after them check their arguments against the resolved types and raise TypeError on a difference that would
be misread (another dtype, number of dimensions or layout; an array whose layout the entry reads by its
strides, or a read-only flag, is not one); without it the entry point is returned bare. The test suite runs
scenarios that reach every entry point so (tests/test_kernel_entry.py), in a process of their own: checked,
a simulation takes about 1.5 times as long (every call: nine times).
"""
from __future__ import annotations

import os
from itertools import count

CHECK = "MERIDIAN_CHECK_ENTRIES"
# a checked entry point checks its first CHECK_FIRST calls and every CHECK_EVERY-th after them: numba's typeof in
# Python costs a few microseconds an argument; a caller's types are fixed where it calls, so a wrong one shows
# at its first calls
CHECK_FIRST, CHECK_EVERY = 256, 256


def entry(kernel, args: tuple):
    """The entry point of numba dispatcher `kernel`'s version for the types of `args` (see the module)."""
    resolved = tuple(kernel.typeof_pyval(a) for a in args)
    call = kernel.compile(resolved)
    if not os.environ.get(CHECK):
        return call

    calls = count()

    def checked(*given):
        n = next(calls)
        if n < CHECK_FIRST or not n % CHECK_EVERY:
            got = tuple(kernel.typeof_pyval(a) for a in given)
            if len(got) != len(resolved) or not all(map(_reads_as, got, resolved)):
                raise TypeError(f"{kernel.__name__}'s entry point for {resolved} called with {got}")
        return call(*given)

    return checked


class Entries(dict):
    """Entry points of kernels, one per key that fixes the argument types (a count of GPUs, the dtypes and
    layouts of arrays the caller is handed). Read with `get`, a dict's own lookup, so that a hit costs
    what a dict costs: `entries.get(key) or entries.made(key, kernel, args)`."""

    def made(self, key, kernel, args: tuple):
        """`kernel`'s entry point for the types of `args`, kept under `key`."""
        call = self[key] = entry(kernel, args)
        return call


def _reads_as(got, resolved) -> bool:
    """Whether an argument of numba type `got` is read correctly by an entry point resolved for `resolved`."""
    if got == resolved:
        return True
    layout = getattr(resolved, "layout", None)
    if layout is None or getattr(got, "layout", None) is None:
        return False
    return got.dtype == resolved.dtype and got.ndim == resolved.ndim and layout in (got.layout, "A")

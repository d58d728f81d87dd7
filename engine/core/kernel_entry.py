"""A compiled kernel's entry point for fixed argument types: calling it skips numba's dispatcher.

On every call, numba's dispatcher works out the type of each argument (about 0.1 us per array) to pick
the compiled version to run. On the loop's hottest calls that is most of the call: taking or giving
back a pod (engine.sim.state.pod_kernels.move_pod, ten arguments) costs about 0.6 us of dispatch against
0.2 us of work. `entry(kernel, args)` compiles the version for the types of `args` (or loads it from
numba's disk cache, or finds it already loaded) and returns its entry point, which then takes arguments
of exactly those types.

The entry point checks nothing: an array of another dtype, number of dimensions or memory layout is
read as if it were of the resolved one. So it serves only callers that fix the types themselves: arrays
they own (a fleet state's block), arrays of one make (a request's `figures`), and arrays they convert
on each call (`np.ascontiguousarray(nodes, np.int64)`), keeping one entry per variant they pass (a
tuple of k GPU indices is a type per k).
"""
from __future__ import annotations


def entry(kernel, args: tuple):
    """The entry point of numba dispatcher `kernel`'s version for the types of `args` (see the module)."""
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))

"""numba's `njit` for the engine's compiled kernels (engine/*/*_kernels.py, each imported at its first use).

numba's first compile or cache load imports numba.np.arraymath, which looks for a BLAS by importing
scipy.linalg: about 0.1 s of CPU per process (numpy.f2py comes with it), for np.correlate and np.convolve
only. No kernel here uses linear algebra, so while numba's array functions load, that import is answered
"no such module"; numba then keeps its plain loops for those two, and scipy.linalg imports as usual
afterwards. In a process that has scipy.linalg already, nothing changes.
"""
from __future__ import annotations

import sys

BLAS_PROBE = "scipy.linalg.cython_blas"  # the module numba.np.arraymath imports to find a BLAS

if "numba.np.arraymath" not in sys.modules and BLAS_PROBE not in sys.modules:
    sys.modules[BLAS_PROBE] = None  # an import of it raises ImportError, without importing scipy.linalg
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules[BLAS_PROBE]

from numba import njit  # noqa: E402

__all__ = ["njit"]

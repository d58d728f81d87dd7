"""np.sort's order of two floats, for compiled kernels that pick or sort by keys (numba, cached on disk
beside this file): a NaN sorts after every number, NaNs are equal."""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def below(a, b):
    """a sorts before b."""
    if a != a:
        return False
    return b != b or a < b

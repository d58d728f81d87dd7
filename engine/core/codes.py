"""Integer codes numbered as met (0, 1, 2, ... in order of first occurrence, as `pd.factorize` numbers them)."""
from __future__ import annotations

import numpy as np


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The row where each code first occurs, in code order: where the running maximum grows (no sort,
    unlike np.unique's return_index)."""
    seen = np.maximum.accumulate(codes) if len(codes) else np.asarray(codes, np.int64)
    return np.flatnonzero(np.concatenate([seen[:1] >= 0, seen[1:] > seen[:-1]]))

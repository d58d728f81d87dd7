"""Integer codes: where codes numbered as met first occur, and the distinct rows of an integer matrix."""
from __future__ import annotations

import numpy as np


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The row where each code first occurs, in code order: where the running maximum grows (no sort,
    unlike np.unique's return_index)."""
    seen = np.maximum.accumulate(codes) if len(codes) else np.asarray(codes, np.int64)
    return np.flatnonzero(np.concatenate([seen[:1] >= 0, seen[1:] > seen[:-1]]))


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct rows of the integer matrix `rows`, in sorted order, and each row's index among
    them), as np.unique(rows, axis=0, return_inverse=True) gives them: one integer sort by its columns
    (np.unique's by whole rows compares them as bytes, slowly)."""
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    new = np.ones(len(rows), bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    index = np.empty(len(rows), np.int64)
    index[order] = np.cumsum(new) - 1
    return ordered[new], index

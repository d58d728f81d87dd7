"""Per-job Python lists that cost a pointer per job, not a number object per job.

The loop reads per-job figures from Python lists (cheaper to index than numpy arrays). `tolist()`
makes one float or int object per element, 24-28 bytes each; most of these figures take a few
distinct values (GPUs, CPUs, memory, pool, checkpoint interval), so `shared_list` builds the list
from one object per distinct value: the same values, 8 bytes per job. The distinct values are found
by hashing (pandas' factorize), without np.unique's sort; an array of one value is one object repeated.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def shared_list(values) -> list:
    """`values.tolist()`, equal values being one object. Integers, and floats without a sign bit set
    (-0.0 would be merged into 0.0); other arrays are converted as they are."""
    values = np.asarray(values)
    kind = values.dtype.kind
    if not len(values) or not (kind in "iub" or (kind == "f" and not np.signbit(values).any())):
        return values.tolist()
    values = values.reshape(-1)
    if values[0] == values.min() == values.max():
        return [values[0].item()] * len(values)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return np.array(uniques.tolist(), dtype=object)[codes].tolist()

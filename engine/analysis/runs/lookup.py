"""Where each of a run's many values (a job's team, queue or region) sits in a short list of names.

`pd.Index(names).get_indexer(values)` hashes every value, one Python string at a time for a column of
text; a run's columns repeat a few names hundreds of thousands of times. `positions` hashes each
distinct value once (pandas' factorize, which pyarrow does for a `str` column) and spreads the answers.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def positions(names: pd.Index, values) -> np.ndarray:
    """names.get_indexer(values): each value's position in `names` (-1 where it is not there), int64;
    a missing value is looked up as any other (its position if `names` holds one, else -1)."""
    codes, distinct = pd.factorize(values, use_na_sentinel=False)
    return names.get_indexer(distinct).astype(np.int64)[codes]

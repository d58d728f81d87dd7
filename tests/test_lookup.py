"""engine.analysis.runs.lookup.positions: pandas' get_indexer, each distinct value hashed once."""
import numpy as np
import pandas as pd
import pytest

from engine.analysis.runs.lookup import positions


@pytest.mark.parametrize("values", [
    pd.Series(["b", "a", "x", None, "b", "c"], dtype="str"),
    np.array(["b", "a", "x", np.nan, "b", "c"], dtype=object),
    pd.Series([], dtype="str"),
])
def test_positions_are_get_indexers(values):
    names = pd.Index(["a", "b", "c"])
    found = positions(names, values)
    assert found.dtype == np.int64 and found.tolist() == names.get_indexer(values).tolist()


def test_a_missing_value_is_looked_up_as_any_other():
    names = pd.Index(["a", np.nan], dtype=object)
    assert positions(names, pd.Series(["a", None, "z"], dtype="str")).tolist() == [0, 1, -1]

"""engine.core.codes: the first row of each code numbered as met is np.unique's first index."""
import numpy as np
import pandas as pd
import pytest

from engine.core.codes import first_rows


@pytest.mark.parametrize("values", [[], [7], [3, 3, 3], [5, 1, 5, 2, 1, 9], list(np.random.default_rng(0).integers(0, 50, 500))])
def test_first_rows_are_where_each_code_first_occurs(values):
    codes = pd.factorize(np.asarray(values, np.int64))[0]
    np.testing.assert_array_equal(first_rows(codes), np.unique(codes, return_index=True)[1])

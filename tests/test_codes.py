"""engine.core.codes: first rows of codes and distinct rows, as np.unique gives them."""
import numpy as np
import pandas as pd
import pytest

from engine.core.codes import distinct_rows, first_rows


@pytest.mark.parametrize("values", [[], [7], [3, 3, 3], [5, 1, 5, 2, 1, 9], list(np.random.default_rng(0).integers(0, 50, 500))])
def test_first_rows_are_where_each_code_first_occurs(values):
    codes = pd.factorize(np.asarray(values, np.int64))[0]
    np.testing.assert_array_equal(first_rows(codes), np.unique(codes, return_index=True)[1])


@pytest.mark.parametrize("shape", [(0, 2), (1, 1), (500, 1), (500, 3), (40, 5)])
def test_distinct_rows_are_np_unique_by_rows(shape):
    rows = np.random.default_rng(shape[0]).random(shape) < 0.7
    distinct, index = distinct_rows(rows.view(np.uint8))
    expected, inverse = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected.view(np.uint8))
    np.testing.assert_array_equal(index, inverse.reshape(-1))

"""engine.sim.state.compact.shared_list: the same list as tolist(), one object per distinct value."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim.state.compact import shared_list


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and (x == y or (math.isnan(x) and math.isnan(y)))
                                    and math.copysign(1, x) == math.copysign(1, y) for x, y in zip(a, b))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 8.0, 1000.0]),
                max_size=40))
def test_floats_convert_as_tolist_does(values):
    array = np.array(values, np.float64)
    assert same(shared_list(array), array.tolist())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(-2**62, 2**62) | st.sampled_from([0, 8, 16_000, 1000]), max_size=40))
def test_integers_convert_as_tolist_does(values):
    array = np.array(values, np.int64)
    assert same(shared_list(array), array.tolist())


def test_equal_values_are_one_object_and_negative_zero_stays():
    big = shared_list(np.full(1000, 16_000, np.int64))
    assert len({id(x) for x in big}) == 1 and big == [16_000] * 1000
    signed = shared_list(np.array([0.0, -0.0, 5.0]))
    assert math.copysign(1, signed[1]) == -1  # an array with a sign bit set is converted as it is
    assert shared_list(np.zeros(0)) == []

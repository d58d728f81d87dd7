"""The compiled decayed usage and fair-share exponent (engine.core.decay_kernels, engine.policies.priority_kernels) against the numpy
expressions they replace, bit for bit (signed zeros too), around numpy's own exp2 and power. A NaN is a
NaN: its sign bit may differ where two NaNs meet (0 x inf + NaN), which no sort or output tells apart."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.views import ShareView
from engine.policies import priority_kernels as kernels
from engine.policies.priority import team_fairshare
from engine.sim.state.ledger import usage_at

FIGURES = st.sampled_from([0.0, -0.0, 1.0, 3.5, 1e-300, 7.25e6, 1.3e9, math.inf, math.nan])
TIMES = st.sampled_from([0.0, 59.0, 3_600.5, 86_400.0, 1.7e7, math.nan])


def _bits(a: np.ndarray) -> list:
    """The bits of each float, every NaN the same."""
    a = np.asarray(a, np.float64)
    return np.where(np.isnan(a), np.nan, a).view(np.int64).tolist()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 20).flatmap(lambda n: st.tuples(st.lists(FIGURES, min_size=3 * n, max_size=3 * n),
                                                      TIMES, st.sampled_from([1.0, 3_600.0, 604_800.0]))))
def test_the_decayed_usage_is_the_numpy_expression(drawn):
    values, now, half_life_s = drawn
    figures = np.array(values, np.float64).reshape(3, -1)
    usage, level, since = figures
    with np.errstate(all="ignore"):
        decay = np.exp2((since - now) / half_life_s)
        expected = usage * decay + level * (1.0 - decay)
        got = usage_at(figures, now, half_life_s)
    assert _bits(got) == _bits(expected)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 20).flatmap(lambda n: st.tuples(st.lists(FIGURES, min_size=n, max_size=n),
                                                      st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n,
                                                               max_size=n))))
def test_the_fair_share_is_the_numpy_expression(drawn):
    usage, weights = (np.array(x, np.float64) for x in drawn)
    shares = ShareView.single(teams=len(usage))
    shares = ShareView(**{**vars(shares), "usage_gpu_s": usage, "weight": weights})
    with np.errstate(all="ignore"):
        total = np.add.reduce(usage)
        minus_share = -(weights / weights.sum())
        expected = np.power(2.0, (usage / total if total > 0 else np.zeros_like(usage)) / minus_share)
        got = team_fairshare(shares)
        strided = ShareView(**{**vars(shares), "usage_gpu_s": np.repeat(usage, 2)[::2]})
        assert _bits(team_fairshare(strided)) == _bits(got)  # an array of another layout gets its own entry
        assert _bits(kernels.share_exponents(usage, minus_share)) == \
            _bits((usage / total if total > 0 else np.zeros_like(usage)) / minus_share)
    assert _bits(got) == _bits(expected)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(-1100.0, 1100.0), st.floats(-1.0, 1.0), FIGURES), min_size=1, max_size=70))
def test_the_power_of_an_array_of_twos_is_the_power_of_two(exponents):
    """team_fairshare takes 2^x with an array of twos as the base: numpy runs the same loop as for the float 2.0."""
    from engine.policies.priority import _twos
    x = np.array(exponents, np.float64)
    with np.errstate(all="ignore"):
        assert _bits(np.power(_twos(len(x)), x)) == _bits(np.power(2.0, x))


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 300).flatmap(lambda n: st.lists(
    st.one_of(FIGURES, st.floats(-1e12, 1e12), st.floats(-1.0, 1.0)), min_size=n, max_size=n)))
def test_the_pairwise_sum_is_numpys_add_reduce(values):
    """share_exponents' total: np.add.reduce's, bit for bit, up to and past numpy's 128-value block."""
    usage = np.array(values, np.float64)
    with np.errstate(all="ignore"):
        assert _bits([0.0 + kernels.pairwise_sum(usage)]) == _bits([np.add.reduce(usage)])

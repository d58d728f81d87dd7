"""The compiled candidate starts of a held-back job (engine.sim.processes.holder_kernels) against the
rule written plainly: for each quarter q0 + k (clamped to the last), the start now + offset k, the mean
over a run of `length` quarters cut at the end of the run, from cumulative sums, and the working-hours
flag then."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim.processes.holder_kernels import candidates


def _plain(cum, cum_price, work, r, now_s, offsets_s, q0, last, length):
    horizon = len(offsets_s) - 1
    start = [now_s + float(offset) for offset in offsets_s]
    q = [min(q0 + k, last) for k in range(horizon + 1)]
    end = [min(x + length, last + 1) for x in q]
    quarters = [max(e - x, 1) for e, x in zip(end, q)]
    mean = [(cum[r, e] - cum[r, x]) / n for e, x, n in zip(end, q, quarters)]
    price = [(cum_price[r, e] - cum_price[r, x]) / n for e, x, n in zip(end, q, quarters)]
    return start, mean, price, [bool(work[x]) for x in q]


VALUES = st.sampled_from([0.0, 0.1, 0.85, 1.0, 123.4, 402.0, 1e-3])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3).flatmap(lambda regions: st.tuples(
    st.just(regions), st.integers(1, 12).flatmap(lambda n: st.tuples(
        st.lists(st.lists(VALUES, min_size=n, max_size=n), min_size=regions, max_size=regions),
        st.lists(st.lists(VALUES, min_size=n, max_size=n), min_size=regions, max_size=regions),
        st.lists(st.booleans(), min_size=n, max_size=n))))),
    st.integers(0, 14), st.integers(1, 6), st.integers(0, 10), st.integers(0, 2),
    st.sampled_from([0.0, 899.5, 1234.25, 6.048e5]))
def test_candidate_starts_are_the_clamped_means_over_the_run(drawn, q0, length, horizon, region, now_s):
    regions, (intensity, prices, work) = drawn
    zero = np.zeros((regions, 1))
    cum = np.concatenate([zero, np.cumsum(np.array(intensity), axis=1)], axis=1)
    cum_price = np.concatenate([zero, np.cumsum(np.array(prices), axis=1)], axis=1)
    work, last, r = np.array(work, bool), len(work) - 1, region % regions
    q0 = min(q0, last)
    offsets_s = np.arange(horizon + 1) * 900.0
    start, mean, price, at_work = candidates(cum, cum_price, work, r, now_s, offsets_s, q0, last, length)
    expected = _plain(cum, cum_price, work, r, now_s, offsets_s, q0, last, length)
    assert (start.tolist(), mean.tolist(), price.tolist(), at_work.tolist()) == expected

"""The quota gate's verdicts from its running cohort sums are those of the exact lending pool
(engine.sim.cycle.quota_gate): over long runs of starts and stops, near the threshold, after a
change of lending, and when a sum's rounding bound makes it be summed anew; the exact pool's compiled
sum is numpy's, bit for bit."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.reasons import QUOTA
from engine.policies.quota import Kueue, QuotaEntry
from engine.sim.cycle.quota_gate import OK, RECLAIM, QuotaGate
from engine.sim.cycle.quota_kernels import pool_left

HOLDERS = ("a", "b", "c", "d", "e")


def _gate(entries=None, capacity=10.0):
    """A gate over one region of `capacity` GPUs; job j belongs to holder j % 5."""
    holder = np.arange(50) % len(HOLDERS)
    region = [("r", SimpleNamespace(capacity_gpus=capacity))]
    return QuotaGate(Kueue(), holder, HOLDERS, np.ones(len(HOLDERS)), region, {"r": entries or {}})


def _exact(gate, usage, j, gpus):
    """The gate's rule with the exact lending pool (`_pool_left`) for the cohort test."""
    h = gate.holder[j]
    cap, nominal, ceiling = gate.limits[0]
    after = usage[h] + gpus
    if after > cap[h] + 1e-9:
        return "team"
    if after > ceiling[h] + 1e-9:
        return QUOTA
    if gate._pool_left(0, usage, h, gpus) >= -1e-9:
        return OK
    return RECLAIM if after <= nominal[h] + 1e-9 else QUOTA


def _run(gate, steps):
    """Apply (holder, GPUs) changes, checking every job size against the exact rule after each."""
    usage = [0.0] * len(HOLDERS)
    for h, delta in steps:
        usage[h] = max(usage[h] + delta, 0.0)
        gate.moved(0, h, usage)
        for j, gpus in enumerate((0.1, 0.3, 0.7, 1.0, 2.0, 2.1, 3.3)):
            verdict = gate.check(usage, 0, j, gpus)
            assert (verdict if verdict in (OK, RECLAIM, QUOTA) else "team") == _exact(gate, usage, j, gpus)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.1, 0.2, 0.3, 0.7, 1.0, 2.5, -0.1, -0.3, -1.0, -2.5])),
                min_size=1, max_size=200))
def test_verdicts_follow_the_exact_pool_over_starts_and_stops(steps):
    _run(_gate(), steps)


def test_verdicts_at_the_threshold_itself():
    """Usage that leaves the pool at exactly what a job asks: the figure is on the threshold."""
    gate = _gate()
    usage = [0.0, 0.0, 0.0, 0.0, 0.0]  # nominal 2 each, all lent: a pool of 10
    for h, held in enumerate((2.1, 2.2, 2.3, 1.0)):
        usage[h] = held
        gate.moved(0, h, usage)
    # beyond their guaranteed 0: 2.1 + 2.2 + 2.3 + 1.0 = 7.6 taken, 2.4 left (with its roundings)
    left = gate._pool_left(0, usage, 4, 0.0)
    assert gate.check(usage, 0, 4, left) == _exact(gate, usage, 4, left)
    assert gate.check(usage, 0, 4, left + 1e-9) == _exact(gate, usage, 4, left + 1e-9)
    assert gate.check(usage, 0, 4, left + 2e-9) == _exact(gate, usage, 4, left + 2e-9) == QUOTA


def test_a_change_of_lending_sums_anew():
    gate = _gate({"a": QuotaEntry("a", nominal_gpus=4.0)})
    usage = [0.0, 3.0, 3.0, 0.0, 0.0]
    for h in (1, 2):
        gate.moved(0, h, usage)
    assert gate.check(usage, 0, 3, 1.0) == _exact(gate, usage, 3, 1.0) == OK
    gate.withhold(0, 0)  # "a" lends nothing: 4 fewer GPUs in the pool, "d" is owed its lent quota
    assert gate.check(usage, 0, 3, 1.0) == _exact(gate, usage, 3, 1.0) == RECLAIM
    gate.lend(0, 0)
    assert gate.check(usage, 0, 3, 1.0) == OK


@pytest.mark.parametrize("capacity", [10.0, 1000.0, 1e6])
def test_a_sum_past_its_rounding_bound_is_summed_anew(capacity):
    gate = _gate(capacity=capacity)
    scale = capacity / 10.0
    usage = [0.0] * len(HOLDERS)
    summed_anew = 0
    for k in range(3000):
        h = k % 4
        usage[h] = max(usage[h] + (0.3 if k % 8 < 4 else -0.3) * scale, 0.0)
        gate.moved(0, h, usage)
        summed_anew += gate.taken[0] is None
        assert gate.check(usage, 0, 4, 0.5 * scale) == _exact(gate, usage, 4, 0.5 * scale)
        assert gate.check(usage, 0, 4, 1.7 * scale) == _exact(gate, usage, 4, 1.7 * scale)
    assert summed_anew > 0


FIGURES = st.sampled_from([0.0, -0.0, 0.1, 0.3, 1.0, 2.5, 7.0, 1e16, np.inf, -np.inf, np.nan])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.lists(FIGURES, min_size=n, max_size=n),
                                                       st.lists(FIGURES, min_size=n, max_size=n),
                                                       st.integers(0, n - 1))), FIGURES, FIGURES)
def test_the_compiled_pool_left_is_numpys(drawn, gpus, lent):
    usage, guaranteed, h = drawn
    members = np.arange(len(usage))[::2] if h % 2 == 0 else np.arange(len(usage))[1::2]
    guaranteed = np.array(guaranteed)
    after = np.array(usage)
    with np.errstate(invalid="ignore"):
        after[h] += gpus
        expected = lent - float(np.add.reduce(np.maximum(after[members] - guaranteed[members], 0.0)))
    got = pool_left(np.array(usage), members, guaranteed, h, gpus, lent)
    assert (np.isnan(got) and np.isnan(expected)) or np.array([got]).view(np.int64) == np.array([expected]).view(np.int64)

"""The multifactor keyer: the same sort keys as MultifactorPriority.keys, bit for bit, for any subset."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.views import QueueView, ShareView
from engine.policies.priority import MultifactorPriority


def _ledger(rng, teams, capacity_gpus):
    usage = rng.uniform(0, 1e7, teams) * (rng.random(teams) < 0.7)
    zeros = np.zeros(teams)
    return ShareView(tuple(f"t{i}" for i in range(teams)), ("org",), np.zeros(teams, np.int64),
                     rng.uniform(0.5, 3.0, teams), usage, usage, zeros, zeros, zeros, np.zeros(1), np.zeros(1),
                     capacity_gpus, 0.0, 0.0, 7 * 86_400.0)


def _workload(rng, n, teams, deadlines):
    submit = rng.uniform(0, 1e6, n).round(int(rng.integers(0, 3)))
    requested = rng.choice([0.0, 1.0, 3_600.0, np.inf, 1e5], n)
    deadline = np.where(rng.random(n) < 0.5, np.inf, submit + rng.uniform(-1e5, 3e5, n)) if deadlines \
        else np.full(n, np.inf)
    return QueueView.of(submit, requested, rng.choice([1.0, 2.0, 8.0, 500.0], n), deadline_s=deadline,
                        team=rng.integers(0, teams, n), qos=rng.random(n))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("count", [0, 1, 3, 16, 17, 200])
def test_keys_of_any_subset_equal_the_policys_keys_bit_for_bit(seed, count):
    rng = np.random.default_rng(seed)
    teams = int(rng.integers(1, 5))
    view = _workload(rng, 300, teams, deadlines=seed % 3 != 0)
    policy = MultifactorPriority(boost_after_s=[0.0, 3_600.0, 1e5][seed % 3], favor_small=seed % 2 == 1,
                                 max_age_s=[1.0, 86_400.0][seed % 2], weight_deadline=[3_000.0, 1.3][seed % 2])
    keyer = policy.keyer(view)
    for capacity_gpus in (240.0, 7.0, 0.0):
        shares = _ledger(rng, teams, capacity_gpus)
        positions = rng.permutation(300)[:count]
        now = float(rng.uniform(0, 1.2e6))
        got = keyer.keys(positions, shares, now)
        expected = policy.keys(view.take(positions).with_shares(shares), now)
        assert got.shape == expected.shape == (3, count)
        assert np.array_equal(got.view(np.int64), expected.view(np.int64))  # the same bits, signed zeros too


def test_without_a_ledger_the_keyer_falls_back_to_the_policy():
    rng = np.random.default_rng(0)
    view = _workload(rng, 20, 1, deadlines=True)
    policy = MultifactorPriority()
    positions = np.array([3, 1, 7])
    expected = policy.keys(view.take(positions), 5e5)
    assert np.array_equal(policy.keyer(view).keys(positions, None, 5e5), expected)


VALUES = st.sampled_from([0.0, -0.0, 1.0, 600.0, 86_400.0, 2e5, math.inf, -math.inf, math.nan])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(*[st.lists(VALUES, min_size=n, max_size=n)] * 4)),
       VALUES, st.sampled_from([0.0, 86_400.0]))
def test_the_compiled_keys_equal_the_policys_with_nan_inf_and_signed_zeros(columns, now, boost_after_s):
    submit, deadline, requested, qos = (np.array(c) for c in columns)
    n = len(submit)
    view = QueueView.of(submit, requested, np.ones(n), deadline_s=deadline, team=np.arange(n) % 2, qos=qos)
    policy = MultifactorPriority(boost_after_s=boost_after_s)
    shares = ShareView.single(teams=2, capacity_gpus=4.0)
    positions = np.arange(n)[::-1].copy()
    with np.errstate(all="ignore"):
        got = policy.keyer(view).keys(positions, shares, now)
        expected = policy.keys(view.take(positions).with_shares(shares), now)
    same = np.where(np.isnan(got), np.nan, got).view(np.int64) == np.where(np.isnan(expected), np.nan, expected).view(np.int64)
    assert same.all()  # the same bits, signed zeros too (any NaN is a NaN)

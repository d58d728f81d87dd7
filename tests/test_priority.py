"""Multifactor priority: factor values against hand calculations, the boost, and parameter checks."""
import dataclasses

import numpy as np
import pytest

from engine.core.views import QueueView, ShareView
from engine.policies import registry
from engine.policies.ordering import queue_order
from engine.policies.priority import FACTORS, MultifactorPriority, boost_first, starving

HAND = dict(weight_age=1000.0, max_age_s=1000.0, weight_fairshare=10000.0, weight_qos=2000.0,
            weight_size=500.0, weight_deadline=3000.0, deadline_horizon_s=1000.0)


def ledger(**fields) -> ShareView:
    """Two teams of weights 1 and 3 (shares 1/4, 3/4) in a region of 8 GPUs, unless overridden."""
    base = ShareView.single(teams=2, capacity_gpus=8.0)
    return dataclasses.replace(base, **{"weight": np.array([1.0, 3.0]), **fields})


def queue(shares=None):
    """Three jobs at now = 2000 s:
    job 0: waited 2000 s, team 0, qos 1, 8 GPUs, no deadline;
    job 1: waited 500 s, team 1, qos 0.5, 2 GPUs, slack 3100 - 2000 - 600 = 500 s;
    job 2: waited 0 s, team 1, qos 0, 16 GPUs, slack 2100 - 2000 - 600 = -500 s."""
    return QueueView.of(np.array([0.0, 1500.0, 2000.0]), np.array([100.0, 600.0, 600.0]),
                        np.array([8.0, 2.0, 16.0]), deadline_s=np.array([np.inf, 3100.0, 2100.0]),
                        team=np.array([0, 1, 1]), qos=np.array([1.0, 0.5, 0.0]), shares=shares)


# Usage 300 and 100 GPU-s: U = 3/4 and 1/4 against S = 1/4 and 3/4, so F = 2^-3 and 2^(-1/3).
F0, F1 = 2.0 ** -3, 2.0 ** (-1 / 3)
EXPECTED = {
    "age": [1000.0, 500.0, 0.0],
    "fairshare": [10000 * F0, 10000 * F1, 10000 * F1],
    "qos": [2000.0, 1000.0, 0.0],
    "size": [500.0, 125.0, 500.0],         # 8/8, 2/8, 16/8 capped at 1
    "deadline": [0.0, 1500.0, 3000.0],     # no deadline; 1 - 500/1000; slack <= 0
}


def test_weighted_factors_match_a_hand_calculation():
    factors = MultifactorPriority(**HAND).factors(queue(ledger(usage_gpu_s=np.array([300.0, 100.0]))), 2000.0)
    for name, values in EXPECTED.items():
        np.testing.assert_allclose(factors[name], values, err_msg=name)
    np.testing.assert_allclose(factors["priority"], np.sum([EXPECTED[n] for n in FACTORS], axis=0))
    assert factors["boosted"].tolist() == [False, False, False]


def test_order_is_highest_priority_first_and_favor_small_flips_the_size_factor():
    shares = ledger(usage_gpu_s=np.array([300.0, 100.0]))
    assert queue_order(MultifactorPriority(**HAND), queue(shares), 2000.0).tolist() == [2, 1, 0]
    small = MultifactorPriority(**HAND, favor_small=True).factors(queue(shares), 2000.0)
    np.testing.assert_allclose(small["size"], [0.0, 375.0, 0.0])
    only_size = MultifactorPriority(**{**HAND, "weight_age": 0, "weight_fairshare": 0, "weight_qos": 0,
                                       "weight_deadline": 0})
    assert queue_order(only_size, queue(shares), 2000.0).tolist() == [0, 2, 1]   # 1 = 1 > 1/4: id breaks it
    assert queue_order(dataclasses.replace(only_size, favor_small=True), queue(shares), 2000.0).tolist()[0] == 1


# (usage per team, expected F per team): idle ledger; usage equal to shares; one team used all
FAIRSHARE_CASES = [
    ([0.0, 0.0], [1.0, 1.0]),
    ([100.0, 300.0], [0.5, 0.5]),
    ([0.0, 50.0], [1.0, 2.0 ** (-1 / 0.75)]),
]


@pytest.mark.parametrize("usage, expected", FAIRSHARE_CASES)
def test_fairshare_is_two_to_the_minus_usage_over_share(usage, expected):
    q = QueueView.of(np.zeros(2), np.ones(2), np.ones(2), team=np.array([0, 1]),
                     shares=ledger(usage_gpu_s=np.array(usage)))
    np.testing.assert_allclose(MultifactorPriority(weight_fairshare=1.0).factors(q, 0.0)["fairshare"], expected)


# (deadline, requested, now, urgency) with a horizon of 1000 s
URGENCY_CASES = [
    (np.inf, 100.0, 0.0, 0.0),
    (5000.0, 100.0, 0.0, 0.0),       # slack 4900 >= horizon
    (1100.0, 100.0, 0.0, 0.0),       # slack exactly the horizon
    (850.0, 100.0, 0.0, 0.25),       # slack 750
    (1000.0, 100.0, 900.0, 1.0),     # slack 0
    (1000.0, np.inf, 0.0, 1.0),      # an unknown runtime cannot make a deadline: most urgent
]


@pytest.mark.parametrize("deadline, requested, now, urgency", URGENCY_CASES)
def test_deadline_urgency_rises_linearly_over_the_horizon(deadline, requested, now, urgency):
    q = QueueView.of(np.zeros(1), np.array([requested]), np.ones(1), deadline_s=np.array([deadline]))
    policy = MultifactorPriority(weight_deadline=1.0, deadline_horizon_s=1000.0)
    assert policy.factors(q, now)["deadline"].tolist() == [urgency]


def test_age_is_capped_at_the_maximum_age():
    q = QueueView.of(np.array([0.0, 50.0, 100.0]), np.ones(3), np.ones(3))
    assert MultifactorPriority(weight_age=1.0, max_age_s=40.0).factors(q, 100.0)["age"].tolist() == [1.0, 1.0, 0.0]


def test_without_a_ledger_fairshare_is_neutral_and_size_is_relative_to_the_largest_request():
    factors = MultifactorPriority(**HAND).factors(queue(None), 2000.0)
    assert factors["fairshare"].tolist() == [10000.0] * 3
    np.testing.assert_allclose(factors["size"], [250.0, 62.5, 500.0])


def test_boost_puts_starving_jobs_first_longest_wait_first():
    shares = ledger(usage_gpu_s=np.array([300.0, 100.0]))
    policy = MultifactorPriority(**HAND, boost_after_s=400.0)
    factors = policy.factors(queue(shares), 2000.0)
    assert factors["boosted"].tolist() == [True, True, False]
    assert queue_order(policy, queue(shares), 2000.0).tolist() == [0, 1, 2]
    keys = policy.keys(queue(shares), 2000.0)
    assert keys.shape == (3, 3) and keys[0].tolist() == [0.0, 0.0, 1.0] and keys[1, :2].tolist() == [-2000, -500]


def test_starving_and_boost_first_helpers():
    q = QueueView.of(np.array([0.0, 90.0, 50.0]), np.ones(3), np.ones(3))
    assert starving(q, 100.0, 0.0).tolist() == [False, False, False]
    assert starving(q, 100.0, 50.0).tolist() == [True, False, True]
    levels = np.array([[3.0, 1.0, 2.0], [7.0, 8.0, 9.0]])
    keys = boost_first(levels, q, 100.0, starving(q, 100.0, 50.0))
    assert keys.tolist() == [[0.0, 1.0, 0.0], [-100.0, 1.0, -50.0], [7.0, 8.0, 9.0]]


def test_empty_queue_gives_empty_keys():
    empty = QueueView.of(np.zeros(0), np.zeros(0), np.zeros(0), shares=ledger())
    assert MultifactorPriority(boost_after_s=10.0).keys(empty, 5.0).shape == (3, 0)
    assert MultifactorPriority().keys(QueueView.of(np.zeros(0), np.zeros(0), np.zeros(0)), 5.0).shape == (3, 0)


BAD = [("weight_age", -1.0), ("weight_fairshare", -0.5), ("weight_qos", np.nan), ("weight_size", -1.0),
       ("weight_deadline", -3.0), ("boost_after_s", -1.0), ("max_age_s", 0.0), ("half_life_s", -1.0),
       ("deadline_horizon_s", 0.0)]


@pytest.mark.parametrize("name, value", BAD)
def test_bad_parameters_are_refused_by_name(name, value):
    with pytest.raises(ValueError, match=f"multifactor'?: {name} must be"):
        registry.make("order", "multifactor", **{name: value})


def test_registered_with_documented_parameters():
    params = {p.name: p for p in registry.parameters("order", "multifactor")}
    assert set(params) == {"weight_age", "max_age_s", "weight_fairshare", "weight_qos", "weight_size",
                           "weight_deadline", "deadline_horizon_s", "favor_small", "half_life_s", "boost_after_s",
                           "recalc_s"}
    assert all(p.help for p in params.values())
    assert params["favor_small"].type is bool and params["half_life_s"].default == 7 * 86_400.0
    assert registry.make("order", "multifactor", weight_age=5).weight_age == 5.0
    assert MultifactorPriority.traits.time_dependent

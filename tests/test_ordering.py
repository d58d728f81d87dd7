"""Queue-order policies: table-driven tiny queues, the registry contract and the read-only view."""
import dataclasses

import numpy as np
import pytest

from engine.core.views import QueueView
from engine.policies import registry
from engine.policies.ordering import F1, FCFS, SJF, UNICEP, WFP3, queue_order

ORDER_KEYS = ["edf", "f1", "fcfs", "priority", "sjf", "unicep", "wfp3"]   # without parameters
# Multifactor priority and the fair-share orders (tests/test_priority.py, tests/test_fairness.py): with
# parameters, and time-dependent since they read the clock and the usage ledger.
PARAMETERISED_KEYS = ["fail-fast", "drf", "fair-tree", "lottery", "max-min", "multifactor", "wfq", "linear", "rl"]


def view(submit, requested=None, size=None, **extra):
    n = len(submit)
    return QueueView.of(np.asarray(submit, float), np.asarray(requested or [100.0] * n, float),
                        np.asarray(size or [1.0] * n, float), **extra)


# (policy key, queue, now_s, expected positions in order)
CASES = [
    ("fcfs", view([30, 10, 20]), 50, [1, 2, 0]),
    ("fcfs", view([5, 5, 5], index=[7, 3, 5]), 50, [1, 2, 0]),               # ties: stable id
    ("priority", view([0, 20, 10], priority=[1, 5, 5]), 50, [2, 1, 0]),      # high first, then submit
    ("sjf", view([0, 20, 10], [100, 50, 50]), 50, [2, 1, 0]),                 # short first, then submit
    ("sjf", view([0, 0], [50, 50], index=[9, 4]), 50, [1, 0]),
    ("edf", view([0, 20, 10], deadline_s=[np.inf, 100, 50]), 50, [2, 1, 0]),  # no deadline last
    ("edf", view([20, 10], deadline_s=[80, 80]), 50, [1, 0]),
    # WFP3 at 100 s: (wait/req)^3 x size = 1, 0.5, 1 -> 0 and 2 tie, index breaks it
    ("wfp3", view([0, 50, 90], [100, 100, 10], [1, 4, 1]), 100, [0, 2, 1]),
    ("wfp3", view([0, 0], [100, 100], [1, 8]), 100, [1, 0]),                  # wider first at equal wait
    # UNICEP at 100 s: wait / (log2 size x req) = 100/(1x100)=1, 100/(2x10)=5, one-unit job: huge
    ("unicep", view([0, 0, 99], [100, 10, 100], [2, 4, 1]), 100, [2, 1, 0]),
    ("unicep", view([0, 0], [100, 100], [0.5, 2]), 100, [0, 1]),              # size < 1 counts as 1
    # F1 = log10(req) x size + 870 log10(submit): 2+870, 1x4+870, 2+870 log10(20)
    ("f1", view([10, 10, 20], [100, 10, 100], [1, 4, 1]), 50, [0, 1, 2]),
]


@pytest.mark.parametrize("key, queue, now_s, expected", CASES)
def test_order_of_tiny_queues(key, queue, now_s, expected):
    assert queue_order(registry.make("order", key), queue, now_s).tolist() == expected


def test_registry_lists_every_order_policy_and_the_simple_ones_have_no_parameters():
    assert registry.families()["order"] == sorted(ORDER_KEYS + PARAMETERISED_KEYS)
    for key in ORDER_KEYS:
        assert registry.parameters("order", key) == []
        with pytest.raises(registry.PolicyError, match="has no parameter"):
            registry.make("order", key, tau=1)


@pytest.mark.parametrize("key", ORDER_KEYS + PARAMETERISED_KEYS)
def test_contract_shape_empty_queue_determinism_and_no_mutation(key):
    policy = registry.make("order", key)
    assert dataclasses.is_dataclass(policy)
    assert (dataclasses.fields(policy) == ()) == (key in ORDER_KEYS)
    queue = view([0, 3, 3, 9], [50, 10, 10, 1], [1, 2, 2, 64], priority=[0, 1, 1, 0],
                 deadline_s=[np.inf, 30, 30, 20])
    before = {f.name: getattr(queue, f.name).copy() for f in dataclasses.fields(queue) if f.name != "shares"}
    keys = policy.keys(queue, 20.0)
    assert keys.ndim == 2 and keys.shape[1] == 4 and not np.isnan(keys).any()
    assert queue_order(policy, queue, 20.0).tolist() == queue_order(policy, queue, 20.0).tolist()
    assert all(np.array_equal(getattr(queue, name), value) for name, value in before.items())
    assert queue_order(policy, view([]), 20.0).tolist() == []


def test_the_aging_and_the_ledger_orders_depend_on_time():
    keys = ORDER_KEYS + PARAMETERISED_KEYS
    dependent = {key for key in keys if registry.policy_class("order", key).traits.time_dependent}
    assert dependent == {"wfp3", "unicep", *PARAMETERISED_KEYS} - {"fail-fast"}


def test_waits_are_true_waits_and_the_published_quirk_is_a_clock_of_minus_one():
    queue = view([100, 300], [50, 20], [4, 1])
    # At 400 s the waits are 300 and 100 s.
    assert WFP3().keys(queue, 400.0)[0].tolist() == [-(6.0 ** 3) * 4, -(5.0 ** 3) * 1]
    # The published code's wait is -1 - submit: the same formula evaluated at a clock of -1 s.
    quirk = WFP3().keys(queue, -1.0)[0]
    assert quirk.tolist() == [-np.power(-101 / 50, 3) * 4, -np.power(-301 / 20, 3) * 1]
    assert UNICEP().keys(queue, -1.0)[0][0] == -(-101 + 1e-15) / (np.log2(4 + 1e-15) * 50)


def test_f1_clamps_non_positive_request_and_submit_to_a_tenth():
    keys = F1().keys(view([0, 100], [0, 10], [2, 1]), 0.0)[0]
    assert keys.tolist() == [np.log10(0.1) * 2 + 870 * np.log10(0.1), 1 + 870 * 2]


def test_keys_do_not_depend_on_queue_order():
    queue = view([5, 1, 3], [30, 10, 20], [2, 1, 4])
    for policy in (FCFS(), SJF(), WFP3(), UNICEP(), F1()):
        reversed_queue = queue.take(np.array([2, 1, 0]))
        assert policy.keys(reversed_queue, 9.0)[:, ::-1].tolist() == policy.keys(queue, 9.0).tolist()


def test_queue_view_is_read_only_and_checked():
    queue = view([1, 2])
    with pytest.raises(ValueError):
        queue.submit_s[0] = 5
    source = np.array([1.0, 2.0])
    QueueView.of(source, source, source)
    source[0] = 9.0     # the caller's own arrays stay writeable
    with pytest.raises(ValueError, match="differ in length"):
        QueueView.of(np.zeros(2), np.zeros(3), np.zeros(2))
    assert len(queue.take(np.array([True, False]))) == 1
    assert queue.deadline_s.tolist() == [np.inf, np.inf] and queue.priority.tolist() == [0, 0]

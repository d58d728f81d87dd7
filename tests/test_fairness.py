"""Fair-share orders: hand-computed interleavings per policy, the boost, no ledger, empty queues."""
import dataclasses

import numpy as np
import pytest

from engine.core.views import QueueView, ShareView
from engine.policies import registry
from engine.policies.fairness import (
    DominantResourceFairness,
    FairTree,
    LotteryScheduling,
    MaxMinFairness,
    WeightedFairQueuing,
    cumulative_in_team,
    water_fill,
)
from engine.policies.ordering import queue_order

FAIR_KEYS = ["drf", "fair-tree", "lottery", "max-min", "wfq"]


def ledger(teams=2, users=1, projects=1, **fields) -> ShareView:
    return dataclasses.replace(ShareView.single(teams=teams, users=users, projects=projects), **fields)


def jobs(team, submit=None, gpus=None, requested=None, **more) -> QueueView:
    n = len(team)
    return QueueView.of(np.asarray(submit if submit is not None else np.arange(n), float),
                        np.asarray(requested if requested is not None else [100.0] * n, float),
                        np.asarray(gpus if gpus is not None else [1.0] * n, float),
                        team=np.asarray(team), **more)


def teams_in_order(policy, queue, now_s=0.0):
    return "".join("ABC"[queue.team[i]] for i in queue_order(policy, queue, now_s))


def test_cumulative_in_team_sums_in_submit_order_whatever_the_queue_order():
    queue = jobs([1, 0, 1, 0, 1], submit=[4, 3, 0, 1, 2], gpus=[1, 2, 4, 8, 16])
    assert cumulative_in_team(queue, queue.team, queue.size).tolist() == [21, 10, 4, 8, 20]
    two = cumulative_in_team(queue, queue.team, np.stack([queue.size, np.ones(5)]))
    assert two.tolist() == [[21, 10, 4, 8, 20], [3, 2, 1, 1, 2]]


# --- DRF: the paper's example with GPUs for CPUs: 9 GPUs, 18 GiB; A asks <1 GPU, 4 GiB>, B <3 GPUs, 1 GiB>.
def drf_queue(weight_b=1.0, running_memory_a=0.0):
    shares = ledger(capacity_gpus=9.0, capacity_cpus=90.0, capacity_memory_gib=18.0,
                    weight=np.array([1.0, weight_b]), running_memory_gib=np.array([running_memory_a, 0.0]))
    team = [0, 0, 0, 0, 1, 1, 1]
    return jobs(team, submit=[0, 1, 2, 3, 0.5, 1.5, 2.5], gpus=[1, 1, 1, 1, 3, 3, 3], cpus=[1] * 7,
                memory_gib=[4, 4, 4, 4, 1, 1, 1], shares=shares)


def start_in_order(queue, order, gpus=9.0, memory=18.0):
    """Start jobs in `order` while they fit (no backfilling): the teams of the started jobs."""
    started = ""
    for i in order:
        gpus, memory = gpus - queue.size[i], memory - queue.memory_gib[i]
        if gpus < 0 or memory < 0:
            break
        started += "AB"[queue.team[i]]
    return started


def test_drf_reproduces_the_papers_allocation_three_tasks_for_a_two_for_b():
    queue = drf_queue()
    # A's dominant shares (memory) 2/9, 4/9, 6/9, 8/9; B's (GPUs) 3/9, 6/9, 9/9; the 6/9 tie goes to B (earlier)
    np.testing.assert_allclose(DominantResourceFairness().dominant_share(queue), [2/9, 4/9, 6/9, 8/9, 3/9, 6/9, 1])
    order = queue_order(DominantResourceFairness(), queue, 10.0)
    assert order.tolist() == [0, 4, 1, 5, 2, 3, 6]
    assert sorted(start_in_order(queue, order)) == sorted("AAABB")


@pytest.mark.parametrize("weight_b, running_memory_a, expected", [
    (2.0, 0.0, "BABABAA"),    # B's shares halve: 1.5/9, 3/9, 4.5/9
    (1.0, 10.0, "BBAABAA"),   # A holds 10 GiB: 14/18, 18/18, ...; the tie at 1 goes to A (earlier)
])
def test_drf_weights_and_held_resources(weight_b, running_memory_a, expected):
    assert teams_in_order(DominantResourceFairness(), drf_queue(weight_b, running_memory_a)) == expected


def test_drf_ignores_a_resource_the_region_has_none_of():
    shares = ledger(capacity_gpus=4.0, capacity_cpus=0.0, capacity_memory_gib=0.0)
    queue = jobs([0, 1], gpus=[2, 1], cpus=[1, 100], memory_gib=[1, 1000], shares=shares)
    np.testing.assert_allclose(DominantResourceFairness().dominant_share(queue), [0.5, 0.25])


# --- WFQ
def test_wfq_with_weights_two_to_one_serves_two_jobs_of_a_per_job_of_b():
    shares = ledger(weight=np.array([2.0, 1.0]))
    queue = jobs([0] * 6 + [1] * 6, submit=list(range(6)) + list(range(10, 16)), shares=shares)
    # A's tags 0, 50, 100, ..., 250; B's 0, 100, 200, ...; equal tags go to the earlier submit
    assert teams_in_order(WeightedFairQueuing(), queue) == "ABAABAABABBB"
    tags = WeightedFairQueuing().start_tags(queue)
    assert tags[:3].tolist() == [0, 50, 100] and tags[6:9].tolist() == [0, 100, 200]   # cost 100 GPU-s each


def test_wfq_a_team_that_was_served_more_waits_until_the_other_catches_up():
    queue = jobs([0, 0, 0, 1, 1], submit=[5, 6, 7, 0, 1], shares=ledger(served_gpu_s=np.array([0.0, 250.0])))
    assert teams_in_order(WeightedFairQueuing(), queue) == "AAABB"   # A's tags 0, 100, 200 < B's 250


def test_wfq_virtual_time_gives_no_credit_for_idleness():
    # A runs and has been served 10000 GPU-s; B, idle until now, starts at A's tag instead of 0.
    shares = ledger(served_gpu_s=np.array([10_000.0, 0.0]), running_gpus=np.array([4.0, 0.0]))
    queue = jobs([0, 0, 1, 1], submit=[0, 1, 2, 3], shares=shares)
    assert WeightedFairQueuing().start_tags(queue).tolist() == [10_000, 10_100, 10_000, 10_100]
    assert teams_in_order(WeightedFairQueuing(), queue) == "ABAB"


def test_wfq_charges_unknown_and_long_requests_at_most_max_cost():
    queue = jobs([0, 0, 0, 0], gpus=[2, 2, 2, 2], requested=[np.inf, 1e9, 0.1, 5], shares=ledger())
    tags = WeightedFairQueuing(max_cost_s=1000.0).start_tags(queue)
    assert tags.tolist() == [0, 2000, 4000, 4002]


# --- max-min
@pytest.mark.parametrize("capacity, demand, weight, expected", [
    (10.0, [2, 8, 8], [1, 1, 1], [2, 4, 4]),          # the small demand is met, the rest split evenly
    (10.0, [2, 8, 8], [1, 1, 2], [2, 8 / 3, 16 / 3]),
    (10.0, [2, 3, 0], [1, 1, 1], [2, 3, 0]),          # capacity covers every demand
    (6.0, [6, 6, 6], [1, 1, 1], [2, 2, 2]),
    (0.0, [1, 2], [1, 1], [0, 0]),
])
def test_water_fill(capacity, demand, weight, expected):
    allocation = water_fill(capacity, np.array(demand, float), np.array(weight, float))
    np.testing.assert_allclose(allocation, expected)
    assert allocation.sum() <= capacity + 1e-9


def test_max_min_puts_a_team_below_its_fair_level_first():
    # 8 GPUs; A holds none and asks 2; B holds 6 and asks 2 x 2: demands 2 and 10 -> fair 2 and 6.
    shares = ledger(capacity_gpus=8.0, running_gpus=np.array([0.0, 6.0]))
    queue = jobs([1, 1, 0], submit=[0, 1, 2], gpus=[2, 2, 2], shares=shares)
    assert MaxMinFairness().fair_allocation(queue).tolist() == [2, 6]
    np.testing.assert_allclose(MaxMinFairness().fill_ratio(queue), [8 / 6, 10 / 6, 1])
    assert queue_order(MaxMinFairness(), queue, 5.0).tolist() == [2, 0, 1]


def test_max_min_interleaves_equal_teams_and_keys_gpu_free_jobs_zero():
    # 4 GPUs; demands A 3, B 2, C 0 (one job asking no GPU) -> fair 2, 2, 0
    shares = ledger(teams=3, capacity_gpus=4.0)
    queue = jobs([0, 0, 0, 1, 1, 2], gpus=[1, 1, 1, 1, 1, 0], shares=shares)
    assert MaxMinFairness().fair_allocation(queue).tolist() == [2, 2, 0]
    np.testing.assert_allclose(MaxMinFairness().fill_ratio(queue), [0.5, 1, 1.5, 0.5, 1, 0])
    assert teams_in_order(MaxMinFairness(), queue) == "CABABA"
    no_gpus = dataclasses.replace(shares, capacity_gpus=0.0)
    assert MaxMinFairness().fill_ratio(queue.with_shares(no_gpus)).tolist() == [np.inf] * 5 + [0.0]


# --- lottery
def lottery_queue(seed=0, weights=(1.0, 1.0), team=(0, 0, 0, 0, 0, 1, 1, 1, 1, 1)):
    shares = dataclasses.replace(ledger(teams=len(weights), weight=np.array(weights, float)), seed=seed)
    return jobs(list(team), submit=np.arange(len(team)) % 5, shares=shares)


def test_lottery_is_reproducible_and_depends_on_seed_and_time():
    policy = LotteryScheduling()
    first = queue_order(policy, lottery_queue(seed=1), 100.0).tolist()
    queue_order(policy, lottery_queue(seed=1), 200.0)                  # no call history
    assert queue_order(policy, lottery_queue(seed=1), 100.0).tolist() == first
    assert queue_order(policy, lottery_queue(seed=2), 100.0).tolist() != first
    assert queue_order(policy, lottery_queue(seed=1), 101.0).tolist() != first


def test_lottery_is_fcfs_within_a_team():
    queue = lottery_queue(seed=3)
    for now_s in range(20):
        order = queue_order(LotteryScheduling(), queue, float(now_s))
        for t in (0, 1):
            mine = order[queue.team[order] == t]
            assert np.all(np.diff(queue.submit_s[mine]) >= 0)


@pytest.mark.parametrize("weights, team", [
    ((1.0, 2.0, 5.0), (0, 0, 1, 1, 2, 2)),
    ((1.0, 1.0), (0,) * 9 + (1,)),          # tickets per team, not per job: 9 jobs win no more often than 1
])
def test_lottery_first_picks_are_proportional_to_tickets(weights, team):
    queue, draws = lottery_queue(seed=7, weights=weights, team=team), 4000
    policy = LotteryScheduling()
    firsts = [queue.team[queue_order(policy, queue, float(t))[0]] for t in range(draws)]
    observed = np.bincount(firsts, minlength=len(weights)) / draws
    np.testing.assert_allclose(observed, np.array(weights) / sum(weights), atol=0.03)


# --- fair tree
def test_fair_tree_an_org_with_low_usage_goes_first_even_if_a_heavy_org_has_the_least_used_team():
    # org 0: teams 0 (usage 10) and 1 (usage 1000); org 1: team 2 (usage 100). Weights 1 each.
    shares = ledger(teams=3, orgs=("heavy", "light"), org=np.array([0, 0, 1]),
                    usage_gpu_s=np.array([10.0, 1000.0, 100.0]))
    queue = jobs([0, 1, 2], submit=[0, 1, 2], shares=shares)
    lf = FairTree().level_fairshare(queue)
    np.testing.assert_allclose(lf[0], [(2 / 3) / (1010 / 1110)] * 2 + [(1 / 3) / (100 / 1110)])
    np.testing.assert_allclose(lf[1], [0.5 / (10 / 1010), 0.5 / (1000 / 1010), 1.0])   # team 2 is alone
    assert queue_order(FairTree(), queue, 5.0).tolist() == [2, 0, 1]
    flat = registry.make("order", "multifactor", weight_age=0, weight_qos=0, weight_size=0, weight_deadline=0)
    assert queue_order(flat, queue, 5.0).tolist()[0] == 0        # flat fair share picks the least-used team


def test_fair_tree_ranks_projects_within_a_team_then_users_within_a_project():
    shares = ledger(teams=1, users=3, projects=2, project_usage_gpu_s=np.array([100.0, 10.0]),
                    user_usage_gpu_s=np.array([5.0, 50.0, 0.0]))
    # jobs: (project, user) = (0, 0), (0, 1), (1, 1), (0, 2)
    queue = jobs([0, 0, 0, 0], project=np.array([0, 0, 1, 0]), user=np.array([0, 1, 1, 2]), shares=shares)
    lf = FairTree().level_fairshare(queue)
    np.testing.assert_allclose(lf[2], [0.5 / (100 / 110)] * 2 + [0.5 / (10 / 110)] + [0.5 / (100 / 110)])
    # user 1 is alone under project 1: LF 1; user 2 never ran: LF inf
    np.testing.assert_allclose(lf[3], [(1 / 3) / (5 / 55), (1 / 3) / (50 / 55), 1.0, np.inf])
    assert queue_order(FairTree(), queue, 5.0).tolist() == [2, 3, 0, 1]


# --- every fairness order
@pytest.mark.parametrize("key", FAIR_KEYS)
def test_boost_puts_a_starving_job_first(key):
    shares = ledger(served_gpu_s=np.array([0.0, 1e6]), usage_gpu_s=np.array([0.0, 1e6]), weight=np.array([100.0, 1.0]))
    # B's lone job (id 3) waited longest but B used a lot and weighs 1 against 100 (1 ticket in 101)
    queue = jobs([0, 0, 0, 1], submit=[10, 11, 12, 0], shares=shares)
    assert queue_order(registry.make("order", key), queue, 20.0)[0] != 3
    boosted = registry.make("order", key, boost_after_s=15.0)
    assert queue_order(boosted, queue, 20.0)[0] == 3
    assert queue_order(boosted, queue, 14.0)[0] != 3


@pytest.mark.parametrize("key", FAIR_KEYS)
def test_without_a_ledger_every_fairness_order_is_fcfs(key):
    queue = jobs([0, 3, 1, 2, 0], submit=[4, 0, 3, 1, 2], gpus=[1, 8, 2, 1, 4], project=np.array([0, 5, 2, 1, 0]),
                 user=np.array([9, 1, 2, 3, 4]), cpus=np.ones(5), memory_gib=np.ones(5))
    assert queue_order(registry.make("order", key), queue, 10.0).tolist() == [1, 3, 4, 2, 0]


@pytest.mark.parametrize("key", FAIR_KEYS)
def test_empty_queue_and_queue_order_independence(key):
    policy = registry.make("order", key)
    for shares in (None, ledger(teams=3, users=4, projects=4, capacity_gpus=8.0)):
        empty = jobs([], shares=shares)
        assert queue_order(policy, empty, 0.0).tolist() == [] and policy.keys(empty, 0.0).shape[1] == 0
    queue = jobs([0, 1, 2, 0, 1], submit=[3, 1, 4, 1, 5], gpus=[1, 2, 4, 2, 1], project=np.array([0, 1, 2, 3, 0]),
                 user=np.array([3, 2, 1, 0, 0]), cpus=np.ones(5), memory_gib=np.ones(5),
                 shares=ledger(teams=3, users=4, projects=4, capacity_gpus=8.0, seed=5))
    shuffled = np.array([4, 2, 0, 3, 1])
    np.testing.assert_array_equal(policy.keys(queue.take(shuffled), 7.0), policy.keys(queue, 7.0)[:, shuffled])


@pytest.mark.parametrize("key", FAIR_KEYS)
@pytest.mark.parametrize("value", [-1.0, np.nan])
def test_a_negative_boost_is_refused(key, value):
    with pytest.raises(ValueError, match=f"'{key}': boost_after_s must be (from 0 to|a finite number)"):
        registry.make("order", key, boost_after_s=value)


@pytest.mark.parametrize("key, name", [("wfq", "max_cost_s"), ("fair-tree", "half_life_s")])
def test_other_bad_parameters_are_refused(key, name):
    with pytest.raises(ValueError, match=f"{key}: {name} must be > 0"):
        registry.make("order", key, **{name: 0.0})


def test_registered_time_dependent_with_documented_parameters():
    classes = {"drf": DominantResourceFairness, "wfq": WeightedFairQueuing, "max-min": MaxMinFairness,
               "lottery": LotteryScheduling, "fair-tree": FairTree}
    for key, cls in classes.items():
        assert registry.policy_class("order", key) is cls and cls.traits.time_dependent
        params = registry.parameters("order", key)
        assert params[-1].name == "boost_after_s" and all(p.help for p in params)

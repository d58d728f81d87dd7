"""The fleet integer program: optimal on small instances (checked by brute force over node counts,
each dispatch solved by linprog), caps, infeasibility, and the sample's 14 pools x 168 hours."""
import itertools
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from engine.service.planning.demand import DemandProfile, demand_profile
from engine.service.planning.fleet_milp import PoolOptions, optimise_fleet

ROOT = Path(__file__).resolve().parents[1]
G = 4  # GPUs per node in the small instances


def _options(region="us-east", gpu_type="H100", **kw):
    prices = {"reserved_usd": 1.0, "on_demand_usd": 2.5, "spot_usd": 0.3}
    return PoolOptions(region, gpu_type, G, **{**prices, **kw})


def _dispatch_cost(opt: PoolOptions, firm, flex, nodes, max_defer_h: int) -> float:
    """Cheapest use of fixed (R, O, S) nodes for one pool, written out densely for linprog.

    Variables per hour h: r, o, s, f, b (index 5h + k); cost = reserved + hourly on-demand and spot.
    """
    hours = len(firm)
    reserved, on_demand, spot = nodes
    n = 5 * hours
    cost = np.zeros(n)
    a_eq, b_eq, a_ub, b_ub, bounds = [], [], [], [], []
    for h in range(hours):
        r, o, s, f, b = (5 * h + k for k in range(5))
        cost[o], cost[s] = opt.on_demand_usd, opt.spot_usd / opt.spot_efficiency
        row = np.zeros(n)
        row[[r, o, s]], row[f] = 1.0, -1.0
        a_eq.append(row), b_eq.append(firm[h])
        row = np.zeros(n)
        row[b], row[5 * ((h - 1) % hours) + 4], row[f] = 1.0, -1.0, 1.0
        if hours == 1:
            row[b] = 0.0
        a_eq.append(row), b_eq.append(flex[h])
        row = np.zeros(n)
        row[s], row[f] = 1.0, -1.0
        a_ub.append(row), b_ub.append(0.0)
        waiting = sum(flex[(h - k) % hours] for k in range(min(max_defer_h, hours)))
        bounds += [(0, G * reserved), (0, G * on_demand), (0, opt.spot_efficiency * G * spot), (0, None), (0, waiting)]
    res = linprog(cost, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=np.array(a_eq), b_eq=b_eq, bounds=bounds, method="highs")
    return hours * G * opt.reserved_usd * reserved + res.fun if res.status == 0 else math.inf


def _brute_force(opt: PoolOptions, firm, flex, max_defer_h: int, span=4):
    """Every (R, O, S) in small ranges within the caps -> {nodes: cost}."""
    def upto(cap):
        return range(0, int(min(span, cap // G)) + 1)
    grid = itertools.product(range(opt.min_reserved_nodes, span + 1), upto(opt.max_on_demand_gpus),
                             upto(opt.max_spot_gpus))
    return {nodes: _dispatch_cost(opt, firm, flex, nodes, max_defer_h) for nodes in grid}


def _profile(rows):
    """rows: [(region, gpu_type, firm, flex)] -> a DemandProfile with len(firm) hours."""
    rows = sorted(rows)
    return DemandProfile(pools=tuple((r, t) for r, t, _, _ in rows), firm=np.array([f for _, _, f, _ in rows], float),
                         flexible=np.array([x for _, _, _, x in rows], float), weeks=1.0)


CASES = {
    # name: (firm, flex, options, max_defer_h, headroom, expected (R, O, S))
    "steady demand is all reserved": ([8] * 6, [0] * 6, {}, 0, 1.0, (2, 0, 0)),
    "one spike goes on-demand": ([4, 4, 12, 4, 4, 4], [0] * 6, {}, 0, 1.0, (1, 2, 0)),
    "undeferred flexible peak": ([4] * 6, [0, 0, 12, 0, 0, 0], {"max_spot_gpus": 0}, 0, 1.0, (1, 3, 0)),
    "deferral shaves the peak": ([4] * 6, [0, 0, 12, 0, 0, 0], {"max_spot_gpus": 0}, 3, 1.0, (2, 0, 0)),
    "spot serves flexible work": ([0] * 6, [8] * 6, {}, 0, 1.0, (0, 0, 3)),
    "spot cap": ([0] * 6, [8] * 6, {"max_spot_gpus": 8}, 0, 1.0, (0, 1, 2)),
    "spot never serves firm work": ([8] * 6, [0] * 6, {"reserved_usd": 3.0}, 0, 1.0, (0, 2, 0)),
    "min reserved": ([4] * 6, [0] * 6, {"min_reserved_nodes": 3}, 0, 1.0, (3, 0, 0)),
    "headroom": ([8] * 6, [0] * 6, {}, 0, 1.5, (3, 0, 0)),
    "on-demand cap": ([4, 4, 12, 4, 4, 4], [0] * 6, {"max_on_demand_gpus": 4}, 0, 1.0, (2, 1, 0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_small_instances_match_brute_force(name):
    firm, flex, kw, max_defer_h, headroom, expected = CASES[name]
    opt = _options(**kw)
    plan = optimise_fleet(_profile([("us-east", "H100", firm, flex)]), [opt], max_defer_h=max_defer_h,
                          headroom=headroom)
    costs = _brute_force(opt, np.array(firm) * headroom, np.array(flex) * headroom, max_defer_h)
    best = min(costs.values())
    nodes = (int(plan.reserved_nodes[0]), int(plan.on_demand_nodes[0]), int(plan.spot_nodes[0]))
    assert plan.status == "optimal"
    assert plan.weekly_cost_usd == pytest.approx(best, rel=1e-6)
    assert costs[nodes] == pytest.approx(best, rel=1e-6)  # its node counts achieve the minimum ...
    cheapest = [n for n, c in costs.items() if c <= best * (1 + 1e-6)]
    assert sum(nodes[1:]) == min(n[1] + n[2] for n in cheapest)  # ... with the fewest on-demand + spot nodes
    assert nodes == expected
    assert plan.cost_by_pool_tier["weekly_usd"].sum() == pytest.approx(plan.weekly_cost_usd)


@pytest.mark.parametrize("seed", range(6))
def test_random_small_instances_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    hours = int(rng.integers(3, 7))
    firm, flex = rng.integers(0, 6, hours).astype(float), rng.integers(0, 8, hours) * rng.random(hours)
    opt = _options(reserved_usd=float(rng.uniform(0.5, 1.5)), on_demand_usd=float(rng.uniform(1.5, 3.0)),
                   spot_usd=float(rng.uniform(0.2, 1.2)), spot_efficiency=float(rng.uniform(0.6, 1.0)),
                   max_spot_gpus=float(rng.choice([4, 8, math.inf])))
    max_defer_h = int(rng.integers(0, 3))
    plan = optimise_fleet(_profile([("us-east", "H100", firm, flex)]), [opt], max_defer_h=max_defer_h)
    costs = _brute_force(opt, firm, flex, max_defer_h)
    best = min(costs.values())
    nodes = (int(plan.reserved_nodes[0]), int(plan.on_demand_nodes[0]), int(plan.spot_nodes[0]))
    assert plan.weekly_cost_usd == pytest.approx(best, rel=1e-6)
    assert costs[nodes] == pytest.approx(best, rel=1e-6)


def test_deferral_moves_flexible_work_into_troughs_and_never_late():
    firm, flex = [4] * 6, [0, 0, 12, 0, 0, 0]
    peaks = {}
    for max_defer_h in (0, 3):
        plan = optimise_fleet(_profile([("us-east", "H100", firm, flex)]), [_options(max_spot_gpus=0)],
                              max_defer_h=max_defer_h)
        used = sum(plan.served.values())[0]
        np.testing.assert_allclose(used.sum(), sum(firm) + sum(flex), rtol=1e-9)  # every GPU-hour served
        assert (plan.backlog[0] <= np.array([0, 0, 12, 12, 12, 0]) * (max_defer_h > 0) + 1e-7).all()
        peaks[max_defer_h] = used.max()
    assert peaks[0] == pytest.approx(16.0)
    assert peaks[3] <= 2 * G + 1e-6  # two reserved nodes carry it all


def test_two_pools_in_one_program_cost_the_sum_of_their_optima():
    rows = [("us-east", "H100", [4, 4, 12, 4, 4, 4], [0] * 6), ("eu-west", "L4", [0] * 6, [8] * 6)]
    opts = [_options(), _options("eu-west", "L4", max_spot_gpus=8)]
    plan = optimise_fleet(_profile(rows), opts)
    assert plan.pools == (("eu-west", "L4"), ("us-east", "H100"))
    expected = sum(min(_brute_force(o, np.array(f, float), np.array(x, float), 0).values())
                   for o, (_, _, f, x) in zip(opts, rows))
    assert plan.weekly_cost_usd == pytest.approx(expected, rel=1e-6)
    assert plan.reserved_nodes.tolist() == [0, 1]
    assert plan.on_demand_nodes.tolist() == [1, 2]
    assert plan.spot_nodes.tolist() == [2, 0]
    table = plan.cost_by_pool_tier.set_index(["region", "gpu_type", "tier"])
    assert table.loc[("us-east", "H100", "reserved"), "gpus"] == G
    assert table.loc[("eu-west", "L4", "spot"), "weekly_usd"] == pytest.approx(0.3 / 0.9 * 7.2 * 6)


def test_headroom_per_pool_scales_each_pools_demand():
    rows = [("eu-west", "L4", [8] * 4, [0] * 4), ("us-east", "H100", [8] * 4, [4] * 4)]
    opts = [_options(), _options("eu-west", "L4", max_spot_gpus=0)]
    for headroom in (np.array([1.5, 1.0]), {("eu-west", "L4"): 1.5}):
        plan = optimise_fleet(_profile(rows), opts, headroom=headroom)
        assert plan.reserved_nodes.tolist() == [3, 2]  # 12 GPUs; 8 firm GPUs (the 4 flexible go on spot)
        np.testing.assert_allclose(sum(plan.served.values()), [[12] * 4, [12] * 4])


def test_a_pool_with_options_but_no_demand_keeps_its_committed_nodes():
    plan = optimise_fleet(_profile([("us-east", "H100", [4] * 3, [0] * 3)]),
                          [_options(), _options("ap-south", "A100", min_reserved_nodes=2)])
    assert plan.pools == (("ap-south", "A100"), ("us-east", "H100"))
    assert plan.reserved_nodes.tolist() == [2, 1]
    assert plan.weekly_cost_usd == pytest.approx(3 * G * 1.0 * 3)


@pytest.mark.parametrize("kw, hours, match", [
    ({"max_reserved_nodes": 1, "max_on_demand_gpus": 4}, [4, 4, 4, 12, 4, 4],
     r"pool us-east/H100 cannot serve its demand at hour 3: 4 GPUs short"),
    ({"max_reserved_nodes": 0, "max_on_demand_gpus": 7}, [0, 9, 0, 0, 0, 0],
     r"pool us-east/H100 cannot serve its demand at hour 1: 5 GPUs short"),
    ({"min_reserved_nodes": 2, "max_reserved_nodes": 1}, [4] * 6, r"pool us-east/H100: min_reserved_nodes 2 > "),
])
def test_infeasible_caps_name_the_pool_and_the_hour(kw, hours, match):
    with pytest.raises(ValueError, match=match):
        optimise_fleet(_profile([("us-east", "H100", hours, [0] * 6)]), [_options(**kw)])


def test_pools_with_demand_need_options():
    with pytest.raises(ValueError, match="no PoolOptions for pools with demand: us-east/H100"):
        optimise_fleet(_profile([("us-east", "H100", [4] * 6, [0] * 6)]), [_options("eu-west")])


@pytest.mark.parametrize("kw, expected", [
    ({"min_nodes": 4}, (1, 3, 0)),                              # idle nodes for a wide gang: on-demand first
    ({"min_nodes": 4, "max_on_demand_gpus": 4}, (1, 1, 2)),     # ... then spot
    ({"min_nodes": 4, "max_on_demand_gpus": 0, "max_spot_gpus": 0}, (4, 0, 0)),  # ... else paid reserved
    ({"min_nodes": 1}, (1, 0, 0)),                              # already wide enough
])
def test_min_nodes_makes_the_pool_wide_enough(kw, expected):
    plan = optimise_fleet(_profile([("us-east", "H100", [4] * 6, [0] * 6)]), [_options(**kw)])
    assert (int(plan.reserved_nodes[0]), int(plan.on_demand_nodes[0]), int(plan.spot_nodes[0])) == expected
    assert plan.weekly_cost_usd == pytest.approx(6 * G * 1.0 * expected[0])


def test_min_nodes_beyond_the_caps_is_refused():
    with pytest.raises(ValueError, match="pool us-east/H100: min_nodes 5 > the 3 nodes its caps allow"):
        optimise_fleet(_profile([("us-east", "H100", [4] * 6, [0] * 6)]),
                       [_options(min_nodes=5, max_reserved_nodes=1, max_on_demand_gpus=4, max_spot_gpus=4)])


def _sample_options(pools) -> list[PoolOptions]:
    """Options from the sample's prices and its most common node size per pool."""
    prices = pd.read_csv(ROOT / "sample_data" / "prices.csv").set_index(["region", "gpu_type", "tier"])
    fleet = pd.read_csv(ROOT / "sample_data" / "fleet.csv")
    size = fleet.groupby(["region", "gpu_type"])["gpus"].agg(lambda g: g.mode().max())
    price = prices["usd_per_gpu_hour"]
    return [PoolOptions(r, t, int(size[(r, t)]), price[(r, t, "reserved")], price[(r, t, "on-demand")],
                        price[(r, t, "spot")]) for r, t in pools]


def test_sample_fleet_14_pools_x_168_hours():
    jobs = pd.read_csv(ROOT / "sample_data" / "jobs.csv.gz")
    profile = demand_profile(jobs)
    opts = _sample_options(profile.pools)
    started = time.perf_counter()
    plan = optimise_fleet(profile, opts)
    print(f"14 pools x 168 h, max_defer_h=0: solve {plan.solve_s:.2f} s, total {time.perf_counter() - started:.2f} s, "
          f"weekly ${plan.weekly_cost_usd:,.0f}")
    assert plan.status == "optimal"
    assert plan.served["reserved"].shape == (14, 168)
    used = sum(plan.served.values())
    np.testing.assert_allclose(used, profile.firm + profile.flexible, atol=1e-6)
    g = np.array([o.gpus_per_node for o in opts])
    assert (plan.served["reserved"].max(axis=1) <= g * plan.reserved_nodes + 1e-6).all()
    assert (plan.served["spot"] <= profile.flexible + 1e-6).all()
    assert plan.cost_by_pool_tier["weekly_usd"].sum() == pytest.approx(plan.weekly_cost_usd)

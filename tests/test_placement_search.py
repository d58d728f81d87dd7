"""Batch placement (issue 23, item 4): the local searches, the exact program and the loop's batch hook.

- the exact program's optimum equals the best plan found by enumerating every placement of every
  pod on tiny instances;
- local search never returns a plan worse than its greedy start and never over-allocates
  (hypothesis, the plan allocated at once on a fleet state that refuses any over-allocation);
- a seed gives one plan, and one simulation;
- the greedy plan is best-fit pod by pod, and a run under `greedy` without backfilling equals best-fit's;
- a planned placement that no longer fits is not taken (the policy's `choose` is asked).
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.core.fleet_view import Placement, PodRequest
from engine.core.fragmentation import TargetWorkload
from engine.policies.bundle import Policies
from engine.policies.placement_batch import PLACED_FIRST, BatchFleet, greedy
from engine.policies.placement_milp import solve
from engine.policies.registry import families, make
from engine.sim.cycle.batch_plan import BatchPlan
from engine.sim.simulator import simulate
from engine.sim.state.fleet_state import FleetState
from engine.sim.state.workload import build_workload

SEARCHES = ("hill-climbing", "simulated-annealing", "tabu-search", "hybrid")
BATCH = [k for k in families()["placement"] if make("placement", k).traits.batch]


def _state(gpus, cpu=16_000, used=(), target=None) -> FleetState:
    state = FleetState(np.full(len(gpus), cpu), np.full(len(gpus), 65_536), np.asarray(gpus), ["A"] * len(gpus),
                       target=target)
    for placement, request in used:
        state.allocate(placement, request)
    return state


def _placed_milli(requests, plan) -> int:
    return sum(max(r.total_gpu_milli, 1) for r, p in zip(requests, plan) if p is not None)


def _options(state: FleetState, request: PodRequest):
    """Every (node, GPUs) a pod could take on the empty-handed fleet, and None."""
    view = state.view()
    yield None
    for node in range(len(view)):
        gpus = range(int(view.gpu_count[node]))
        for chosen in itertools.combinations(gpus, request.num_gpu):
            yield Placement(node, chosen, request.gpu_milli)


def _enumerated_optimum(state_of, requests) -> int:
    best = 0
    for plan in itertools.product(*[list(_options(state_of(), r)) for r in requests]):
        state = state_of()
        try:
            for placement, request in zip(plan, requests):
                if placement is not None:
                    state.allocate(placement, request)
        except ValueError:   # PlacementError: this combination over-allocates
            continue
        best = max(best, _placed_milli(requests, plan))
    return best


TINY = [
    # a greedy trap: tightest-fit puts the 500 beside the 400, so the second 500 finds no room
    ([2], [PodRequest(1000, 0, 1, 400), PodRequest(1000, 0, 1, 500), PodRequest(1000, 0, 1, 600),
           PodRequest(1000, 0, 1, 500)]),
    ([2, 2], [PodRequest(4000, 0, 1, 1000), PodRequest(2000, 0, 2, 1000), PodRequest(1000, 0, 1, 700),
              PodRequest(1000, 0, 1, 300), PodRequest(12_000, 0, 1, 1000)]),
    ([1, 2], [PodRequest(9000, 0, 1, 250), PodRequest(9000, 0, 1, 750), PodRequest(3000, 0),
              PodRequest(2000, 0, 2, 1000)]),
]


@pytest.mark.parametrize("gpus,requests", TINY)
def test_the_exact_program_finds_the_enumerated_optimum(gpus, requests):
    optimum = _enumerated_optimum(lambda: _state(gpus), requests)
    plan = make("placement", "exact").plan(_state(gpus).view(), requests, np.random.default_rng(0))
    state = _state(gpus)
    for placement, request in zip(plan, requests):
        if placement is not None:
            state.allocate(placement, request)   # the plan fits all at once
    assert _placed_milli(requests, plan) == optimum
    greedy_plan = make("placement", "greedy").plan(_state(gpus).view(), requests, np.random.default_rng(0))
    assert _placed_milli(requests, greedy_plan) <= optimum


def test_greedy_misses_the_optimum_where_best_fit_is_a_trap():
    gpus, requests = TINY[0]
    plan = make("placement", "greedy").plan(_state(gpus).view(), requests, np.random.default_rng(0))
    assert _placed_milli(requests, plan) < _enumerated_optimum(lambda: _state(gpus), requests) == 2000


def test_a_program_over_max_variables_is_planned_greedily():
    gpus, requests = TINY[0]
    view = _state(gpus).view()
    assert solve(BatchFleet(view, requests, False, False), 3) is None
    start = greedy(view, requests, 0.5, False, False)
    solved = solve(start, 10_000)
    assert solved.optimal and solved.bound == 2000 and solved.plan.unplaced == 0
    small = make("placement", "exact", max_variables=3).plan(view, requests, np.random.default_rng(0))
    assert small == make("placement", "greedy").plan(view, requests, np.random.default_rng(0))


pod = st.one_of(
    st.builds(lambda c, m: PodRequest(c * 1000, 0, 1, m), st.integers(0, 8), st.sampled_from([100, 250, 500, 700])),
    st.builds(lambda c, k: PodRequest(c * 1000, 0, k, 1000), st.integers(0, 8), st.sampled_from([1, 2, 4])),
    st.builds(lambda c: PodRequest(c * 1000, 0), st.integers(1, 8)))
TARGET = TargetWorkload.of([(1000, 500, 1, ()), (2000, 1000, 1, ())], [1, 1])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=6), st.lists(pod, min_size=1, max_size=24),
       st.sampled_from(SEARCHES), st.booleans(), st.booleans(), st.integers(0, 3))
def test_local_search_is_never_worse_than_its_greedy_start_and_never_overallocates(
        gpus, requests, key, with_target, gang_waiting, seed):
    def state():
        return _state(gpus, used=[(Placement(0, (0,), 300), PodRequest(1000, 0, 1, 300))],
                      target=TARGET if with_target else None)

    policy = make("placement", key, max_moves=80)
    start = greedy(state().view(), requests, policy.cpu_weight, True, gang_waiting)
    plan = policy.plan(state().view(), requests, np.random.default_rng(seed), gang_waiting)
    found = BatchFleet(state().view(), requests, True, gang_waiting)
    fleet_state = state()
    for i, (placement, request) in enumerate(zip(plan, requests)):
        if placement is not None:
            fleet_state.allocate(placement, request)   # raises PlacementError on any over-allocation
            found.put(i, placement.node, placement.gpus)
    view = fleet_state.view()
    present = np.arange(view.gpu_free.shape[1]) < view.gpu_count[:, None]
    assert (view.gpu_free[present] >= 0).all() and (view.cpu_free >= 0).all()
    assert found.cost <= start.cost + 1e-6
    assert found.unplaced <= start.unplaced   # placing pods comes first (PLACED_FIRST)
    assert PLACED_FIRST > 1e6


@pytest.mark.parametrize("key", BATCH)
def test_a_seed_gives_one_plan(key):
    gpus = [8, 8, 4, 4, 2, 2]
    rng = np.random.default_rng(3)
    requests = [PodRequest(int(rng.integers(1, 6)) * 1000, 0, 1, int(rng.choice([200, 500, 1000])))
                for _ in range(30)]
    plans = [make("placement", key).plan(_state(gpus, target=TARGET).view(), requests, np.random.default_rng(9))
             for _ in range(2)]
    assert plans[0] == plans[1] and any(p is not None for p in plans[0])


def test_the_greedy_plan_is_best_fit_pod_by_pod():
    gpus = [8, 4, 4, 2]
    rng = np.random.default_rng(5)
    requests = [PodRequest(int(rng.integers(1, 5)) * 1000, 0, int(k), 1000 if k > 1 else int(m))
                for k, m in zip(rng.choice([1, 1, 2], 20), rng.choice([300, 600, 1000], 20))]
    plan = make("placement", "greedy").plan(_state(gpus).view(), requests, np.random.default_rng(0))
    state, best_fit = _state(gpus), make("placement", "best-fit")
    for placement, request in zip(plan, requests):
        assert placement == best_fit.choose(state.view(), request, np.random.default_rng(0))
        if placement is not None:
            state.allocate(placement, request)


def _jobs():
    rng = np.random.default_rng(4)
    rows = []
    for i in range(40):
        share = rng.random() < 0.5
        milli = int(rng.choice([250, 500, 750]))
        rows.append(job(i, int(rng.integers(0, 3000)), int(rng.integers(60, 4000)),
                        milli / 1000 if share else int(rng.choice([1, 2, 4])), gpu_milli=milli if share else None))
    return rows


def _simulate(key, seed=0, backfill="none", **params):
    policies = Policies(make("order", "fcfs"), make("placement", key, **params), make("backfill", backfill),
                        make("admission", "accept-all"))
    return simulate(build_workload(pd.DataFrame(_jobs()), fleet(8, 4, 4, 2, 2)), policies, seed)


def test_a_run_under_greedy_without_backfilling_equals_best_fit():
    pd.testing.assert_frame_equal(_simulate("best-fit").jobs, _simulate("greedy").jobs)


@pytest.mark.parametrize("key,params", [("hill-climbing", {"max_moves": 40}), ("simulated-annealing", {"max_moves": 40}),
                                        ("tabu-search", {"max_moves": 40}), ("hybrid", {"max_moves": 40}),
                                        ("exact", {"batch_pods": 6, "max_nodes": 50})])
def test_a_run_under_a_search_is_deterministic_for_a_seed(key, params):
    first, again = (_simulate(key, 2, "easy", **params) for _ in range(2))
    pd.testing.assert_frame_equal(first.jobs, again.jobs)
    assert first.jobs["start_s"].notna().all()


class _Run:
    """What BatchPlan reads of a run: the placement policy, job widths, requests and the random stream."""

    def __init__(self, requests, widths):
        self.p = type("P", (), {"placement": make("placement", "greedy", batch_pods=2)})()
        self.width, self.rng, self._requests = widths, np.random.default_rng(0), requests

    def request_of(self, j):
        return self._requests[j]


def test_the_batch_is_the_first_single_node_jobs_and_a_stale_plan_is_not_taken():
    share = PodRequest(1000, 0, 1, 600)
    state = _state([1, 1])
    batch = BatchPlan(_Run([share, share, share, share], [1, 2, 1, 1]))
    fleet_of = type("F", (), {"view": state.view()})()
    batch.plan(fleet_of, [0, 1, 2, 3])
    assert set(batch.planned) == {0, 2}   # job 1 is a gang (width 2), batch_pods = 2 stops before job 3
    state.allocate(batch.planned[2], share)   # something else took job 2's room
    assert batch.take(2, state.view(), share) is None
    assert batch.take(0, state.view(), share) is not None and batch.take(0, state.view(), share) is None

"""Every policy's declared traits (engine.core.traits) are checked here: the simulator relies on them.

A time-independent order gives the same keys at two instants; an order that needs failure
predictions reads them; an inert policy does nothing (no backfill window, every job admitted as
asked, every job home, no delay, no quota, no eviction). Registration rejects an unknown trait or
one its family does not have. The settings the simulator reads from some policies of a family
(an order's half_life_s and recalc_s, a quota's holder, a preemption's time_key, a router's
keeps_inflexible_home, keeps_home_when_free) have the type of their declared stand-in wherever a policy has
them, and a router that promises to keep inflexible work home, or work whose home has its GPUs free, does.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from test_policy_contract import ALL, REQUESTS, _fleet, _queue, _regions, _route_requests, _timing_view

from engine.core.traits import DEFAULT, FAMILY_SETTINGS, FAMILY_TRAITS, INERT, Traits, setting, traits_of
from engine.policies import registry
from engine.policies.admission import AdmissionRequest
from engine.policies.preemption import PreemptRequest, RunningView

DECLARED = [(family, key, registry.policy_class(family, key).traits) for family, key in ALL]


def _with(traits_name: str, value: bool = True):
    return [(f, k) for f, k, t in DECLARED if getattr(t, traits_name) is value]


@pytest.mark.parametrize("family,key,traits", DECLARED)
def test_every_registered_policy_declares_traits_of_its_family_only(family, key, traits):
    assert isinstance(traits, Traits)
    declared = {name for name in FAMILY_TRAITS.get(family, ()) if getattr(traits, name) != getattr(DEFAULT, name)}
    undeclared = {name for name in ("time_dependent", "needs_failure", "reads_members", "batch", "inert")
                  if name not in FAMILY_TRAITS.get(family, ()) and getattr(traits, name) != getattr(DEFAULT, name)}
    assert undeclared == set(), undeclared
    assert declared <= FAMILY_TRAITS.get(family, frozenset())


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("time_dependent", False)])
def test_a_time_independent_order_gives_the_same_keys_at_every_instant(family, key):
    policy, queue = registry.make(family, key), _queue(300)
    first = policy.keys(queue, 0.0)
    for now in (1.0, 1_500.0, 86_400.0 * 30):
        assert np.array_equal(policy.keys(queue, now), first)


def test_time_dependent_orders_really_change_with_time():
    """The default is the safe one; an order that keeps it while never changing only runs slower,
    but the bundled ones that keep it do age their jobs (or read the ledger, which changes)."""
    aging = [k for f, k, t in DECLARED if f == "order" and t.time_dependent and not t.reads_members]
    assert {"wfp3", "unicep", "multifactor"} <= set(aging)
    queue = _queue(300)
    for key in ("wfp3", "unicep"):
        policy = registry.make("order", key)
        assert not np.array_equal(policy.keys(queue, 2_000.0), policy.keys(queue, 90_000.0))


@pytest.mark.parametrize("family,key", _with("needs_failure"))
def test_an_order_that_needs_failure_predictions_reads_them(family, key):
    policy, queue = registry.make(family, key), _queue(300)
    rng = np.random.default_rng(1)
    low, high = replace(queue, fail_prob=rng.uniform(0, 0.1, 300)), replace(queue, fail_prob=rng.uniform(0.5, 1, 300))
    assert not np.array_equal(policy.keys(low, 10.0), policy.keys(high, 10.0))


@pytest.mark.parametrize("family,key", _with("batch"))
def test_a_batch_placement_plans_the_whole_batch_at_once_and_others_have_no_plan(family, key):
    policy = registry.make(family, key)
    state = _fleet(12)
    requests = [REQUESTS[i % len(REQUESTS)] for i in range(40)]
    plan = policy.plan(state.view(), requests, np.random.default_rng(0), gang_waiting=True)
    assert len(plan) == len(requests) and any(p is not None for p in plan) and any(p is None for p in plan)
    for placement, request in zip(plan, requests):
        if placement is not None:
            state.allocate(placement, request)   # all at once: raises on any over-allocation
    assert policy.batch_pods >= 1
    assert all(not hasattr(registry.make(f, k), "plan") for f, k in ALL if f == "placement" and (f, k) not in
               _with("batch"))


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "backfill"])
def test_an_inert_backfill_never_opens_a_window(family, key):
    policy = registry.make(family, key)
    assert policy.window(6.0, 5.0, np.array([50.0, 20.0]), np.array([2.0, 4.0]), 10.0, head_requested_s=30.0) is None


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "admission"])
def test_an_inert_admission_admits_every_job_as_asked(family, key):
    policy = registry.make(family, key)
    for n in range(0, 3000, 250):
        request = AdmissionRequest(n, n // 10, 100, 8.0, 2, 3600.0, "training", n * 3600.0, 64.0, 1)
        decision = policy.admit(request)
        assert decision.admitted and decision == policy.admit(AdmissionRequest(0))


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "routing"])
def test_an_inert_router_keeps_every_job_home(family, key):
    policy = registry.make(family, key)
    view = _regions(5)
    for request in _route_requests(5):
        assert int(np.argmax(policy.scores(request, view, request.submit_s))) == request.home


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "timing"])
def test_an_inert_timing_policy_never_delays(family, key):
    from engine.core.views import RouteRequest

    policy, view = registry.make(family, key), _timing_view()
    job = RouteRequest(3, 0, 2.0, "training", True, 7200.0, 1000.0)
    assert policy.delay(job, view, 1000.0) == 0.0


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "preemption"])
def test_an_inert_preemption_policy_evicts_nobody(family, key):
    policy = registry.make(family, key)
    n = 6
    running = RunningView(np.arange(n), np.zeros(n), np.zeros(n), np.full(n, 7200.0), np.zeros(n), np.zeros(n, np.int64),
                          np.ones(n, bool), np.zeros(n, bool), np.ones(n, bool), np.zeros(n, bool))
    assert len(policy.choose(PreemptRequest(tier=1.0, priority=9.0, guaranteed=True, reclaim=True), running)) == 0


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "quota"])
def test_an_inert_quota_books_no_limit(family, key):
    policy = registry.make(family, key)
    book = policy.book(("a", "b"), np.ones(2), 64.0, {})
    assert np.isinf(book.nominal).all() and np.isinf(book.cap).all()


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _with("inert") if f == "cluster"])
def test_an_inert_cluster_policy_names_no_cluster(family, key):
    from engine.core.cluster_view import ANY, ClusterRequest, ClustersView
    one = np.ones(2, bool)
    clusters = ClustersView(("a", "b"), one, one, np.array([8.0, 4.0]), np.array([8.0, 8.0]), np.ones(2, np.int64))
    assert registry.make(family, key).choose(ClusterRequest(gpus=4.0), clusters) == ANY


def test_every_family_with_a_do_nothing_policy_declares_it_inert():
    inert = {f for f, k, t in DECLARED if t.inert}
    assert inert == {"backfill", "admission", "routing", "timing", "quota", "preemption", "cluster"}


def test_registration_rejects_an_unknown_trait_a_foreign_one_and_a_non_bool():
    with pytest.raises(ValueError, match="'fast' is not a policy trait"):
        registry.register("order", "probe-fast", fast=True)
    with pytest.raises(ValueError, match="the routing family has no trait 'time_dependent'"):
        registry.register("routing", "probe-routing", time_dependent=False)
    with pytest.raises(ValueError, match="must be True or False"):
        registry.register("order", "probe-int", time_dependent=0)
    assert "probe-fast" not in registry.families()["order"]


def test_traits_of_a_missing_policy_is_inert_and_an_unregistered_one_needs_declaring():
    assert traits_of(None) is INERT

    @dataclass(frozen=True)
    class Loose:
        def keys(self, queue, now_s):
            return np.vstack([queue.submit_s])

    with pytest.raises(AttributeError):
        traits_of(Loose())


@pytest.mark.parametrize("family,key", [(f, k) for f, k in ALL if f in FAMILY_SETTINGS])
def test_a_policy_that_has_a_setting_gives_it_the_declared_kind_of_value(family, key):
    policy = registry.policy_class(family, key)()
    for name, stand_in in FAMILY_SETTINGS[family].items():
        value = setting(policy, family, name)
        if stand_in is None:
            assert value is None or callable(value), (family, key, name)
        else:
            assert isinstance(value, type(stand_in)), (family, key, name, value)
            if isinstance(stand_in, float):
                assert value >= 0.0, (family, key, name, value)


def test_the_stand_in_reads_for_a_policy_without_the_setting_and_a_typo_is_an_error():
    assert setting(None, "order", "half_life_s") == 7 * 86_400.0 and setting(object(), "quota", "by") == "team"
    assert setting(object(), "preemption", "time_key") is None
    with pytest.raises(KeyError):
        setting(object(), "order", "half_life")
    with pytest.raises(KeyError):
        setting(object(), "backfill", "recalc_s")


def test_the_quota_holders_are_the_two_the_gate_knows():
    for family, key in [(f, k) for f, k in ALL if f == "quota"]:
        assert setting(registry.policy_class(family, key)(), family, "by") in ("team", "queue"), key


def _keeps_inflexible_home(policy) -> bool:
    """On random views, with and without round-trip times and edge regions: every inflexible request (inference,
    development) whose home is allowed and fits is kept home by the router's rule (argmax among the regions that fit, home
    first; home when no score is finite)."""
    for n in (1, 4, 9):
        for seed, near in [(s, near) for s in range(5) for near in (False, True)]:
            view = _regions(n, seed)
            if near:
                view = replace(view, latency_ms=np.zeros(n), edge=np.arange(n) % 2 == 1)
            for request in [replace(r, flexible=False, workload_class=c) for r in _route_requests(n, seed)
                            for c in ("inference", "development")]:
                home = request.home
                if not (view.allowed[home] and view.fits[home]):
                    continue
                scores = np.where(view.fits, policy.scores(request, view, request.submit_s), -np.inf)
                if np.isfinite(scores.max()) and scores[home] != scores.max():
                    return False
    return True


ROUTERS = [(k, {}) for f, k in ALL if f == "routing"] + [("overflow", {"move_inflexible": True})]


@pytest.mark.parametrize("key,params", ROUTERS)
def test_a_router_promising_to_keep_inflexible_work_home_keeps_it_home(key, params):
    policy = registry.make("routing", key, **params)
    assert not setting(policy, "routing", "keeps_inflexible_home") or _keeps_inflexible_home(policy)


def test_overflow_promises_to_keep_inflexible_work_home_only_without_move_inflexible():
    assert setting(registry.make("routing", "overflow"), "routing", "keeps_inflexible_home") is True
    moving = registry.make("routing", "overflow", move_inflexible=True)
    assert setting(moving, "routing", "keeps_inflexible_home") is False and not _keeps_inflexible_home(moving)


def _keeps_home_when_free(policy) -> tuple[bool, int]:
    """(whether every request whose home is allowed, fits and has its GPUs free is kept home by the router's rule,
    on random views with and without round-trip times and edge regions, inference excepted on a view with edge
    regions; how many such requests were tried)."""
    tried = 0
    for n in (1, 4, 9):
        for seed, near in [(s, near) for s in range(5) for near in (False, True)]:
            view = _regions(n, seed)
            if near:
                view = replace(view, latency_ms=np.zeros(n), edge=np.arange(n) % 2 == 1)
            for request in _route_requests(n, seed):
                home = request.home
                if not (view.allowed[home] and view.fits[home] and view.free_gpus[home] >= request.gpus - 1e-9):
                    continue
                if request.workload_class == "inference" and view.edge is not None and view.edge.any():
                    continue
                tried += 1
                scores = np.where(view.fits, policy.scores(request, view, request.submit_s), -np.inf)
                if np.isfinite(scores.max()) and scores[home] != scores.max():
                    return False, tried
    return True, tried


@pytest.mark.parametrize("key,params", ROUTERS)
def test_a_router_promising_to_keep_work_home_while_home_is_free_keeps_it_home(key, params):
    policy = registry.make("routing", key, **params)
    if setting(policy, "routing", "keeps_home_when_free"):
        held, tried = _keeps_home_when_free(policy)
        assert held and tried > 500


def test_latency_aware_sends_inference_from_a_free_home_to_an_edge_region_so_its_promise_leaves_that_out():
    view = replace(_regions(2, 3, allowed=True), fits=np.ones(2, bool), free_gpus=np.array([8.0, 8.0]),
                   queued_gpus=np.zeros(2), latency_ms=np.array([0.0, 5.0]), slo_ms=50.0, edge=np.array([False, True]))
    request = replace(_route_requests(2)[0], home=0, gpus=1.0, workload_class="inference", flexible=False)
    scores = registry.make("routing", "latency-aware").scores(request, view, 0.0)
    assert scores[1] > scores[0]


def test_the_home_when_free_check_catches_a_router_that_moves_work_from_a_free_home():
    assert setting(registry.make("routing", "lowest-carbon"), "routing", "keeps_home_when_free") is False
    assert _keeps_home_when_free(registry.make("routing", "lowest-carbon"))[0] is False
    assert {key for key, params in ROUTERS
            if setting(registry.make("routing", key, **params), "routing", "keeps_home_when_free")} == {
        "follow-the-sun", "overflow", "latency-aware"}


def _takes_sole_holder(policy) -> tuple[bool, int]:
    """(whether, on random views of 1-6 clusters where at most one holds the job, the policy answers ANY when none
    does and the holder when it fits, else WAIT; how many such views were asked)."""
    from engine.core.cluster_view import ANY, WAIT, ClusterRequest, ClustersView
    rng, asked = np.random.default_rng(7), 0
    for _ in range(400):
        k = int(rng.integers(1, 7))
        holds = np.zeros(k, bool)
        sole = int(rng.integers(-1, k))
        if sole >= 0:
            holds[sole] = True
        fits = rng.random(k) < 0.6
        free = rng.choice([0.0, 2.0, 8.0, np.nan], k)
        view = ClustersView(tuple(f"c{c}" for c in range(k)), holds, fits, free, np.full(k, 8.0),
                            np.where(fits, rng.integers(1, 4, k), 0))
        want = ANY if sole < 0 else sole if fits[sole] else WAIT
        asked += 1
        if policy.choose(ClusterRequest(gpus=float(rng.choice([1.0, 8.0])), nodes=int(rng.integers(1, 3))),
                         view) != want:
            return False, asked
    return True, asked


@pytest.mark.parametrize("family,key", [(f, k) for f, k in ALL if f == "cluster"])
def test_a_cluster_policy_promising_to_take_the_sole_holder_does(family, key):
    policy = registry.make(family, key)
    promised = setting(policy, "cluster", "takes_sole_holder")
    assert promised is not traits_of(policy).inert  # every bundled one but the inert `any` promises
    if promised:
        held, asked = _takes_sole_holder(policy)
        assert held and asked == 400


def test_the_sole_holder_check_catches_a_policy_that_answers_any_for_a_held_job():
    assert _takes_sole_holder(registry.make("cluster", "any"))[0] is False

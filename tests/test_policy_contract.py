"""One contract suite over every registered policy, whatever its family.

Every policy, built with its default parameters: is a frozen dataclass whose parameters are
introspectable; is deterministic; never mutates what it is shown; copes with an empty queue and an
empty fleet; (placement, gang) never proposes a placement the fleet state would refuse; and (cluster)
only ever names a cluster that holds the job and has room for it now.
"""
import dataclasses

import numpy as np
import pytest

from engine.core.cluster_view import ANY, WAIT, ClusterRequest, ClustersView
from engine.core.fleet_view import PodRequest
from engine.core.views import QueueView, RegionsView, RouteRequest, ShareView, TimingView
from engine.policies import registry
from engine.policies.admission import AdmissionRequest
from engine.policies.ordering import queue_order
from engine.sim.state.fleet_state import FleetState
from engine.sim.state.region import GangFleetState

ALL = [(family, key) for family, keys in registry.families().items() for key in keys]


def _of(family):
    return [(f, k) for f, k in ALL if f == family]


def test_every_family_of_the_issue_is_registered():
    assert {"order", "placement", "backfill", "admission", "gang"} <= set(registry.families())


@pytest.mark.parametrize("family,key", ALL)
def test_policy_is_a_frozen_dataclass_with_introspectable_parameters(family, key):
    policy = registry.make(family, key)
    assert dataclasses.is_dataclass(policy)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(policy, "_probe", 1)
    for parameter in registry.parameters(family, key):
        assert parameter.default is not dataclasses.MISSING, f"{key}.{parameter.name} needs a default"
    assert policy.registry_key == key and policy.family == family
    assert (type(policy).__doc__ or "").strip(), "a policy says what it does"


@pytest.mark.parametrize("family,key", ALL)
def test_every_numeric_parameter_has_a_unit_and_a_range_and_out_of_range_is_refused(family, key):
    for parameter in registry.parameters(family, key):
        if parameter.type not in (int, float):
            continue
        bound = parameter.bound
        assert bound is not None, f"{key}.{parameter.name}: name it with its unit (engine.core.bounds) or declare one"
        assert bound.check(parameter.name, parameter.default) is None, f"{key}.{parameter.name}'s default"
        too_big = bound.high * 2 + 1 if parameter.type is int else float("inf")
        with pytest.raises(registry.PolicyError, match=parameter.name):
            registry.make(family, key, **{parameter.name: int(too_big) if parameter.type is int else too_big})
        if parameter.type is float:
            with pytest.raises(registry.PolicyError, match="finite"):
                registry.make(family, key, **{parameter.name: float("nan")})


def _queue(n, seed=3):
    rng = np.random.default_rng(seed)
    return QueueView.of(
        np.sort(rng.uniform(0, 1000, n)), rng.uniform(10, 5000, n), rng.integers(1, 9, n).astype(float),
        priority=rng.integers(0, 5, n).astype(float), deadline_s=rng.uniform(2000, 9000, n),
        team=rng.integers(0, 3, n), user=rng.integers(0, 6, n), project=rng.integers(0, 4, n),
        queue_class=rng.integers(0, 5, n), qos=rng.uniform(0, 1, n), cpus=rng.uniform(1, 64, n),
        memory_gib=rng.uniform(1, 512, n), shares=ShareView.single(teams=3, users=6, projects=4, capacity_gpus=64.0))


@pytest.mark.parametrize("family,key", _of("order"))
def test_order_is_a_deterministic_permutation_and_copes_with_an_empty_queue(family, key):
    policy = registry.make(family, key)
    queue = _queue(200)
    before = {f.name: getattr(queue, f.name).copy() for f in dataclasses.fields(queue) if f.name != "shares"}
    first = queue_order(policy, queue, 1500.0)
    assert sorted(first.tolist()) == list(range(200))
    assert np.array_equal(first, queue_order(policy, queue, 1500.0))
    for name, values in before.items():
        assert np.array_equal(getattr(queue, name), values)
    assert len(queue_order(policy, _queue(0), 0.0)) == 0


def _fleet(n_nodes, seed=5):
    rng = np.random.default_rng(seed)
    gpus = rng.choice([0, 2, 4, 8], n_nodes)
    models = [("A100" if i % 2 else "V100") if g else "" for i, g in enumerate(gpus)]
    return FleetState(np.full(n_nodes, 64_000), np.full(n_nodes, 262_144), gpus, models)


REQUESTS = [
    PodRequest(cpu_milli=4000, memory_mib=8192, num_gpu=1, gpu_milli=1000),
    PodRequest(cpu_milli=2000, memory_mib=4096, num_gpu=1, gpu_milli=300),
    PodRequest(cpu_milli=8000, memory_mib=16384, num_gpu=4, gpu_milli=1000),
    PodRequest(cpu_milli=16000, memory_mib=32768),
    PodRequest(cpu_milli=1000, memory_mib=1024, num_gpu=2, gpu_milli=1000, gpu_models=("A100",)),
]


def _snapshot(view):
    return {f.name: getattr(view, f.name).copy() for f in dataclasses.fields(view)
            if isinstance(getattr(view, f.name), np.ndarray)}


@pytest.mark.parametrize("family,key", _of("placement"))
def test_placement_never_overallocates_never_mutates_and_is_deterministic(family, key):
    policy = registry.make(family, key)
    runs = []
    for _ in range(2):
        state, rng, chosen = _fleet(24), np.random.default_rng(11), []
        for step in range(150):
            request = REQUESTS[step % len(REQUESTS)]
            view = state.view()
            before = _snapshot(view)
            placement = policy.choose(view, request, rng)
            after = _snapshot(view)
            assert all(np.array_equal(before[k], after[k]) for k in before), "choose() changed the fleet"
            if placement is not None:
                state.allocate(placement, request)   # raises if it would over-allocate
            chosen.append(placement)
        final = state.view()
        present = np.arange(final.gpu_free.shape[1]) < final.gpu_count[:, None]
        assert (final.gpu_free[present] >= 0).all() and (final.cpu_free >= 0).all()
        assert any(p is not None for p in chosen) and any(p is None for p in chosen)
        runs.append(chosen)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("family,key", _of("placement"))
def test_placement_on_an_empty_fleet_finds_nothing(family, key):
    empty = FleetState(np.zeros(0), np.zeros(0), np.zeros(0), [])
    for request in REQUESTS:
        assert registry.make(family, key).choose(empty.view(), request, np.random.default_rng(0)) is None


@pytest.mark.parametrize("family,key", _of("backfill"))
def test_backfill_window_is_deterministic_and_copes_with_nothing_running(family, key):
    policy = registry.make(family, key)
    ends, units = np.array([50.0, 20.0, 80.0]), np.array([2.0, 4.0, 2.0])
    first = policy.window(6.0, 1.0, ends, units, 10.0, head_requested_s=30.0)
    assert first == policy.window(6.0, 1.0, ends, units, 10.0, head_requested_s=30.0)
    assert np.array_equal(ends, [50.0, 20.0, 80.0]) and np.array_equal(units, [2.0, 4.0, 2.0])
    policy.window(6.0, 1.0, np.zeros(0), np.zeros(0), 10.0, head_requested_s=30.0)


def _candidates(n, seed=7):
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 200, n).round(), rng.integers(0, 10, n).astype(float)


@pytest.mark.parametrize("family,key", _of("backfill"))
def test_backfill_window_protocol(family, key):
    """allows gives one bool per candidate, alone or together. A window that is not sequential
    answers the same either way and ignores skips; any window takes a start or a skip per candidate."""
    policy = registry.make(family, key)
    window = policy.window(6.0, 1.0, np.array([50.0, 20.0, 80.0]), np.array([2.0, 4.0, 2.0]), 10.0,
                           head_requested_s=30.0, head_pool=1)
    if window is None:
        return
    assert isinstance(type(window).sequential, bool)
    requested, units = _candidates(40)
    pools = np.random.default_rng(3).integers(0, 3, 40)
    allowed = window.allows(10.0, requested, units, pools)
    assert allowed.dtype == bool and allowed.shape == (40,)
    assert window.allows(10.0, requested[:0], units[:0], pools[:0]).shape == (0,)
    for i, (r, u, p) in enumerate(zip(requested, units, pools)):
        one = window.allows(10.0, np.array([r]), np.array([u]), np.array([p]))
        assert one.shape == (1,)
        if not window.sequential:
            assert window.after_skip(10.0, r, u, p) == window
            assert one[0] == window.allows(10.0, requested, units, pools)[i]
        window = window.after_start(10.0, r, u, p) if one[0] and u <= 1.0 else window.after_skip(10.0, r, u, p)
    assert window.allows(10.0, requested, units, pools).shape == (40,)


def _gang_fleet(n_nodes, seed=5):
    rng = np.random.default_rng(seed)
    gpus = rng.choice([4, 8], n_nodes)
    return GangFleetState(np.full(n_nodes, 64_000), np.full(n_nodes, 262_144), gpus, ["A100"] * n_nodes,
                          rack=rng.integers(0, 5, n_nodes))


@pytest.mark.parametrize("family,key", _of("gang"))
def test_gang_never_overallocates_never_mutates_and_is_deterministic(family, key):
    policy = registry.make(family, key)
    runs = []
    for _ in range(2):
        state, rng, chosen, held = _gang_fleet(30), np.random.default_rng(11), [], []
        widths = np.random.default_rng(13).integers(1, 9, 120)
        for step, width in enumerate(widths.tolist()):
            if step % 3 == 2 and held:
                state.release_whole(held.pop(0))
            free = np.flatnonzero(state.entirely_free)
            view, free_before = state.view(), free.copy()
            before = _snapshot(view)
            nodes = policy.choose_nodes(view, free, width, rng)
            assert all(np.array_equal(before[k], v) for k, v in _snapshot(view).items()), "changed the fleet"
            assert np.array_equal(free, free_before), "changed free_nodes"
            if len(free) < width:
                assert nodes is None
            if nodes is not None:
                assert len(nodes) == width and (np.diff(nodes) > 0).all() and np.isin(nodes, free).all()
                state.allocate_whole(nodes)       # raises unless ascending, distinct and entirely free
                held.append(nodes)
            chosen.append(None if nodes is None else nodes.tolist())
        assert any(c is not None for c in chosen) and any(c is None for c in chosen)
        runs.append(chosen)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("family,key", _of("gang"))
def test_gang_on_an_empty_fleet_finds_nothing(family, key):
    empty = GangFleetState(np.zeros(0), np.zeros(0), np.zeros(0), [])
    policy = registry.make(family, key)
    assert policy.choose_nodes(empty.view(), np.zeros(0, np.int64), 1, np.random.default_rng(0)) is None


@pytest.mark.parametrize("family,key", _of("admission"))
def test_admission_is_deterministic_and_admits_into_an_empty_queue(family, key):
    policy = registry.make(family, key)
    assert policy.admit(AdmissionRequest(0)).admitted is True
    requests = [AdmissionRequest(n, n // 10, 100, 8.0, 2, 3600.0, "training", n * 3600.0, 64.0, 1)
                for n in range(0, 3000, 500)]
    assert [policy.admit(r) for r in requests] == [policy.admit(r) for r in requests]


def _regions(n, seed=17, allowed=None):
    """A RegionsView of n regions with read-only arrays (a policy that writes to one raises)."""
    rng = np.random.default_rng(seed)
    capacity = rng.integers(1, 65, n).astype(float)
    arrays = dict(
        free_gpus=np.floor(capacity * rng.uniform(0, 1, n)), capacity_gpus=capacity,
        queued_gpus=rng.integers(0, 40, n).astype(float), at_work=rng.uniform(size=n) < 0.5,
        usd_per_gpu_hour=np.where(rng.uniform(size=n) < 0.2, np.nan, rng.uniform(1, 4, n)),
        g_co2e_per_kwh=rng.uniform(20, 700, n),
        allowed=rng.uniform(size=n) < 0.7 if allowed is None else np.full(n, allowed),
        fits=rng.uniform(size=n) < 0.9)
    for array in arrays.values():
        array.flags.writeable = False
    return RegionsView(names=tuple(f"r{i}" for i in range(n)), **arrays)


def _route_requests(n_regions, seed=19):
    from engine.core.vocabulary import WORKLOAD_CLASSES
    rng = np.random.default_rng(seed)
    return [RouteRequest(index=i, home=int(rng.integers(n_regions)), gpus=float(rng.choice([0.5, 1, 4, 8, 16])),
                         workload_class=WORKLOAD_CLASSES[i % len(WORKLOAD_CLASSES)], flexible=bool(i % 3),
                         requested_s=float(rng.uniform(60, 86_400)), submit_s=float(i * 30))
            for i in range(60)]


def test_the_routing_family_is_registered():
    assert registry.families()["routing"] == ["cheapest", "data-local", "follow-the-sun", "home-only",
                                              "latency-aware", "lowest-carbon", "overflow", "soft-constraints", "weighted"]


@pytest.mark.parametrize("family,key", _of("routing"))
@pytest.mark.parametrize("n_regions", [1, 4, 9])
def test_routing_scores_one_float_per_region_deterministically_without_mutating(family, key, n_regions):
    policy = registry.make(family, key)
    for seed in range(5):
        view = _regions(n_regions, seed)
        before = _snapshot(view)
        for request in _route_requests(n_regions, seed):
            scores = policy.scores(request, view, request.submit_s)
            assert isinstance(scores, np.ndarray) and scores.dtype == np.float64 and scores.shape == (n_regions,)
            assert (np.isfinite(scores) | (scores == -np.inf)).all(), "scores are finite or -inf"
            assert np.array_equal(scores, policy.scores(request, view, request.submit_s))
        assert all(np.array_equal(before[k], v, equal_nan=True) for k, v in _snapshot(view).items())


@pytest.mark.parametrize("family,key", _of("routing"))
def test_routing_copes_with_every_region_disallowed(family, key):
    policy = registry.make(family, key)
    view = _regions(4, allowed=False)
    for request in _route_requests(4):
        scores = policy.scores(request, view, 0.0)
        assert scores.shape == (4,)
        assert (np.delete(scores, request.home) == -np.inf).all(), "only home may keep a score"


@pytest.mark.parametrize("family,key", [(f, k) for f, k in _of("routing")
                                        if registry.policy_class(f, k).traits.relaxes])
def test_a_relaxing_router_decides_what_it_scores_and_names_each_regions_relaxed_constraints(family, key):
    policy = registry.make(family, key)
    for seed in range(3):
        view = _regions(5, seed)
        for request in _route_requests(5, seed):
            routed = policy.decide(request, view, request.submit_s)
            assert np.array_equal(routed.scores, policy.scores(request, view, request.submit_s))
            assert len(routed.relaxed) == 5
            assert routed.region == -1 or routed.scores[routed.region] == routed.scores.max() > -np.inf
            assert all(isinstance(name, str) and isinstance(cost, float) for region in routed.relaxed
                       for name, cost in region)


def _timing_view(seed=23, n=673, latest=np.inf):
    rng = np.random.default_rng(seed)
    view = TimingView(900.0 * np.arange(n) + 1000.0, rng.uniform(50, 800, n), rng.random(n) < 0.4, latest)
    for array in (view.start_s, view.g_co2e_per_kwh, view.at_work):
        array.flags.writeable = False
    return view


@pytest.mark.parametrize("family,key", _of("timing"))
def test_timing_delays_are_finite_deterministic_and_only_for_flexible_work(family, key):
    policy, view = registry.make(family, key), _timing_view()
    for flexible in (True, False):
        job = RouteRequest(3, 0, 2.0, "training" if flexible else "inference", flexible, 7200.0, 1000.0)
        first = policy.delay(job, view, 1000.0)
        assert first == policy.delay(job, view, 1000.0) and 0.0 <= first < np.inf
        assert flexible or first == 0.0
        assert first == 0.0 or first in set(view.start_s - 1000.0)  # a candidate start


@pytest.mark.parametrize("family,key", _of("timing"))
def test_timing_copes_with_no_candidates(family, key):
    view = TimingView(np.zeros(0), np.zeros(0), np.zeros(0, bool), np.inf)
    job = RouteRequest(0, 0, 1.0, "batch", True, 60.0, 0.0)
    assert registry.make(family, key).delay(job, view, 0.0) == 0.0


def test_the_cluster_family_is_registered():
    assert registry.families()["cluster"] == ["any", "best-fit", "most-free", "topology"]


def _clusters(n, seed=0, holds=None):
    rng = np.random.default_rng(seed)
    capacity = rng.choice([8.0, 32.0, 64.0], n)
    view = ClustersView(tuple(f"c{i}" for i in range(n)), rng.random(n) < 0.8 if holds is None else np.full(n, holds),
                        rng.random(n) < 0.5, np.floor(rng.random(n) * capacity), capacity, rng.integers(0, 4, n))
    for array in (view.holds, view.fits, view.free_gpus, view.capacity_gpus, view.racks):
        array.flags.writeable = False
    return view


@pytest.mark.parametrize("family,key", _of("cluster"))
@pytest.mark.parametrize("n_clusters", [1, 3, 8])
def test_cluster_choice_is_deterministic_compatible_and_fits_now(family, key, n_clusters):
    policy = registry.make(family, key)
    for seed in range(20):
        view = _clusters(n_clusters, seed)
        before = {name: getattr(view, name).copy() for name in ("holds", "fits", "free_gpus", "racks")}
        for job in (ClusterRequest(4.0), ClusterRequest(16.0, 2, "A")):
            choice = policy.choose(job, view)
            assert choice == policy.choose(job, view) and isinstance(choice, int)
            assert choice in (ANY, WAIT) or (0 <= choice < n_clusters and view.holds[choice] and view.fits[choice])
            if policy.traits.inert:
                assert choice == ANY
            elif (view.holds & view.fits).any():
                assert choice >= 0, "a cluster that holds the job and has room now is taken"
            else:
                assert choice == (WAIT if view.holds.any() else ANY)
        assert all(np.array_equal(before[name], getattr(view, name)) for name in before)


@pytest.mark.parametrize("family,key", _of("cluster"))
def test_cluster_choice_copes_with_no_cluster_and_with_none_compatible(family, key):
    policy = registry.make(family, key)
    assert policy.choose(ClusterRequest(1.0), _clusters(0)) == ANY
    assert policy.choose(ClusterRequest(1.0), _clusters(4, holds=False)) == ANY

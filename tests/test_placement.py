"""Placement policies and the fleet state they act on: exact choices on a tiny fleet (worked out by
hand from each policy's formula), and a contract every registered placement policy must keep."""
import numpy as np
import pytest

from engine.core.errors import ScenarioError
from engine.core.fleet_view import Placement, PlacementError, PodRequest
from engine.core.fragmentation import TargetWorkload
from engine.policies.registry import families, make
from engine.scenario.spec import Scenario
from engine.sim.state.fleet_state import FleetState

# Tiny fleet: node 0 = 2 x T4 (32 cores), node 1 = 4 x V100 (64 cores), node 2 = CPU only (16 cores),
# node 3 = 2 x T4 (32 cores). Largest node: 64,000 CPU milli, 4,000 GPU milli.
CPU = [32000, 64000, 16000, 32000]
MEMORY = [65536, 131072, 32768, 65536]
GPUS = [2, 4, 0, 2]
MODELS = ["T4", "V100", "", "T4"]
# Before each case: node 0 GPU 1 has 700 free, node 1 GPU 0 has 500 free and GPU 1 none.
SETUP = [
    (Placement(0, (1,), 300), PodRequest(2000, 1024, 1, 300)),
    (Placement(1, (0,), 500), PodRequest(4000, 1024, 1, 500)),
    (Placement(1, (1,), 1000), PodRequest(8000, 1024, 1, 1000)),
]
SHARE = PodRequest(1000, 1024, 1, 400)
ONE = PodRequest(4000, 1024, 1, 1000)
TWO = PodRequest(4000, 1024, 2, 1000)
CPU_ONLY = PodRequest(8000, 1024)
BIG_CPU = PodRequest(29000, 1024)
T4_SHARE = PodRequest(1000, 1024, 1, 600, ("T4",))
# Target for FGD: a half-GPU shape (1 core) and a whole-GPU shape (2 cores), equally popular.
TARGET = TargetWorkload.of([(1000, 500, 1, ()), (2000, 1000, 1, ())], [1, 1])


def fleet(target=None) -> FleetState:
    state = FleetState(CPU, MEMORY, GPUS, MODELS, target=target)
    for placement, request in SETUP:
        state.allocate(placement, request)
    return state


CASES = [
    # policy, request, expected (node, GPUs)
    ("first-fit", SHARE, (0, (0,))),
    ("first-fit", ONE, (0, (0,))),
    ("first-fit", TWO, (1, (2, 3))),
    ("first-fit", CPU_ONLY, (0, ())),
    ("first-fit", T4_SHARE, (0, (0,))),
    # best-fit scores: SHARE 61/33/-/55, ONE 70/43/-/65, TWO -/56/-/78, CPU_ONLY 61/34/93/56, BIG_CPU 77/50/-/72
    ("best-fit", SHARE, (0, (1,))),
    ("best-fit", ONE, (0, (0,))),
    ("best-fit", TWO, (3, (0, 1))),
    ("best-fit", CPU_ONLY, (2, ())),
    ("best-fit", BIG_CPU, (0, ())),
    ("best-fit", T4_SHARE, (0, (1,))),
    # worst-fit: SHARE 38/66/-/44, ONE 29/56/-/34, CPU_ONLY 38/65/6/43
    ("worst-fit", SHARE, (1, (0,))),
    ("worst-fit", ONE, (1, (2,))),
    ("worst-fit", CPU_ONLY, (1, ())),
    # dot-product: SHARE 97/96/-/97 (tie: lowest index), ONE 93/89/-/92, TWO -/81/-/85, CPU_ONLY 97/94/98/96
    ("dot-product", SHARE, (0, (1,))),
    ("dot-product", ONE, (0, (0,))),
    ("dot-product", TWO, (3, (0, 1))),
    ("dot-product", CPU_ONLY, (2, ())),
    # gpu-packing: SHARE 93/95/-/31, ONE 49/49/-/31, TWO -/48/-/31, T4_SHARE 93/-/-/31, CPU_ONLY all 0
    ("gpu-packing", SHARE, (1, (0,))),
    ("gpu-packing", ONE, (0, (0,))),
    ("gpu-packing", TWO, (1, (2, 3))),
    ("gpu-packing", T4_SHARE, (0, (1,))),
    ("gpu-packing", CPU_ONLY, (0, ())),
    # gpu-clustering: SHARE 89/59/-/37, ONE 14/59/-/37, TWO -/9/-/37, CPU_ONLY all 0
    ("gpu-clustering", SHARE, (0, (1,))),
    ("gpu-clustering", ONE, (1, (2,))),
    ("gpu-clustering", TWO, (3, (0, 1))),
    ("gpu-clustering", CPU_ONLY, (0, ())),
    # fgd with TARGET: SHARE best GPU per node 51/53/-/42; ONE and TWO change nothing (all 50, lowest
    # index); BIG_CPU leaves node 0 one core, blocking the whole-GPU shape there: 37/50/-/50
    ("fgd", SHARE, (1, (0,))),
    ("fgd", ONE, (0, (0,))),
    ("fgd", TWO, (1, (2, 3))),
    ("fgd", BIG_CPU, (1, ())),
]


@pytest.mark.parametrize("key,request_,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_exact_choice_on_the_tiny_fleet(key, request_, expected):
    state = fleet(TARGET if key == "fgd" else None)
    placement = make("placement", key).choose(state.view(), request_, np.random.default_rng(0))
    assert (placement.node, placement.gpus) == expected
    assert placement.gpu_milli == request_.gpu_milli
    state.allocate(placement, request_)   # and it really fits


def test_fgd_without_a_target_uses_the_pods_own_shape():
    # Own shape (1 core, 400 milli): node 0 GPU 0, node 1 GPU 2 and node 3 GPU 0 all keep F = 0 (score 50).
    placement = make("placement", "fgd").choose(fleet().view(), SHARE, np.random.default_rng(0))
    assert (placement.node, placement.gpus) == (0, (0,))


def test_random_picks_every_feasible_node_and_a_fitting_gpu():
    state, policy = fleet(), make("placement", "random")
    rng = np.random.default_rng(5)
    picks = {(p.node, p.gpus) for p in (policy.choose(state.view(), SHARE, rng) for _ in range(200))}
    assert picks == {(0, (0,)), (0, (1,)), (1, (0,)), (1, (2,)), (1, (3,)), (3, (0,)), (3, (1,))}
    whole = {policy.choose(state.view(), TWO, rng) for _ in range(50)}
    assert whole == {Placement(1, (2, 3), 1000), Placement(3, (0, 1), 1000)}


# --- Contract over every registered placement policy ----------------------------------------------

POLICIES = families()["placement"]
IMPOSSIBLE = [PodRequest(1000, 0, 4, 1000), PodRequest(1000, 200000), PodRequest(1000, 0, 1, 100, ("A100",)),
              PodRequest(70000)]


def test_the_family_has_the_policies_of_the_issue():
    assert POLICIES == ["best-fit", "cheapest-tier", "dot-product", "exact", "fgd", "first-fit", "gpu-clustering",
                        "gpu-packing", "greedy", "hill-climbing", "hybrid", "random", "simulated-annealing", "tabu-search",
                        "worst-fit"]


@pytest.mark.parametrize("key", POLICIES)
def test_nothing_fits_and_empty_fleet_give_none(key):
    policy, rng = make("placement", key), np.random.default_rng(0)
    for request in IMPOSSIBLE:
        assert policy.choose(fleet(TARGET).view(), request, rng) is None
    empty = FleetState([], [], [], [], target=TARGET)
    for request in (SHARE, ONE, CPU_ONLY):
        assert policy.choose(empty.view(), request, rng) is None
        assert policy.choose(FleetState([], [], [], []).view(), request, rng) is None


def _random_requests(rng, count):
    shapes = [SHARE, ONE, TWO, CPU_ONLY, T4_SHARE, PodRequest(2000, 4096, 1, 250), PodRequest(500, 512, 4, 1000),
              PodRequest(3000, 2048, 1, 800, ("V100", "A100")), PodRequest(1000, 1024, 2, 600)]
    return [shapes[i] for i in rng.integers(len(shapes), size=count)]


def _random_fleet(rng, target):
    n = 12
    gpus = rng.choice([0, 1, 2, 4, 8], size=n)
    models = [("" if g == 0 else str(rng.choice(["T4", "V100"]))) for g in gpus]
    return FleetState(rng.choice([16000, 32000, 64000], size=n), rng.choice([32768, 65536], size=n), gpus, models,
                      target=target)


@pytest.mark.parametrize("key", POLICIES)
def test_never_over_allocates_never_mutates_the_view_and_is_deterministic(key):
    policy = make("placement", key)
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        state = _random_fleet(rng, TARGET)
        view = state.view()
        chosen = []
        for request in _random_requests(rng, 120):
            before = {name: getattr(view, name).copy() for name in ("cpu_free", "memory_free", "gpu_free",
                                                                     "gpu_free_total", "gpu_idle", "gpu_pods")}
            placement = policy.choose(view, request, rng)
            for name, array in before.items():
                assert np.array_equal(getattr(view, name), array), f"{key} changed {name}"
            if placement is not None:
                state.allocate(placement, request)   # raises PlacementError on any over-allocation
            chosen.append(placement)
        assert (state.cpu_free >= 0).all() and (state.memory_free >= 0).all()
        assert ((state.gpu_free >= 0) | (state.gpu_free == -1)).all()
        assert any(p is None for p in chosen) and any(p is not None for p in chosen)
        runs.append(chosen)
    assert runs[0] == runs[1]


def test_the_view_is_read_only():
    view = fleet().view()
    for name in ("cpu_free", "gpu_free", "gpu_pods", "gpu_model"):
        with pytest.raises(ValueError):
            getattr(view, name)[0] = 0


# --- Fleet state: every decision is checked --------------------------------------------------------

@pytest.mark.parametrize("placement,request_,message", [
    (Placement(9, (), 0), CPU_ONLY, "does not exist"),
    (Placement(2, (), 0), PodRequest(17000), "lacks CPU or memory"),
    (Placement(2, (), 0), PodRequest(1000, 40000), "lacks CPU or memory"),
    (Placement(0, (0,), 1000), TWO, "does not match"),
    (Placement(0, (0, 0), 1000), TWO, "distinct GPUs"),
    (Placement(0, (2,), 1000), ONE, "distinct GPUs"),
    (Placement(1, (1,), 400), SHARE, "less than 400 milli free"),
    (Placement(1, (0,), 600), PodRequest(1000, 0, 1, 600), "less than 600 milli free"),
    (Placement(1, (2,), 600), T4_SHARE, "not one of"),
    (Placement(0, (0,), 300), SHARE, "does not match"),
])
def test_allocate_refuses_invalid_placements(placement, request_, message):
    state = fleet()
    free = state.gpu_free.copy()
    with pytest.raises(PlacementError, match=message):
        state.allocate(placement, request_)
    assert np.array_equal(state.gpu_free, free)


def test_allocate_then_release_restores_every_array_and_release_checks_capacity():
    state = fleet(TARGET)
    snapshot = {name: getattr(state, name).copy() for name in ("cpu_free", "memory_free", "gpu_free",
                                                               "gpu_free_total", "gpu_idle", "gpu_pods")}
    weighted = state.fragmentation.weighted.copy()
    state.allocate(Placement(1, (2, 3), 1000), TWO)
    assert state.gpu_free[1].tolist() == [500, 0, 0, 0] and state.gpu_idle[1] == 0 and state.gpu_pods[1, 2] == 1
    state.release(Placement(1, (2, 3), 1000), TWO)
    for name, array in snapshot.items():
        assert np.array_equal(getattr(state, name), array), name
    assert np.array_equal(state.fragmentation.weighted, weighted)
    with pytest.raises(PlacementError, match="exceed"):
        state.release(Placement(3, (0,), 1000), ONE)   # nothing of that shape runs there
    with pytest.raises(PlacementError, match="exceed"):
        state.release(Placement(2, (), 0), CPU_ONLY)   # would push CPU free above capacity


def test_the_compiled_move_refuses_a_wrong_cluster_and_release_and_keeps_entirely_free():
    state = FleetState(CPU, MEMORY, GPUS, MODELS, cluster=[0, 0, 1, 1])
    with pytest.raises(PlacementError, match="not in cluster 1"):
        state.allocate(Placement(0, (0,), 1000), PodRequest(4000, 1024, 1, 1000, cluster=1))
    with pytest.raises(PlacementError, match="cannot release"):
        state.release(Placement(0, (0, 1), 1000), ONE)
    assert state.entirely_free.all()
    state.allocate(Placement(3, (0,), 1000), ONE)
    assert state.entirely_free.tolist() == [True, True, True, False]
    state.release(Placement(3, (0,), 1000), ONE)
    assert state.entirely_free.all()


def test_requests_are_validated():
    for bad in (dict(cpu_milli=-1), dict(cpu_milli=1, num_gpu=1), dict(cpu_milli=1, gpu_milli=500),
                dict(cpu_milli=1, num_gpu=1, gpu_milli=1500)):
        with pytest.raises(ValueError):
            PodRequest(**bad)
    assert SHARE.shares_gpu and not ONE.shares_gpu and TWO.shape_slot == 2 and SHARE.shape_slot == 0


@pytest.mark.parametrize("key", ["best-fit", "worst-fit"])
def test_cpu_weight_outside_zero_to_one_is_rejected(key):
    for weight in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"'{key}': cpu_weight must be between 0 and 1 \\(inclusive\\)"):
            make("placement", key, cpu_weight=weight)
    with pytest.raises(ValueError, match=f"'{key}': cpu_weight must be a finite number \\(weight\\), got nan"):
        make("placement", key, cpu_weight=float("nan"))
    assert [make("placement", key, cpu_weight=w).cpu_weight for w in (0, 1)] == [0.0, 1.0]
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"policies": {"placement": {"key": key, "cpu_weight": 2}}}, source="s.toml")
    assert str(error.value) == f"s.toml: placement policy '{key}': cpu_weight must be between 0 and 1 " \
                               "(inclusive), got 2.0"


def test_cheapest_tier_fills_reserved_nodes_before_spot_and_on_demand():
    from tests.sim_helpers import fleet, job, run

    nodes = fleet(4, 4, 4)
    nodes["tier"] = ["on-demand", "spot", "reserved"]
    jobs = [job(i, 0, 100, 4) for i in range(3)]
    placed = run(jobs, nodes, placement="cheapest-tier").jobs["nodes"].tolist()
    assert placed == ["n2", "n1", "n0"]
    assert run(jobs, nodes, placement="best-fit").jobs["nodes"].tolist() == ["n0", "n1", "n2"]


# --- Kept answers: cached over all nodes, recomputed only where rows were written ----------------

@pytest.mark.parametrize("replay", [8, 10**6])
@pytest.mark.parametrize("key", ["first-fit", "best-fit", "worst-fit", "cheapest-tier", "gpu-packing", "fgd"])
def test_kept_answers_match_a_fresh_scan_after_every_change(key, replay, monkeypatch):
    """Allocations, releases and whole-node writes (a gang's nodes) in any order: the view's kept fit
    masks and scores give the same answers as a view that recomputes everything on every call
    (`replay` 10**6: every kept answer is brought up to date node by node)."""
    from dataclasses import replace

    from engine.core import fleet_view
    from engine.core.fleet_view import fits_on
    from engine.sim.state import fleet_state
    from engine.sim.state.region import GangFleetState
    monkeypatch.setattr(fleet_view, "REPLAY", replay)
    monkeypatch.setattr(fleet_state, "LARGE_FLEET", 0)  # a small fleet that keeps answers all the same
    rng = np.random.default_rng(5)
    n = 40
    gpus = rng.choice([0, 1, 2, 4, 8], size=n)
    models = [("" if g == 0 else str(rng.choice(["T4", "V100"]))) for g in gpus]
    state = GangFleetState(rng.choice([16000, 32000, 64000], size=n), rng.choice([32768, 65536], size=n), gpus,
                           models, target=TARGET)
    view, policy = state.view(), make("placement", key)
    fresh = replace(view, _log=None, _kept={})
    placed, whole = [], []
    for step, request in enumerate(_random_requests(rng, 400)):
        assert np.array_equal(fits_on(view, request), fits_on(fresh, request))
        placement = policy.choose(view, request, rng)
        assert placement == policy.choose(fresh, request, rng)
        if placement is not None:
            state.allocate(placement, request)
            placed.append((placement, request))
        if placed and rng.random() < 0.4:
            state.release(*placed.pop(int(rng.integers(len(placed)))))
        if step % 25 == 24:
            if whole:
                state.release_whole(whole.pop())
            free = np.flatnonzero(state.entirely_free)
            if len(free) >= 2:
                taken = np.sort(rng.choice(free, size=2, replace=False))
                state.allocate_whole(taken)
                whole.append(taken)
    assert placed and state.log.nodes


def test_the_write_log_notes_every_row_written_and_restarts_when_long(monkeypatch):
    from engine.sim.state import fleet_state
    monkeypatch.setattr(fleet_state, "LARGE_FLEET", 6)
    assert FleetState([1000] * 5, [1024] * 5, [1] * 5, ["T4"] * 5).log is None  # below LARGE_FLEET: no log
    state = FleetState([1000] * 6, [1024] * 6, [1] * 6, ["T4"] * 6)
    log = state.log
    state.allocate(Placement(4, (0,), 1000), PodRequest(500, 0, 1, 1000))
    state.free[1:3] = state.capacity[1:3]
    state.free[np.array([5, 0])] = state.capacity[np.array([5, 0])]
    state.free[np.arange(6) == 3] = state.capacity[3]
    assert log.nodes == [4, 1, 2, 5, 0, 3] and log.epoch == 0
    log.limit = 7
    state.free[:] = state.capacity
    assert log.nodes == [] and log.epoch == 1
    with pytest.raises(AttributeError):   # a write through a view of the block would go unnoticed: refused
        state.free[0][1] = 0


def test_whole_nodes_are_checked_and_a_refusal_writes_nothing():
    from engine.sim.state.region import GangFleetState
    state = GangFleetState([4000] * 4, [8192] * 4, [2, 2, 0, 2], ["T4", "T4", "", "T4"])
    idle = state.free.copy()
    for nodes in ([1, 0], [0, 0], [3, 4], [-1, 0]):
        with pytest.raises(PlacementError, match="ascending distinct existing"):
            state.allocate_whole(nodes)
    assert state.allocate_whole(np.array([0, 2])) == [0, 2]
    assert not state.entirely_free[[0, 2]].any() and state.held_whole[[0, 2]].all()
    assert (state.cpu_free[[0, 2]] == 0).all() and state.gpu_pods[0, 2] == 1 and state.gpu_free[0].tolist() == [0, 0]
    taken = state.free.copy()
    with pytest.raises(PlacementError, match="not all entirely free"):
        state.allocate_whole([1, 2])
    with pytest.raises(PlacementError, match="not taken whole"):
        state.release_whole([0, 1])
    state.allocate(Placement(1, (0,), 500), PodRequest(1000, 0, 1, 500))
    with pytest.raises(PlacementError, match="not taken whole"):
        state.release_whole([1])
    state.release(Placement(1, (0,), 500), PodRequest(1000, 0, 1, 500))
    assert np.array_equal(state.free, taken)
    assert state.release_whole([0, 2]) == [0, 2]
    assert np.array_equal(state.free, idle) and state.entirely_free.all() and not state.held_whole.any()

"""Routing policies: the region each policy picks on hand-built views, parameter validation, and a
property test that no residency-aware policy ever scores a region the job may not go to."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.views import RegionsView, RouteRequest
from engine.policies import registry
from engine.policies.routing import dense_rank

NAMES = ("us-east", "eu-west", "ap-south", "eu-north")
BASE = dict(                               # home us-east is full; ap-south and eu-north are off-hours
    free_gpus=[0.0, 8.0, 12.0, 4.0],
    capacity_gpus=[16.0, 16.0, 16.0, 8.0],
    queued_gpus=[10.0, 0.0, 4.0, 0.0],
    at_work=[True, True, False, False],
    usd_per_gpu_hour=[3.0, 2.5, 2.0, 1.8],
    g_co2e_per_kwh=[400.0, 50.0, 600.0, 100.0],
    allowed=[True, True, True, True],
    fits=[True, True, True, True],
)
BOOLS = ("at_work", "allowed", "fits")


def regions(names=NAMES, **overrides) -> RegionsView:
    values = {**BASE, **overrides}
    return RegionsView(names=tuple(names), **{
        k: np.array(v[: len(names)], bool if k in BOOLS else np.float64) for k, v in values.items()})


def job(**overrides) -> RouteRequest:
    values = dict(index=7, home=0, gpus=4.0, workload_class="training", flexible=True,
                  requested_s=3600.0, submit_s=100.0)
    return RouteRequest(**{**values, **overrides})


def route(scores: np.ndarray, view: RegionsView, home: int) -> int:
    """The simulator's decision: argmax among fitting regions, ties home then lowest index;
    home when every score is -inf."""
    candidates = np.where(view.fits, scores, -np.inf)
    best = candidates.max()
    if best == -np.inf:
        return home
    top = np.flatnonzero(candidates == best)
    return home if home in top else int(top[0])


def routed(key, view, request, **params) -> int:
    return route(registry.make("routing", key, **params).scores(request, view, 0.0), view, request.home)


ALL_OFF = dict(at_work=[True, True, True, True])
NOTHING_FREE = dict(free_gpus=[0.0, 0.0, 0.0, 0.0])
CASES = [
    # name, view overrides, job overrides, {policy key or (key, params): expected region index}
    ("home full: each rule's pick", {}, {},
     {"home-only": 0, "follow-the-sun": 2, "cheapest": 3, "lowest-carbon": 1, "overflow": 2, "weighted": 3}),
    ("home free: only cheapest, carbon and weighted move", dict(free_gpus=[8.0, 8.0, 12.0, 4.0]), {},
     {"home-only": 0, "follow-the-sun": 0, "cheapest": 3, "lowest-carbon": 1, "overflow": 0, "weighted": 3}),
    ("residency narrows to us-east and ap-south", dict(allowed=[True, False, True, False]), {},
     {"home-only": 0, "follow-the-sun": 2, "cheapest": 2, "lowest-carbon": 2, "overflow": 2, "weighted": 2}),
    ("home-only ignores residency", dict(allowed=[False, True, True, True]), {}, {"home-only": 0}),
    ("unknown prices are last", dict(usd_per_gpu_hour=[3.0, math.nan, 2.0, math.nan]), {}, {"cheapest": 2}),
    ("all prices unknown: lowest index among the free", dict(usd_per_gpu_hour=[math.nan] * 4), {}, {"cheapest": 1}),
    ("unknown intensities are last", dict(g_co2e_per_kwh=[400.0, math.nan, 600.0, math.nan]), {},
     {"lowest-carbon": 2}),
    ("no region free: home (overflow, weighted still move)", NOTHING_FREE, {},
     {"follow-the-sun": 0, "cheapest": 0, "lowest-carbon": 0, "overflow": 1, "weighted": 3}),
    ("home disallowed, nothing free: most free then least queued",
     dict(NOTHING_FREE, allowed=[False, True, True, True]), {},
     {"follow-the-sun": 1, "cheapest": 1, "lowest-carbon": 1, "overflow": 1, "weighted": 3}),
    ("inflexible stays home", {}, dict(flexible=False, workload_class="inference"),
     {"home-only": 0, "follow-the-sun": 0, "cheapest": 0, "lowest-carbon": 0, "overflow": 0, "weighted": 0,
      ("overflow", (("move_inflexible", True),)): 2}),
    ("inflexible whose data may not stay home: the fallback, most free GPUs", dict(allowed=[False, True, True, True]),
     dict(flexible=False), {"home-only": 0, "follow-the-sun": 2, "cheapest": 2, "lowest-carbon": 2, "overflow": 2,
                            "weighted": 2}),
    ("every region at work: no lender", ALL_OFF, {}, {"follow-the-sun": 0}),
    ("lenders need a free share", {}, {}, {("follow-the-sun", (("min_free_fraction", 0.8),)): 0,
                                          ("follow-the-sun", (("min_free_fraction", 0.75),)): 2}),
    ("lenders need the job's GPUs free", {}, dict(gpus=13.0), {"follow-the-sun": 0}),
    ("overflow: equal free GPUs, fewer queued wins", dict(free_gpus=[0.0, 8.0, 8.0, 2.0], queued_gpus=[0, 5, 1, 0]),
     {}, {"overflow": 2}),
    ("ties go home", dict(free_gpus=[8.0] * 4, usd_per_gpu_hour=[2.0, 2.0, 3.0, 3.0],
                          g_co2e_per_kwh=[50.0, 50.0, 99.0, 99.0]), dict(home=1),
     {"cheapest": 1, "lowest-carbon": 1, "follow-the-sun": 1, "overflow": 1}),
    ("nothing fits: all -inf, home", dict(fits=[False] * 4), {},
     {"home-only": 0, "follow-the-sun": 0, "cheapest": 0, "lowest-carbon": 0, "overflow": 0, "weighted": 0}),
    ("fractional GPUs", dict(free_gpus=[0.25, 0.5, 0.5, 0.0]), dict(gpus=0.5), {"cheapest": 2, "overflow": 1}),
]


@pytest.mark.parametrize("name, view, request_, expected", CASES, ids=[c[0] for c in CASES])
def test_each_policy_picks_the_documented_region(name, view, request_, expected):
    for policy, region in expected.items():
        key, params = (policy, ()) if isinstance(policy, str) else policy
        assert routed(key, regions(**view), job(**request_), **dict(params)) == region, (key, params)


def test_scores_are_dense_ranks_with_minus_inf_where_not_allowed():
    view = regions(allowed=[True, True, False, True])
    assert routed("cheapest", view, job()) == 3
    assert registry.make("routing", "cheapest").scores(job(), view, 0.0).tolist() == [0.0, 1.0, -math.inf, 2.0]
    assert registry.make("routing", "follow-the-sun").scores(job(), view, 0.0).tolist() == [1.0, 0.0, -math.inf, 2.0]
    assert registry.make("routing", "overflow").scores(job(), view, 0.0).tolist() == [0.0, 2.0, -math.inf, 1.0]
    assert registry.make("routing", "home-only").scores(job(home=2), view, 0.0).tolist() == [
        -math.inf, -math.inf, 0.0, -math.inf]


def test_weighted_score_terms():
    scores = registry.make("routing", "weighted").scores(job(), regions(), 0.0)
    # home: 0.25 + 0 free + 0 off-hours + 0.5 (1 - 3/3) + 0.5 (1 - 400/600) - 10/16 - 1 (nothing free)
    expected = [0.25 + 0.5 / 3 - 0.625 - 1, 0.5 + 0.5 / 6 + 0.5 * 11 / 12,
                0.75 + 0.5 + 0.5 / 3 - 0.25, 0.5 + 0.5 + 0.5 * 0.4 + 0.5 * 5 / 6]
    assert scores == pytest.approx(expected)
    only_queue = registry.make("routing", "weighted", w_home=0, w_free=0, w_offhours=0, w_price=0, w_carbon=0,
                               w_wait_penalty=0)
    assert only_queue.scores(job(), regions(), 0.0) == pytest.approx([-0.625, 0.0, -0.25, 0.0])
    nothing = registry.make("routing", "weighted", w_home=0, w_free=0, w_offhours=0, w_price=0, w_carbon=0,
                            w_queue=0, w_wait_penalty=0)
    assert routed("weighted", regions(), job(home=2), w_home=0, w_free=0, w_offhours=0, w_price=0, w_carbon=0,
                  w_queue=0, w_wait_penalty=0) == 2
    assert nothing.scores(job(), regions(), 0.0).tolist() == [0.0] * 4


def test_weighted_normalises_over_eligible_known_values():
    unknown = regions(usd_per_gpu_hour=[math.nan, 4.0, 2.0, math.nan], allowed=[True, False, True, True])
    policy = registry.make("routing", "weighted", w_home=0, w_free=0, w_offhours=0, w_carbon=0, w_queue=0,
                           w_wait_penalty=0, w_price=1)
    assert policy.scores(job(), unknown, 0.0).tolist() == [0.0, -math.inf, 0.0, 0.0]   # max 2.0 over eligible
    free_price = regions(usd_per_gpu_hour=[0.0, 0.0, 0.0, 0.0])
    assert policy.scores(job(), free_price, 0.0).tolist() == [0.0] * 4


def test_one_region_and_a_region_without_capacity():
    one = regions(names=NAMES[:1])
    for key in registry.families()["routing"]:
        assert routed(key, one, job()) == 0
    empty = regions(capacity_gpus=[16.0, 0.0, 16.0, 8.0], free_gpus=[0.0, 0.0, 12.0, 4.0], queued_gpus=[0, 3, 0, 0])
    assert np.isfinite(registry.make("routing", "weighted").scores(job(), empty, 0.0)).all()
    assert routed("follow-the-sun", empty, job(), min_free_fraction=0.5) == 2


def test_dense_rank_is_lexicographic_and_keeps_ties():
    keys = [(1, 0.0), (2, -1.0), (2, 5.0), None, (1, 0.0)]
    assert dense_rank(keys).tolist() == [0.0, 1.0, 2.0, -math.inf, 0.0]
    assert dense_rank([None, None]).tolist() == [-math.inf] * 2
    assert dense_rank([(0.0,), (-0.0,)]).tolist() == [0.0, 0.0]
    assert dense_rank([]).shape == (0,)


@pytest.mark.parametrize("key, params, message", [
    ("follow-the-sun", {"min_free_fraction": 1.5}, "min_free_fraction must be from 0 to 1 (fraction), got 1.5"),
    ("follow-the-sun", {"min_free_fraction": -0.1}, "from 0 to 1"),
    ("follow-the-sun", {"min_free_fraction": math.nan}, "min_free_fraction must be a finite number"),
    ("weighted", {"w_price": -1.0}, "w_price must be a finite number >= 0, got -1.0"),
    ("weighted", {"w_home": math.inf}, "w_home must be a finite number (weight), got inf"),
    ("overflow", {"move_inflexible": "yes"}, "move_inflexible must be bool"),
])
def test_parameters_are_validated_with_the_valid_range(key, params, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        registry.make("routing", key, **params)


def test_parameters_carry_help_for_the_dashboard():
    for key in registry.families()["routing"]:
        for parameter in registry.parameters("routing", key):
            assert parameter.help, f"{key}.{parameter.name}"
    assert [p.name for p in registry.parameters("routing", "overflow")] == ["move_inflexible"]
    assert registry.parameters("routing", "weighted")[-2].default == 1.0   # w_wait_penalty
    assert registry.parameters("routing", "weighted")[-1].default == 0.0   # w_egress: off unless asked


RESIDENCY_AWARE = [(key, {}) for key in registry.families()["routing"] if key != "home-only"] + [
    ("overflow", {"move_inflexible": True}), ("follow-the-sun", {"min_free_fraction": 0.3})]
_gpus = st.integers(0, 32_000).map(lambda milli: milli / 1000)   # GPU counts come in milli-GPUs
_value = st.one_of(st.just(math.nan), st.floats(0.0, 1000.0, allow_nan=False))
_region = st.tuples(_gpus, _gpus, _gpus, st.booleans(), _value, _value, st.booleans(), st.booleans())


@st.composite
def _situations(draw):
    rows = draw(st.lists(_region, min_size=1, max_size=6))
    columns = list(zip(*rows))
    view = RegionsView(names=tuple(f"r{i}" for i in range(len(rows))),
                       **{name: np.array(col, bool if name in BOOLS else np.float64)
                          for name, col in zip(BASE, columns)})
    request = job(home=draw(st.integers(0, len(rows) - 1)), gpus=draw(st.floats(0.1, 16.0)),
                  flexible=draw(st.booleans()))
    return view, request


@settings(max_examples=300, deadline=None)
@given(_situations())
def test_no_residency_aware_policy_scores_a_forbidden_or_unfitting_region(situation):
    view, request = situation
    forbidden = ~(view.allowed & view.fits)
    for key, params in RESIDENCY_AWARE:
        scores = registry.make("routing", key, **params).scores(request, view, 0.0)
        assert scores.dtype == np.float64 and scores.shape == (len(view),)
        assert not np.isnan(scores).any() and not (scores == np.inf).any()
        assert (scores[forbidden] == -np.inf).all(), (key, params)
        chosen = route(scores, view, request.home)
        assert not forbidden[chosen] or (scores == -np.inf).all()
        if request.flexible and not forbidden.all():
            assert not forbidden[chosen], (key, params)   # a flexible job always finds an allowed region


@pytest.mark.parametrize("latency,slo,expected", [
    ([0.0, 120.0, 60.0, 40.0], 100.0, 3),    # the nearest within the SLO (eu-north, 40 ms)
    ([0.0, 20.0, 60.0, 90.0], 100.0, 1),     # eu-west is nearer than ap-south
    ([0.0, 120.0, 150.0, 200.0], 100.0, 0),  # none within the SLO: home, and it waits
    (None, 100.0, 0),                        # no latency data: only home is near
])
def test_latency_aware_keeps_inference_within_the_slo(latency, slo, expected):
    view = regions(**{"free_gpus": [0.0, 8.0, 12.0, 4.0]})
    view = RegionsView(**{**view.__dict__, "latency_ms": None if latency is None else np.array(latency),
                          "slo_ms": slo})
    inference = job(flexible=False, workload_class="inference")
    assert routed("latency-aware", view, inference) == expected
    assert routed("latency-aware", view, job(flexible=False, workload_class="development")) == 0
    assert routed("latency-aware", view, job()) == 2   # flexible work overflows to the most free GPUs


EGRESS = np.array([0.09, 0.02, 0.12, 0.05])   # $/GB out of us-east, eu-west, ap-south, eu-north


@pytest.mark.parametrize("view_overrides, data_region, expected", [
    ({}, 2, 2),                            # data in ap-south, which has 12 GPUs free: stay with the data
    ({}, 0, 2),                            # data at the full home: moving costs the same anywhere; most free
    (dict(free_gpus=[0.0, 8.0, 0.0, 0.0]), 2, 1),   # only eu-west is free: move the data there
    (NOTHING_FREE, 2, 2),                  # nothing free: wait where the data is
    (dict(allowed=[True, True, False, True], free_gpus=[0.0, 0.0, 0.0, 0.0]), 2, 0),  # data region barred: home
])
def test_data_local_keeps_jobs_with_their_data(view_overrides, data_region, expected):
    view = regions(**view_overrides)
    view = RegionsView(**{**view.__dict__, "egress_usd_per_gb": EGRESS})
    assert routed("data-local", view, job(data_region=data_region, data_gb=500.0)) == expected


def test_cheapest_counts_the_egress_of_moving_the_data_in_the_price():
    # 4 GPUs for 1 h with 500 GB in eu-west ($0.02/GB out): moving it costs $10, $2.50 a GPU-hour, so
    # eu-north ($1.80 + $2.50 = $4.30) and ap-south ($2.00 + $2.50) are dearer than eu-west ($2.50, no move)
    view = RegionsView(**{**regions().__dict__, "egress_usd_per_gb": EGRESS})
    assert routed("cheapest", view, job()) == 3                                   # no data: lowest price
    assert routed("cheapest", view, job(data_region=1, data_gb=500.0)) == 1       # with its data
    assert routed("cheapest", view, job(data_region=1, data_gb=50.0)) == 3        # $1, 25 c a GPU-hour: move
    # the same 500 GB for a 10 h job: $0.25 a GPU-hour, so eu-north ($2.05) wins again
    assert routed("cheapest", view, job(data_region=1, data_gb=500.0, requested_s=36_000.0)) == 3


def test_weighted_egress_term_pulls_work_towards_its_data():
    view = RegionsView(**{**regions().__dict__, "egress_usd_per_gb": EGRESS})
    request = job(data_region=1, data_gb=5000.0)
    assert routed("weighted", view, request) == 3           # without the term: eu-north
    assert routed("weighted", view, request, w_egress=5.0) == 1   # moving 5 TB out of eu-west costs $100


def test_the_routers_positional_views_hold_the_same_fields_and_stay_frozen():
    import dataclasses

    view, request = regions(), job(data_region=1, data_gb=5.0, deadline_s=9e3)
    built = RegionsView.of(*[getattr(view, f.name) for f in dataclasses.fields(RegionsView)])
    assert built.__dict__.keys() == view.__dict__.keys()
    assert all(built.__dict__[k] is v for k, v in view.__dict__.items()) and len(built) == len(view)
    assert RouteRequest.of(*dataclasses.astuple(request)) == request
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.fits = None
    with pytest.raises(TypeError, match="RouteRequest.of takes 10 values"):
        RouteRequest.of(1, 0)



def _plain_keys(rule, allowed, fits, free, capacity, queued, at_work, cost, need, home) -> list:
    """The compiled rules' keys written plainly (engine.policies.routing_kernels), None where not eligible."""
    def key(i):
        f, q = free[i], queued[i]
        if rule == "cheapest":
            return (2, -math.inf if cost[i] != cost[i] else -cost[i], 0.0) if f >= need else \
                (1, 0.0, 0.0) if i == home else (0, f, -q)
        if rule == "overflow":
            return (i == home and f >= need, f, -q)
        share = f / capacity[i] if capacity[i] > 0 else 0.0
        return (3 if f >= need else 1, 0.0, 0.0) if i == home else \
            (2, f, 0.0) if f >= need and not at_work[i] and share >= 0.25 else (0, f, -q)
    return [key(i) if ok and fit else None for i, (ok, fit) in enumerate(zip(allowed, fits))]


FEW = st.sampled_from([0.0, -0.0, 1.0, 2.0, 3.5])


def _lists(n, values):
    return st.lists(values, min_size=n, max_size=n)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["cheapest", "overflow", "sun"]), st.integers(1, 8).flatmap(lambda n: st.tuples(
    _lists(n, st.booleans()), _lists(n, st.booleans()), _lists(n, FEW), _lists(n, st.sampled_from([0.0, 4.0, 8.0])),
    _lists(n, FEW), _lists(n, st.booleans()), _lists(n, st.sampled_from([1.0, -0.0, 0.0, 2.0, math.nan, math.inf])),
    st.sampled_from([0.5, 1.0, 2.0]), st.integers(0, n - 1))))
def test_compiled_routing_rules_give_the_dense_ranks_of_their_keys(rule, drawn):
    from engine.policies import routing_kernels as kernels
    allowed, fits, free, capacity, queued, at_work, cost, need, home = drawn
    columns = [np.array(c) for c in (allowed, fits, free)]
    ranks = (kernels.cheapest_ranks(*columns, np.array(queued), np.array(cost), need, home) if rule == "cheapest"
             else kernels.overflow_ranks(*columns, np.array(queued), need, home) if rule == "overflow"
             else kernels.sun_ranks(*columns, np.array(capacity), np.array(queued), np.array(at_work), need, home, 0.25))
    assert np.array_equal(ranks, dense_rank(_plain_keys(rule, *drawn)))

"""The soft-constraints router (engine.policies.constraints): relaxation order and records on hand-built
cases worked out by hand, hard constraints never broken (a property test), and the records in a run's
per-job table, relaxations table, decision log and KPIs."""
from __future__ import annotations

import argparse
import math
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.job_story import StoryContext, job_story
from engine.analysis.runs.relaxation import by_constraint, by_team
from engine.analysis.runs.sim_metrics import kpis
from engine.cli.common import tables
from engine.core.reasons import SOFT_CONSTRAINTS
from engine.core.views import RegionsView, RouteRequest
from engine.policies import registry
from engine.policies.routing import eligible
from engine.scenario.spec import Scenario
from engine.service.optimise.space import load_study, parse_study
from engine.service.optimise.study import run_study
from engine.service.run import run_scenario
from engine.sim.output.run_tables import _joined

BOOLS = ("at_work", "allowed", "fits")
# home (0) is full; green (1) has the cleanest grid but is 200 ms from home; near (2) is 50 ms away, dirtier
VIEW = dict(free_gpus=[0.0, 8.0, 8.0], capacity_gpus=[16.0, 16.0, 16.0], queued_gpus=[4.0, 0.0, 0.0],
            at_work=[True, True, True], usd_per_gpu_hour=[2.0, 2.0, 2.0], g_co2e_per_kwh=[300.0, 100.0, 400.0],
            allowed=[True, True, True], fits=[True, True, True])


def view(**overrides) -> RegionsView:
    values = {**VIEW, **overrides}
    arrays = {k: np.array(v, bool if k in BOOLS else np.float64) for k, v in values.items()}
    return RegionsView(names=("home", "green", "near"), latency_ms=np.array([0.0, 200.0, 50.0]), slo_ms=100.0,
                       egress_usd_per_gb=np.array([0.1, 0.1, 0.1]), **arrays)


def request(**overrides) -> RouteRequest:
    values = dict(index=0, home=0, gpus=4.0, workload_class="training", flexible=True, requested_s=7200.0,
                  submit_s=0.0)
    return RouteRequest(**{**values, **overrides})


def decide(job_: RouteRequest, regions: RegionsView, **params):
    return registry.make("routing", "soft-constraints", **params).decide(job_, regions, 0.0)


def test_training_away_from_its_data_relaxes_team_affinity_then_data_locality():
    # Default order carbon, cost, team-affinity, data-locality, latency; the data (100 GB) is at home.
    # k=0: carbon wants green (100 <= 120), team-affinity home: none. k=1..3: home only (data, team): full.
    # k=4 (data-locality relaxed too): green and near are free; green meets carbon, cost, latency
    # (2.0), near cost and latency (1.5): green. It fails team-affinity (4 GPUs x 2 h = 8 GPU-hours)
    # and data-locality (100 GB x $0.10 = $10).
    routed = decide(request(data_region=0, data_gb=100.0), view())
    assert routed.region == 1
    assert routed.relaxed[1] == (("team-affinity", 8.0), ("data-locality", 10.0))
    assert routed.scores.tolist() == [0.0, 1.0, 0.0]


def test_inference_relaxes_carbon_before_latency_in_the_default_order():
    # Latency binds inference: green (200 ms) fails it. k=3 (carbon, cost, team relaxed): home and near
    # meet latency; near is free: near, failing carbon (400 - 100 = 300 g/kWh over the lowest) and team.
    routed = decide(request(workload_class="inference", flexible=False), view())
    assert routed.region == 2
    assert routed.relaxed[2] == (("carbon", 300.0), ("team-affinity", 8.0))


def test_the_order_decides_which_constraint_gives_way():
    # Latency relaxed first, team-affinity fourth: k=4 leaves data-locality (no data: met everywhere), so
    # green and near are candidates; with w_latency 0.1 green scores carbon + cost + data = 2.0 and near
    # latency + cost + data = 1.6: green, failing latency (200 - 100 = 100 ms over) and team-affinity.
    routed = decide(request(workload_class="inference", flexible=False), view(),
                    relax_order="latency,carbon,cost,team-affinity,data-locality", w_latency=0.1)
    assert routed.region == 1
    assert routed.relaxed[1] == (("latency", 100.0), ("team-affinity", 8.0))


def test_a_constraint_of_weight_zero_is_off_and_never_recorded():
    routed = decide(request(data_region=0, data_gb=100.0), view(), w_team_affinity=0.0)
    assert routed.region == 1
    assert routed.relaxed[1] == (("data-locality", 10.0),)


def test_a_job_that_can_start_nowhere_waits_at_home_with_nothing_relaxed():
    # Nothing is free: only home is hard-feasible (a move must leave 10 % free), so carbon's lowest is home's.
    routed = decide(request(data_region=0, data_gb=100.0), view(free_gpus=[0.0, 2.0, 0.0]))
    assert routed.region == 0 and routed.relaxed[0] == ()
    assert routed.scores.tolist() == [1.0, -math.inf, -math.inf]


def test_a_job_no_region_may_hold_gets_no_region_and_nothing_relaxed():
    routed = decide(request(data_region=0, data_gb=100.0), view(fits=[False, True, True], allowed=[True, False, False]))
    assert routed.region == -1 and routed.scores.tolist() == [-math.inf] * 3
    assert routed.relaxed == ((), (), ()) and routed.relaxed_at(1) == ()


def test_the_job_table_joins_a_jobs_relaxations_in_the_order_they_were_recorded():
    # job 2 relaxed two constraints at submit and one more when an outage routed it again
    records = [(0.0, 2, 1, "team-affinity", 8.0), (0.0, 2, 1, "data-locality", 10.0), (5.0, 0, 2, "carbon", 3.0),
               (9.0, 2, 0, "cost", 1.0)]
    assert _joined(records, 4) == ["carbon", "", "team-affinity;data-locality;cost", ""]


def test_a_job_that_fits_at_home_under_every_constraint_stays_home():
    routed = decide(request(), view(free_gpus=[8.0, 8.0, 8.0], g_co2e_per_kwh=[100.0, 100.0, 400.0]))
    assert routed.region == 0 and routed.relaxed[0] == ()


@pytest.mark.parametrize("overrides,job_overrides,expected", [
    ({"allowed": [True, False, False]}, {}, 0),                  # residency: only home, it waits there
    ({"fits": [True, False, True]}, {}, 2),                      # GPU type: green's fleet lacks the model
    ({"free_gpus": [0.0, 5.0, 5.0]}, {}, 0),                     # guaranteed capacity: 5 - 4 < 1.6 GPUs
    ({}, {"deadline_s": 3600.0}, 0),                             # the 2 h run would end after its deadline
    ({"free_gpus": [0.0, 8.0, 0.0]}, {"deadline_s": 9000.0}, 1),  # green: starts now, ends by the deadline
    ({"allowed": [False, True, True], "free_gpus": [0.0, 3.0, 4.0]}, {}, 2),  # home forbidden: base = most free
])
def test_hard_constraints(overrides, job_overrides, expected):
    routed = decide(request(**job_overrides), view(**overrides))
    assert routed.region == expected


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="relax_order must name each"):
        registry.make("routing", "soft-constraints", relax_order="carbon,cost")
    with pytest.raises(ValueError, match="has no parameter"):   # a hard constraint has no weight to give it
        registry.make("routing", "soft-constraints", w_residency=1.0)
    with pytest.raises(ValueError, match="residency is a hard constraint and is never relaxed"):
        registry.make("routing", "soft-constraints", relax_order="residency,carbon,cost,team-affinity,data-locality,"
                                                                "latency")
    with pytest.raises(ValueError, match="w_carbon must be a finite number >= 0"):
        registry.make("routing", "soft-constraints", w_carbon=-1.0)
    with pytest.raises(ValueError, match="reserve_fraction"):
        registry.make("routing", "soft-constraints", reserve_fraction=1.5)


_gpus = st.floats(0.0, 32.0, allow_nan=False)
_maybe = st.one_of(st.just(math.nan), st.floats(0.0, 900.0, allow_nan=False))
_region = st.tuples(_gpus, st.floats(1.0, 32.0), _gpus, _maybe, _maybe, st.booleans(), st.booleans(),
                    st.floats(0.0, 300.0))


@st.composite
def _situations(draw):
    rows = draw(st.lists(_region, min_size=1, max_size=6))
    free, capacity, queued, price, carbon, allowed, fits, latency = (np.array(c) for c in zip(*rows))
    n = len(rows)
    regions = RegionsView(tuple(f"r{i}" for i in range(n)), np.minimum(free, capacity), capacity, queued,
                          np.zeros(n, bool), price, carbon, allowed.astype(bool), fits.astype(bool),
                          latency, draw(st.floats(10.0, 200.0)), np.full(n, 0.09))
    job_ = request(home=draw(st.integers(0, n - 1)), gpus=draw(st.floats(0.5, 16.0)),
                   workload_class=draw(st.sampled_from(["training", "inference", "development", "batch"])),
                   requested_s=draw(st.floats(60.0, 86_400.0)), data_region=draw(st.integers(-1, n - 1)),
                   data_gb=draw(st.floats(0.0, 500.0)),
                   deadline_s=draw(st.one_of(st.just(math.inf), st.floats(0.0, 100_000.0))))
    params = {"w_data_locality": draw(st.floats(0.0, 3.0)), "w_latency": draw(st.floats(0.0, 3.0)),
              "w_carbon": draw(st.floats(0.0, 3.0)), "w_cost": draw(st.floats(0.0, 3.0)),
              "w_team_affinity": draw(st.floats(0.0, 3.0)),
              "reserve_fraction": draw(st.floats(0.0, 1.0)),
              "relax_order": ",".join(draw(st.permutations(SOFT_CONSTRAINTS)))}
    return regions, job_, params


@settings(max_examples=400, deadline=None)
@given(_situations())
def test_hard_constraints_never_break(situation):
    regions, job_, params = situation
    routed = decide(job_, regions, **params)
    ok = eligible(regions)
    if not any(ok):
        assert routed.region == -1 and (routed.scores == -np.inf).all()
        return
    r = routed.region
    assert ok[r], "residency and the GPU model always hold"
    assert routed.scores[r] == routed.scores.max() == 1.0
    assert all(s == -np.inf for s, fine in zip(routed.scores, ok) if not fine)
    free_, queued = regions.free_gpus, regions.queued_gpus
    base = job_.home if ok[job_.home] else max((i for i in range(len(ok)) if ok[i]),
                                               key=lambda i: (free_[i], -queued[i], -i))
    for i, score in enumerate(routed.scores):
        if score == -np.inf or i == base:
            continue
        free, capacity = regions.free_gpus[i], regions.capacity_gpus[i]
        assert free - job_.gpus >= params["reserve_fraction"] * capacity - 1e-9, "guaranteed capacity"
        if math.isfinite(job_.deadline_s):
            assert free >= job_.gpus - 1e-9 and job_.requested_s <= job_.deadline_s, "deadline"
    weights = {c: params[f"w_{c.replace('-', '_')}"] for c in SOFT_CONSTRAINTS}
    assert all(weights[c] > 0 for c, _ in routed.relaxed[r]), "only active constraints are relaxed"


def _two_regions():
    return pd.concat([fleet(8), fleet(8, region="b").assign(node="b0")], ignore_index=True)


def test_a_run_records_each_relaxation_in_the_job_table_the_log_and_the_kpis():
    # r and b have one 8-GPU node each. j0 fills r at 0; j1 (4 GPUs, 50 s) arrives at 10: r is full, b
    # can take it and keep 4 of 8 GPUs free (>= 10 %): it moves to b, giving up team affinity (4 GPUs x
    # 50 s = 1/18 GPU-hour); b's grid and prices are unknown, so carbon and cost hold. j2 (8 GPUs) at 20:
    # b would keep 4 - 8 < 0 free, so it waits at home for j0 (starts at 100), nothing relaxed.
    rows = [job(0, 0, 100, 8), job(1, 10, 50, 4, team="u"), job(2, 20, 30, 8)]
    scenario = Scenario.from_dict({"name": "t", "policies": {"routing": {"key": "soft-constraints"}}})
    result = run_scenario(scenario, pd.DataFrame(rows), _two_regions())
    assert result.jobs["region"].tolist() == ["r", "b", "r"]
    assert result.jobs["start_s"].tolist() == [0.0, 10.0, 100.0]
    assert result.jobs["relaxed"].tolist() == ["", "team-affinity", ""]
    table = result.relaxations
    assert table[["job_id", "team", "home_region", "time_s", "region", "constraint"]].values.tolist() == [
        ["j1", "u", "r", 10.0, "b", "team-affinity"]]
    assert table["cost"].tolist() == pytest.approx([4 * 50 / 3600])
    assert table["cost_unit"].tolist() == ["GPU-hours away from the team"]
    logged = result.decisions[result.decisions["decision"].str.startswith("relaxed-")]
    assert logged[["time_s", "job_id", "region", "decision"]].values.tolist() == [
        [10.0, "j1", "b", "relaxed-team-affinity"]]
    values = kpis(result)
    assert keys("relaxation") <= set(values)
    assert (values["jobs_relaxed"], values["relaxations"], values["relaxed_team_affinity_jobs"],
            values["jobs_moved_region"], values["relaxed_carbon_jobs"]) == (1, 1, 1, 1, 0)
    constraint = by_constraint(result).set_index("constraint")
    assert constraint.loc["team-affinity", "jobs"] == 1 and constraint["jobs"].sum() == 1
    team = by_team(result)
    assert team[["team", "jobs", "jobs_relaxed", "team-affinity", "jobs_moved_region"]].values.tolist() == [
        ["u", 1, 1, 1, 1], ["t", 2, 0, 0, 0]]


def test_a_run_without_soft_constraints_has_no_relaxation_records():
    rows = [job(0, 0, 100, 8), job(1, 10, 50, 4)]
    result = run_scenario(Scenario.from_dict({"name": "t", "policies": {"routing": {"key": "overflow"}}}),
                          pd.DataFrame(rows), _two_regions())
    assert result.relaxations is None and "relaxed" not in result.jobs
    assert not set(kpis(result)) & keys("relaxation")
    assert by_constraint(result)["jobs"].sum() == 0 and by_team(result)["jobs_relaxed"].sum() == 0


STUDY = Path(__file__).resolve().parents[1] / "sample_data" / "studies" / "soft-constraint-weights.toml"


def test_the_weights_and_the_order_are_searchable_from_the_policys_declarations():
    study = load_study(STUDY)
    kinds = {dim.name: dim.kind for dim in study.dimensions}
    assert kinds == {"routing.w_data_locality": "float", "routing.w_latency": "float", "routing.w_carbon": "float",
                     "routing.w_cost": "float", "routing.w_team_affinity": "float",
                     "routing.reserve_fraction": "float", "routing.relax_order": "choice"}
    assert [(o.key, o.higher) for o in study.objectives][:2] == [("wait_p95_s", False), ("jobs_relaxed", False)]


def test_a_study_over_the_weights_measures_the_relaxations(sample_db):
    data = tables(argparse.Namespace(dataset="sample", trace=None, db=str(sample_db)))
    text = STUDY.read_text(encoding="utf-8").replace("days = 7", "days = 0.5")
    study = parse_study(tomllib.loads(text), STUDY)
    result = run_study(study, data, trials=2, population=2, workers=1, seed=3)
    for trial in result.trials:
        assert trial.measured.error is None
        assert trial.measured.values["jobs_relaxed"] > 0 and trial.measured.kpis["relaxations"] >= \
            trial.measured.kpis["jobs_relaxed"]


def test_a_job_waiting_after_a_relaxation_waits_for_its_queue_not_for_the_relaxation():
    # r and b are both full (j0 in r to 100, j3 in b to 200). j1 (8 GPUs, r, at 5) is first in line; j2 (2 GPUs,
    # home r, its data in b, at 10): only home is hard-feasible (b has no room), so data locality and team
    # affinity conflict; relaxing in order leaves r, where it waits behind j1 with data-locality relaxed.
    # Under FCFS without backfilling j1 starts at 100 and j2 at 200 (after j1's 100 s): j2 waits 90 s behind j1,
    # then 100 s first in line for capacity; the relaxation logged at 10 is not a reason to wait.
    rows = [job(0, 0, 100, 8), job(3, 0, 200, 8, region="b", team="u"), job(1, 5, 100, 8),
            {**job(2, 10, 30, 2), "data_location": "b", "data_size_gb": 50.0}]
    scenario = Scenario.from_dict({"name": "t", "policies": {"routing": {"key": "soft-constraints"}}})
    result = run_scenario(scenario, pd.DataFrame(rows), _two_regions())
    assert result.jobs["job_id"].tolist() == ["j0", "j3", "j1", "j2"]
    assert result.jobs["region"].tolist() == ["r", "b", "r", "r"]
    assert result.jobs["start_s"].tolist() == [0.0, 0.0, 100.0, 200.0]
    assert result.jobs["relaxed"].tolist() == ["", "", "", "data-locality"]
    story = job_story(result, 3, StoryContext.of(scenario))
    assert "relaxed-data-locality" in story.timeline["event"].tolist()
    assert story.reasons[["reason", "seconds"]].values.tolist() == [["blocked-by-capacity", 100.0],
                                                                   ["waiting-in-queue", 90.0]]

"""Spot fallback in a region that has only spot nodes: jobs kept off spot can never start there, so
they leave the queue "never-fits", and the run ends (interruptions stop once nothing runs and
nothing else is pending); and a job that interruptions never let finish stops the run with an
error naming it."""
from __future__ import annotations

import pandas as pd
import pytest
from sim_helpers import deadline as run_deadline
from sim_helpers import job

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

DAY = 86_400.0


@pytest.fixture
def deadline():
    """Fail instead of hanging: the run must end within 60 s."""
    with run_deadline():
        yield


def spot_only_run(fallback_after: int, seed: int = 0):
    """Twelve 1-GPU, 2-day jobs on two 8-GPU spot nodes, interrupted about every 5 hours."""
    jobs = pd.DataFrame([job(i, i * 600, 2 * DAY, 1) for i in range(12)])
    nodes = pd.DataFrame([dict(region="r", cluster="c", node=f"s{n}", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                               rack="k0", tier="spot") for n in range(2)])
    spot = {"interruptions_per_node_hour": 0.2, "fallback_after": fallback_after}
    return run_scenario(Scenario.from_dict({"name": "spot-only", "seed": seed, "spot": spot}), jobs, nodes)


def test_jobs_that_fell_back_never_fit_and_the_run_ends(deadline):
    result = spot_only_run(fallback_after=1)
    jobs = result.jobs
    interrupted = jobs["spot_interruptions"] >= 1
    assert interrupted.all()  # 2-day jobs, one interruption per node every 5 h on average
    # each was interrupted once, fell back to on-demand, and the region has none: it never ends
    assert jobs["end_s"].isna().all()
    assert (jobs["spot_interruptions"] == 1).all()
    assert (jobs["reason"] == "never-fits").all()
    log = result.decisions
    for job_id in jobs["job_id"]:
        mine = log[log["job_id"] == job_id]
        assert mine["decision"].tolist()[-2:] == ["preempted", "never-fits"]
        assert mine["time_s"].iloc[-1] == mine["time_s"].iloc[-2]
    # one piece each, the one that ended with the eviction (no piece "running" after it)
    assert result.segments["job_id"].is_unique and (result.segments["outcome"] == "preempted").all()


def test_a_job_that_fell_back_runs_on_demand_where_the_region_has_some(deadline):
    jobs = pd.DataFrame([job(i, i * 600, 2 * DAY, 1) for i in range(4)])
    nodes = pd.DataFrame([dict(region="r", cluster="c", node=f"s{n}", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                               rack="k0", tier=tier) for n, tier in enumerate(["spot", "on-demand"])])
    spot = {"interruptions_per_node_hour": 0.2, "fallback_after": 1}
    result = run_scenario(Scenario.from_dict({"name": "fallback", "spot": spot}), jobs, nodes)
    fell_back = result.jobs[result.jobs["spot_interruptions"] >= 1]
    assert len(fell_back) and fell_back["end_s"].notna().all()
    assert "never-fits" not in set(result.decisions["decision"])


def test_without_fallback_every_job_finishes_despite_interruptions(deadline):
    jobs = spot_only_run(fallback_after=0).jobs
    assert jobs["end_s"].notna().all() and jobs["spot_interruptions"].sum() > 0


def test_a_job_that_interruptions_never_let_finish_stops_the_run_with_a_clear_error(deadline):
    # a 2-day job on one spot node interrupted about every 2 minutes, never falling back: no piece
    # ever reaches a checkpoint, so it would restart without end
    jobs = pd.DataFrame([job(0, 0, 2 * DAY, 1)])
    nodes = pd.DataFrame([dict(region="r", cluster="c", node="s0", gpu_type="A", gpus=8, cpus=64, memory_gib=512,
                               rack="k0", tier="spot")])
    scenario = Scenario.from_dict({"name": "hostile", "spot": {"interruptions_per_node_hour": 30.0}})
    with pytest.raises(ScenarioError, match=r"job j0 in r lost all its work 1,000 times in a row \(30 "
                                            r"interruptions per spot node-hour.*the run would not end"):
        run_scenario(scenario, jobs, nodes)

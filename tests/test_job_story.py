"""A job's story (engine.analysis.runs.job_story) on tiny simulations whose every figure is worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.analysis.runs.fairness import longest_waiting
from engine.analysis.runs.job_story import (
    FACTOR_COLUMNS,
    StoryContext,
    factor_table,
    job_story,
    share_view,
    waiting_at,
)
from engine.core.views import QueueView, ShareView
from engine.policies.priority import MultifactorPriority
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.state.workload import build_workload


def _run(spec: dict, jobs: list[dict], nodes: pd.DataFrame):
    scenario = Scenario.from_dict({"name": "t", **spec})
    frame = pd.DataFrame(jobs)
    result = run_scenario(scenario, frame, nodes)
    return result, StoryContext.of(scenario, build_workload(*scenario.apply(frame, nodes)))


def _row(result, job_id: str) -> int:
    return int(np.flatnonzero(result.jobs["job_id"] == job_id)[0])


def test_a_job_over_its_quota_waits_for_its_teammate_and_starts_when_it_ends():
    # Team a's quota is 4 GPUs with no borrowing; a1 holds them 0-100 s, so a2 (submitted at 10 s)
    # is held back by the quota although 4 GPUs are free, and starts when a1 ends. b's job fits at once.
    result, context = _run({"policies": {"quota": {"key": "kueue"}},
                            "quota": [{"holder": "a", "nominal_gpus": 4, "borrowing_limit_gpus": 0},
                                      {"holder": "b", "nominal_gpus": 4}]},
                           [job(1, 0, 100, 4, team="a"), job(2, 10, 50, 4, team="a"), job(3, 300, 10, 1, team="b")],
                           fleet(8))
    story = job_story(result, _row(result, "j2"), context)
    assert story.timeline.to_dict("list") == {"time_s": [10.0, 10.0, 100.0, 150.0],
                                              "event": ["submitted", "blocked-by-quota", "started", "completed"]}
    assert story.reasons.to_dict("list") == {"reason": ["blocked-by-quota"], "seconds": [90.0], "share": [1.0]}
    assert (story.start_s, story.starts, story.wait_s, story.total_wait_s) == (100.0, (100.0,), 90.0, 90.0)
    assert story.status == "completed" and story.team == "a" and story.queue == "standard"
    assert (story.max_wait_s, story.sla, story.starved) == (24 * 3600.0, "met", False)
    assert story.order == "fcfs" and not story.has_factors and factor_table(story).empty
    # at its submit a1 runs and nothing else waits; at 100 s it is alone in the queue again
    assert [(m.label, m.time_s, m.jobs_ahead, m.waiting) for m in story.moments] == [
        ("submitted", 10.0, 0, 1), ("started", 100.0, 0, 1)]
    assert all(m.factors is None and math.isnan(m.priority) for m in story.moments)


def test_a_preempted_job_has_two_starts_and_waits_again_in_between():
    # hpo (preemptible queue, no checkpoints) holds the 4-GPU node from 0 s; a training job (standard
    # queue, higher tier) arrives at 700 s, after hpo's minimum runtime of 600 s, and evicts it:
    # hpo loses 700 s of work, waits while training runs 700-1700 s and runs its whole 1000 s again.
    result, context = _run({"policies": {"preemption": {"key": "priority", "min_runtime_s": 600.0}}},
                           [job(1, 0, 1000, 4, workload_class="hpo"), job(2, 700, 1000, 4)], fleet(4))
    story = job_story(result, _row(result, "j1"), context)
    assert story.starts == (0.0, 1700.0) and story.start_s == 0.0 and story.end_s == 2700.0
    assert story.preemptions == 1 and story.lost_gpu_hours == pytest.approx(4 * 700 / 3600)
    assert story.wait_s == 0.0 and story.total_wait_s == 1000.0
    events = story.timeline["event"].tolist()
    assert events[:3] == ["submitted", "started", "preempted"] and events[-2:] == ["started", "completed"]
    assert story.reasons["seconds"].sum() == 1000.0
    assert [(m.label, m.time_s) for m in story.moments] == [("submitted", 0.0), ("started", 0.0),
                                                             ("restarted", 1700.0)]
    training = job_story(result, _row(result, "j2"), context)
    assert (training.starts, training.wait_s, training.sla, training.queue) == ((700.0,), 0.0, "met", "standard")



def test_a_job_evicted_from_spot_with_nowhere_else_to_go_never_starts_again():
    # one 8-GPU spot node, interrupted about every 5 h; the 2-day job falls back to on-demand at its
    # first interruption and the region has no other node: it is turned away, "never-fits"
    nodes = fleet(8).assign(tier="spot")
    result, context = _run({"spot": {"interruptions_per_node_hour": 0.2, "fallback_after": 1}},
                           [job(1, 0, 2 * 86_400, 1)], nodes)
    story = job_story(result, 0, context)
    assert story.status == "never-fits" and story.starts == (0.0,) and story.preemptions == 1
    assert story.timeline["event"].tolist() == ["submitted", "started", "preempted", "never-fits"]
    assert story.reasons["reason"].tolist() == ["never-fits"]
    assert result.segments["outcome"].tolist() == ["preempted"]

def test_under_fcfs_the_jobs_ahead_are_the_earlier_submits_still_waiting():
    # One 4-GPU node; every job wants all of it for 100 s: j1 runs 0-100, j2 100-200, j3 200-300.
    result, context = _run({"policies": {}}, [job(i, 10 * i, 100, 4) for i in range(3)], fleet(4))
    story = job_story(result, 2, context)
    assert [(m.label, m.jobs_ahead, m.waiting) for m in story.moments] == [("submitted", 1, 2), ("started", 0, 1)]
    # behind j1 from its submit until j1 starts at 100 s, then the blocked head until 200 s
    assert story.reasons.to_dict("list") == {"reason": ["blocked-by-capacity", "waiting-in-queue"],
                                              "seconds": [100.0, 80.0], "share": [100 / 180, 80 / 180]}
    assert list(waiting_at(result, "r", 20.0)) == [1, 2] and list(waiting_at(result, "r", 100.0)) == [1, 2]
    assert list(waiting_at(result, "r", 150.0)) == [2]
    table = longest_waiting(result)
    assert table[["job_id", "wait_s"]].to_dict("list") == {"job_id": ["j2", "j1", "j0"], "wait_s": [180.0, 90.0, 0.0]}


H = 100.0  # the half-life of the priority test, s


def test_priority_factors_at_submit_match_multifactor_on_the_ledger_by_hand():
    # One 4-GPU node. Team a's a1 holds all 4 GPUs 0-50 s; b1 (team b, 2 GPUs) and x (team b, 4 GPUs,
    # deadline 400 s, requested 100 s) wait behind it. At x's submit (20 s) team a's decayed usage is
    # 4 h / ln 2 (1 - 2^(-20/h)); b has used nothing.
    order = {"key": "multifactor", "half_life_s": H, "max_age_s": 100.0, "deadline_horizon_s": 500.0}
    jobs = [job(1, 0, 50, 4, team="a"), job(2, 10, 30, 2, team="b"), job(3, 20, 100, 4, team="b")]
    jobs[2]["deadline_utc"] = jobs[2]["submit_utc"] + pd.Timedelta(seconds=380)
    result, context = _run({"policies": {"order": order}}, jobs, fleet(4))
    story = job_story(result, _row(result, "j3"), context)
    assert story.has_factors and story.order == "multifactor"

    usage_a = 4 * H / math.log(2) * (1 - 2 ** (-20 / H))
    shares = ShareView(("a", "b"), ("all",), np.zeros(2, np.int64), np.ones(2), np.array([usage_a, 0.0]),
                       np.array([80.0, 0.0]), np.array([4.0, 0.0]), np.zeros(2), np.zeros(2), np.array([usage_a + 0]),
                       np.array([usage_a]), 4.0, 0.0, 0.0, H)
    rebuilt = share_view(result, "r", 20.0, context)
    np.testing.assert_allclose(rebuilt.usage_gpu_s, shares.usage_gpu_s)
    np.testing.assert_allclose(rebuilt.running_gpus, shares.running_gpus)
    np.testing.assert_allclose(rebuilt.served_gpu_s, shares.served_gpu_s)
    view = QueueView.of(np.array([10.0, 20.0]), np.array([30.0, 100.0]), np.array([2.0, 4.0]), index=np.array([1, 2]),
                        deadline_s=np.array([np.inf, 400.0]), team=np.array([1, 1]), qos=np.array([0.5, 0.5]),
                        shares=shares)
    expected = MultifactorPriority(half_life_s=H, max_age_s=100.0, deadline_horizon_s=500.0).factors(view, 20.0)
    at_submit = story.moments[0]
    assert at_submit.label == "submitted" and at_submit.time_s == 20.0
    assert list(at_submit.factors.columns) == FACTOR_COLUMNS
    weighted = dict(zip(at_submit.factors["factor"], at_submit.factors["weighted"]))
    for name in ("age", "fairshare", "qos", "size", "deadline"):
        assert weighted[name] == pytest.approx(expected[name][1]), name
    assert weighted["total"] == pytest.approx(expected["priority"][1]) == at_submit.priority
    # by hand: age 0; fair share 2^(-0/0.5) = 1; qos 0.5; size 4/4; slack 400 - 20 - 100 = 280 s of 500
    assert weighted == pytest.approx({"age": 0.0, "fairshare": 10000.0, "qos": 1000.0, "size": 500.0,
                                      "deadline": 3000.0 * (1 - 280 / 500), "total": 12820.0})
    # b1 has the same fair share, tier and no deadline, but less age weight than x's urgency: x goes first
    assert at_submit.jobs_ahead == 0 and at_submit.waiting == 2
    table = factor_table(story)
    assert list(table.columns) == ["factor", "weight", "submitted", "started"]
    assert table["submitted"].tolist() == pytest.approx(at_submit.factors["weighted"].tolist())


def test_a_job_that_never_fits_waits_to_the_window_end_under_that_reason():
    # an 8-GPU job on a 4-GPU node is turned away at its submit (10 s); the window ends with the
    # data's last recorded time, j0's end at 100 s
    result, context = _run({"policies": {}}, [job(0, 0, 100, 4), job(1, 10, 50, 8)], fleet(4))
    story = job_story(result, 1, context)
    assert story.status == "never-fits" and math.isnan(story.start_s) and story.starts == ()
    assert story.timeline["event"].tolist() == ["submitted", "never-fits"]
    assert story.reasons.to_dict("list") == {"reason": ["never-fits"], "seconds": [90.0], "share": [1.0]}
    assert (story.wait_s, story.sla) == (90.0, "pending")   # within the standard queue's 24 h so far
    assert [(m.label, m.jobs_ahead, m.waiting) for m in story.moments] == [("submitted", 0, 1)]


def test_a_job_larger_than_its_team_limit_is_turned_away_under_that_reason():
    # team "t" may hold 4 GPUs; the 8-GPU job can never pass its quota: turned away at its submit
    # (10 s), the window ending at j0's end (100 s)
    result, context = _run({"policies": {"quota": {"key": "team-limit", "max_gpus": 4}}},
                           [job(0, 0, 100, 4, team="t"), job(1, 10, 50, 8, team="t")], fleet(8))
    story = job_story(result, 1, context)
    assert story.status == "exceeds-quota" and math.isnan(story.start_s) and story.starts == ()
    assert story.timeline["event"].tolist() == ["submitted", "exceeds-quota"]
    assert story.reasons.to_dict("list") == {"reason": ["exceeds-quota"], "seconds": [90.0], "share": [1.0]}

"""Failure probabilities for the scheduler (engine.predict.failure_source) and the fail-fast order."""
import numpy as np
import pandas as pd
import pytest

from engine.core.errors import ScenarioError
from engine.core.views import QueueView
from engine.policies import registry
from engine.predict.failure_source import with_failure_probability
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from tests.predict_helpers import perturb_after, synthetic
from tests.sim_helpers import fleet, job, run


@pytest.mark.parametrize("params, fail_prob, requested, expected", [
    ({}, [0.1, 0.9, 0.5, 0.2], [10, 10, 10, 10], [1, 2, 0, 3]),              # p >= 0.5 first, each group FCFS
    ({"threshold": 0.95}, [0.1, 0.9, 0.5, 0.2], [10, 10, 10, 10], [0, 1, 2, 3]),  # nobody qualifies: FCFS
    ({"max_request_s": 60.0}, [0.9, 0.9, 0.1, 0.8], [3600, 60, 10, 30], [1, 3, 0, 2]),  # long likely failures wait
    ({"threshold": 0.0}, [0.0, 0.0, 0.0, 0.0], [10, 10, 10, 10], [0, 1, 2, 3]),
])
def test_fail_fast_order(params, fail_prob, requested, expected):
    queue = QueueView.of(submit_s=np.array([0.0, 1.0, 2.0, 3.0]), requested_s=np.array(requested, float),
                         size=np.ones(4), fail_prob=np.array(fail_prob))
    keys = registry.make("order", "fail-fast", **params).keys(queue, 10.0)
    assert np.lexsort((queue.index, *keys[::-1])).tolist() == expected


@pytest.mark.parametrize("params, message", [
    ({"threshold": 1.5}, "threshold must be from 0 to 1 .*got 1.5"),
    ({"max_request_s": -1.0}, "max_request_s must be from 0 to .*got -1.0"),
])
def test_fail_fast_rejects_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        registry.make("order", "fail-fast", **params)


def test_a_failure_aware_order_needs_failure_predictions():
    with pytest.raises(ScenarioError, match=r"order 'fail-fast' reads predicted failure probabilities; "
                                            r"set \[runtime\] failure = true"):
        Scenario.from_dict({"policies": {"order": "fail-fast"}})
    with pytest.raises(ScenarioError, match=r"\[runtime\] failure must be true or false"):
        Scenario.from_dict({"runtime": {"failure": "yes"}})
    assert Scenario.from_dict({"policies": {"order": "fail-fast"}, "runtime": {"failure": True}}).predict_failure


def test_likely_failures_go_first_in_the_simulator():
    rows = [job(0, 0, 100, 4), job(1, 1, 50, 4), job(2, 2, 50, 4)]
    rows[2]["fail_prob"], rows[1]["fail_prob"] = 0.8, 0.1
    result = run(rows, fleet(4), order="fail-fast")
    starts = result.jobs.set_index("job_id")["start_s"]
    assert (starts["j0"], starts["j2"], starts["j1"]) == (0.0, 100.0, 150.0)
    assert run([{k: v for k, v in r.items() if k != "fail_prob"} for r in rows], fleet(4),
               order="fcfs").jobs.set_index("job_id")["start_s"]["j1"] == 100.0


@pytest.fixture(scope="module")
def log():
    jobs = synthetic(n=3000, users=30)
    jobs["job_id"] = [f"j{i:05d}" for i in range(len(jobs))]
    return jobs


def test_probabilities_only_after_the_cut_and_without_leakage(log):
    cut = log["submit_utc"].iloc[2000]
    out = with_failure_probability(log, cut)
    after = (log["submit_utc"] >= cut).to_numpy()
    assert out.loc[~after, "fail_prob"].isna().all()
    prob = out.loc[after, "fail_prob"].to_numpy()
    assert ((prob >= 0) & (prob <= 1)).all()
    failing = log.loc[after, "status"].eq("failed").to_numpy()
    assert prob[failing].mean() > prob[~failing].mean() + 0.2  # failure-prone users are recognised
    t = log["submit_utc"].iloc[2500]
    again = with_failure_probability(perturb_after(log, t), cut)
    early = after & (log["submit_utc"] < t).to_numpy()
    np.testing.assert_array_equal(again.loc[early, "fail_prob"], out.loc[early, "fail_prob"])


def test_a_fail_fast_scenario_starts_likely_failures_sooner(log):
    jobs = log.assign(region="r", gpu_type="A", cpus=1, memory_gib=1, priority=0)
    nodes = fleet(8, 8)
    start = str(log["submit_utc"].iloc[2000])
    spec = {"policies": {"backfill": "easy"}, "workload": {"start_utc": start}, "runtime": {"failure": True}}
    fast = Scenario.from_dict({**spec, "name": "fast", "policies": {"order": "fail-fast", "backfill": "easy"}})
    fifo, first = run_scenario(Scenario.from_dict({**spec, "name": "fifo"}), jobs, nodes), run_scenario(fast, jobs, nodes)
    wait = {name: (r.jobs["start_s"] - r.jobs["submit_s"]).groupby(r.jobs["job_id"].isin(
        jobs.loc[jobs["status"] == "failed", "job_id"])).mean() for name, r in (("fifo", fifo), ("fast", first))}
    assert wait["fast"][True] < 0.8 * wait["fifo"][True]  # failing jobs hear of it sooner
    pd.testing.assert_frame_equal(run_scenario(fast, jobs, nodes).jobs, first.jobs)  # deterministic

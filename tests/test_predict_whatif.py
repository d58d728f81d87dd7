"""Predicted runtimes in place of requests (engine.predict.runtime_source, a scenario's [runtime])."""
import numpy as np
import pandas as pd
import pytest

from engine.analysis.runs.sim_metrics import kpis
from engine.core.errors import ScenarioError
from engine.predict.runtime_source import MIN_TRAIN_JOBS, with_predicted_runtimes
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture(scope="module")
def sample():
    jobs = pd.read_csv(SAMPLE / "jobs.csv.gz", parse_dates=["submit_utc", "start_utc", "end_utc", "deadline_utc"])
    for column in ("submit_utc", "start_utc", "end_utc", "deadline_utc"):
        jobs[column] = jobs[column].dt.tz_localize(None)
    jobs = jobs[jobs["submit_utc"] < jobs["submit_utc"].min() + pd.Timedelta(days=10)].reset_index(drop=True)
    return jobs, pd.read_csv(SAMPLE / "fleet.csv")


def test_jobs_after_the_cut_get_predictions_and_keep_their_request(sample):
    jobs, _ = sample
    cut = jobs["submit_utc"].min() + pd.Timedelta(days=7)
    out = with_predicted_runtimes(jobs, cut)
    after = (out["submit_utc"] >= cut).to_numpy()
    assert (out.loc[~after, "requested_runtime_s"].fillna(-1) == jobs.loc[~after, "requested_runtime_s"].fillna(-1)).all()
    assert (out["user_requested_runtime_s"].fillna(-1) == jobs["requested_runtime_s"].fillna(-1)).all()
    predicted = out.loc[after, "requested_runtime_s"].to_numpy()
    assert np.isfinite(predicted).all() and (predicted >= 1).all()
    assert not np.allclose(predicted, jobs.loc[after, "requested_runtime_s"].fillna(0).to_numpy())
    # what happens after a time T never reaches a prediction made before T
    t = cut + pd.Timedelta(days=1)
    late = (jobs["submit_utc"] >= t).to_numpy()
    later = jobs.copy()
    later.loc[late, "end_utc"] = later.loc[late, "start_utc"] + pd.Timedelta(hours=1)
    later.loc[late, "status"] = "failed"
    again = with_predicted_runtimes(later, cut)
    early = after & ~late
    assert early.sum() > 500
    np.testing.assert_array_equal(again.loc[early, "requested_runtime_s"], out.loc[early, "requested_runtime_s"])
    assert not np.array_equal(again.loc[late, "requested_runtime_s"], out.loc[late, "requested_runtime_s"])


def test_a_scenario_with_predicted_runtimes_runs_the_window_after_the_training_cut(sample):
    jobs, fleet = sample
    start = str(jobs["submit_utc"].min() + pd.Timedelta(days=8))
    spec = {"policies": {"order": {"key": "sjf"}, "backfill": {"key": "easy"}}, "workload": {"start_utc": start}}
    asked = run_scenario(Scenario.from_dict({**spec, "name": "requests"}), jobs, fleet)
    predicted = Scenario.from_dict({**spec, "name": "predicted", "runtime": {"source": "predicted"}})
    result = run_scenario(predicted, jobs, fleet)
    assert len(result.jobs) == len(asked.jobs) == int((jobs["submit_utc"] >= pd.Timestamp(start)).sum())
    assert (result.jobs["started"] | (result.jobs["reason"] == "gave-up")).all()   # withdrawn jobs may give up
    assert kpis(result)["wait_mean_s"] != kpis(asked)["wait_mean_s"]  # the scheduler saw other runtimes
    both = (result.jobs["started"] & asked.jobs["started"]).to_numpy()
    np.testing.assert_array_equal(result.jobs["run_s"][both], asked.jobs["run_s"][both])  # true runtimes unchanged
    assert kpis(run_scenario(predicted, jobs, fleet)) == kpis(result)  # deterministic


def test_too_little_history_is_a_clear_scenario_error(sample):
    jobs, fleet = sample
    early = str(jobs["submit_utc"].sort_values().iloc[MIN_TRAIN_JOBS // 2])
    scenario = Scenario.from_dict({"name": "early", "runtime": {"source": "predicted"}, "workload": {"start_utc": early}})
    with pytest.raises(ScenarioError, match=r"early: predicted runtimes need at least 200 finished jobs .* start the "
                                            r"window later"):
        run_scenario(scenario, jobs, fleet)


def test_bad_runtime_sections_name_the_choices():
    with pytest.raises(ScenarioError, match=r"\[runtime\] quantile 'p99' is unknown; choose from p10, p50, p90"):
        Scenario.from_dict({"runtime": {"source": "predicted", "quantile": "p99"}})
    with pytest.raises(ScenarioError, match=r"unknown \[runtime\] key model"):
        Scenario.from_dict({"runtime": {"model": "x"}})


def test_a_job_past_its_prediction_is_expected_at_its_request_so_backfilling_goes_on():
    from tests.sim_helpers import fleet, job, run

    jobs = [job(0, 0, 1000, 2, requested=100), job(1, 1, 100, 4), job(2, 200, 500, 2)]
    corrected = [dict(j) for j in jobs]
    corrected[0]["user_requested_runtime_s"] = 2000.0  # the prediction (100 s) replaced a 2000 s request
    for j in corrected[1:]:
        j["user_requested_runtime_s"] = j["requested_runtime_s"]
    starts = {name: run(rows, fleet(4), backfill="easy").jobs.set_index("job_id")["start_s"]
              for name, rows in (("expected now", jobs), ("expected at its request", corrected))}
    # overdue and expected to end at once, j0 leaves no room before the head's reservation: j2 waits
    assert starts["expected now"]["j2"] > 1000
    # expected at its request (2000 s), j0 leaves j2's 500 s before the head can start: j2 backfills
    assert starts["expected at its request"]["j2"] == 200.0
    assert starts["expected at its request"]["j1"] == 1000.0

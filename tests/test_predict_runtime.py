"""Runtime quantiles, their metrics and baselines, and the time-ordered evaluation."""
import math

import numpy as np
import pandas as pd
import pytest
from predict_helpers import perturb_after, row, synthetic, table

from engine.predict import baselines
from engine.predict.evaluate import TimeSplit, evaluate_runtime
from engine.predict.features import features, runtime_s
from engine.predict.metrics import coverage, runtime_metrics
from engine.predict.runtime import RuntimeModel, RuntimeSettings

FAST = RuntimeSettings(max_iter=60)


@pytest.fixture(scope="module")
def jobs():
    return synthetic(n=3000, users=30)


@pytest.fixture(scope="module")
def fitted(jobs):
    X, run = features(jobs), runtime_s(jobs)
    return X, run, RuntimeModel(FAST).fit(X.iloc[:2000], run[:2000])


@pytest.mark.parametrize("actual, pred, male, accuracy, under", [
    ([100, 100], [100, 100], 0.0, 1.0, 0.0),
    ([100, 100], [200, 50], math.log(2), 0.5, 0.5),
    ([10, 1000], [1000, 10], math.log(100), 0.01, 0.5),
    ([0, 0.2], [1, 1], 0.0, 1.0, 0.0),            # both floored at 1 s
])
def test_runtime_metrics(actual, pred, male, accuracy, under):
    got = runtime_metrics(np.array(actual, float), np.array(pred, float))
    assert got == pytest.approx({"male": male, "accuracy": accuracy, "underestimate_rate": under})


def test_coverage_counts_the_inclusive_interval():
    assert coverage(np.array([5.0, 10, 20, 30]), np.array([5.0, 11, 10, 1]), np.array([6.0, 20, 20, 29])) == 0.5


def test_quantiles_are_ordered_floored_and_deterministic(fitted, jobs):
    X, run, model = fitted
    predicted = model.predict(X.iloc[2000:])
    assert list(predicted.columns) == ["p10_s", "p50_s", "p90_s", "sched_s"] and predicted.index.equals(X.index[2000:])
    assert (predicted["p10_s"] <= predicted["p50_s"]).all() and (predicted["p50_s"] <= predicted["p90_s"]).all()
    assert (predicted.to_numpy() >= 1.0).all()
    again = RuntimeModel(FAST).fit(X.iloc[:2000], run[:2000]).predict(X.iloc[2000:])
    pd.testing.assert_frame_equal(predicted, again)


def test_predictions_do_not_depend_on_the_number_of_threads(fitted):
    X, run, _ = fitted
    one, two = (RuntimeModel(RuntimeSettings(max_iter=5, threads=n)).fit(X.iloc[:2000], run[:2000]) for n in (1, 2))
    pd.testing.assert_frame_equal(two.predict(X.iloc[2000:]), one.predict(X.iloc[2000:]))


def test_model_beats_the_request_and_covers_about_80_percent_in_distribution(fitted):
    X, run, model = fitted
    predicted, actual = model.predict(X.iloc[2000:]), run[2000:]
    ours = runtime_metrics(actual, predicted["p50_s"])["male"]
    request = runtime_metrics(actual, baselines.request_s(X.iloc[2000:], 3600.0))["male"]
    assert ours < 0.6 * request
    assert 0.65 <= coverage(actual, predicted["p10_s"], predicted["p90_s"]) <= 0.95


def test_clip_to_request_caps_every_quantile(jobs):
    X, run = features(jobs), runtime_s(jobs)
    X = X.assign(log_request_s=np.log(np.full(len(X), 120.0)))
    clipped = RuntimeModel(RuntimeSettings(max_iter=30, clip_to_request=True)).fit(X.iloc[:2000], run[:2000])
    assert (clipped.predict(X.iloc[2000:]).to_numpy() <= 120.0 + 1e-9).all()


def test_no_leakage_perturbing_the_future_leaves_past_predictions_unchanged(jobs):
    cutoff = jobs["submit_utc"].iloc[2000]
    perturbed = perturb_after(jobs, cutoff)

    def past_predictions(table_):
        X, run = features(table_), runtime_s(table_)
        known = np.isfinite(run) & (table_["end_utc"] <= cutoff).to_numpy()
        model = RuntimeModel(FAST).fit(X[known], run[known])
        return model.predict(X[(table_["submit_utc"] < cutoff).to_numpy()])

    pd.testing.assert_frame_equal(past_predictions(perturbed), past_predictions(jobs))


@pytest.mark.parametrize("request_s, last2_s, expected", [
    (600.0, 100.0, 100.0),        # the user's last two
    (600.0, 900.0, 600.0),        # capped at the request
    (600.0, None, 600.0),         # no history: the request
    (None, 900.0, 900.0),         # no request: uncapped
    (None, None, 42.0),           # neither: the fallback
])
def test_last_two_baseline(request_s, last2_s, expected):
    log = lambda v: math.nan if v is None else math.log(v)  # noqa: E731
    X = pd.DataFrame({"log_request_s": [log(request_s)], "log_user_last2_s": [log(last2_s)]})
    assert baselines.last_two_s(X, 42.0)[0] == pytest.approx(expected)
    assert baselines.request_s(X, 42.0)[0] == pytest.approx(42.0 if request_s is None else request_s)


def test_time_split_trains_only_on_jobs_ended_by_the_cutoff():
    jobs = table([row("a", s, s, s + run) for s, run in
                  [(40, 5), (0, 5), (10, 500), (20, 5), (30, 5), (50, 5), (60, 5), (70, 5), (80, 5), (90, 5)]])
    split = TimeSplit.of(jobs, train_share=0.7)
    assert split.cutoff_utc == "2026-03-02T00:01:10Z"
    assert split.test.tolist() == [False] * 7 + [True] * 3
    assert split.train.tolist() == [True, True, False, True, True, True, True, False, False, False]


def test_evaluate_runtime_is_deterministic_and_reports_every_predictor(jobs):
    first = evaluate_runtime(jobs, settings=FAST)
    assert first == evaluate_runtime(jobs, settings=FAST)
    assert first["jobs_test"] == 900 and 2050 <= first["jobs_train"] <= 2100
    assert set(first) == {"cutoff_utc", "jobs_train", "jobs_test", "model", "sched", "request", "last_two"}
    assert set(first["model"]) == {"male", "accuracy", "underestimate_rate", "coverage", "coverage_split", "below_p10",
                                   "above_p90", "width_ratio_median"}
    assert first["model"]["male"] < first["last_two"]["male"] < first["request"]["male"]
    assert first["model"]["coverage"] == pytest.approx(1 - first["model"]["below_p10"] - first["model"]["above_p90"])
    assert first["sched"]["underestimate_rate"] < first["model"]["underestimate_rate"]   # tau 0.7 > 0.5

"""Calibrated failure probability, its metrics and baselines, and the time-ordered evaluation."""
import numpy as np
import pandas as pd
import pytest
from predict_helpers import perturb_after, synthetic

from engine.predict.encoding import encoder
from engine.predict.evaluate import evaluate_failure
from engine.predict.failure import FailureModel, FailureSettings
from engine.predict.features import failed, features, has_outcome
from engine.predict.metrics import calibration_table, failure_metrics

FAST = FailureSettings(max_iter=40)


@pytest.fixture(scope="module")
def jobs():
    return synthetic(n=3000, users=30)


@pytest.mark.parametrize("label, prob, roc, pr, brier", [
    ([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9], 1.0, 1.0, (0.01 + 0.04 + 0.04 + 0.01) / 4),
    ([0, 0, 1, 1], [0.9, 0.8, 0.2, 0.1], 0.0, 5 / 12, (0.81 + 0.64 + 0.64 + 0.81) / 4),
    ([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5], 0.5, 0.5, 0.25),
])
def test_failure_metrics(label, prob, roc, pr, brier):
    got = failure_metrics(np.array(label), np.array(prob))
    assert got == pytest.approx({"roc_auc": roc, "pr_auc": pr, "brier": brier, "base_rate": 0.5})


def test_auc_is_undefined_with_one_class_but_brier_is_not():
    got = failure_metrics(np.zeros(4, dtype=bool), np.array([0.0, 0.1, 0.0, 0.3]))
    assert np.isnan(got["roc_auc"]) and np.isnan(got["pr_auc"]) and got["brier"] == pytest.approx(0.025)


def test_calibration_table_bins_predictions_and_skips_empty_bins():
    label = np.array([0, 0, 1, 1, 1, 0])
    prob = np.array([0.05, 0.15, 0.12, 0.95, 1.0, 0.9])
    got = calibration_table(label, prob, bins=10)
    assert got["bin_low"].tolist() == pytest.approx([0.0, 0.1, 0.9])
    assert got["jobs"].tolist() == [1, 2, 3]
    assert got["predicted"].tolist() == pytest.approx([0.05, 0.135, (0.95 + 1.0 + 0.9) / 3])
    assert got["observed"].tolist() == pytest.approx([0.0, 0.5, 2 / 3])


def test_model_ranks_failures_and_beats_the_base_rate(jobs):
    X, y = features(jobs), failed(jobs)
    model = FailureModel(FAST).fit(X.iloc[:2000], y[:2000])
    prob = model.predict(X.iloc[2000:])
    assert ((prob >= 0) & (prob <= 1)).all()
    ours = failure_metrics(y[2000:], prob)
    constant = failure_metrics(y[2000:], np.full(1000, y[:2000].mean()))
    assert ours["roc_auc"] > 0.75 and ours["brier"] < 0.85 * constant["brier"]
    np.testing.assert_array_equal(prob, FailureModel(FAST).fit(X.iloc[:2000], y[:2000]).predict(X.iloc[2000:]))


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_probabilities_match_the_observed_rates(method):
    """Failing users fail 60 % of the time, the others 5 %: the calibrated probabilities say so."""
    jobs = synthetic(n=6000, users=30)
    X, y = features(jobs), failed(jobs)
    prob = FailureModel(FailureSettings(max_iter=40, method=method)).fit(X.iloc[:4000], y[:4000]).predict(X.iloc[4000:])
    likely, observed = prob > 0.3, y[4000:]
    assert 300 < likely.sum() < 500
    assert prob[likely].mean() == pytest.approx(observed[likely].mean(), abs=0.07)
    assert prob[~likely].mean() == pytest.approx(observed[~likely].mean(), abs=0.03)


def test_a_single_class_gives_its_rate(jobs):
    X = features(jobs).iloc[:500]
    assert (FailureModel(FAST).fit(X, np.zeros(500, dtype=bool)).predict(X) == 0.0).all()


def test_no_leakage_perturbing_the_future_leaves_past_probabilities_unchanged(jobs):
    cutoff = jobs["submit_utc"].iloc[2000]
    perturbed = perturb_after(jobs, cutoff)

    def past_probabilities(table_):
        X = features(table_)
        known = has_outcome(table_) & (table_["end_utc"] <= cutoff).to_numpy()
        model = FailureModel(FAST).fit(X[known], failed(table_)[known])
        return model.predict(X[(table_["submit_utc"] < cutoff).to_numpy()])

    np.testing.assert_array_equal(past_probabilities(perturbed), past_probabilities(jobs))


def test_evaluate_failure_is_deterministic_and_reports_every_predictor(jobs):
    first = evaluate_failure(jobs, settings=FAST)
    assert first == evaluate_failure(jobs, settings=FAST)
    assert {"model", "base_rate", "user_recent", "calibration", "train_failure_rate"} <= set(first)
    assert first["base_rate"]["roc_auc"] == 0.5
    assert first["model"]["roc_auc"] > 0.8 and first["user_recent"]["roc_auc"] > 0.8
    assert first["model"]["brier"] < first["base_rate"]["brier"]
    calibration = pd.DataFrame(first["calibration"])
    assert calibration["jobs"].sum() == first["jobs_test"]


def test_encoder_rejects_an_unknown_categorical():
    with pytest.raises(ValueError, match="not categorical"):
        encoder(("user", "colour"), 20)

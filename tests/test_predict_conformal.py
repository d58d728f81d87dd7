"""Calibrated runtime intervals (engine/predict/conformal.py): the split-conformal offsets and the online
tracking on hand-computed numbers, the long-run coverage under a drift that breaks the split step, no
leakage from the future, and the runtime to schedule with (sched_s)."""
import numpy as np
import pandas as pd
import pytest
from predict_helpers import perturb_after, synthetic

from engine.predict import conformal
from engine.predict.conformal import Offsets, split_offsets, track
from engine.predict.features import features, runtime_s, seconds
from engine.predict.metrics import interval_metrics
from engine.predict.runtime import RuntimeModel, RuntimeSettings

FAST = RuntimeSettings(max_iter=60)


def test_split_offsets_are_each_sides_finite_sample_conformal_quantile():
    n = 39
    actual = np.zeros(n)
    # lower scores 1..39 (ln P10 - ln runtime), upper scores -1..-39
    low, high = np.arange(1.0, n + 1), np.arange(1.0, n + 1)
    got = split_offsets(low, high, actual, alpha=0.2)
    # k = ceil(40 x 0.9) = 36: the 36th smallest score of each side
    assert got == Offsets(36.0, -4.0)
    assert split_offsets(low[:10], high[:10], actual[:10]) == Offsets()   # too few rows: no step


def test_tracking_moves_each_offset_by_step_times_miss_minus_half_alpha_in_end_order():
    start = Offsets(0.0, 0.0)
    # three outcomes, given out of order: ends 30, 10, 20; raw bounds [0, 0] in ln units
    actual = np.array([0.5, -1.0, 0.0])
    ends = np.array([30.0, 10.0, 20.0])
    tracked = track(start, np.zeros(3), np.zeros(3), actual, ends, ends - 0.5, alpha=0.2, step=0.1)
    assert tracked.end_s.tolist() == [10.0, 20.0, 30.0]
    # end 10, runtime -1: below the lower bound 0 (lower +0.1 x 0.9 = 0.09), not above 0 (upper -0.1 x 0.1)
    # end 20, runtime 0: inside [-0.09, -0.01]? above it, as the upper bound moved in to -0.01 (+0.09)
    # end 30, runtime 0.5: above 0.08 again (+0.09); lower hits both times (-0.01 each)
    assert tracked.lower == pytest.approx([0.09, 0.08, 0.07])
    assert tracked.upper == pytest.approx([-0.01, 0.08, 0.17])
    lower, upper = tracked.at(np.array([5.0, 10.0, 25.0, 99.0]))
    assert lower == pytest.approx([0.0, 0.09, 0.08, 0.07]) and upper == pytest.approx([0.0, -0.01, 0.08, 0.17])
    assert tracked.last == Offsets(pytest.approx(0.07), pytest.approx(0.17))


def test_tracking_keeps_the_long_run_coverage_whatever_the_drift():
    rng = np.random.default_rng(0)
    n = 40_000
    # ln runtimes around ln 22,000 s (10), their spread tripling halfway; the raw bounds right for the first half
    actual = 10 + rng.normal(0, 1, n) * np.where(np.arange(n) < n // 2, 1.0, 3.0)
    low, high = np.full(n, 10 - 1.2816), np.full(n, 10 + 1.2816)
    ends = np.arange(n, dtype=float)
    tracked = track(Offsets(), low, high, actual, ends, ends - 0.5)
    lower, upper = tracked.at(ends - 0.5)                                       # each before its own outcome
    below, above = actual < low - lower, actual > high + upper
    assert ((actual >= low) & (actual <= high))[n // 2:].mean() < 0.45          # the split step alone breaks
    assert 0.78 <= 1 - below.mean() - above.mean() <= 0.82
    for missed, path in ((below, tracked.lower), (above, tracked.upper)):     # the guarantee, exactly
        assert abs(missed.mean() - 0.1) <= (abs(path[-1]) + conformal.STEP) / (conformal.STEP * n)


@pytest.fixture(scope="module")
def drifting():
    """The synthetic log whose runtimes after the first 2,400 jobs run 3x longer (and vary more)."""
    jobs = synthetic(n=4000, users=30)
    late = np.arange(len(jobs)) >= 2400
    run = (jobs["end_utc"] - jobs["start_utc"]).dt.total_seconds().to_numpy()
    factor = np.where(late, 3.0 * np.random.default_rng(1).lognormal(0, 0.5, len(jobs)), 1.0)
    jobs["end_utc"] = jobs["start_utc"] + pd.to_timedelta(np.round(run * factor), unit="s")
    jobs["requested_runtime_s"] = np.maximum(jobs["requested_runtime_s"], (run * factor).round())
    return jobs


def test_a_drifting_log_gets_its_80_percent_back_from_the_outcomes_known_at_each_submit(drifting):
    X, run = features(drifting), runtime_s(drifting)
    end, submit = seconds(drifting["end_utc"]), seconds(drifting["submit_utc"])
    model = RuntimeModel(FAST).fit(X.iloc[:2000], run[:2000], end[:2000])
    test = np.arange(2400, 4000)
    tracked = model.predict_tracked(X, run, end, submit, rows=test)
    fixed = model.predict(X.iloc[test])
    live = interval_metrics(run[test], tracked["p10_s"].to_numpy(), tracked["p90_s"].to_numpy())
    split = interval_metrics(run[test], fixed["p10_s"].to_numpy(), fixed["p90_s"].to_numpy())
    assert split["coverage"] < 0.6 and split["above_p90"] > 0.35
    assert 0.72 <= live["coverage"] <= 0.85 and live["above_p90"] < split["above_p90"] / 2
    assert (tracked["p10_s"] <= tracked["p50_s"]).all() and (tracked["p50_s"] <= tracked["p90_s"]).all()
    pd.testing.assert_series_equal(tracked["p50_s"], fixed["p50_s"])   # the offsets move the bounds only


def test_tracked_predictions_see_no_outcome_after_the_submit(drifting):
    cutoff = drifting["submit_utc"].iloc[3000]
    perturbed = perturb_after(drifting, cutoff)

    def before_cutoff(jobs):
        X, run = features(jobs), runtime_s(jobs)
        end, submit = seconds(jobs["end_utc"]), seconds(jobs["submit_utc"])
        model = RuntimeModel(FAST).fit(X.iloc[:2000], run[:2000], end[:2000])
        rows = np.flatnonzero((jobs["submit_utc"] < cutoff).to_numpy() & (np.arange(len(jobs)) >= 2000))
        return model.predict_tracked(X, run, end, submit, rows=rows)

    pd.testing.assert_frame_equal(before_cutoff(perturbed), before_cutoff(drifting))


def test_the_runtime_to_schedule_with_underestimates_less_than_the_p50(drifting):
    X, run = features(drifting), runtime_s(drifting)
    model = RuntimeModel(FAST).fit(X.iloc[:2000], run[:2000])
    predicted = model.predict(X.iloc[2000:2400])
    assert (predicted["sched_s"] >= predicted["p50_s"] * 0.999).mean() > 0.9
    assert (predicted["sched_s"] < run[2000:2400]).mean() < (predicted["p50_s"] < run[2000:2400]).mean()
    assert list(RuntimeModel(FAST, outputs=("p50_s",)).fit(X.iloc[:500], run[:500]).predict(X.iloc[:3]).columns) \
        == ["p50_s"]
    with pytest.raises(ValueError, match="p10_s and p90_s together"):
        RuntimeModel(outputs=("p90_s",))
    with pytest.raises(ValueError, match="schedule_quantile"):
        RuntimeModel(RuntimeSettings(schedule_quantile=1.0))


def test_constants_say_what_the_module_promises():
    assert conformal.ALPHA == pytest.approx(0.2) and 0 < conformal.CALIBRATION_SHARE < 0.5


def test_a_miss_is_judged_against_the_offsets_the_jobs_own_prediction_had():
    # two jobs submitted at 0, before any outcome: both predicted with the start offsets (0). The first
    # ends at 10 below its bound (lower +0.09); the second ends at 20 at -0.05: below the bound its own
    # prediction had (0), so a miss (+0.09), though inside the bound moved out to -0.09 after the first end
    tracked = track(Offsets(), np.zeros(2), np.zeros(2), np.array([-1.0, -0.05]), np.array([10.0, 20.0]),
                    np.array([0.0, 0.0]), alpha=0.2, step=0.1)
    assert tracked.lower == pytest.approx([0.09, 0.18])

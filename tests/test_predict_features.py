"""Submit-time features: the user's history counts only jobs finished before the submit."""
import math

import numpy as np
import pandas as pd
import pytest
from predict_helpers import T0, perturb_after, row, synthetic, table

from engine.predict.features import COLUMNS, features, zones_of

HAND = table([
    row("a", 0, 0, 100),                           # 0: runs 100 s
    row("a", 10, 10, 1010, status="failed"),       # 1: runs 1000 s, fails
    row("a", 100, 100, 400, request=600),          # 2: submitted as job 0 ends (end <= submit counts)
    row("a", 1010, 1010, None, status="running"),  # 3: jobs 0, 1, 2 finished; it never does
    row("a", 2000, 2000, 2100),                    # 4: job 3 still running: same history as job 3
    row("b", 50, 50, 60),                          # 5: b's first job
    row("b", 60, None, 70, status="cancelled"),    # 6: cancelled while queued: no runtime
    row("b", 80, 80, 90),                          # 7: one runtime (10 s), and the cancellation
    row(None, 500, 500, 600),                      # 8: no user, no history
])
NAN = math.nan


@pytest.mark.parametrize("job, finished, last2_s, median_s, fail_rate, last_failed", [
    (0, 0, NAN, NAN, NAN, NAN),
    (1, 0, NAN, NAN, NAN, NAN),
    (2, 1, 100, 100, 0, 0),
    (3, 3, 650, 300, 1 / 3, 1),
    (4, 3, 650, 300, 1 / 3, 1),
    (5, 0, NAN, NAN, NAN, NAN),
    (6, 1, 10, 10, 0, 0),
    (7, 1, 10, 10, 0.5, 1),
    (8, 0, NAN, NAN, NAN, NAN),
])
def test_history_counts_only_jobs_finished_by_the_submit(job, finished, last2_s, median_s, fail_rate, last_failed):
    got = features(HAND).iloc[job]
    assert got["user_finished"] == finished
    np.testing.assert_allclose(np.exp([got["log_user_last2_s"], got["log_user_median_s"]]),
                               [last2_s, median_s], rtol=1e-12)
    np.testing.assert_allclose([got["user_fail_rate"], got["user_last_failed"]], [fail_rate, last_failed])


def test_median_and_fail_rate_use_only_the_last_k_finished_jobs():
    runs = [1, 2, 3, 400, 500, 600]
    rows = [row("a", i, i, i + run, status="failed" if i < 3 else "completed") for i, run in enumerate(runs)]
    got = features(table(rows + [row("a", 10_000, 10_000, 10_001)]), recent=3).iloc[-1]
    assert np.exp(got["log_user_median_s"]) == pytest.approx(500)
    assert got["user_fail_rate"] == 0 and got["user_finished"] == 6


def test_job_columns_and_missing_values():
    got = features(HAND)
    assert list(got.columns) == list(COLUMNS)
    assert got["user"].tolist()[-1] == "" and got["team"].eq("t").all()
    assert np.isnan(got["log_request_s"].iloc[0]) and got["log_request_s"].iloc[2] == pytest.approx(math.log(600))
    assert got["log_gpus"].iloc[0] == pytest.approx(math.log(2))
    without = features(HAND.drop(columns=["team", "queue", "nodes", "requested_runtime_s"]))
    assert without["team"].eq("").all() and without["log_nodes"].isna().all() and without["log_request_s"].isna().all()


@pytest.mark.parametrize("submit, tz, hour, weekday", [
    (T0, None, 0, 0),                                          # Monday 00:00 UTC
    (T0, "Europe/Stockholm", 1, 0),                            # CET, UTC+1
    (pd.Timestamp("2026-07-01 12:00"), "Europe/Stockholm", 14, 2),  # CEST, UTC+2, a Wednesday
    (T0, "America/Los_Angeles", 16, 6),                        # the Sunday before, PST
])
def test_local_hour_and_weekday_of_the_submit(submit, tz, hour, weekday):
    jobs = table([row("a", 0, 0, 1)])
    jobs["submit_utc"] = pd.Series([submit]).astype("datetime64[s]")
    got = features(jobs, tz).iloc[0]
    assert (got["submit_hour"], got["submit_weekday"]) == (hour, weekday)


def test_each_job_in_its_own_regions_time_zone():
    jobs = table([row("a", 0, 0, 1), row("b", 0, 0, 1), row("c", 0, 0, 1), row("d", 0, 0, 1)])
    jobs["region"] = ["eu", "us", "elsewhere", None]
    regions = pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Stockholm", "America/Los_Angeles"]})
    got = features(jobs, zones_of(regions))
    assert got["submit_hour"].tolist() == [1, 16, 0, 0]      # Monday 00:00 UTC; unknown regions in UTC
    assert got["submit_weekday"].tolist() == [0, 6, 0, 0]


def test_rows_stay_aligned_with_the_input_in_any_order():
    jobs = synthetic(n=500, users=8)
    expected = features(jobs)
    shuffled = jobs.sample(frac=1.0, random_state=3)
    shuffled.index = shuffled.index + 1000
    got = features(shuffled)
    assert got.index.equals(shuffled.index)
    pd.testing.assert_frame_equal(got.set_axis(shuffled.index - 1000).sort_index(), expected)


def test_no_leakage_perturbing_the_future_leaves_past_features_unchanged():
    jobs = synthetic(n=2000, users=20)
    cutoff = jobs["submit_utc"].iloc[1200]
    past = (jobs["submit_utc"] < cutoff).to_numpy()
    perturbed = perturb_after(jobs, cutoff)
    assert (perturbed["end_utc"] != jobs["end_utc"]).sum() > 800
    pd.testing.assert_frame_equal(features(perturbed)[past], features(jobs)[past])
    assert not features(perturbed)[~past].equals(features(jobs)[~past])


def test_a_change_before_the_cutoff_does_show_up():
    jobs = synthetic(n=2000, users=20)
    changed = jobs.copy()
    changed.loc[5, "end_utc"] = changed.loc[5, "start_utc"] + pd.Timedelta(seconds=7)
    assert not features(changed).iloc[:1200].equals(features(jobs).iloc[:1200])

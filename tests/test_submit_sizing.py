"""Right-sizing at submit (engine/predict/gpu_need.py, engine/service/submit_sizing.py): the used-share history
by hand, and the comparison with the retrospective right-sizing on part of the sample (deterministic, its sums
consistent, a high quantile resizing nothing)."""
import numpy as np
import pandas as pd
import pytest

from engine.analysis.telemetry.rightsize import rightsize
from engine.predict.gpu_need import NeedSettings, need_features, used_share
from engine.service.submit_sizing import submit_sizing
from engine.telemetry.sample import read_bundle

T = pd.Timestamp


def test_the_used_share_history_counts_only_jobs_finished_before_the_submit():
    jobs = pd.DataFrame({
        "user_name": ["u", "u", "u", "v"], "gpus": [4.0, 2.0, 8.0, 1.0], "gpus_used_max": [1.0, 2.0, np.nan, 0.0],
        "submit_utc": [T("2026-01-01 00:00"), T("2026-01-01 01:00"), T("2026-01-01 05:00"), T("2026-01-01 00:00")],
        "start_utc": [T("2026-01-01 00:00"), T("2026-01-01 01:00"), T("2026-01-01 05:00"), T("2026-01-01 00:00")],
        "end_utc": [T("2026-01-01 02:00"), T("2026-01-01 06:00"), T("2026-01-01 07:00"), T("2026-01-01 01:00")],
        "status": ["completed"] * 4})
    assert used_share(jobs)[[0, 1, 3]].tolist() == [0.25, 1.0, 0.0] and np.isnan(used_share(jobs)[2])
    table = need_features(jobs)
    # the third job (05:00) sees the first (ended 02:00) but not the second (still running until 06:00)
    assert table.loc[2, "user_used_last"] == 0.25 and table.loc[2, "user_measured"] == 1
    assert np.isnan(table.loc[0, "user_used_last"]) and table.loc[1, "user_measured"] == 0


@pytest.fixture(scope="module")
def part():
    tables = read_bundle().tables
    return tables["jobs"].iloc[::4].reset_index(drop=True), tables["regions"]


def test_at_submit_against_the_retrospective_on_the_same_later_jobs(part):
    jobs, regions = part
    fast = NeedSettings(quantile=0.1, max_iter=30)
    report = submit_sizing(jobs, regions, fast)
    assert report == submit_sizing(jobs, regions, fast)   # deterministic
    assert report["jobs_test"] > 5000 and 0 < report["retrospective_freed_gpu_hours"] < report["gpu_hours"]
    assert report["net_freed_gpu_hours"] == pytest.approx(report["freed_sized_well_gpu_hours"] - report["lost_gpu_hours"])
    assert report["undersized_jobs"] <= report["resized_at_submit"] and report["resized_at_submit"] > 0
    # sized to the measured peak, nothing can be freed beyond what the retrospective frees
    assert report["freed_sized_well_gpu_hours"] <= report["retrospective_freed_gpu_hours"] + 1e-6
    later = pd.to_datetime(jobs["submit_utc"]) >= pd.Timestamp(report["cutoff_utc"]).tz_localize(None)
    measured = later & jobs["gpus_used_max"].notna() & jobs["end_utc"].notna()
    assert rightsize(jobs[measured]).totals["freed_gpu_hours"] == pytest.approx(report["retrospective_freed_gpu_hours"])
    cautious = submit_sizing(jobs, regions, NeedSettings(quantile=0.95, max_iter=30))
    assert cautious["resized_at_submit"] == cautious["undersized_jobs"] == 0 and cautious["net_freed_gpu_hours"] == 0

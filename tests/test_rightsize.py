"""Right-sizing from per-job measured GPU use: exact recommendations, freed GPU-hours and dollars."""
import math

import numpy as np
import pandas as pd
import pytest

from engine.analysis.telemetry.rightsize import GROUP_COLUMNS, JOB_COLUMNS, RightSizeOptions, rightsize
from engine.telemetry.sample import SAMPLE_DIR, read_bundle

T0 = pd.Timestamp("2026-01-05 00:00")
NAN = float("nan")


def _jobs(rows) -> pd.DataFrame:
    """rows: dicts with gpus and any of peak, util, hours (10), nodes (1), milli (1000), team, user,
    region, gpu_type, started (True), ended (True), job_id."""
    out = []
    for i, row in enumerate(rows):
        hours = row.get("hours", 10.0)
        started = row.get("started", True)
        out.append({
            "job_id": row.get("job_id", f"j{i}"), "user_name": row.get("user", "u1"), "team": row.get("team", "t1"),
            "workload_class": "batch", "submit_utc": T0, "start_utc": T0 if started else pd.NaT,
            "end_utc": T0 + pd.Timedelta(hours=hours) if started and row.get("ended", True) else pd.NaT,
            "gpus": row["gpus"], "gpu_milli": row.get("milli", 1000), "gpu_type": row.get("gpu_type", "H100"),
            "nodes": row.get("nodes", 1), "region": row.get("region", "r1"),
            "status": "completed" if started else "pending",
            "gpu_util_pct": row.get("util", NAN), "gpus_used_max": row.get("peak", NAN)})
    frame = pd.DataFrame(out)
    frame["nodes"] = frame["nodes"].astype("Int64")
    frame["gpu_milli"] = frame["gpu_milli"].astype("Int64")
    return frame


# (case, job, headroom_pct) -> (recommended GPUs, freed GPU-hours over 10 hours, basis)
CASES = [
    ("one of eight GPUs used", dict(gpus=8, peak=1, util=10), 0, (1, 70, "peak")),
    ("every GPU used", dict(gpus=8, peak=8, util=90), 0, (8, 0, "peak")),
    ("peak above the mean decides", dict(gpus=8, peak=3, util=20), 0, (3, 50, "peak")),
    ("mean above the peak decides", dict(gpus=4, peak=1, util=50), 0, (2, 20, "peak")),
    ("never below one GPU", dict(gpus=2, peak=0, util=0), 0, (1, 10, "peak")),
    ("a one-GPU job cannot shrink", dict(gpus=1, peak=0, util=0), 0, (1, 0, "peak")),
    ("a fractional share is kept", dict(gpus=0.5, milli=500, peak=0, util=0), 0, (0.5, 0, "peak")),
    ("gang: one node of four", dict(gpus=32, nodes=4, peak=8, util=20), 0, (8, 240, "peak")),
    ("gang: nine GPUs need two nodes", dict(gpus=32, nodes=4, peak=9, util=25), 0, (16, 160, "peak")),
    ("gang: fits in one node as GPUs", dict(gpus=16, nodes=2, peak=3, util=15), 0, (3, 130, "peak")),
    ("headroom rounds up a GPU", dict(gpus=4, peak=2, util=40), 25, (3, 10, "peak")),
    ("headroom up to the ask", dict(gpus=4, peak=2, util=40), 100, (4, 0, "peak")),
    ("headroom never above the ask", dict(gpus=4, peak=3, util=60), 50, (4, 0, "peak")),
    ("mean only", dict(gpus=8, util=25), 0, (2, 60, "mean")),
    ("mean of 1.0000000000000002 GPUs is one GPU", dict(gpus=3, util=100 / 3), 0, (1, 20, "mean")),
]


@pytest.mark.parametrize("job, headroom, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recommendations_and_freed_gpu_hours(job, headroom, expected):
    result = rightsize(_jobs([job]), options=RightSizeOptions(headroom_pct=headroom))
    row = result.jobs.iloc[0]
    recommended, freed, basis = expected
    assert (row["recommended_gpus"], row["basis"]) == (recommended, basis)
    assert row["freed_gpu_hours"] == pytest.approx(freed, abs=1e-9)
    assert row["gpus_freed"] == job["gpus"] - recommended
    assert bool(row["over_asking"]) == (recommended < job["gpus"])
    assert row["gpu_hours"] == pytest.approx(job["gpus"] * 10)
    assert list(result.jobs.columns) == JOB_COLUMNS


def test_jobs_without_the_signal_are_skipped_and_counted():
    jobs = _jobs([dict(gpus=8, peak=2, util=20),                      # measured
                  dict(gpus=8),                                       # ran, nothing measured
                  dict(gpus=4, util=30),                              # only the mean
                  dict(gpus=8, peak=1, started=False),                # never started
                  dict(gpus=0, peak=0, util=0),                       # no GPUs
                  dict(gpus=2, peak=1, hours=0.0)])                   # ran for no time
    with_mean = rightsize(jobs)
    assert list(with_mean.jobs["job_id"]) == ["j0", "j2"]
    peak_only = rightsize(jobs, options=RightSizeOptions(mean_fallback=False))
    assert list(peak_only.jobs["job_id"]) == ["j0"]
    totals = peak_only.totals
    assert (totals["jobs"], totals["ran"], totals["measured"], totals["measured_by_mean"]) == (6, 3, 1, 0)
    assert totals["measured_pct"] == pytest.approx(100 / 3)
    assert with_mean.totals["measured"] == 2 and with_mean.totals["measured_by_mean"] == 1
    assert (totals["over_asking"], totals["gpu_hours"], totals["freed_gpu_hours"]) == (1, 80, 60)
    assert totals["freed_pct"] == 75 and math.isnan(totals["freed_usd"])


def test_a_running_job_is_measured_up_to_as_of():
    jobs = _jobs([dict(gpus=8, peak=2, ended=False), dict(gpus=1, peak=1, hours=30)])
    row = rightsize(jobs, as_of=T0 + pd.Timedelta(hours=5)).jobs.set_index("job_id").loc["j0"]
    assert (row["run_h"], row["freed_gpu_hours"]) == (5, 30)
    default = rightsize(jobs).jobs.set_index("job_id").loc["j0"]   # the jobs' last instant: j1's end
    assert (default["run_h"], default["freed_gpu_hours"]) == (30, 180)


def test_team_and_user_summaries():
    jobs = _jobs([dict(gpus=8, peak=2, util=20, team="a", user="ann"),      # 80 GPU-h, frees 60
                  dict(gpus=4, peak=4, util=50, team="a", user="bob"),      # 40 GPU-h, frees 0
                  dict(gpus=2, peak=1, team="b", user="cat", hours=20),     # 40 GPU-h, frees 20, no mean
                  dict(gpus=8, peak=8, util=100, team="b", user="cat")])    # 80 GPU-h
    result = rightsize(jobs)
    team = result.by_team.set_index("team")
    assert list(result.by_team.columns) == ["team"] + GROUP_COLUMNS
    assert list(team.index) == ["a", "b"]                                   # most freed first
    assert team.loc["a", ["jobs", "over_asking", "gpu_hours", "freed_gpu_hours"]].tolist() == [2, 1, 120, 60]
    assert team.loc["a", "freed_pct"] == pytest.approx(50)
    assert team.loc["a", "freed_pct_of_all"] == pytest.approx(25)           # of 240 GPU-hours measured
    assert team.loc["b", "freed_pct_of_all"] == pytest.approx(100 * 20 / 240)
    assert team.loc["a", "gpu_util_pct"] == pytest.approx(100 * (1.6 * 10 + 2 * 10) / 120)
    assert team.loc["b", "gpu_util_pct"] == pytest.approx(100)              # cat's first job has no mean
    assert team["freed_pct_of_all"].sum() == pytest.approx(result.totals["freed_pct"])
    user = result.by_user.set_index("user_name")
    assert list(result.by_user.columns) == ["user_name", "team"] + GROUP_COLUMNS
    assert user.loc["ann", ["team", "jobs", "freed_gpu_hours"]].tolist() == ["a", 1, 60]
    assert user.loc["bob", "over_asking"] == 0 and user.loc["cat", "freed_gpu_hours"] == 20


def test_freed_dollars_use_the_dataset_price_else_the_assumed_price_book():
    prices = pd.DataFrame({"region": ["r1", "r1"], "gpu_type": ["H100", "H100"], "tier": ["on-demand", "spot"],
                           "usd_per_gpu_hour": [5.0, 2.0], "assumed": [False, False]})
    jobs = _jobs([dict(gpus=8, peak=2, region="r1"), dict(gpus=4, peak=1, region="r2")])
    result = rightsize(jobs, prices)
    rows = result.jobs.set_index("job_id")
    assert rows.loc["j0", ["usd_per_gpu_hour", "price_assumed", "freed_usd"]].tolist() == [5.0, False, 300.0]
    assert rows.loc["j1", ["usd_per_gpu_hour", "price_assumed", "freed_usd"]].tolist() == [4.0, True, 120.0]
    assert result.totals["freed_usd"] == 420 and result.totals["price_assumed"] == 1.0
    assert result.by_team.loc[0, "freed_usd"] == 420
    spot = rightsize(jobs.iloc[:1], prices, RightSizeOptions(tier="spot"))
    assert spot.totals["freed_usd"] == 120 and spot.totals["price_assumed"] == 0.0


def test_options_are_checked():
    with pytest.raises(ValueError):
        RightSizeOptions(headroom_pct=-5)
    with pytest.raises(ValueError):
        RightSizeOptions(tier="free")


def test_no_jobs_give_empty_tables():
    result = rightsize(_jobs([dict(gpus=8, peak=1)]).iloc[:0])
    assert result.jobs.empty and result.by_team.empty and result.totals["measured"] == 0


def test_on_the_sample_only_the_classes_with_over_asking_habits_over_ask():
    jobs = read_bundle(SAMPLE_DIR).tables["jobs"]
    result = rightsize(jobs)
    assert result.totals["measured_pct"] > 95
    over = result.jobs[result.jobs["over_asking"]]
    assert set(over["workload_class"]) == {"training", "batch", "development"}
    gangs = over[over["workload_class"] == "training"]
    assert (gangs["recommended_gpus"] == 8).all()                            # their first node
    assert set(over.loc[over["workload_class"] == "batch", "recommended_gpus"]) == {1}
    assert 2 < result.totals["freed_pct"] < 10
    assert np.isfinite(result.jobs["gpu_util_pct"]).all()

"""build_overview on tiny hand-built datasets with exact expected numbers."""
import pandas as pd
import pytest

from engine.analysis.telemetry.overview import build_overview

T = pd.Timestamp
NO_ROWS = pd.DataFrame()


def _jobs(rows):
    """rows: (job_id, class, submit, start, end, gpus, gpu_type, region)."""
    frame = pd.DataFrame(rows, columns=["job_id", "workload_class", "submit_utc", "start_utc", "end_utc",
                                        "gpus", "gpu_type", "region"])
    for col in ("submit_utc", "start_utc", "end_utc"):
        frame[col] = pd.to_datetime(frame[col])
    frame["status"] = "completed"
    return frame


def _fleet(rows):
    """rows: (region, node, gpu_type, gpus, tier)."""
    return pd.DataFrame(rows, columns=["region", "node", "gpu_type", "gpus", "tier"]).assign(cluster=None)


REGIONS = pd.DataFrame({"region": ["eu", "us"], "timezone": ["Europe/Berlin", "America/New_York"]})
JOBS = _jobs([
    ("a", "training", "2024-01-01 00:00", "2024-01-01 00:30", "2024-01-01 03:00", 2.0, "H100", "eu"),
    ("b", "hpo", "2024-01-01 00:00", "2024-01-01 01:00", "2024-01-01 02:00", 0.5, "H100", "eu"),
    ("c", "batch", "2024-01-01 01:00", "2024-01-01 03:00", "2024-01-01 04:00", 1.0, "A100", "us"),
    ("d", "batch", "2024-01-01 02:00", None, None, 4.0, "A100", "us"),   # never started
])
FLEET = _fleet([("eu", "e1", "H100", 4, "reserved"), ("eu", "e2", "H100", 4, "on-demand"),
                ("us", "u1", "A100", 2, "spot")])


def test_busy_capacity_and_utilisation_from_the_fleet():
    o = build_overview(JOBS, FLEET, REGIONS, NO_ROWS)
    eu = o.hourly[o.hourly["region"] == "eu"]
    # job a: 1, 2, 2 GPU-h in hours 0..2; job b: 0.5 GPU-h in hour 1; window 00:00-04:00.
    assert eu["busy_unit_hours"].tolist() == [1.0, 2.5, 2.0, 0.0]
    assert eu["capacity_unit_hours"].tolist() == [8.0] * 4
    k = o.kpis
    assert k.capacity_source == "fleet" and k.capacity_units == 10
    assert k.utilisation_pct == pytest.approx(100 * (5.5 + 1.0) / (10 * 4))
    assert (k.jobs, k.window_days) == (4, 4 / 24)


def test_idle_hours_per_region_and_gpu_type_carry_no_dollars():
    o = build_overview(JOBS, FLEET, REGIONS, NO_ROWS)
    idle = o.idle_by_type.set_index(["region", "gpu_type"])
    # eu: 32 capacity GPU-h - 5.5 busy = 26.5 idle; us: 8 - 1 = 7. Which tier sat idle the telemetry does
    # not say, so the Overview prices the recorded replay instead (dashboard.data.priced).
    assert idle.loc[("eu", "H100"), "idle_gpu_hours"] == pytest.approx(26.5)
    assert idle.loc[("us", "A100"), "utilisation_pct"] == pytest.approx(100 / 8)
    assert o.kpis.idle_unit_hours == pytest.approx(26.5 + 7.0)
    assert "idle_usd" not in o.idle_by_type


def test_over_allocated_hours_count_as_zero_idle():
    jobs = _jobs([("a", "training", "2024-01-01", "2024-01-01", "2024-01-01 02:00", 3.0, "H100", "eu")])
    jobs.loc[1] = ["b", "training", T("2024-01-01"), T("2024-01-01"), T("2024-01-01 01:00"), 0.0, "H100", "eu",
                   "completed"]
    o = build_overview(jobs, _fleet([("eu", "n", "H100", 2, "reserved")]), REGIONS, NO_ROWS)
    assert o.kpis.idle_unit_hours == 0.0
    assert o.kpis.utilisation_pct == pytest.approx(150.0)


def test_running_jobs_hold_their_gpus_until_the_data_ends():
    jobs = _jobs([
        ("a", "inference", "2024-01-01 00:00", "2024-01-01 00:00", None, 1.0, "L4", "eu"),
        ("b", "batch", "2024-01-01 00:00", "2024-01-01 00:00", "2024-01-01 02:30", 1.0, "L4", "eu"),
    ])
    jobs.loc[0, "status"] = "running"
    o = build_overview(jobs, _fleet([("eu", "n", "L4", 2, "on-demand")]), REGIONS, NO_ROWS)
    assert o.hourly["busy_unit_hours"].tolist() == [2.0, 2.0, 1.0]
    assert o.mix.set_index("workload_class").loc["inference", "gpu_hours"] == 2.5
    assert any("1 job still running" in note for note in o.assumptions)


def test_without_a_fleet_capacity_is_the_peak_concurrent_allocation_rounded_up():
    o = build_overview(JOBS, NO_ROWS, REGIONS, NO_ROWS)
    cap = o.capacity.set_index(["region", "gpu_type"])["capacity_gpus"]
    # eu H100 peaks at 2 + 0.5 = 2.5 -> 3 whole GPUs; us A100 peaks at 1.
    assert cap.to_dict() == {("eu", "H100"): 3.0, ("us", "A100"): 1.0}
    assert set(o.capacity["capacity_source"]) == {"inferred"}
    assert o.kpis.capacity_source == "inferred"
    assert o.kpis.utilisation_pct == pytest.approx(100 * 6.5 / (4 * 4))
    assert any("peak concurrent allocation" in note for note in o.assumptions)


def test_jobs_without_gpu_type_are_spread_over_the_regions_fleet_types():
    jobs = _jobs([("a", "batch", "2024-01-01", "2024-01-01", "2024-01-01 01:00", 4.0, None, "eu")])
    fleet = _fleet([("eu", "n1", "H100", 6, "reserved"), ("eu", "n2", "L4", 2, "reserved")])
    o = build_overview(jobs, fleet, REGIONS, NO_ROWS)
    busy = o.idle_by_type.set_index("gpu_type")["busy_gpu_hours"]
    assert busy.to_dict() == {"H100": 3.0, "L4": 1.0}
    assert o.kpis.capacity_source == "fleet"


def test_queue_waits_by_class_and_overall_p95():
    jobs = _jobs([(str(i), "hpo", "2024-01-01 00:00", f"2024-01-01 0{i}:00", "2024-01-01 09:00", 1.0, "H100", "eu")
                  for i in range(1, 5)])
    o = build_overview(jobs, NO_ROWS, REGIONS, NO_ROWS)
    row = o.wait_summary.iloc[0]
    assert (row["workload_class"], row["jobs_started"], row["mean_wait_h"], row["p50_wait_h"]) == ("hpo", 4, 2.5, 2.5)
    assert row["p95_wait_h"] == pytest.approx(3.85)
    assert o.kpis.p95_wait_h == pytest.approx(3.85)
    ecdf = o.wait_ecdf
    assert ecdf["wait_h"].iloc[0] == 1.0 and ecdf["wait_h"].iloc[-1] == 4.0 and len(ecdf) == 101


def test_job_mix_counts_jobs_and_gpu_hours_by_class():
    o = build_overview(JOBS, FLEET, REGIONS, NO_ROWS)
    mix = o.mix.set_index("workload_class")
    assert list(mix.index) == ["training", "batch", "hpo"]
    assert mix["jobs"].to_dict() == {"training": 1, "batch": 2, "hpo": 1}
    assert mix["gpu_hours"].to_dict() == {"training": 5.0, "batch": 1.0, "hpo": 0.5}
    assert mix["gpu_hours_pct"].sum() == pytest.approx(100)


def test_utilisation_samples_are_time_weighted():
    samples = pd.DataFrame({
        "ts_utc": pd.to_datetime(["2024-01-01 00:00", "2024-01-01 00:30", "2024-01-01 01:00"]),
        "region": "eu", "cluster": None, "node": None, "busy": [1.0, 3.0, 2.0], "total": 4.0,
        "util_pct": None, "unit": "nodes",
    })
    o = build_overview(NO_ROWS, NO_ROWS, REGIONS, samples)
    assert o.kind == "samples"
    # Hour 0: 0.5 h x 1 + 0.5 h x 3 = 2 of 4 node-hours; hour 1: the last sample holds 0.5 h.
    assert o.hourly["busy_unit_hours"].tolist() == [2.0, 1.0]
    assert o.hourly["capacity_unit_hours"].tolist() == [4.0, 2.0]
    assert o.kpis.utilisation_pct == pytest.approx(50.0)
    assert o.kpis.unit == "nodes"
    assert o.kpis.idle_unit_hours == pytest.approx(3.0)


def test_a_gap_in_the_samples_counts_as_missing_data():
    samples = pd.DataFrame({
        "ts_utc": pd.to_datetime(["2024-01-01 00:00", "2024-01-01 00:10", "2024-01-01 00:20", "2024-01-01 02:00"]),
        "region": "eu", "cluster": None, "node": None, "busy": None, "total": None,
        "util_pct": [50.0, 50.0, 100.0, 0.0], "unit": "gpus",
    })
    o = build_overview(NO_ROWS, NO_ROWS, REGIONS, samples)
    # Spacings 10, 10, 100 min (median 10): the 00:20 sample holds at most 20 min.
    first = o.hourly.iloc[0]
    assert first["capacity_unit_hours"] == pytest.approx(40 / 60)
    assert first["busy_unit_hours"] == pytest.approx(10 / 60 + 20 / 60)


def test_nothing_to_analyse_is_reported_not_raised():
    o = build_overview(NO_ROWS, FLEET, REGIONS, NO_ROWS)
    assert o.kind == "empty" and o.kpis is None
    assert o.capacity["capacity_gpus"].sum() == 10


def test_fleet_timeline_adds_regions_up_before_dividing():
    o = build_overview(JOBS, FLEET, REGIONS, NO_ROWS)
    # Hour 1: eu 2.5 of 8 GPU-h busy, us 0 of 2 -> 25 % of the whole fleet.
    assert o.fleet_hourly["utilisation_pct"].tolist() == pytest.approx([10.0, 25.0, 20.0, 10.0])
    assert o.fleet_daily["busy_unit_hours"].tolist() == [6.5]

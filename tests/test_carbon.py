"""Emissions of a finished simulation: exact local-hour splits across DST changes and half-hour zones,
a brute-force minute-by-minute check, and the sample's FIFO replay adding up."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from test_cost import H, node, result, sample_fifo

from engine.analysis.runs.carbon import carbon_report
from engine.analysis.runs.cost import CostAssumptions, cost_report
from engine.analysis.telemetry.local_hours import local_hour_bins

FALL_BACK = pd.Timestamp("2026-11-01 04:00")      # 00:00 EDT; clocks go back at 06:00 UTC (02:00 EDT)
FLEET = pd.DataFrame([node("a", 8, "reserved", region="ny"), node("b", 4, "reserved", "A100", region="in")])
REGIONS = pd.DataFrame({"region": ["ny", "in"], "timezone": ["America/New_York", "Asia/Kolkata"]})
CARBON = pd.DataFrame([dict(region=r, local_hour=h, g_co2e_per_kwh=g(h)) for r, g in
                       (("ny", lambda h: 100.0 * (h + 1)), ("in", lambda h: 10.0 * h)) for h in range(24)])
JOBS = [
    # 04:30-07:30 UTC = 00:30 EDT .. 02:30 EST: 0.5 h at local hour 0, 2 h at hour 1 (it happens twice), 0.5 h at 2
    dict(job_id="t", region="ny", start_s=0.5 * H, end_s=3.5 * H, gpus_allocated=2.0, nodes="a"),
    # 04:00-05:00 UTC = 09:30-10:30 IST: half an hour at 9, half at 10
    dict(job_id="i", region="in", start_s=0.0, end_s=H, gpus_allocated=1.0, nodes="b", workload_class="inference",
         team="u"),
]
CAPACITY = {"ny": 8.0, "in": 4.0}


def test_local_hour_bins_follow_dst_and_half_hour_zones():
    edges, hours = local_hour_bins(FALL_BACK, 4 * H, "America/New_York")
    assert edges.tolist() == [0, H, 2 * H, 3 * H, 4 * H] and hours.tolist() == [0, 1, 1, 2]
    edges, hours = local_hour_bins(pd.Timestamp("2026-03-08 05:00"), 4 * H, "America/New_York")  # spring forward
    assert edges.tolist() == [0, H, 2 * H, 3 * H, 4 * H] and hours.tolist() == [0, 1, 3, 4]
    edges, hours = local_hour_bins(pd.Timestamp("2026-01-01 00:00"), 2 * H, "Asia/Kolkata")
    assert edges.tolist() == [0, 0.5 * H, 1.5 * H, 2 * H] and hours.tolist() == [5, 6, 7]
    edges, hours = local_hour_bins(pd.Timestamp("2026-01-01 00:20:00", tz="UTC"), H, "UTC")
    assert edges.tolist() == [0, 40 * 60, H] and hours.tolist() == [0, 1]


def test_exact_kg_across_the_fall_back_change():
    report = carbon_report(result(JOBS, CAPACITY, window_s=4 * H, origin=FALL_BACK), FLEET, REGIONS, CARBON)
    jobs = report.jobs.set_index("job_id")
    # 2 H100 x 0.7 kW x PUE 1.2 = 1.68 kW; (0.5 h x 100 + 2 h x 200 + 0.5 h x 300) g/kWh = 600 g/kW over 3 h
    assert jobs.loc["t", "kwh"] == pytest.approx(1.68 * 3)
    assert jobs.loc["t", "kg_co2e"] == pytest.approx(1.68 * 0.6, rel=1e-12)
    # 1 A100 x 0.4 kW x 1.2 = 0.48 kW; 0.5 h x 90 + 0.5 h x 100 g/kWh
    assert jobs.loc["i", "kg_co2e"] == pytest.approx(0.48 * 95 / 1000, rel=1e-12)
    hourly = report.by_local_hour.set_index(["region", "local_hour"])
    assert hourly.loc[("ny", 1)].tolist() == pytest.approx([4.0, 1.68 * 2, 1.68 * 2 * 0.2])
    assert hourly.loc[("ny", 3)].tolist() == [0.0, 0.0, 0.0]
    assert hourly.loc[("in", 9), "gpu_hours"] == pytest.approx(0.5)
    assert report.by_class.set_index("workload_class")["kg_co2e"].to_dict() == pytest.approx(
        {"inference": 0.0456, "training": 1.008})
    by_region = report.by_region.set_index("region")
    assert by_region.loc["ny", "g_co2e_per_kwh"] == pytest.approx(200.0)
    assert by_region.loc["in", "timezone"] == "Asia/Kolkata" and not by_region["intensity_assumed"].any()
    assert report.totals["kg_co2e"] == pytest.approx(1.008 + 0.0456, rel=1e-12)
    assert report.totals["kg_co2e_per_year"] == pytest.approx(1.0536 * 365 * 6)
    assert report.assumed == ()


def test_a_preempted_job_emits_where_and_when_each_piece_ran():
    # p ran 00:30-01:30 EDT in ny (2 H100s), was preempted, waited, and ran 11:30-12:30 IST in "in"
    # on 2 of node b's A100s; its jobs row alone would be 2.5 h in "in"
    jobs = [dict(job_id="p", region="in", start_s=0.5 * H, end_s=3 * H, gpus_allocated=2.0, nodes="b")]
    pieces = pd.DataFrame({"row": 0, "job_id": "p", "region": ["ny", "in"], "nodes": ["a", "b"], "start_s": [0.5 * H, 2 * H],
                           "end_s": [1.5 * H, 3 * H], "gpus_allocated": 2.0, "outcome": ["preempted", "completed"],
                           "lost_s": 0.0})
    run = dataclasses.replace(result(jobs, CAPACITY, window_s=4 * H, origin=FALL_BACK), segments=pieces)
    report = carbon_report(run, FLEET, REGIONS, CARBON)
    by_region = report.by_region.set_index("region")
    # ny: 1.68 kW x (0.5 h x 100 + 0.5 h x 200 g/kWh); in: 2 x 0.4 x 1.2 = 0.96 kW x (0.5 x 110 + 0.5 x 120)
    assert by_region["kg_co2e"].to_dict() == pytest.approx({"ny": 1.68 * 0.150, "in": 0.96 * 0.115}, rel=1e-12)
    assert by_region["gpu_hours"].to_dict() == {"ny": 2.0, "in": 2.0}
    assert report.jobs.set_index("job_id").loc["p", "kwh"] == pytest.approx(1.68 + 0.96)


def test_power_and_pue_are_parameters():
    custom = CostAssumptions(pue=1.5, kw_per_gpu={"H100": 1.0})          # A100 falls back to kw_other 0.4
    report = carbon_report(result(JOBS, CAPACITY, window_s=4 * H, origin=FALL_BACK), FLEET, REGIONS, CARBON, custom)
    jobs = report.jobs.set_index("job_id")
    assert jobs.loc["t", "kg_co2e"] == pytest.approx(2 * 1.0 * 1.5 * 0.6)
    assert jobs.loc["i", "kg_co2e"] == pytest.approx(0.4 * 1.5 * 0.095)


def test_missing_profile_and_zone_are_assumed_and_said():
    report = carbon_report(result(JOBS, CAPACITY, window_s=4 * H, origin=FALL_BACK), FLEET,
                           REGIONS[REGIONS["region"] == "ny"], CARBON[CARBON["region"] == "ny"])
    assert report.jobs.set_index("job_id").loc["i", "kg_co2e"] == pytest.approx(0.48 * 480 / 1000)
    assert report.by_region.set_index("region")["intensity_assumed"].to_dict() == {"in": True, "ny": False}
    assert report.assumed == ("in: no carbon profile; 480 gCO2e/kWh assumed at every hour",
                              "in: no time zone; local hours taken as UTC")
    with pytest.raises(ValueError, match="not an IANA name"):
        carbon_report(result(JOBS, CAPACITY, window_s=4 * H, origin=FALL_BACK), FLEET,
                      REGIONS.assign(timezone=["America/New_York", "Mars/Olympus"]), CARBON)


def test_matches_a_minute_by_minute_sum_over_dst_days():
    rng = np.random.default_rng(7)
    origin = pd.Timestamp("2026-03-07 12:00")      # spans the US spring-forward change on 2026-03-08
    starts = rng.integers(0, 34 * 60, 25) * 60.0
    ends = starts + rng.integers(1, 12 * 60, 25) * 60.0
    jobs = [dict(job_id=f"j{k}", region="ny", start_s=s, end_s=e, gpus_allocated=float(g), nodes="a")
            for k, (s, e, g) in enumerate(zip(starts, ends, rng.integers(1, 9, 25)))]
    report = carbon_report(result(jobs, {"ny": 8.0}, window_s=36 * H, origin=origin),
                           FLEET[FLEET["region"] == "ny"], REGIONS, CARBON)
    profile = CARBON[CARBON["region"] == "ny"]["g_co2e_per_kwh"].to_numpy()
    expected = []
    for job in jobs:
        minutes = np.arange(job["start_s"], min(job["end_s"], 36 * H), 60.0)
        local = (origin.tz_localize("UTC") + pd.to_timedelta(minutes, unit="s")).tz_convert("America/New_York")
        expected.append(job["gpus_allocated"] * 0.7 * 1.2 * profile[local.hour].sum() / 60 / 1000)
    assert report.jobs.set_index("job_id").loc[[j["job_id"] for j in jobs], "kg_co2e"].to_numpy() == \
        pytest.approx(expected, rel=1e-12)


def test_sample_fifo_adds_up():
    run, fleet, world = sample_fifo()
    report = carbon_report(run, fleet, world["regions"], world["carbon"])
    totals = report.totals
    assert totals["gpu_hours"] == pytest.approx(cost_report(run, fleet, world["prices"]).totals["gpu_hours_used"],
                                                rel=1e-12)
    for table in (report.by_region, report.by_class, report.by_team, report.by_local_hour, report.jobs):
        assert table["kg_co2e"].sum() == pytest.approx(totals["kg_co2e"], rel=1e-9)
        assert table["gpu_hours"].sum() == pytest.approx(totals["gpu_hours"], rel=1e-9)
        assert table["kwh"].sum() == pytest.approx(totals["kwh"], rel=1e-9)
    assert sorted(report.by_region["region"]) == sorted(run.capacity_gpus)
    assert len(report.by_local_hour) == 24 * len(run.capacity_gpus)
    carbon = world["carbon"].groupby("region")["g_co2e_per_kwh"]
    intensity = report.by_region.set_index("region")["g_co2e_per_kwh"]
    assert ((intensity >= carbon.min() - 1e-9) & (intensity <= carbon.max() + 1e-9)).all()
    assert report.assumed == () and totals["kg_co2e"] > 0

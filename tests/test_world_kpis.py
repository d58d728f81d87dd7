"""World KPIs (cost, carbon, residency) of a finished run: exact values on the hand-built run of
test_cost, defaults stated when the world tables are missing, and reconciliation with the reports."""
from __future__ import annotations

import dataclasses

import pandas as pd
import pytest
from test_cost import FLEET, JOBS, PRICES, H, node, result, sample_fifo

from engine.analysis.runs.carbon import carbon_report
from engine.analysis.runs.cost import CostAssumptions, cost_report
from engine.analysis.runs.world_kpis import KPI_KEYS, world_kpis, world_report
from engine.telemetry.sample import read_bundle
from engine.world import residency

REGIONS = pd.DataFrame({"region": ["r"], "timezone": ["UTC"], "country": ["US"], "jurisdiction": ["US"]})
CARBON = pd.DataFrame({"region": "r", "local_hour": range(24), "g_co2e_per_kwh": 500.0})
# j1 (EU data) ran in r, a US region: one violation; j2 is allowed; j5 never started, so it cannot violate.
TAGS = pd.DataFrame({"job_id": ["j1", "j2", "j3", "j4", "j5", "j6"],
                     "residency": ["EU", "US", None, "", "EU", None]})


def test_exact_kpis_of_the_hand_built_run():
    kpis = world_kpis(result(JOBS, {"r": 16.0}), FLEET, PRICES, REGIONS, CARBON, jobs=TAGS)
    assert list(kpis) == [*KPI_KEYS, "assumed"] and kpis["assumed"] == []
    # test_cost: reserved 8 GPUs x 10 h x $2 = 160 (104 idle), on-demand 10.5 GPU-h x $4, spot 8 GPU-h x $1
    assert {k: kpis[k] for k in ("cost_usd", "cost_reserved_usd", "cost_on_demand_usd", "cost_spot_usd",
                                 "idle_cost_usd", "egress_usd")} == {
        "cost_usd": 210.0, "cost_reserved_usd": 160.0, "cost_on_demand_usd": 42.0, "cost_spot_usd": 8.0,
        "idle_cost_usd": 104.0, "egress_usd": 0.0}
    assert kpis["effective_usd_per_gpu_hour"] == pytest.approx(210.0 / 46.5)     # 46.5 GPU-h allocated
    assert kpis["productive_usd_per_gpu_hour"] == pytest.approx(210.0 / 46.0)    # j6 (0.5 GPU-h) failed
    assert kpis["cost_usd_per_year"] == pytest.approx(210.0 * 876.0)             # 365 days / (10 h / 24)
    assert kpis["idle_cost_usd_per_year"] == pytest.approx(104.0 * 876.0)
    # 46.5 GPU-h x 0.7 kW (H100) x PUE 1.2 = 39.06 kWh at 500 g/kWh
    assert kpis["energy_kwh"] == pytest.approx(39.06)
    assert kpis["carbon_kg"] == pytest.approx(19.53)
    assert kpis["carbon_kg_per_year"] == pytest.approx(19.53 * 876.0)
    assert kpis["residency_violations"] == 1.0


def test_without_world_tables_the_defaults_are_used_and_said():
    run = result(JOBS, {"r": 16.0})
    kpis = world_kpis(run, FLEET, PRICES.iloc[0:0], pd.DataFrame(), None)
    # price book: H100 on-demand $4, reserved $2.40, spot $1.40; the world-average 480 g/kWh
    assert kpis["cost_usd"] == pytest.approx(80 * 2.4 + 10.5 * 4.0 + 8 * 1.4)
    assert kpis["carbon_kg"] == pytest.approx(39.06 * 0.48)
    assert kpis["residency_violations"] == 0.0                          # no tags at all
    assert kpis["assumed"] == [
        "3 of 3 prices (region, GPU type, tier) come from the default price book: r H100 on-demand, "
        "r H100 reserved, r H100 spot",
        "r: no carbon profile; 480 gCO2e/kWh assumed at every hour", "r: no time zone; local hours taken as UTC"]


def test_residency_without_a_regions_table_counts_every_tagged_job_that_ran():
    report = world_report(result(JOBS, {"r": 16.0}), FLEET, PRICES, pd.DataFrame(), CARBON, jobs=TAGS)
    assert report.violations.to_dict("list") == {"job_id": ["j1", "j2"], "region": ["r", "r"],
                                                 "tag": ["EU", "US"], "allowed": ["", ""]}
    assert report.kpis["residency_violations"] == 2.0
    assert report.assumed[-1].startswith("no regions table: the 2 residency-tagged jobs that ran are counted")


def test_tags_on_the_result_and_unknown_gpu_power_and_edited_assumptions():
    run = result([{**job, "residency": "EU" if job["job_id"] in ("j2", "j3") else None} for job in JOBS],
                 {"r": 16.0})
    mi300 = FLEET.assign(gpu_type=FLEET["gpu_type"].replace("H100", "MI300"))
    prices = PRICES.assign(gpu_type="MI300")
    edited = CostAssumptions(pue=1.5, kw_other=1.0, annualisation_days=360.0)
    report = world_report(run, mi300, prices, REGIONS, CARBON, edited)
    assert report.violations["job_id"].tolist() == ["j2", "j3"]
    assert report.assumed == ("power of MI300 GPUs unknown; 1 kW per GPU assumed",)
    assert report.kpis["carbon_kg"] == pytest.approx(46.5 * 1.0 * 1.5 * 0.5)
    assert report.kpis["cost_usd_per_year"] == pytest.approx(210.0 * 864.0)     # 360 days / (10 h / 24)


def test_a_dataset_marked_assumed_price_and_an_override_are_said():
    prices = PRICES.assign(assumed=PRICES["tier"] == "spot")
    override = CostAssumptions(price_overrides={("*", "*", "reserved"): 1.0})
    kpis = world_kpis(result(JOBS, {"r": 16.0}), FLEET, prices, REGIONS, CARBON, override)
    assert kpis["cost_reserved_usd"] == 80.0
    assert kpis["assumed"] == [
        "1 of 3 prices (region, GPU type, tier) come from the dataset, which marks them assumed: r H100 spot",
        "1 of 3 prices (region, GPU type, tier) come from an edited assumption: r H100 reserved"]


def test_kpis_are_the_reports_totals_on_two_regions():
    fleet = pd.concat([FLEET, pd.DataFrame([node("e", 8, "on-demand", region="s")])], ignore_index=True)
    routed = [*JOBS, dict(job_id="x", region="r", start_s=0.0, end_s=2 * H, gpus_allocated=8.0, nodes="e")]
    run = result(routed, {"r": 16.0, "s": 8.0})
    report = world_report(run, fleet, PRICES, REGIONS, CARBON)
    assert report.kpis["cost_usd"] == cost_report(run, fleet, PRICES).totals["usd"] == 210.0 + 64.0
    assert report.kpis["carbon_kg"] == carbon_report(run, fleet, REGIONS, CARBON).totals["kg_co2e"]
    assert "s: no carbon profile; 480 gCO2e/kWh assumed at every hour" in report.assumed


def test_the_sample_fifo_replay_reconciles_with_cost_and_carbon_reports():
    run, fleet, world = sample_fifo()
    tags = read_bundle().tables["jobs"][["job_id", "residency"]]
    kpis = world_kpis(run, fleet, world["prices"], world["regions"], world["carbon"], jobs=tags)
    cost = cost_report(run, fleet, world["prices"]).totals
    carbon = carbon_report(run, fleet, world["regions"], world["carbon"]).totals
    assert kpis["cost_usd"] == cost["usd"] and kpis["idle_cost_usd"] == cost["idle_usd"]
    assert kpis["cost_reserved_usd"] + kpis["cost_on_demand_usd"] + kpis["cost_spot_usd"] == pytest.approx(
        kpis["cost_usd"], rel=1e-12)
    assert kpis["effective_usd_per_gpu_hour"] == cost["effective_usd_per_gpu_hour"]
    assert kpis["carbon_kg"] == carbon["kg_co2e"] and kpis["energy_kwh"] == carbon["kwh"]
    assert kpis["carbon_kg_per_year"] == pytest.approx(carbon["kg_co2e_per_year"], rel=1e-12)
    assert kpis["assumed"] == [] and kpis["cost_usd"] > kpis["idle_cost_usd"] > 0
    # the sample's EU and SA jobs ran at home (a home-only replay), and home respects their tags
    ran = run.jobs[run.jobs["started"]].merge(tags.assign(job_id=tags["job_id"].astype(str)), on="job_id")
    assert kpis["residency_violations"] == 0.0 and ran["residency"].notna().sum() > 100
    tagged = run.jobs.assign(residency="EU")
    ran_outside_eu = tagged[tagged["started"] & ~tagged["region"].isin(["eu-west", "eu-north"])]
    assert world_kpis(dataclasses.replace(run, jobs=tagged), fleet, world["prices"], world["regions"],
                      world["carbon"])["residency_violations"] == len(ran_outside_eu) > 0
    assert len(residency.violations(ran_outside_eu, world["regions"])) == len(ran_outside_eu)


def test_egress_prices_the_data_moved_to_jobs_that_ran_away_from_it():
    # every job ran in r; j1's 100 GB sit in "eu" ($0.05/GB leaving it), j2's in r (no move), j3's 40 GB in
    # "ap" (no price: $0 and said), j4 has no data location, j5 never started: 100 x 0.05 = $5
    data = TAGS.assign(data_location=["eu", "r", "ap", None, "eu", "eu"],
                       data_size_gb=[100.0, 7.0, 40.0, 9.0, 300.0, None])
    regions = pd.concat([REGIONS.assign(egress_usd_per_gb=0.02),
                         pd.DataFrame({"region": ["eu"], "timezone": ["UTC"], "country": ["IE"], "jurisdiction": ["EU"],
                                       "egress_usd_per_gb": [0.05]})], ignore_index=True)
    report = world_report(result(JOBS, {"r": 16.0}), FLEET, PRICES, regions, CARBON, jobs=data)
    assert report.kpis["egress_usd"] == pytest.approx(5.0)
    assert "egress from ap priced at $0/GB: no egress_usd_per_gb for them" in report.assumed
    # egress is part of the bill: the hand-built run's $210 of GPUs + $5, booked to j1, in every figure
    kpis = report.kpis
    assert kpis["cost_usd"] == pytest.approx(215.0) and report.cost.totals["usd_egress"] == pytest.approx(5.0)
    assert kpis["cost_usd_per_year"] == pytest.approx(215.0 * 876.0)
    assert kpis["effective_usd_per_gpu_hour"] == pytest.approx(215.0 / 46.5)
    jobs = report.cost.jobs.set_index("job_id")
    assert jobs.loc["j1", "egress_usd"] == pytest.approx(5.0) and jobs["egress_usd"].drop("j1").eq(0.0).all()
    assert jobs["usd"].sum() + kpis["idle_cost_usd"] == pytest.approx(kpis["cost_usd"])   # the reconciliation

"""Cost accounting over a finished simulation: exact dollars on a hand-built run, and a FIFO replay
of the sample data that reconciles with the simulator's KPIs."""
from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.analysis.runs.cost import CostAssumptions, annualise, cost_report
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.output.result import SimulationResult
from engine.telemetry.sample import SAMPLE_DATASET, SAMPLE_DIR, ensure_sample
from engine.telemetry.store import Store

H = 3600.0
ORIGIN = pd.Timestamp("2026-01-05")


def result(jobs: list[dict], capacity: dict, window_s: float = 10 * H, origin=ORIGIN) -> SimulationResult:
    """A finished run from job rows (job_id, region, start_s, end_s, gpus_allocated, nodes, ...)."""
    defaults = dict(region="r", workload_class="training", team="t", submit_s=0.0, failed=False, started=True,
                    gpus=0.0, reason="started")
    frame = pd.DataFrame([{**defaults, **job} for job in jobs])
    frame["run_s"] = frame["end_s"] - frame["start_s"]
    frame["wait_s"] = frame["start_s"] - frame["submit_s"]
    return SimulationResult("hand", frame, pd.DataFrame(columns=["time_s", "region", "busy_gpus", "queue_length"]),
                            pd.DataFrame(columns=["time_s", "job_id", "region", "decision"]), capacity,
                            origin, window_s=window_s)


def node(name, gpus, tier, gpu_type="H100", region="r"):
    return dict(region=region, cluster="c", node=name, gpu_type=gpu_type, gpus=gpus, cpus=64, memory_gib=512,
                rack="k", tier=tier)


FLEET = pd.DataFrame([node("a", 8, "reserved"), node("b", 4, "on-demand"), node("c", 4, "spot"),
                      node("cpu", 0, "on-demand", gpu_type=None)])
PRICES = pd.DataFrame([dict(region="r", gpu_type="H100", tier=t, usd_per_gpu_hour=p, assumed=False)
                       for t, p in (("reserved", 2.0), ("on-demand", 4.0), ("spot", 1.0))])
JOBS = [
    dict(job_id="j1", start_s=0.0, end_s=5 * H, gpus_allocated=4.0, nodes="a"),
    dict(job_id="j2", start_s=1 * H, end_s=4 * H, gpus_allocated=2.0, nodes="b", team="u"),
    dict(job_id="j3", start_s=8 * H, end_s=12 * H, gpus_allocated=4.0, nodes="c"),      # runs past the window
    dict(job_id="j4", start_s=6 * H, end_s=7 * H, gpus_allocated=12.0, nodes="a;b"),    # gang: 8 on a, 4 on b
    dict(job_id="j5", start_s=np.nan, end_s=np.nan, gpus_allocated=0.0, nodes="", started=False),
    dict(job_id="j6", start_s=0.0, end_s=0.5 * H, gpus_allocated=1.0, nodes="b", failed=True,
         workload_class="development"),
]


def test_reserved_paid_whole_window_on_demand_and_spot_by_use():
    report = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES)
    spend = report.spend.set_index("tier")
    # reserved: 8 GPUs x 10 h paid at $2; used j1 4x5 + j4 8x1 = 28 GPU-h
    assert spend.loc["reserved", ["gpu_hours_used", "gpu_hours_paid", "usd", "idle_usd"]].tolist() == [
        28.0, 80.0, 160.0, 104.0]
    # on-demand: j2 2x3 + j4 4x1 + j6 1x0.5 = 10.5 GPU-h at $4; spot: j3 4 GPUs x 2 h inside the window at $1
    assert spend.loc["on-demand", ["gpu_hours_used", "gpu_hours_paid", "usd", "idle_usd"]].tolist() == [
        10.5, 10.5, 42.0, 0.0]
    assert spend.loc["spot", ["gpu_hours_used", "gpu_hours_paid", "usd", "idle_usd"]].tolist() == [8.0, 8.0, 8.0, 0.0]
    totals = report.totals
    assert (totals["usd"], totals["idle_usd"], totals["gpu_hours_used"]) == (210.0, 104.0, 46.5)
    assert (totals["usd_reserved"], totals["usd_on_demand"], totals["usd_spot"]) == (160.0, 42.0, 8.0)
    assert totals["idle_gpu_hours_paid"] == 52.0 and totals["installed_gpus"] == 16.0
    assert totals["effective_usd_per_gpu_hour"] == pytest.approx(210.0 / 46.5)
    assert totals["productive_usd_per_gpu_hour"] == pytest.approx(210.0 / 46.0)   # j6 failed
    assert totals["usd_per_year"] == pytest.approx(210.0 * 876.0)                   # 365 days / (10 h / 24)
    assert totals["price_assumed"] == 0.0 and not report.prices["price_assumed"].any()


def test_job_dollars_plus_idle_equal_fleet_cost():
    report = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES)
    jobs = report.jobs.set_index("job_id")
    assert jobs["usd"].to_dict() == {"j1": 40.0, "j2": 24.0, "j3": 8.0, "j4": 32.0, "j6": 2.0}
    assert jobs.loc["j4", "gpu_hours"] == 12.0
    assert jobs["usd"].sum() + report.totals["idle_usd"] == report.totals["usd"]
    assert report.by_team.set_index("team")["usd"].to_dict() == {"t": 82.0, "u": 24.0}
    assert report.by_region["usd"].tolist() == [210.0]
    assert report.by_tier.set_index("tier")["idle_usd"].to_dict() == {"on-demand": 0.0, "reserved": 104.0,
                                                                        "spot": 0.0}


def test_a_preempted_job_is_charged_piece_by_piece_where_it_ran():
    # p ran 0-2 h on reserved node a, was preempted losing its last hour, waited 2-3 h requeued and
    # ran 3-5 h on spot node c; its jobs row alone (0-5 h on a) would book 20 reserved GPU-hours
    jobs = [dict(job_id="p", start_s=0.0, end_s=5 * H, gpus_allocated=4.0, nodes="c")]
    pieces = pd.DataFrame({"row": 0, "job_id": "p", "region": "r", "nodes": ["a", "c"], "start_s": [0.0, 3 * H],
                           "end_s": [2 * H, 5 * H], "gpus_allocated": 4.0, "outcome": ["preempted", "completed"],
                           "lost_s": [H, 0.0]})
    report = cost_report(dataclasses.replace(result(jobs, {"r": 16.0}), segments=pieces), FLEET, PRICES)
    spend = report.spend.set_index("tier")
    assert spend["gpu_hours_used"].to_dict() == {"on-demand": 0.0, "reserved": 8.0, "spot": 8.0}
    assert report.jobs.set_index("job_id").loc["p", ["gpu_hours", "usd"]].tolist() == [16.0, 4 * 2 * 2.0 + 4 * 2 * 1.0]
    # productive: 16 GPU-hours held less the 4 GPUs x 1 h lost; reserved paid 8 x 10 h at $2, spot 8 at $1
    assert report.totals["productive_usd_per_gpu_hour"] == pytest.approx((160.0 + 8.0) / 12.0)
    assert report.totals["effective_usd_per_gpu_hour"] == pytest.approx((160.0 + 8.0) / 16.0)


def test_missing_price_comes_from_the_price_book_and_is_flagged():
    report = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES[PRICES["tier"] != "spot"])
    spot = report.prices.set_index("tier").loc["spot"]
    assert (spot["usd_per_gpu_hour"], spot["price_assumed"], spot["source"]) == (1.4, True, "price book")
    assert report.totals["usd_spot"] == pytest.approx(8 * 1.4)
    assert report.totals["price_assumed"] == 1.0
    assert report.by_tier.set_index("tier")["price_assumed"].to_dict() == {
        "on-demand": False, "reserved": False, "spot": True}


def test_no_prices_at_all_uses_the_price_book():
    report = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES.iloc[0:0])
    assert report.prices["usd_per_gpu_hour"].tolist() == [4.0, 2.4, 1.4]       # on-demand, reserved, spot
    assert set(report.prices["source"]) == {"price book"} and report.totals["price_assumed"] == 1.0
    assert report.totals["usd"] == pytest.approx(80 * 2.4 + 10.5 * 4.0 + 8 * 1.4)


def test_work_is_priced_where_its_node_is():
    fleet = pd.concat([FLEET, pd.DataFrame([node("e", 8, "on-demand", region="s")])], ignore_index=True)
    routed = [dict(job_id="x", region="r", start_s=0.0, end_s=2 * H, gpus_allocated=8.0, nodes="e")]
    report = cost_report(result(routed, {"r": 16.0, "s": 8.0}), fleet, PRICES)
    assert report.by_region.set_index("region")["gpu_hours_used"].to_dict() == {"r": 0.0, "s": 16.0}
    assert report.jobs.iloc[0][["region", "usd"]].tolist() == ["s", 64.0]        # price book on-demand H100
    same_names = pd.concat([FLEET, FLEET.assign(region="s")], ignore_index=True)   # node names repeat
    report = cost_report(result(JOBS, {"r": 16.0, "s": 16.0}), same_names, PRICES)
    assert report.by_region.set_index("region")["gpu_hours_used"].to_dict() == {"r": 46.5, "s": 0.0}


def test_price_overrides_specific_beats_wildcard():
    wildcard = CostAssumptions(price_overrides={("*", "*", "spot"): 0.5, ("*", "*", "reserved"): 1.0})
    report = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES, wildcard)
    assert (report.totals["usd_spot"], report.totals["usd_reserved"]) == (4.0, 80.0)
    both = CostAssumptions(price_overrides={("r", "H100", "spot"): 0.75, ("*", "*", "spot"): 0.5})
    prices = cost_report(result(JOBS, {"r": 16.0}), FLEET, PRICES, both).prices.set_index("tier")
    assert prices.loc["spot", ["usd_per_gpu_hour", "price_assumed", "source"]].tolist() == [0.75, True, "override"]
    assert prices.loc["reserved", "source"] == "dataset"
    assert "price r / H100 / spot" in both.rows()["assumption"].tolist()


def test_window_defaults_to_last_job_end():
    report = cost_report(result(JOBS, {"r": 16.0}, window_s=0.0), FLEET, PRICES)
    assert report.totals["window_s"] == 12 * H
    assert report.spend.set_index("tier").loc["reserved", "gpu_hours_paid"] == 96.0
    assert report.totals["usd_spot"] == 16.0


def test_wrong_fleet_is_rejected():
    with pytest.raises(ValueError, match="run had 20"):
        cost_report(result(JOBS, {"r": 20.0}), FLEET, PRICES)
    stray = [dict(job_id="x", start_s=0.0, end_s=H, gpus_allocated=1.0, nodes="zz")]
    with pytest.raises(ValueError, match="node 'zz'"):
        cost_report(result(stray, {"r": 16.0}), FLEET, PRICES)


def test_assumptions():
    default = CostAssumptions()
    assert [default.kw_for(t) for t in ("H100", "A100-SXM4-80GB", "A10G", "V100", "L4", None, "MI300")] == [
        0.7, 0.4, 0.15, 0.3, 0.072, 0.4, 0.4]
    assert annualise(10.0, 7 * 86400.0) == pytest.approx(10.0 * 365 / 7)
    assert annualise(10.0, 86400.0, days=360) == 3600.0
    with pytest.raises(ValueError):
        annualise(1.0, 0.0)
    for bad in (dict(pue=0.9), dict(annualisation_days=0), dict(price_overrides={("r", "H100", "cheap"): 1.0}),
                dict(kw_per_gpu={"H100": -1.0})):
        with pytest.raises(ValueError):
            CostAssumptions(**bad)
    assert default.rows().iloc[0].tolist() == ["PUE", 1.2, "facility kW / IT kW"]


@functools.lru_cache(maxsize=1)
def sample_fifo() -> tuple[SimulationResult, pd.DataFrame, dict[str, pd.DataFrame]]:
    """The sample's FIFO replay of the jobs submitted in its first two days: (result, the fleet it ran
    on, the dataset's prices, regions and carbon tables). Shared with test_carbon."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "meridian.duckdb")
        ensure_sample(store)
        jobs, fleet = store.jobs(SAMPLE_DATASET), store.fleet(SAMPLE_DATASET)
        world = {name: store.table(name, SAMPLE_DATASET) for name in ("prices", "regions", "carbon")}
        store.close()
    scenario = dataclasses.replace(Scenario.load(SAMPLE_DIR / "scenarios" / "fifo.toml"),
                                   start_utc=pd.Timestamp("2026-08-03"), end_utc=pd.Timestamp("2026-08-05"))
    return run_scenario(scenario, jobs, fleet), scenario.apply(jobs, fleet)[1], world


def test_sample_fifo_reconciles():
    run, fleet, world = sample_fifo()
    report = cost_report(run, fleet, world["prices"])
    done = run.jobs[run.jobs["started"]]
    inside = np.clip(done["end_s"], 0, run.window_s) - np.clip(done["start_s"], 0, run.window_s)
    used = float((done["gpus_allocated"] * inside).sum()) / H
    totals = report.totals
    assert totals["gpu_hours_used"] == pytest.approx(used, rel=1e-12)
    metrics = kpis(run)
    assert totals["gpu_hours_used"] == pytest.approx(
        metrics["utilization"] * sum(run.capacity_gpus.values()) * run.window_s / H, rel=1e-12)
    assert totals["idle_gpu_hours_paid"] <= metrics["idle_gpu_hours"]   # on-demand and spot idle is not paid
    spend = report.spend
    assert (spend["gpu_hours_paid"] >= spend["gpu_hours_used"] - 1e-9).all()
    reserved = spend[spend["tier"] == "reserved"]
    assert np.allclose(reserved["gpu_hours_paid"], reserved["installed_gpus"] * run.window_s / H, rtol=1e-12)
    assert totals["installed_gpus"] == sum(run.capacity_gpus.values()) == float(fleet["gpus"].sum())
    assert report.jobs["usd"].sum() + totals["idle_usd"] == pytest.approx(totals["usd"], rel=1e-12)
    assert report.by_region["usd"].sum() == pytest.approx(totals["usd"], rel=1e-12)
    assert sorted(report.by_region["region"]) == sorted(run.capacity_gpus)
    assert totals["usd"] > totals["idle_usd"] > 0 and totals["price_assumed"] == 0.0
    assert totals["usd_reserved"] + totals["usd_on_demand"] + totals["usd_spot"] == pytest.approx(totals["usd"])

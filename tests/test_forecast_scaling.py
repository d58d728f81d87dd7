"""Predictive scaling on a hand-built fleet (engine.sim.processes.forecast_scaling): a week of history
with 20 GPUs asked at 10:00 on Monday and 8 installed forecasts a shortfall of 12, so two 8-GPU pool
nodes are rented at 09:30 the next Monday, up at 09:45, and returned at 11:00."""
import math

import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.analysis.runs.sim_metrics import kpis
from engine.analysis.runs.world_kpis import world_report
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.compare import first_days
from engine.service.run import prepared, run_prepared
from engine.sim.state.workload import build_workload
from engine.world.facts import World

S = pd.Timestamp("2026-01-12")  # a Monday; the window starts here
H = 3600.0


def _job(i, at: pd.Timestamp, run_s: float, gpus: int) -> dict:
    row = job(i, 0, run_s, gpus)
    return {**row, "submit_utc": at, "start_utc": at, "end_utc": at + pd.Timedelta(seconds=run_s)}


JOBS = pd.DataFrame([
    _job(0, S - pd.Timedelta(hours=168), 1, 1),                 # the history starts a whole week before
    _job(1, S - pd.Timedelta(hours=158), H, 20),                # last Monday 10:00-11:00: 20 GPUs asked
    _job(2, S, 600, 8),                                         # the window: time 0 is S
    _job(3, S + pd.Timedelta(hours=10), 1800, 8),
    _job(4, S + pd.Timedelta(hours=10), 1800, 8)])
FLEET = fleet(8)
PRICES = pd.DataFrame([{"region": "r", "gpu_type": "A", "tier": t, "usd_per_gpu_hour": p, "assumed": False}
                       for t, p in (("reserved", 1.0), ("on-demand", 3.0))])


def _scenario(**scaling) -> Scenario:
    return Scenario.from_dict({
        "name": "t", "workload": {"start_utc": S.isoformat(), "end_utc": (S + pd.Timedelta(days=1)).isoformat()},
        "burst": [{"region": "r", "gpu_type": "A", "max_nodes": 2, "gpus_per_node": 8, "provision_min": 15}],
        "predictive_scaling": {"enabled": True, "weeks": 1, "headroom_quantile": 0.5, "lead_min": 30,
                               "min_shortfall_gpus": 1, **scaling}})


def _run(scenario: Scenario):
    world = World(prices=PRICES)
    edited, jobs, nodes = prepared(scenario, JOBS, FLEET, world)
    result = run_prepared(scenario, edited, build_workload(jobs, nodes))
    return result, world_report(result, nodes, PRICES, pd.DataFrame(), pd.DataFrame(), jobs=jobs).kpis


def test_two_nodes_are_rented_ahead_of_the_forecast_hour_and_returned_after_it():
    result, world = _run(_scenario())
    rented = result.scaling
    assert len(rented) == 2 and (rented["trigger_job_id"] == "forecast").all()
    assert rented["rented_s"].tolist() == [9.5 * H] * 2 and rented["up_s"].tolist() == [9.75 * H] * 2
    assert rented["returned_s"].tolist() == [11 * H] * 2
    assert rented["usd_per_gpu_hour"].tolist() == [3.0, 3.0]  # no pool price: the region's on-demand one
    assert result.burst is None  # the pools do not react to waits as well
    waits = result.jobs.set_index("job_id")["wait_s"]
    assert waits["j3"] == 0 and waits["j4"] == 0  # the second 10:00 job starts on a rented node
    # inside the window (it ends with the data, at the last job's end, 10:30): billed 2 nodes x 8 GPUs
    # x 1 h (09:30-10:30) = 16 GPU-hours; held 8 GPUs x 0.5 h = 4; idle 12
    assert result.window_s == 10.5 * H
    assert kpis(result)["burst_gpu_hours"] == pytest.approx(16.0)
    assert world["burst_idle_gpu_hours"] == pytest.approx(12.0)
    assert world["cost_burst_usd"] == pytest.approx(16.0 * 3.0)
    error = result.forecast.iloc[0]
    assert error["history_weeks"] == 1 and error["held_out_weeks"] == 0 and math.isnan(error["mae_gpus"])


def test_reserved_capacity_is_paid_at_the_reserved_price_and_reactive_bursts_can_stay_on():
    result, world = _run(_scenario(reserved=True, reactive=True))
    assert result.scaling["usd_per_gpu_hour"].tolist() == [1.0, 1.0]
    assert result.burst is not None  # the reactive pool is there; nothing waited long enough to use it
    assert world["cost_burst_usd"] == pytest.approx(16.0 * 1.0)


def test_without_the_table_nothing_is_planned():
    scenario = Scenario.from_dict({"name": "t", "burst": [{"region": "r", "gpu_type": "A"}]})
    edited, _, _ = prepared(scenario, JOBS, FLEET, World())
    assert edited.scaling is None and edited.bursts == scenario.bursts


@pytest.mark.parametrize("data, message", [
    ({"predictive_scaling": {"enabled": True}, "workload": {"start_utc": "2026-01-12"}}, "add a \\[\\[burst\\]\\]"),
    ({"predictive_scaling": {"headroom_quantile": 1.5}}, "headroom_quantile must be from 0 to 1"),
    ({"predictive_scaling": {"weeks": 2.5}}, "weeks must be a whole number"),
    ({"predictive_scaling": {"lead": 30}}, "unknown \\[predictive_scaling\\] key lead"),
    ({"predictive_scaling": {"enabled": True}, "burst": [{"region": "r", "gpu_type": "A"}],
      "workload": {"start_utc": "2026-01-12", "load_scale": 2}}, "load_scale"),
])
def test_bad_tables_are_refused_with_the_key_and_the_problem(data, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "t", **data}, source="t.toml")


def test_without_a_window_start_the_window_starts_the_forecast_weeks_after_the_first_submit():
    scenario = Scenario.from_dict({"name": "t", "burst": [{"region": "r", "gpu_type": "A"}],
                                   "predictive_scaling": {"enabled": True, "weeks": 1}})
    assert scenario.window_start(JOBS) == S
    edited, jobs, _ = prepared(scenario, JOBS, FLEET, World())
    assert edited.scaling.start_utc == S and sorted(jobs["job_id"]) == ["j2", "j3", "j4"]
    (windowed,) = first_days([scenario], JOBS, 1.0)  # the dashboard's "first N days" start there too
    assert (windowed.start_utc, windowed.end_utc) == (S, S + pd.Timedelta(days=1))


def test_a_window_without_a_week_of_history_is_refused():
    late = _scenario()
    with pytest.raises(ScenarioError, match="at least 7 needed"):
        prepared(late, JOBS.iloc[2:], FLEET, World())

"""Capacity planning (engine.service.planning): plan files, fleets from the integer program, and the loop on
the sample, whose recommended fleet must meet the SLOs when simulated again on its own."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.analysis.runs.slo import class_waits, slo_table
from engine.cli.main import main
from engine.service.planning.fleet_build import fleet_gpus, gpu_pools, planned_fleet, tier_ordered
from engine.service.planning.fleet_milp import FleetPlan
from engine.service.planning.plan import check_scenario, plan_fleet
from engine.service.planning.settings import PlanError, settings_from_dict
from engine.service.run import run_scenario
from engine.world.facts import World

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
SLO_FILE = SAMPLE / "plans" / "slo.toml"


@pytest.mark.parametrize("data, message", [
    ({}, r"\[slo\] needs at least one target"),
    ({"slo": {"batch": -1}}, r"\[slo\] batch must be a number at least 0"),
    ({"slo": {"batch": 4}, "capacity": {"spot_share": 0.1}}, r"unknown \[capacity\] key spot_share; valid: "),
    ({"slo": {"batch": 4}, "capacity": {"spot_max_share": 2}}, r"spot_max_share must be a number between 0 and 1"),
    ({"slo": {"batch": 4}, "horizon": 3}, r"unknown top-level key horizon"),
    ({"slo": {"batch": 4}, "scenario": "missing.toml"}, r"plan: scenario: .*missing.toml: cannot read"),
    ({"slo": {"batch": 4}, "capacity": {"keep_reserved": "yes"}}, r"keep_reserved must be true or false"),
])
def test_bad_plan_files_name_the_key(data, message):
    with pytest.raises(PlanError, match=message):
        settings_from_dict(data, "plan", SAMPLE / "plans")


def test_deferral_defaults_to_the_tightest_flexible_target():
    assert settings_from_dict({"slo": {"batch": 6.5, "hpo": 12, "inference": 0.5}}).defer_hours == 6
    assert settings_from_dict({"slo": {"inference": 0.5}}).defer_hours == 0
    assert settings_from_dict({"slo": {"batch": 6}, "capacity": {"max_defer_hours": 2}}).defer_hours == 2


def _fleet():
    rows = [("r", "c-a", f"a{i}", "A", 8, tier) for i, tier in enumerate(["on-demand", "reserved", "spot", "reserved"])]
    rows += [("r", "c-b", "b0", "B", 4, "reserved")]
    return pd.DataFrame([dict(region=r, cluster=c, node=n, gpu_type=t, gpus=g, cpus=64, memory_gib=512, rack="k",
                              tier=tier) for r, c, n, t, g, tier in rows])


def test_planned_fleets_clone_each_pool_with_reserved_nodes_first():
    pools = gpu_pools(_fleet())
    assert pools[["gpu_type", "gpus_per_node", "reserved_gpus", "spot_gpus", "on_demand_gpus"]].values.tolist() == [
        ["A", 8, 16.0, 8.0, 8.0], ["B", 4, 4.0, 0.0, 0.0]]
    plan = FleetPlan(pools=(("r", "A"), ("r", "B")), reserved_nodes=np.array([1, 3]),
                     on_demand_nodes=np.array([2, 0]), spot_nodes=np.array([1, 1]), served={}, backlog=np.zeros(0),
                     weekly_cost_usd=0.0, cost_by_pool_tier=pd.DataFrame(), status="optimal", solve_s=0.0)
    fleet = planned_fleet(pools, plan)
    assert fleet["tier"].tolist() == ["reserved", "spot", "on-demand", "on-demand", "reserved", "reserved",
                                      "reserved", "spot"]
    assert fleet["node"].iloc[0] == "c-a-plan-reserved-1" and fleet["node"].is_unique
    gpus = fleet_gpus(fleet).set_index("gpu_type")
    assert gpus.loc["A", ["reserved", "spot", "on-demand", "total"]].tolist() == [8, 8, 16, 32]
    assert gpus.loc["B", "total"] == 16


def test_today_runs_with_each_cluster_in_tier_order():
    assert tier_ordered(_fleet())["node"].tolist() == ["a1", "a3", "a2", "a0", "b0"]


@pytest.fixture(scope="module")
def sample_tables():
    jobs = pd.read_csv(SAMPLE / "jobs.csv.gz", parse_dates=["submit_utc", "start_utc", "end_utc", "deadline_utc"])
    for column in ("submit_utc", "start_utc", "end_utc", "deadline_utc"):
        jobs[column] = jobs[column].dt.tz_localize(None)
    tables = {name: pd.read_csv(SAMPLE / f"{name}.csv") for name in ("prices", "regions", "carbon", "teams")}
    return jobs, pd.read_csv(SAMPLE / "fleet.csv"), tables


@pytest.fixture(scope="module")
def sample_plan(sample_tables):
    settings = settings_from_dict({"days": 2, "warmup_days": 1, "max_iterations": 4,
                                   "slo": {"inference": 0.5, "development": 2, "batch": 6, "hpo": 12, "training": 24}})
    return plan_fleet(*sample_tables, settings, 1.3)


def test_the_recommended_fleet_meets_the_slos_when_simulated_again(sample_tables, sample_plan):
    jobs, _, tables = sample_tables
    best = sample_plan.recommended
    assert best is not None and best.check.met
    settings = sample_plan.settings
    scenario = check_scenario(settings, 1.3, sample_plan.start_utc, sample_plan.end_utc)
    world = World(tables["regions"], tables["prices"], tables["carbon"], teams=tables["teams"])
    result = run_scenario(scenario, jobs, best.check.fleet, world)
    since = (sample_plan.start_utc - result.origin_utc).total_seconds()
    again = slo_table(class_waits(result, since_s=since), settings.slo_h)
    assert again["met"].all()
    pd.testing.assert_frame_equal(again, best.check.slo)


def test_the_plan_fleet_is_what_the_integer_program_chose(sample_plan):
    best = sample_plan.recommended
    gpus = best.check.gpus.set_index(["region", "gpu_type"])
    for i, pool in enumerate(best.plan.pools):
        per_node = int(best.check.fleet.loc[(best.check.fleet["region"] == pool[0])
                                            & (best.check.fleet["gpu_type"] == pool[1]), "gpus"].iloc[0])
        assert gpus.loc[pool, "reserved"] == best.plan.reserved_nodes[i] * per_node
        assert gpus.loc[pool, "spot"] == best.plan.spot_nodes[i] * per_node
        assert gpus.loc[pool, "on-demand"] == best.plan.on_demand_nodes[i] * per_node
    rounds = sample_plan.iterations
    assert all(v == 1.0 for v in rounds[0].headroom.values())
    first_met = next(i for i, it in enumerate(rounds) if it.check.met)
    for before, after in zip(rounds[:first_met], rounds[1:first_met + 1]):
        assert {pool for pool in before.headroom if after.headroom[pool] > before.headroom[pool]} \
            == set(before.missed_pools)
    for trim in rounds[first_met + 1:]:  # trims lie between the last failing and the passing headroom
        for pool, value in trim.headroom.items():
            assert rounds[first_met - 1].headroom[pool] <= value <= rounds[first_met].headroom[pool]
    assert best.check.cost_usd_per_year == min(it.check.cost_usd_per_year for it in rounds if it.check.met)


def test_the_plan_compacts_the_integer_programs_fleet_to_what_the_simulation_needs():
    # Every day at 10:00 UTC, 32 one-GPU, one-hour inference jobs arrive at once; the target lets
    # inference wait 12 h at p95. The integer program, which knows nothing of queueing, buys the peak
    # (32 GPUs, on demand); one 8-GPU node runs the burst in 4 one-hour waves (3 h at worst), and
    # no node runs nothing: compaction must end at exactly one node.
    from sim_helpers import fleet, job

    rows = [job(f"{d}-{k}", d * 86400 + 10 * 3600, 3600, 1, workload_class="inference")
            for d in range(4) for k in range(32)]
    jobs = pd.DataFrame(rows)
    jobs = jobs.assign(start_utc=jobs["submit_utc"], end_utc=jobs["submit_utc"] + pd.Timedelta(hours=1))
    empty = {name: pd.DataFrame() for name in ("prices", "carbon", "teams", "regions")}
    settings = settings_from_dict({"days": 3, "warmup_days": 0, "max_iterations": 3, "slo": {"inference": 12}})
    result = plan_fleet(jobs, fleet(*[8] * 8), empty, settings, 1.0)
    first, compacted = result.iterations[0], result.iterations[-1]
    assert first.compacted is None and first.check.met and first.check.gpus["total"].sum() == 32
    assert compacted.compacted == pytest.approx(0.25, abs=0.13) and compacted.plan is first.plan
    assert compacted.check.met and compacted.check.gpus["total"].sum() == 8
    assert result.recommended is compacted
    waits = compacted.check.slo.set_index("workload_class")
    assert waits.loc["inference", "p95_h"] == pytest.approx(3.0)   # the fourth wave starts 3 h late


def test_cli_plan_json_and_bad_input(tmp_path, capsys):
    db = tmp_path / "m.duckdb"
    assert main(["plan", "--dataset", "sample", "--growth", "1.3", "--slo", str(SLO_FILE), "--days", "1",
                 "--json", "--db", str(db)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["growth"] == 1.3 and out["window"]["days"] == 1.0
    assert set(out["today"]) == {"gpus", "cost_usd_per_year", "utilization", "met", "slo", "fleet"}
    assert out["today"]["gpus"] == 1320 and out["rounds"][0]["round"] == 1
    assert (out["recommended"] is None) == (not out["met"])
    bad = tmp_path / "bad.toml"
    bad.write_text("[slo]\nbatch = 'soon'\n", encoding="utf-8")
    assert main(["plan", "--dataset", "sample", "--slo", str(bad), "--db", str(db)]) == 2
    assert "bad.toml: [slo] batch must be a number" in capsys.readouterr().err
    assert main(["plan", "--dataset", "nope", "--slo", str(SLO_FILE), "--db", str(db)]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err

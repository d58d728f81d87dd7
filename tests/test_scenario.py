"""Scenarios: loading, validation messages that list the valid choices, fleet and workload edits."""
from pathlib import Path

import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.core.errors import ScenarioError
from engine.policies.bundle import Policies
from engine.scenario.spec import FleetEdit, Scenario
from engine.service.run import run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"


def test_bundled_scenarios_load():
    fifo = Scenario.load(SCENARIOS / "fifo.toml")
    assert fifo.name == "fifo" and fifo.seed == 0
    assert fifo.policies == {"order": ("fcfs", {}), "placement": ("first-fit", {}), "backfill": ("none", {}),
                             "admission": ("accept-all", {}), "gang": ("lowest-index", {}),
                             "routing": ("home-only", {}), "timing": ("immediate", {}), "quota": ("none", {}),
                             "preemption": ("none", {}), "cluster": ("any", {})}
    easy = Scenario.load(SCENARIOS / "easy-backfill.toml")
    assert easy.policies["backfill"] == ("easy", {}) and easy.policies["placement"] == ("best-fit", {})
    policies = easy.build_policies()
    assert isinstance(policies, Policies) and type(policies.backfill).registry_key == "easy"


def test_defaults_and_parameters():
    s = Scenario.from_dict({"policies": {"placement": {"key": "best-fit", "cpu_weight": 1},
                                         "admission": {"key": "queue-length-limit", "max_queued": 5}}})
    assert s.policies["order"] == ("fcfs", {}) and s.policies["backfill"] == ("none", {})
    policies = s.build_policies()
    assert policies.placement.cpu_weight == 1.0 and policies.admission.max_queued == 5


@pytest.mark.parametrize("data, message", [
    ({"policies": {"order": {"key": "lifo"}}},
     "order policy 'lifo' is unknown; choose from drf, edf, f1, fail-fast, fair-tree, fcfs, linear, lottery, max-min, multifactor,"
     " priority, rl, sjf, unicep, wfp3, wfq"),
    ({"policies": {"backfill": {"key": "aggressive"}}}, "choose from"),
    ({"policies": {"queue": {"key": "fcfs"}}},
     "unknown policy family queue; valid: admission, backfill, cluster, gang, order, placement, preemption, quota, routing,"
     " timing"),
    ({"policies": {"admission": {"key": "queue-length-limit", "limit": 3}}},
     "has no parameter(s) limit; valid: max_queued"),
    ({"policies": {"admission": {"key": "queue-length-limit", "max_queued": "x"}}}, "max_queued must be int"),
    ({"polices": {}}, "unknown top-level key polices; valid: burst, calendar, chain, clusters, data, elastic_scaling, "
     "experiments, fleet, handoff, interconnect, latency, name, outage, partitions, policies, predictive_scaling, "
     "queue, quota, region, rightsize, roles, runtime, seed, spot, team, timer_s, workload"),
    ({"outage": [{"region": "r", "start_utc": "2026-01-02"}]}, "an [[outage]] needs exactly region, start_utc and end_utc"),
    ({"outage": [{"region": "r", "start_utc": "2026-01-02", "end_utc": "2026-01-01"}]}, "ends before it starts"),
    ({"data": {"transfer_gbps": -1}}, "[data] transfer_gbps must be from 0 to 1,000,000 (Gbit/s), got -1"),
    ({"data": {"gbps": 1}}, "unknown [data] key gbps; valid: changed_fraction, compress_s_per_gb, compression_ratio, "
                            "incremental, prefetch, replicate_after, storage_usd_per_gb_month, transfer_gbps"),
    ({"seed": 1.5}, "seed must be a whole number >= 0, got 1.5"),
    ({"seed": -1}, "seed must be a whole number >= 0, got -1"),
    ({"fleet": 5}, "fleet must be a list of [[fleet]] tables, got 5"),
    ({"spot": [1]}, "[spot] must be a table, got [1]"),
    ({"policies": ["fcfs"]}, "[policies] must be a table, got ['fcfs']"),
    ({"workload": {"load_scale": 0}}, "load_scale must be a number from 0.001 to 1000"),
    ({"workload": {"scale": 2}}, "unknown [workload] key scale; valid: end_utc, growth, load_scale, start_utc"),
    ({"workload": {"start_utc": "soon"}}, "start_utc must be a date-time"),
    ({"workload": {"growth": -1}}, "growth must be a number from 0.001 to 100"),
    ({"timer_s": -5}, "timer_s must be 0 (no timer) or 1 to 315,360,000 seconds"),
    ({"fleet": [{"region": "r", "gpu_type": "A"}]}, "one of add_gpus, remove_gpus"),
    ({"fleet": [{"region": "r", "gpu_type": "A", "add_gpus": -1}]}, "whole number of GPUs from 0 to 1,000,000"),
])
def test_validation_messages(data, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict(data, source="s.toml")
    assert message in str(error.value)
    assert str(error.value).startswith("s.toml: ")


def test_unreadable_and_invalid_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = ", encoding="utf-8")
    with pytest.raises(ScenarioError, match="not valid TOML"):
        Scenario.load(bad)
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        Scenario.load(tmp_path / "missing.toml")


def test_name_defaults_to_the_file_name(tmp_path):
    path = tmp_path / "my-run.toml"
    path.write_text("seed = 3\n", encoding="utf-8")
    assert Scenario.load(path).name == "my-run"


def test_fleet_edits_add_and_remove_whole_nodes():
    nodes = fleet(4, 4, 8, gpu_type=["A", "B", "A"])
    added = Scenario.from_dict({"fleet": [{"region": "r", "gpu_type": "A", "add_gpus": 10}]}).apply(
        pd.DataFrame([job(0, 0, 1, 1)]), nodes)[1]
    assert added["node"].tolist() == ["n0", "n1", "n2", "n2-added-1", "n2-added-2"]
    assert added["gpus"].tolist() == [4, 4, 8, 8, 8]
    removed = Scenario.from_dict({"fleet": [{"region": "r", "gpu_type": "A", "remove_gpus": 8}]}).apply(
        pd.DataFrame([job(0, 0, 1, 1)]), nodes)[1]
    assert removed["node"].tolist() == ["n0", "n1"]
    with pytest.raises(ScenarioError, match="no H100 nodes in region 'r'"):
        Scenario.from_dict({"fleet": [{"region": "r", "gpu_type": "H100", "add_gpus": 1}]}).apply(
            pd.DataFrame([job(0, 0, 1, 1)]), nodes)
    assert Scenario.from_dict({"fleet": [{"region": "r", "gpu_type": "A", "tier": "spot", "add_gpus": 1}]}
                              ).fleet_edits == (FleetEdit("r", "A", 1, "spot"),)


def test_adding_gpus_in_a_tier_the_region_lacks_clones_a_node_into_that_tier():
    nodes = fleet(4, 8, gpu_type=["A", "A"])  # both reserved
    spot = {"region": "r", "gpu_type": "A", "tier": "spot"}
    added = Scenario.from_dict({"fleet": [{**spot, "add_gpus": 16}]}).apply(pd.DataFrame([job(0, 0, 1, 1)]), nodes)[1]
    assert added["tier"].tolist() == ["reserved", "reserved", "spot", "spot"]
    assert added["gpus"].tolist() == [4, 8, 8, 8]
    with pytest.raises(ScenarioError, match="tier 'spot'"):
        Scenario.from_dict({"fleet": [{**spot, "remove_gpus": 8}]}).apply(pd.DataFrame([job(0, 0, 1, 1)]), nodes)


def test_workload_window_and_load_scale():
    jobs = pd.DataFrame([job(0, 0, 10, 1), job(1, 100, 10, 1), job(2, 200, 10, 1), job(3, 400, 10, 1)])
    s = Scenario.from_dict({"workload": {"start_utc": str(T0 + pd.Timedelta(seconds=100)),
                                         "end_utc": str(T0 + pd.Timedelta(seconds=400)), "load_scale": 2}})
    out, _ = s.apply(jobs, fleet(1))
    assert out["job_id"].tolist() == ["j1", "j2"]
    assert ((out["submit_utc"] - T0).dt.total_seconds()).tolist() == [100.0, 150.0]
    # Run durations are kept: start and end shift with the submit time.
    assert ((out["end_utc"] - out["start_utc"]).dt.total_seconds()).tolist() == [10.0, 10.0]


def test_growth_resamples_the_demand_seeded_within_each_hour():
    # engine.scenario.demand: 150 jobs in 150 distinct hours of the week (one stratum each); growth 2.5
    # keeps the 150 and adds 225 copies (systematic rounding: 1 or 2 per job), each in its donor's hour.
    jobs = pd.DataFrame([job(i, 3600 * i, 10, 1) for i in range(150)])
    grown, _ = Scenario.from_dict({"workload": {"growth": 2.5}}).apply(jobs, fleet(1))
    copies = grown[grown["job_id"].str.contains("+r", regex=False)]
    assert len(grown) == 375 and len(copies) == 225
    donors = copies["job_id"].str.split("+").str[0]
    assert donors.value_counts().isin([1, 2]).all()
    originals = grown.set_index("job_id").loc[donors]
    assert (copies["submit_utc"].dt.floor("h").to_numpy() == originals["submit_utc"].to_numpy()).all()  # its hour
    moved = copies["submit_utc"].to_numpy() - originals["submit_utc"].to_numpy()
    assert (copies["end_utc"].to_numpy() - originals["end_utc"].to_numpy() == moved).all()  # recorded times alike
    again, _ = Scenario.from_dict({"workload": {"growth": 2.5}}).apply(jobs, fleet(1))
    assert again.equals(grown)
    shrunk, _ = Scenario.from_dict({"workload": {"growth": 0.5}, "seed": 3}).apply(jobs, fleet(1))
    assert len(shrunk) == 75 and set(shrunk["job_id"]) <= set(jobs["job_id"])


def test_timer_adds_a_pass_every_timer_s_while_jobs_wait():
    # Jobs wait from 1 s to 110 s: a 10 s timer adds passes at 11, 21, ..., 101 s. Nothing is freed
    # between events here, so the passes start nothing and the starts match the run without one.
    jobs = pd.DataFrame([job(0, 0, 100, 1), job(1, 1, 1000, 1), job(2, 50, 10, 1)])
    plain = run_scenario(Scenario.from_dict({"policies": {"order": "wfp3"}}), jobs, fleet(1))
    timed = run_scenario(Scenario.from_dict({"policies": {"order": "wfp3"}, "timer_s": 10}), jobs, fleet(1))
    assert timed.jobs["start_s"].tolist() == plain.jobs["start_s"].tolist()
    ticks = timed.timeline["time_s"].tolist()
    assert [t for t in ticks if t not in set(plain.timeline["time_s"])] == [11.0 + 10 * k for k in range(10)]


def test_run_applies_edits_and_simulates():
    jobs = pd.DataFrame([job(0, 0, 100, 4), job(1, 1, 10, 4)])
    base = run_scenario(Scenario.from_dict({"name": "base"}), jobs, fleet(4))
    bigger = run_scenario(Scenario.from_dict({"fleet": [{"region": "r", "gpu_type": "A", "add_gpus": 4}]}), jobs, fleet(4))
    assert base.scenario == "base"
    assert base.jobs["start_s"].tolist() == [0.0, 100.0]
    assert bigger.jobs["start_s"].tolist() == [0.0, 1.0]

"""The scenario contract (issue 28, item 4): structural limits before any section is read, a unit and
a range for every number, references that must exist in the dataset, and the simulator's work budget
that ends a runaway run naming its cause. Each hostile scenario the issue found is refused with a
ScenarioError that names the key (the CLI prints it as one line, exit 2)."""
import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.core.errors import ScenarioError
from engine.scenario import limits
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.budget import BATCHES_PER_JOB, FLOOR, WorkBudgetExceeded

JOBS = pd.DataFrame([job(i, 3600 * i, 600, 1, region=["us-east", "eu-west"][i % 2]) for i in range(6)])
NODES = pd.concat([fleet(8, region="us-east"), fleet(8, region="eu-west").assign(node="m0")], ignore_index=True)


@pytest.mark.parametrize("data, message", [
    ({"policies": {"backfill": 5}}, r"\[policies\] backfill must be a policy key or a table"),
    ({"policies": {"order": {"key": "multifactor", "weight_age": float("inf")}}}, "weight_age must be a finite number"),
    ({"policies": {"preemption": {"key": "priority", "min_runtime_s": 1e12}}}, r"min_runtime_s must be from 0 .* \(s\)"),
    ({"timer_s": 1e-9}, "timer_s must be 0 .no timer. or 1 to"),
    ({"workload": {"growth": 1e6}}, r"growth must be a number from 0.001 to 100 \(x the jobs\)"),
    ({"workload": {"load_scale": 1e-12}}, "load_scale must be a number from 0.001 to 1000"),
    ({"workload": {"start_utc": "9999-01-01T00:00:00"}}, "start_utc must be between 1970-01-01 and 2100-01-01"),
    ({"workload": {"start_utc": "2026-09-01T00:00:00", "end_utc": "2026-08-01T00:00:00"}}, "must come before end_utc"),
    ({"spot": {"interruptions_per_node_hour": 1e308}}, "at most 60 interruptions per node-hour"),
    ({"spot": {"region_rate": {"us-east": 1e12}}}, "region_rate us-east must be at most 60"),
    ({"team": [{"team": "t", "weight": float("inf")}]}, "weight must be above 0 and at most"),
    ({"fleet": [{"region": "us-east", "gpu_type": "A", "tier": "platinum", "add_gpus": 8}]}, "tier 'platinum' is unknown"),
    ({"fleet": [{"region": "us-east", "gpu_type": "A", "add_gpus": 10**9}]}, "from 0 to 1,000,000"),
    ({"burst": [{"region": "us-east", "gpu_type": "A", "max_nodes": 10**8}]}, "max_nodes must be a whole number from 1 to"),
    ({"seed": [[[[[[[[[1]]]]]]]]]}, "nested deeper than 8 levels"),
    ({"region": [{"region": f"r{i}"} for i in range(limits.MAX_VALUES)]}, "more than 100,000 values"),
])
def test_a_hostile_value_is_refused_naming_its_key(data, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"name": "x", **data}, source="x.toml")


def test_a_file_too_large_or_too_deep_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text('name = "x"\n' + "# padding\n" * 120_000, encoding="utf-8")
    with pytest.raises(ScenarioError, match="a scenario file is at most 1,048,576 bytes"):
        Scenario.load(big)
    deep = tmp_path / "deep.toml"
    deep.write_text("seed = " + "[" * 1000 + "]" * 1000 + "\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="nested too deeply to read"):
        Scenario.load(deep)


@pytest.mark.parametrize("data, message", [
    ({"spot": {"interruptions_per_node_hour": 0.1, "region_rate": {"atlantis": 0.5}}},
     r"\[spot\] region_rate region 'atlantis' is not in the fleet; its regions: eu-west, us-east"),
    ({"outage": [{"region": "atlantis", "start_utc": "2026-03-02T00:00:00", "end_utc": "2026-03-02T02:00:00"}]},
     r"\[\[outage\]\] region 'atlantis' is not in the fleet"),
    ({"workload": {"start_utc": "2030-01-01T00:00:00"}}, "no job was submitted in its window"),
])
def test_a_reference_the_dataset_lacks_is_refused_when_the_scenario_meets_it(data, message):
    scenario = Scenario.from_dict({"name": "x", **data}, source="x.toml")
    with pytest.raises(ScenarioError, match=f"^x: {message}"):
        run_scenario(scenario, JOBS, NODES)


def test_growth_that_would_overflow_a_run_is_refused_before_any_job_is_made(monkeypatch):
    monkeypatch.setattr(limits, "MAX_JOBS", 100)
    with pytest.raises(ScenarioError, match=r"growth 20 would make about 120 jobs from 6; a run holds at most 100"):
        run_scenario(Scenario.from_dict({"name": "x", "workload": {"growth": 20}}), JOBS, NODES)


def test_a_runaway_run_stops_at_its_work_budget_naming_the_cause():
    # 2 jobs over 50 days, waiting behind a job that never fits... a wfp3 timer pass every second while
    # one waits: far more passes than the budget's 50 per job + FLOOR
    jobs = pd.DataFrame([job(0, 0, 86400 * 30, 8, region="us-east"), job(1, 10, 60, 8, region="us-east")])
    scenario = Scenario.from_dict({"name": "tick", "timer_s": 1, "policies": {"order": "wfp3"}})
    with pytest.raises(WorkBudgetExceeded, match=rf"^tick: the simulation stopped after {2 * BATCHES_PER_JOB + FLOOR:,}"
                                                 r" event batches .* came from timer_s"):
        run_scenario(scenario, jobs, NODES)
    assert issubclass(WorkBudgetExceeded, ScenarioError)   # a user error: one line, exit 2

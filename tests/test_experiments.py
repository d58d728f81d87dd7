"""Automated experiments queued for nights and weekends (issue 26 item 3), sized from the forecast idle
capacity: the generator's sizing on a synthetic forecast computed by hand, the gap it filled in the run,
determinism from the seed, and the [experiments] table's messages."""
from __future__ import annotations

import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.experiment_kpis import KPI_KEYS, experiment_kpis, fill_by_type
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.facts import World

START = pd.Timestamp("2026-01-05")  # a Monday
WEEK = pd.Timedelta(days=7)
TEAMS = pd.DataFrame([{"team": "t", "timezone": "UTC", "work_start_hour": 9, "work_end_hour": 18,
                       "working_days": "Mon-Fri", "holiday_country": "", "home_region": "r", "share_weight": 1.0}])
NODES = fleet(8)


def history() -> pd.DataFrame:
    """The week before START: 2 GPUs busy all week, 4 more on Monday 00:00-04:00; in the window, one 1-GPU
    job at Monday noon (a window needs a job)."""
    since = START - WEEK
    rows = [job(0, 0, WEEK.total_seconds(), 2), job(1, 0, 4 * 3600, 4),
            job(2, WEEK.total_seconds() + 12 * 3600, 3600, 1, workload_class="inference", team="u")]
    frame = pd.DataFrame(rows)
    for column in ("submit_utc", "start_utc", "end_utc"):  # sim_helpers' T0 -> since
        frame[column] = frame[column] - pd.Timestamp("2026-01-01") + since
    return frame


def scenario(seed: int = 0, **experiments) -> Scenario:
    return Scenario.from_dict({"name": "x", "seed": seed,
                               "workload": {"start_utc": str(START), "end_utc": str(START + pd.Timedelta(days=1))},
                               "experiments": {"teams": ["t"], "kinds": ["hpo", "batch"], "fill_share": 0.5, "gpus": 1,
                                               "duration_h": 2, "weeks": 1, **experiments}})


def test_the_generator_fills_its_share_of_the_forecast_idle_off_hours():
    # Forecast from one week: demand 6 GPUs at Monday 00-04, 2 elsewhere; idle = 8 - demand: 2 then 6.
    # Team t works 9-18 UTC: off hours on Monday 0-8 (9) and 18-23 (6) = 15.
    # Gap = 4 x 2 + 5 x 6 + 6 x 6 = 74 GPU-hours. Cap = 0.5 x idle: 1 GPU at 00-04, 3 after.
    # 2-hour jobs of 1 GPU, walking the hours: 00 (1 job), 02 (1), 04 (3), 06 (3); 08 would run into 09 (at
    # work); 18, 20, 22 (3 each); 23 would run past the window. 17 jobs, 34 GPU-hours planned.
    result = run_scenario(scenario(), history(), NODES, World(teams=TEAMS))
    table = result.experiments
    assert table[["team", "region", "gpu_type", "off_hours", "jobs"]].values.tolist() == [["t", "r", "A", 15, 17]]
    assert table["gap_gpu_hours"].tolist() == [pytest.approx(74.0)]
    assert table["planned_gpu_hours"].tolist() == [34.0]
    made = result.jobs[result.jobs["job_id"].str.startswith("exp-t-")]
    offset = (result.origin_utc - START).total_seconds()  # time 0 is the first submit (an experiment's)
    hours = ((made["submit_s"] + offset) // 3600).astype(int).value_counts().sort_index()
    assert hours.to_dict() == {0: 1, 2: 1, 4: 3, 6: 3, 18: 3, 20: 3, 22: 3}
    assert set(made["workload_class"]) <= {"hpo", "batch"} and (made["gpus"] == 1).all()
    # the 8-GPU node has room for all: each runs its 2 hours from its submit; the three at 22:xx run past the
    # window's end (Tuesday 00:00), so the gap filled inside it is 34 GPU-hours less their overhang
    assert (made["start_s"] == made["submit_s"]).all()
    window_end = 86_400 - offset
    overhang = (made["end_s"] - window_end).clip(lower=0).sum() / 3600
    assert table["ran_gpu_hours"].tolist() == [pytest.approx(34.0 - overhang)]
    kpis = experiment_kpis(result)
    assert kpis["experiments_jobs"] == 17 and kpis["experiments_gap_gpu_hours"] == pytest.approx(74.0)
    assert kpis["experiments_fill_share"] == pytest.approx((34.0 - overhang) / 74.0)
    assert set(kpis) == set(KPI_KEYS) == keys("experiments")


def test_the_same_seed_makes_the_same_jobs_and_another_seed_other_submits():
    one, two = (run_scenario(scenario(seed=3), history(), NODES, World(teams=TEAMS)) for _ in range(2))
    pd.testing.assert_frame_equal(one.jobs, two.jobs)
    other = run_scenario(scenario(seed=4), history(), NODES, World(teams=TEAMS))
    assert len(other.jobs) == len(one.jobs)
    assert other.jobs["submit_s"].tolist() != one.jobs["submit_s"].tolist()


def test_a_full_share_fills_the_whole_idle_forecast():
    full = run_scenario(scenario(fill_share=1.0), history(), NODES, World(teams=TEAMS)).experiments
    # cap = idle: 2 at 00-04, 6 after: 00 (2), 02 (2), 04 (6), 06 (6), 18, 20, 22 (6 each) = 34 jobs
    assert full["jobs"].tolist() == [34]


def test_experiments_errors_name_the_table_and_the_problem():
    with pytest.raises(ScenarioError, match=r"\[experiments\] teams must be a list of one or more team names"):
        Scenario.from_dict({"experiments": {"teams": []}})
    with pytest.raises(ScenarioError, match=r"\[experiments\] kinds must be a list of 'hpo' and 'batch'"):
        Scenario.from_dict({"experiments": {"teams": ["t"], "kinds": ["training"]}})
    with pytest.raises(ScenarioError, match=r"\[experiments\] fill_share must be from 0 to 1"):
        Scenario.from_dict({"experiments": {"teams": ["t"], "fill_share": 2}})
    with pytest.raises(ScenarioError, match=r"cannot run with \[workload\] load_scale 2"):
        Scenario.from_dict({"workload": {"load_scale": 2}, "experiments": {"teams": ["t"]}})
    with pytest.raises(ScenarioError, match=r"team 'nobody' has no home_region in the dataset's teams table; its "
                                            r"teams: t"):
        run_scenario(scenario(teams=["nobody"]), history(), NODES, World(teams=TEAMS))
    late = Scenario.from_dict({"workload": {"start_utc": str(START - pd.Timedelta(days=3))},
                               "experiments": {"teams": ["t"]}})
    with pytest.raises(ScenarioError, match=r"\[experiments\] forecasts idle capacity from the weeks before"):
        run_scenario(late, history(), NODES, World(teams=TEAMS))


def test_per_type_sizing_fills_each_gpu_type_from_its_own_forecast_with_multi_node_batches():
    # r holds A (four 8-GPU nodes, 32 GPUs) and B (two 4-GPU nodes, 8). The week before: 12 A GPUs busy all week,
    # 4 B GPUs on Monday 00-04. Idle A = 32 - 12 = 20 every hour; idle B = 8 - 4 = 4 at 00-04, 8 after.
    # fill_share 1: cap = idle. Off hours 00-08 and 18-23 (15); 2-hour blocks start at 00, 02, 04, 06, 18, 20, 22.
    # A, per block: 20 GPUs of room hold one 2-node batch (16 GPUs: 3 nodes would be 24) and four 1-GPU jobs.
    #   7 batches + 28 singles = 35 jobs, 7 x 20 x 2 = 280 GPU-hours; gap 15 x 20 = 300.
    # B: at 00 and 02 room 4 (< 2 nodes): four 1-GPU jobs each; at 04, 06, 18, 20, 22 room 8: one 2-node batch.
    #   5 batches + 8 singles = 13 jobs, (8 + 40) x 2 = 96 GPU-hours; gap 4 x 4 + 5 x 8 + 6 x 8 = 104.
    nodes = pd.concat([fleet(8, 8, 8, 8), fleet(4, 4, gpu_type="B").assign(node=["b0", "b1"])], ignore_index=True)
    frame = history()
    frame.loc[0, "gpus"] = 12
    frame.loc[1, "gpu_type"] = "B"
    result = run_scenario(scenario(fill_share=1.0, sizing="per-type", max_nodes=4), frame, nodes, World(teams=TEAMS))
    table = result.experiments
    assert table[["gpu_type", "off_hours", "jobs", "multi_node_jobs", "planned_gpu_hours"]].values.tolist() == [
        ["A", 15, 35, 7, 280.0], ["B", 15, 13, 5, 96.0]]
    assert table["gap_gpu_hours"].tolist() == [pytest.approx(300.0), pytest.approx(104.0)]
    made = result.jobs[result.jobs["job_id"].str.startswith("exp-t-")]
    batches = made[made["nodes"].str.contains(";")]  # the nodes each ran on: two whole nodes of its type
    assert sorted(zip(batches["gpus"], batches["nodes"])) == [(8.0, "b0;b1")] * 5 + [(16.0, "n1;n2")] * 7
    by_type = fill_by_type(result)
    assert by_type[["region", "gpu_type", "jobs"]].values.tolist() == [["r", "A", 35], ["r", "B", 13]]
    assert (by_type["ran_gpu_hours"] <= by_type["planned_gpu_hours"] + 1e-9).all()
    assert by_type["fill_share"].tolist() == pytest.approx((by_type["ran_gpu_hours"] / by_type["gap_gpu_hours"]).tolist())


def test_the_default_sizing_is_the_largest_type_single_node():
    # the same fleet and history without the new keys: A only (32 GPUs installed; the 4 GPUs of Monday 00-04 are
    # A's here): 16 1-GPU jobs at 00 and 02, 20 at 04, 06, 18, 20, 22: 132
    nodes = pd.concat([fleet(8, 8, 8, 8), fleet(4, 4, gpu_type="B").assign(node=["b0", "b1"])], ignore_index=True)
    frame = history()
    frame.loc[0, "gpus"] = 12
    table = run_scenario(scenario(fill_share=1.0), frame, nodes, World(teams=TEAMS)).experiments
    assert table[["gpu_type", "jobs", "multi_node_jobs"]].values.tolist() == [["A", 132, 0]]


def test_a_bad_sizing_is_refused():
    with pytest.raises(ScenarioError, match=r"\[experiments\] sizing 'all' is unknown; choose from largest-type, "
                                            r"per-type"):
        Scenario.from_dict({"experiments": {"teams": ["t"], "sizing": "all"}})
    with pytest.raises(ScenarioError, match=r"\[experiments\] max_nodes must be from 1 to 64"):
        Scenario.from_dict({"experiments": {"teams": ["t"], "max_nodes": 0}})

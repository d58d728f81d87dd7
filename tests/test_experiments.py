"""Automated experiments queued for nights and weekends (issue 26 item 3), sized from the forecast idle
capacity: the generator's sizing on a synthetic forecast computed by hand, the gap it filled in the run,
determinism from the seed, and the [experiments] table's messages."""
from __future__ import annotations

import pandas as pd
import pytest
from sim_helpers import fleet, job

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.experiment_kpis import KPI_KEYS, experiment_kpis
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

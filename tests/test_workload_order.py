"""build_workload puts jobs in submit order, ties by job id (string order), whatever order they come in."""
from __future__ import annotations

import pandas as pd

from engine.sim.state.workload import build_workload
from tests.sim_helpers import fleet, job


def _ids(rows, index=None) -> list[str]:
    jobs = pd.DataFrame(rows, index=index)
    return build_workload(jobs, fleet(4)).job_id.tolist()


def test_unsorted_jobs_are_sorted_by_submit_then_job_id():
    rows = [job(9, 20, 5, 1), job(10, 10, 5, 1), job(9, 10, 5, 1), job(1, 0, 5, 1)]
    rows[2]["job_id"] = "j9"
    assert _ids(rows) == ["j1", "j10", "j9", "j9"]


def test_ties_in_submit_follow_job_id_as_text():
    rows = [job(9, 10, 5, 1), job(10, 10, 5, 1)]  # "j9" > "j10" as text
    assert _ids(rows) == ["j10", "j9"]


def test_a_table_already_in_order_keeps_its_order_and_gets_a_fresh_index():
    rows = [job(1, 0, 5, 1), job(10, 10, 5, 1), job(9, 10, 5, 1), job(2, 30, 5, 1)]
    assert _ids(rows, index=[7, 3, 5, 1]) == ["j1", "j10", "j9", "j2"]


def test_submit_times_held_as_python_objects_are_ordered_too():
    rows = [job(2, 10, 5, 1), job(1, 0, 5, 1)]
    jobs = pd.DataFrame(rows)
    jobs["submit_utc"] = jobs["submit_utc"].astype(object)
    assert build_workload(jobs, fleet(4)).job_id.tolist() == ["j1", "j2"]

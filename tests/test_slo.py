"""Censored waits per class and the SLO table (engine.analysis.runs.slo)."""
import pandas as pd
import pytest

from engine.analysis.runs.slo import class_waits, slo_table
from tests.sim_helpers import fleet, job, run


def _result():
    # one 4-GPU node: j0 runs 0-100; j1 (batch) waits 100 s; j2 asks for 8 GPUs and never starts
    return run([job(0, 0, 100, 4, workload_class="training"), job(1, 0, 50, 4, workload_class="batch"),
                job(2, 10, 50, 8, workload_class="batch")], fleet(4))


def test_a_job_that_never_starts_waits_until_the_end_of_the_run():
    result = _result()
    waits = class_waits(result).set_index("workload_class")
    assert waits.loc["training", "wait_p95_s"] == 0.0
    assert waits.loc["batch", "jobs"] == 2 and waits.loc["batch", "started"] == 1
    end = max(result.window_s, float(result.jobs["end_s"].max()))
    assert waits.loc["batch", "wait_mean_s"] == pytest.approx((100.0 + (end - 10.0)) / 2)


def test_jobs_submitted_before_the_warm_up_ends_are_not_scored():
    waits = class_waits(_result(), since_s=5.0)
    assert list(waits["workload_class"]) == ["batch"] and int(waits["jobs"].iloc[0]) == 1


def test_slo_table_margin_and_met():
    waits = pd.DataFrame({"workload_class": ["batch", "hpo"], "wait_p95_s": [7200.0, 36000.0]})
    table = slo_table(waits, {"batch": 4.0, "hpo": 8.0, "inference": 0.5}).set_index("workload_class")
    assert table.loc["batch", "margin_h"] == pytest.approx(2.0) and table.loc["batch", "met"]
    assert table.loc["hpo", "margin_h"] == pytest.approx(-2.0) and not table.loc["hpo", "met"]
    assert table.loc["inference", "p95_h"] == 0.0 and table.loc["inference", "met"]

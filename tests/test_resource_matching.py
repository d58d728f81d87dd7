"""Resource matching (engine/analysis/runs/matching.py) on a hand-built run, computed by hand, and on a run of the
sample through engine.service.compare.run_one."""
import math

import numpy as np
import pandas as pd
import pytest
from test_kpi_catalogue import day  # noqa: F401 (a fixture: a day of the sample under FIFO through run_one)

from engine.analysis.runs.matching import FIT, by_class, matching_kpis
from engine.sim.output.result import SimulationResult

FLEET = pd.DataFrame({"node": ["n1", "n2"], "gpu_type": ["H100", "L4"], "gpus": [8, 8]})
H = 3600.0


def _run(rows, burst=None) -> SimulationResult:
    jobs = pd.DataFrame(rows, columns=["job_id", "workload_class", "nodes", "gpus_allocated", "start_s", "end_s",
                                       "queue"])
    jobs = jobs.assign(region="r", team="t", failed=False, started=jobs["start_s"].notna())
    return SimulationResult("hand", jobs, pd.DataFrame(), pd.DataFrame(), {"r": 16.0}, pd.Timestamp("2026-01-01"),
                            window_s=10 * H, burst=burst)


ROWS = [
    ("j1", "training", "n1", 8, 0.0, 2 * H, "standard"),      # 16 GPU-h: H100 fits training, standard fits: both
    ("j2", "inference", "n1", 2, 0.0, 4 * H, "express"),      # 8 GPU-h: H100 is not fit for inference; the queue is
    ("j3", "hpo", "n2", 1, 1 * H, 5 * H, "standard"),         # 4 GPU-h: L4 fits hpo; standard is not an hpo queue
    ("j4", "development", "n2", 1, 0.0, np.nan, "express"),   # still running: holds to the window's end, 10 GPU-h
    ("j5", "unknown", "n1", 4, 0.0, 1 * H, "standard"),       # no class: not counted
    ("j6", "batch", "", 0, np.nan, np.nan, "batch"),          # never started: nothing held
]


def test_a_hand_built_run_by_hand():
    kpis = matching_kpis(_run(ROWS), FLEET)
    total = 16 + 8 + 4 + 10
    assert kpis["resource_matching"] == pytest.approx((16 + 10) / total)
    assert kpis["gpu_type_matching"] == pytest.approx((16 + 4 + 10) / total)
    assert kpis["queue_matching"] == pytest.approx((16 + 8 + 10) / total)


def test_a_rented_burst_node_counts_with_its_pools_gpu_type():
    burst = pd.DataFrame({"region": ["r"], "node": ["burst-r-A100-1"], "gpu_type": ["A100"], "gpus": [8]})
    kpis = matching_kpis(_run([*ROWS, ("j7", "batch", "burst-r-A100-1", 2, 0.0, 3 * H, "batch")], burst), FLEET)
    assert kpis["resource_matching"] == pytest.approx((16 + 10 + 6) / 44)
    assert kpis["gpu_type_matching"] == pytest.approx((16 + 4 + 10 + 6) / 44)


def test_per_class_and_none_without_classes():
    table = by_class(_run(ROWS), FLEET).set_index("workload_class")
    assert list(table.index) == list(FIT)
    assert table.loc["inference", "gpu_hours"] == pytest.approx(8) and table.loc["inference", "resource_matching"] == 0
    assert table.loc["hpo", "gpu_type_matching"] == 1 and table.loc["hpo", "queue_matching"] == 0
    assert math.isnan(table.loc["batch", "resource_matching"])   # held nothing
    assert matching_kpis(_run([ROWS[4]]), FLEET) == {}


def test_a_day_of_the_sample_under_fifo(day):  # noqa: F811 (the fixture imported above)
    run = day
    assert run.kpis["queue_matching"] == 1.0   # the default queues sort jobs by their class
    assert 0.5 < run.kpis["resource_matching"] == run.kpis["gpu_type_matching"] < 1.0

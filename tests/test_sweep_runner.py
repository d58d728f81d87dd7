"""The sweep runner: local processes and a Dask LocalCluster give the same outcomes; failures stay local."""
import os
import sys
from argparse import Namespace
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from engine.analysis.runs.world_kpis import KPI_KEYS
from engine.cli.common import tables
from engine.service.compare import run_scenarios
from engine.service.sweep.backends import DASK_MISSING, SweepUnavailable
from engine.service.sweep.grid import Point, load_grid
from engine.service.sweep.runner import run_sweep

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "data" / "swf" / "small.swf"


def _points(tmp_path: Path, text: str, jobs):
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    return load_grid(path).windowed(jobs)


@pytest.fixture(scope="module")
def small():
    return tables(Namespace(trace=str(SMALL), dataset=None, db=None))


@pytest.fixture(scope="module")
def sample(sample_db):
    return tables(Namespace(trace=None, dataset="sample", db=str(sample_db)))


def test_backends_and_worker_counts_give_identical_outcomes(tmp_path, sample):
    points = _points(tmp_path, """
base = "%s"
days = 1
[[axis]]
name = "growth"
set = "workload.growth"
values = [1.0, 1.3]
[[axis]]
fleet = { region = "ap-south", gpu_type = "A100", tier = "reserved" }
gpus = [0, 32]
""" % (REPO / "sample_data" / "scenarios" / "easy-backfill.toml"), sample[0])
    runs = {label: run_sweep(points, sample, **kwargs) for label, kwargs in
            (("1 worker", {"workers": 1}), ("2 workers", {"workers": 2}), ("dask", {"workers": 2, "dask": "local"}))}
    measured = {label: [(o.index, o.name, o.status, o.kpis, o.classes) for o in outcomes]
                for label, outcomes in runs.items()}
    assert measured["1 worker"] == measured["2 workers"] == measured["dask"]
    assert [o.status for o in runs["1 worker"]] == ["ok"] * 4
    assert len({o.worker for o in runs["2 workers"]}) == 2
    # The KPIs are `meridian compare --no-headroom`'s, in its order (a sweep measures no headroom).
    (compared,), _ = run_scenarios([points[0].scenario], *sample)
    swept = runs["1 worker"][0].kpis
    assert list(swept) == list(compared.kpis) and swept == compared.kpis
    assert set(KPI_KEYS) <= set(runs["dask"][0].kpis)
    # 30 % more work on the same fleet waits longer; 32 more A100s in ap-south cost more.
    by_name = {o.params["growth"]: o for o in runs["dask"] if o.params["ap-south A100 reserved"] == 0}
    assert by_name[1.3].kpis["wait_mean_s"] > by_name[1.0].kpis["wait_mean_s"]
    assert runs["dask"][1].kpis["cost_reserved_usd"] > runs["dask"][0].kpis["cost_reserved_usd"]
    assert {row["workload_class"] for row in runs["dask"][0].classes} == {"batch", "development", "hpo", "inference",
                                                                          "training"}


def test_a_point_that_raises_is_reported_and_the_others_finish(tmp_path, small):
    points = _points(tmp_path, """
[[axis]]
name = "more"
fleet = { region = "default", gpu_type = "cpu" }
gpus = [0, 4]
[[scenario]]
name = "nowhere"
fleet = [{ region = "atlantis", gpu_type = "cpu", add_gpus = 4 }]
""", small[0])
    seen = []
    outcomes = run_sweep(points, small, workers=2, progress=lambda o, done, total: seen.append((o.index, done, total)))
    assert [(o.index, o.status) for o in outcomes] == [(0, "ok"), (1, "ok"), (2, "failed")]
    assert outcomes[2].error.startswith("ScenarioError: fleet edit: no cpu nodes in region 'atlantis'")
    assert "\n" not in outcomes[2].error and outcomes[2].kpis == {} and outcomes[2].classes == []
    assert outcomes[0].kpis["jobs_completed"] + outcomes[0].kpis["jobs_failed"] == 7
    assert sorted(i for i, _, _ in seen) == [0, 1, 2]
    assert [(done, total) for _, done, total in seen] == [(1, 3), (2, 3), (3, 3)]
    assert outcomes[1].record()["params"] == {"more": 4} and outcomes[0].worker.rsplit(":", 1)[1].isdigit()


def test_waits_are_scored_from_the_points_score_time(tmp_path, small):
    (point,) = _points(tmp_path, "[[axis]]\nset = 'seed'\nvalues = [1]\n", small[0])
    later = Point(1, "later", {}, point.scenario, score_from_utc=pd.Timestamp("2023-11-14 22:20:00"))
    whole, scored = run_sweep([point, later], small, workers=1)
    submitted = pd.to_datetime(small[0]["submit_utc"])
    assert [row["jobs"] for row in whole.classes] == [len(submitted)]
    kept = int((submitted >= later.score_from_utc).sum())
    assert 0 < kept < len(submitted) and [row["jobs"] for row in scored.classes] == [kept]
    assert scored.kpis == whole.kpis


@dataclass(frozen=True)
class _Crash:
    """A scenario stand-in that kills the worker process it runs in (a run first edits its world)."""

    name: str = "crash"

    def world(self, *args):
        os._exit(3)


def test_a_point_that_kills_its_worker_fails_alone(tmp_path, small):
    points = list(_points(tmp_path, "[[axis]]\nset = 'seed'\nvalues = [1, 2, 3]\n", small[0]))
    points.insert(1, Point(1, "crash", {"seed": "crash"}, _Crash()))
    points = [Point(i, p.name, p.params, p.scenario) for i, p in enumerate(points)]
    outcomes = run_sweep(points, small, workers=2)
    assert [(o.name, o.status) for o in outcomes] == [("grid[seed=1]", "ok"), ("crash", "failed"),
                                                      ("grid[seed=2]", "ok"), ("grid[seed=3]", "ok")]
    assert outcomes[1].error.startswith("WorkerDied:")


def test_dask_missing_says_how_to_install_it(tmp_path, small, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    points = _points(tmp_path, "[[axis]]\nset = 'seed'\nvalues = [1]\n", small[0])
    with pytest.raises(SweepUnavailable) as caught:
        run_sweep(points, small, dask="local")
    assert str(caught.value) == DASK_MISSING and "pip install 'meridian[dask]'" in DASK_MISSING


def test_no_points_and_bad_worker_counts(small):
    assert run_sweep([], small, workers=1) == []
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        run_sweep([], small, workers=0)

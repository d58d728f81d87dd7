"""Right-sizing memory at submit ([rightsize] memory = true): node fit sees the sized memory, a job given
less than its measured peak memory runs out of memory and restarts with its request (computed by hand),
the memory-need model's margin and rounding (engine.predict.size_source), and the memory model's fit."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.analysis.runs.rightsize import rightsize_kpis
from engine.core.errors import ScenarioError
from engine.policies import registry
from engine.policies.bundle import Policies
from engine.predict import size_source
from engine.predict.gpu_need import NeedModel, NeedSettings, used_share
from engine.scenario.rightsize import RightSize
from engine.scenario.spec import Scenario
from engine.sim.simulator import simulate
from engine.sim.state.workload import build_workload
from engine.world.facts import World

FCFS = Policies(registry.make("order", "fcfs"), registry.make("placement", "first-fit"),
                registry.make("backfill", "none"), registry.make("admission", "accept-all"))


def memory_run(sized_gib, used_gib):
    # One node: 8 GPUs, 512 GiB. j0 asks 4 GPUs and 400 GiB; j1 asks 4 GPUs and 300 GiB; both at 0, 1000 s each.
    jobs = pd.DataFrame([job(0, 0, 1000, 4), job(1, 0, 1000, 4)])
    jobs["memory_gib"] = [400.0, 300.0]
    jobs["sized_memory_gib"], jobs["memory_used_gib_max"] = [sized_gib, np.nan], [used_gib, 250.0]
    return simulate(build_workload(jobs, fleet(8)), FCFS, 0, world=World(sizing=RightSize(enabled=True, memory=True)))


def test_without_memory_sizing_the_second_job_waits_for_memory_not_gpus():
    jobs = pd.DataFrame([job(0, 0, 1000, 4), job(1, 0, 1000, 4)])
    jobs["memory_gib"] = [400.0, 300.0]  # 700 GiB > 512: j1 waits though 4 GPUs are free
    result = simulate(build_workload(jobs, fleet(8)), FCFS, 0)
    assert result.jobs["start_s"].tolist() == [0.0, 1000.0]


def test_a_job_given_too_little_memory_runs_out_half_way_and_restarts_with_its_request():
    # j0 given 200 GiB (peak 300): 200 + 300 <= 512, both start at 0. j0 fails at 500 s having held 4 GPUs
    # and 200 GiB for 500 s (2,000 GPU-s; 100,000 GiB-s); with its request (400 GiB) it needs more than the
    # 212 GiB free beside j1, so it waits for j1's end at 1000 and runs 1000-2000.
    result = memory_run(200.0, 300.0)
    jobs = result.jobs
    assert jobs["start_s"].tolist() == [0.0, 0.0] and jobs["end_s"].tolist() == [2000.0, 1000.0]
    assert jobs["asked_memory_gib"].tolist() == [400.0, 300.0] and jobs["sized_memory_gib"].tolist() == [200.0, 300.0]
    assert jobs["oom_restarts"].tolist() == [1, 0] and jobs["oom_for_memory"].tolist() == [1, 0]
    assert jobs["oom_lost_gpu_hours"].tolist() == pytest.approx([2000 / 3600, 0.0])
    assert jobs["oom_lost_gib_hours"].tolist() == pytest.approx([100_000 / 3600, 0.0])
    oom = result.decisions[result.decisions["decision"] == "out-of-memory"]
    assert oom[["time_s", "job_id"]].values.tolist() == [[500.0, "j0"]]
    kpis = rightsize_kpis(result)
    assert {k: kpis[k] for k in ("memory_sized_jobs", "gib_saved_at_submit", "sized_freed_gib_hours",
                                 "oom_memory_restarts", "oom_lost_gib_hours")} == pytest.approx(
        {"memory_sized_jobs": 1, "gib_saved_at_submit": 200.0, "sized_freed_gib_hours": 0.0,
         "oom_memory_restarts": 1, "oom_lost_gib_hours": 100_000 / 3600})
    assert kpis["rightsized_jobs"] == 0  # no GPUs were cut


def test_a_job_given_at_least_its_peak_memory_runs_beside_the_other_and_frees_the_rest():
    # j0 given 200 GiB, peak 150: both run 0-1000; freed 200 GiB x 1000 s = 55.6 GiB-h.
    result = memory_run(200.0, 150.0)
    assert result.jobs["end_s"].tolist() == [1000.0, 1000.0] and result.jobs["oom_restarts"].tolist() == [0, 0]
    assert rightsize_kpis(result)["sized_freed_gib_hours"] == pytest.approx(200_000 / 3600)


def test_a_gang_sized_in_memory_asks_its_share_per_pod():
    # 2 nodes x 256 GiB asked (512 GiB over the job), sized to 301 GiB: 150.5 GiB per pod, rounded up to MiB.
    jobs = pd.DataFrame([job(0, 0, 1000, 16, nodes=2)])
    jobs["memory_gib"], jobs["sized_memory_gib"], jobs["memory_used_gib_max"] = 512.0, 301.0, 200.0
    w = build_workload(jobs, fleet(8, 8))
    assert w.memory_mib.tolist() == [154_112] and w.asked_memory_mib.tolist() == [262_144]
    assert w.used_memory_mib.tolist() == [204_800.0] and w.asked_num_gpu.tolist() == [8]


class _Half:
    """A stand-in for the need models: every job is predicted to use 0.37 of its request."""

    def __init__(self, settings, resource="gpus"):
        self.resource = resource

    def fit(self, jobs, tz, rows):
        return self

    def predict(self, jobs, tz, rows):
        return 0.37 * jobs["memory_gib" if self.resource == "memory" else "gpus"].to_numpy(float)[rows]


@pytest.mark.parametrize("margin_pct, expected", [
    # 0.37 x 120 = 44.4 -> 45 GiB, 0.37 x 8 = 2.96 -> 3
    (0, [45.0, 3.0]),
    # x 1.1: 48.84 -> 49, 3.256 -> 4
    (10, [49.0, 4.0]),
    # x 3: 133.2 and 8.88, at least the requests: not sized
    (200, [np.nan, np.nan]),
])
def test_the_memory_margin_is_added_before_rounding_up_to_whole_gib(monkeypatch, margin_pct, expected):
    monkeypatch.setattr(size_source, "NeedModel", _Half)
    size_source._MEMO.clear()
    rows = [job(i, i, 100, 1) for i in range(25)] + [job(100, 20_000, 100, 1), job(101, 20_000, 100, 1)]
    jobs = pd.DataFrame(rows)
    jobs["start_utc"] = jobs["submit_utc"]
    jobs["end_utc"] = jobs["submit_utc"] + pd.Timedelta(seconds=100)
    jobs["memory_gib"] = [120.0] * 26 + [8.0]
    jobs["gpus_used_max"], jobs["memory_used_gib_max"] = 1.0, 30.0
    out = size_source.with_sized_gpus(jobs, T0 + pd.Timedelta(seconds=10_000), 0.9, 0.0, None, None, 0.9, margin_pct)
    later = out["sized_memory_gib"].to_numpy()[25:]
    np.testing.assert_array_equal(later, expected)
    assert out["sized_memory_gib"].iloc[:25].isna().all()


def test_the_memory_need_model_learns_each_users_habit():
    # Two users in 200 jobs: one uses 0.2 of the memory asked, the other 0.8; the 0.9-quantile model predicts
    # below 0.45 of the request for the first and above it for the second on later jobs.
    rows = [job(i, 60 * i, 30, 1, team="t") for i in range(200)]
    jobs = pd.DataFrame(rows)
    jobs["submit_utc"] = T0 + pd.to_timedelta(60 * np.arange(200), unit="s")
    jobs["start_utc"], jobs["end_utc"] = jobs["submit_utc"], jobs["submit_utc"] + pd.Timedelta(seconds=30)
    jobs["user_name"] = np.where(np.arange(200) % 2 == 0, "light", "heavy")
    jobs["memory_gib"] = 100.0
    jobs["memory_used_gib_max"] = np.where(jobs["user_name"] == "light", 20.0, 80.0)
    assert used_share(jobs, "memory")[:2].tolist() == [0.2, 0.8]
    train = np.arange(200) < 150
    model = NeedModel(NeedSettings(quantile=0.9), "memory").fit(jobs, None, train)
    need = model.predict(jobs, None, ~train)
    light = (jobs["user_name"] == "light").to_numpy()[~train]
    assert need[light].max() < 45 < need[~light].min()


@pytest.mark.parametrize("table, message", [
    ({"memory": 1}, "[rightsize] memory must be true or false"),
    ({"memory_quantile": 1.2}, "[rightsize] memory_quantile must be from 0.05 to 0.99"),
    ({"memory_margin_pct": 150}, "[rightsize] memory_margin_pct must be from 0 to 100"),
])
def test_bad_memory_keys_are_refused_with_the_key(table, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"name": "x", "rightsize": table}, source="s.toml")
    assert "s.toml" in str(error.value) and message in str(error.value)

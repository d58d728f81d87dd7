"""Right-sizing at submit (issue 27, item 4): a job given its predicted GPUs that needed more runs out of
memory at oom_at_fraction of its run and restarts with its request (engine.sim.processes.oom_restarts);
the safety margin and classes of [rightsize] (engine.predict.size_source); Amdahl scaling of degraded
elastic jobs ([elastic_scaling], engine.world.elastic); nothing changes without the tables."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.analysis.runs.rightsize import rightsize_kpis
from engine.core.errors import ScenarioError
from engine.policies import registry
from engine.policies.bundle import Policies
from engine.predict import size_source
from engine.scenario.rightsize import RightSize
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.simulator import simulate
from engine.sim.state.workload import build_workload
from engine.world.elastic import ElasticScaling
from engine.world.facts import World

FCFS = Policies(registry.make("order", "fcfs"), registry.make("placement", "first-fit"),
                registry.make("backfill", "none"), registry.make("admission", "accept-all"))


def sized_run(rows, sized, used, nodes, oom_at=0.5):
    jobs = pd.DataFrame(rows)
    jobs["sized_gpus"], jobs["gpus_used_max"] = sized, used
    return simulate(build_workload(jobs, nodes), FCFS, 0,
                    world=World(sizing=RightSize(enabled=True, oom_at_fraction=oom_at)))


def test_a_job_given_too_little_runs_out_of_memory_half_way_and_restarts_with_its_request():
    # One 8-GPU node. j0 asks 8, is given 4, peaked at 6; j1 asks 4. Both start at 0 (4 + 4 = 8).
    # j0 fails at 0.5 x 1000 = 500 s having held 4 GPUs for 500 s: 2,000 GPU-s = 0.5556 GPU-h lost;
    # it waits with its request (8) until j1 ends at 1000 and runs 1000-2000.
    result = sized_run([job(0, 0, 1000, 8), job(1, 0, 1000, 4)], [4, np.nan], [6, 4], fleet(8))
    jobs = result.jobs
    assert jobs["start_s"].tolist() == [0.0, 0.0] and jobs["end_s"].tolist() == [2000.0, 1000.0]
    assert jobs["gpus"].tolist() == [8.0, 4.0] and jobs["sized_gpus"].tolist() == [4.0, 4.0]
    assert jobs["gpus_allocated"].tolist() == [8.0, 4.0] and jobs["oom_restarts"].tolist() == [1, 0]
    assert jobs["oom_lost_gpu_hours"].tolist() == pytest.approx([2000 / 3600, 0.0])
    oom = result.decisions[result.decisions["decision"] == "out-of-memory"]
    assert oom[["time_s", "job_id"]].values.tolist() == [[500.0, "j0"]]
    pieces = result.segments[result.segments["job_id"] == "j0"]
    assert pieces[["start_s", "end_s", "gpus_allocated", "outcome", "lost_s"]].values.tolist() == [
        [0.0, 500.0, 4.0, "out-of-memory", 500.0], [1000.0, 2000.0, 8.0, "completed", 0.0]]
    assert rightsize_kpis(result) == pytest.approx({
        "rightsized_jobs": 1, "gpus_saved_at_submit": 4.0, "sized_freed_gpu_hours": 0.0, "oom_restarts": 1,
        "oom_lost_gpu_hours": 2000 / 3600, "net_freed_gpu_hours": -2000 / 3600})


def test_the_failure_comes_at_oom_at_fraction_of_the_run():
    # oom_at_fraction 0.25: j0 fails at 250 s (4 GPUs x 250 s = 1,000 GPU-s lost), restarts at 1000 when j1 ends.
    jobs = sized_run([job(0, 0, 1000, 8), job(1, 0, 1000, 4)], [4, np.nan], [6, 4], fleet(8), oom_at=0.25).jobs
    assert jobs["end_s"].tolist() == [2000.0, 1000.0]
    assert jobs["oom_lost_gpu_hours"].tolist() == pytest.approx([1000 / 3600, 0.0])


def test_a_job_given_at_least_its_peak_runs_on_fewer_gpus_and_frees_the_rest():
    # j0 asks 8, given 4, peaked at 3: it never fails; j1 (4 GPUs) runs beside it instead of after it.
    # Freed: (8 - 4) GPUs x 1000 s = 1.111 GPU-h.
    result = sized_run([job(0, 0, 1000, 8), job(1, 0, 1000, 4)], [4, np.nan], [3, 4], fleet(8))
    assert result.jobs["end_s"].tolist() == [1000.0, 1000.0]
    kpis = rightsize_kpis(result)
    assert (kpis["oom_restarts"], kpis["sized_freed_gpu_hours"], kpis["net_freed_gpu_hours"]) == (
        0, pytest.approx(4000 / 3600), pytest.approx(4000 / 3600))


def test_a_gang_sized_to_one_node_restarts_on_both_nodes_of_its_request():
    # j0 asks 16 GPUs on 2 nodes, is given 8 (one node), peaked at 12; j1 takes the other node until 1000.
    # j0 fails at 500 (8 GPUs x 500 s lost) and runs 1000-2000 on n0 and n1.
    rows = [job(0, 0, 1000, 16, nodes=2), job(1, 0, 1000, 8)]
    jobs = sized_run(rows, [8, np.nan], [12, 8], fleet(8, 8)).jobs
    assert jobs["end_s"].tolist() == [2000.0, 1000.0]
    assert jobs["nodes"].tolist() == ["n0;n1", "n1"]
    assert jobs["oom_lost_gpu_hours"].tolist() == pytest.approx([4000 / 3600, 0.0])


class _Share:
    """A stand-in for the GPU-need model: every job is predicted to use 0.3 of its request."""

    def __init__(self, settings):
        self.settings = settings

    def fit(self, jobs, tz, rows):
        return self

    def predict(self, jobs, tz, rows):
        return 0.3 * jobs["gpus"].to_numpy(float)[rows]


def _history_and_window():
    past = [job(i, i, 100, 8) for i in range(25)]  # measured, ended before the cut at 10,000 s
    later = [job(100, 20_000, 100, 8), job(101, 20_000, 100, 16, nodes=2), job(102, 20_000, 100, 0.5),
             job(103, 20_000, 100, 8, workload_class="inference")]
    jobs = pd.DataFrame(past + later)
    for i, row in jobs.iterrows():
        jobs.loc[i, "start_utc"] = pd.Timestamp(row["submit_utc"])
        jobs.loc[i, "end_utc"] = pd.Timestamp(row["submit_utc"]) + pd.Timedelta(seconds=100)
    jobs["gpus_used_max"] = 2.0
    return jobs


@pytest.mark.parametrize("margin_pct, expected", [
    # need = 0.3 x request: 2.4 of 8 -> 3 GPUs; 4.8 of 16 (8 per node) -> 5 GPUs on one node
    (0, [3.0, 5.0]),
    # x 1.5: 3.6 -> 4; 7.2 -> 8 (one node)
    (50, [4.0, 8.0]),
    # x 2: 4.8 -> 5; 9.6 > 8 per node -> two whole nodes, 16: the request, not sized
    (100, [5.0, np.nan]),
    # x 3.5: 8.4 -> 8 at most: the request, not sized
    (250, [np.nan, np.nan]),
])
def test_the_safety_margin_is_added_to_the_prediction_before_rounding_up(monkeypatch, margin_pct, expected):
    monkeypatch.setattr(size_source, "NeedModel", _Share)
    size_source._MEMO.clear()
    jobs = _history_and_window()
    out = size_source.with_sized_gpus(jobs, T0 + pd.Timedelta(seconds=10_000), 0.9, margin_pct,
                                      frozenset({"training"}))
    later = out["sized_gpus"].to_numpy()[25:]
    np.testing.assert_array_equal(later[:2], expected)
    assert np.isnan(later[2]) and np.isnan(later[3])  # a share of a GPU is not cut; inference not chosen
    assert out["sized_gpus"].iloc[:25].isna().all()  # the model's past keeps its requests


def _degraded(elastic):
    # 4 nodes of 8; two 8-GPU jobs hold n0 and n1 for 5000 s; a training gang asks 4 nodes (32 GPUs) at 10 s
    # and is admitted on the 2 free nodes (16 GPUs).
    spec = {"name": "e", "policies": {"admission": {"key": "controls"}}}
    if elastic is not None:
        spec["elastic_scaling"] = elastic
    rows = [job(0, 0, 5000, 8, workload_class="batch"), job(1, 0, 5000, 8, workload_class="batch"),
            job(2, 10, 1000, 32, nodes=4)]
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(rows), fleet(8, 8, 8, 8)).jobs


def test_a_degraded_elastic_job_runs_by_amdahls_law_of_its_class():
    perfect = _degraded(None)
    assert perfect["run_s"].iloc[2] == pytest.approx(2000.0)  # 1000 s x 32 / 16
    # training s = 0.05: (0.05 + 0.95 / 16) / (0.05 + 0.95 / 32) = 0.109375 / 0.0796875 = 1.372549
    assert _degraded({"model": "amdahl"})["run_s"].iloc[2] == pytest.approx(1372.549, abs=1e-3)
    # s = 0.2: (0.2 + 0.8 / 16) / (0.2 + 0.8 / 32) = 0.25 / 0.225 = 1.1111
    assert _degraded({"model": "amdahl", "training_serial_fraction": 0.2})["run_s"].iloc[2] == pytest.approx(
        1111.111, abs=1e-3)
    assert ElasticScaling(model="amdahl", training_serial_fraction=0.0).runtime_scale("training", 32, 16) == 2.0


def test_without_the_tables_or_with_them_off_nothing_changes():
    rows = [job(0, 0, 5000, 8, workload_class="batch"), job(1, 0, 5000, 8, workload_class="batch"),
            job(2, 10, 1000, 32, nodes=4)]
    runs = [run_scenario(Scenario.from_dict({"name": "e", "policies": {"admission": {"key": "controls"}}, **extra}),
                         pd.DataFrame(rows), fleet(8, 8, 8, 8))
            for extra in ({}, {"rightsize": {"enabled": False}, "elastic_scaling": {"model": "perfect"}})]
    pd.testing.assert_frame_equal(runs[0].jobs, runs[1].jobs)
    pd.testing.assert_frame_equal(runs[0].decisions, runs[1].decisions)
    assert "sized_gpus" not in runs[0].jobs and rightsize_kpis(runs[0]) == {}


@pytest.mark.parametrize("table, message", [
    ({"rightsize": {"quantile": 1.5}}, "[rightsize] quantile must be from 0.05 to 0.99"),
    ({"rightsize": {"margin_pct": -5}}, "[rightsize] margin_pct must be from 0 to 100"),
    ({"rightsize": {"classes": "training,gaming"}}, "[rightsize] classes gaming unknown"),
    ({"rightsize": {"enabled": "yes"}}, "[rightsize] enabled must be true or false"),
    ({"rightsize": {"oom_at": 0.5}}, "unknown [rightsize] key oom_at"),
    ({"elastic_scaling": {"model": "gustafson"}}, "[elastic_scaling] model 'gustafson' is unknown"),
    ({"elastic_scaling": {"batch_serial_fraction": 2}}, "[elastic_scaling] batch_serial_fraction must be from 0 to 1"),
])
def test_bad_tables_are_refused_with_the_key_and_the_problem(table, message):
    with pytest.raises(ScenarioError) as error:
        Scenario.from_dict({"name": "x", **table}, source="s.toml")
    assert message in str(error.value)


def test_the_job_story_counts_the_wait_after_the_restart():
    from engine.analysis.runs.job_story import _reasons

    # j0 of the first test: out of memory at 500, started again at 1000: 500 s more waiting (blocked by capacity)
    result = sized_run([job(0, 0, 1000, 8), job(1, 0, 1000, 4)], [4, np.nan], [6, 4], fleet(8))
    log = result.decisions[result.decisions["row"] == 0][["time_s", "decision"]]
    table, total = _reasons(0.0, log, 3000.0)
    assert total == 500.0 and table["reason"].tolist() == ["blocked-by-capacity"]


def test_a_routed_job_whose_full_request_is_a_shape_of_its_own_keeps_its_price_row():
    # Shapes are numbered over the given and the asked GPUs together: 2 -> 0, 4 -> 1 (j0's request only),
    # 8 -> 2. The router's per-shape prices must have a row for each, so j1 (shape 2) routes. j0 (asks 4,
    # given 2, peaked at 3) runs on n0 (2 GPUs), j1 on n1 (8); j0 runs out of memory at 500 s, waits with
    # its request (4 GPUs: only n1 has them) until j1 ends at 1000 and runs 1000-2000.
    jobs = pd.DataFrame([job(0, 0, 1000, 4), job(1, 0, 1000, 8)])
    jobs["sized_gpus"], jobs["gpus_used_max"] = [2, np.nan], [3, 8]
    policies = replace(FCFS, routing=registry.make("routing", "cheapest"))
    result = simulate(build_workload(jobs, fleet(2, 8)), policies, 0,
                      world=World(sizing=RightSize(enabled=True)))
    assert result.jobs["end_s"].tolist() == [2000.0, 1000.0]
    assert result.jobs["oom_restarts"].tolist() == [1, 0]

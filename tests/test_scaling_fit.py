"""The serial fraction fitted per class from jobs of one project at different GPU counts
(engine.predict.scaling_fit) and `[elastic_scaling] model = "fitted"`."""
import numpy as np
import pandas as pd
import pytest
from sim_helpers import T0, fleet, job

from engine.predict.scaling_fit import MIN_GROUPS, class_fits, fit_serial_fraction, fitted_scaling
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.elastic import ElasticScaling

SIZES = (1.0, 2.0, 4.0, 8.0)


def amdahl_runs(s, groups, noise=0.0, seed=0):
    """Each group's one-GPU time 1000 x (g + 1) s, run at SIZES by Amdahl's law with serial fraction s."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), len(SIZES))
    n = np.tile(SIZES, groups)
    runtime = 1000.0 * (group + 1) * (s + (1 - s) / n) * rng.lognormal(0.0, noise, len(n))
    return group, n, runtime


@pytest.mark.parametrize("s", [0.0, 0.2, 0.65, 1.0])
def test_an_exact_amdahl_series_gives_back_its_serial_fraction(s):
    fit = fit_serial_fraction(*amdahl_runs(s, 6))
    assert fit["estimate"] == pytest.approx(s, abs=1e-5)
    assert (fit["groups"], fit["jobs"]) == (6, 24) and fit["rms_log"] == pytest.approx(0.0, abs=1e-6)


def test_with_noise_the_estimate_is_within_a_few_standard_errors():
    fit = fit_serial_fraction(*amdahl_runs(0.1, 40, noise=0.1, seed=3))
    assert 0 < fit["std_error"] < 0.05 and abs(fit["estimate"] - 0.1) < 3 * fit["std_error"]


def test_groups_at_one_gpu_count_and_bad_rows_are_dropped():
    group, n, runtime = amdahl_runs(0.3, 5)
    group = np.concatenate([group, [99, 99, 98]])
    n = np.concatenate([n, [4.0, 4.0, 0.0]])
    runtime = np.concatenate([runtime, [5.0, 50.0, 10.0]])
    fit = fit_serial_fraction(group, n, runtime)
    assert (fit["groups"], fit["jobs"]) == (5, 20) and fit["estimate"] == pytest.approx(0.3, abs=1e-5)


def _history(s, projects, workload_class="training"):
    """Completed jobs of `projects` projects at SIZES GPUs, by Amdahl's law with serial fraction s, before T0."""
    rows = []
    for p in range(projects):
        for n in SIZES:
            run_s = 1000.0 * (p + 1) * (s + (1 - s) / n)
            start = T0 - pd.Timedelta(days=10)
            rows.append(dict(job_id=f"h{p}-{int(n)}", submit_utc=start, start_utc=start,
                             end_utc=start + pd.Timedelta(seconds=run_s), gpus=n, nodes=1, gpu_type="A",
                             project=f"p{p}", workload_class=workload_class, status="completed", region="r",
                             cpus=1, memory_gib=1, requested_runtime_s=run_s, priority=0, team="t"))
    return rows


def test_the_minimum_sample_rule_falls_back_to_the_default_and_says_why():
    fits = {f.workload_class: f for f in class_fits(pd.DataFrame(_history(0.3, MIN_GROUPS - 1)))}
    training = fits["training"]
    assert not training.fitted and training.serial_fraction == 0.05 and training.estimate == pytest.approx(0.3)
    assert "4 group(s)" in training.note
    fits = {f.workload_class: f for f in class_fits(pd.DataFrame(_history(0.3, 8)))}
    assert fits["training"].fitted and fits["training"].serial_fraction == pytest.approx(0.3, abs=1e-5)
    assert not fits["batch"].fitted and fits["batch"].serial_fraction == 0.1  # no batch jobs: the default


def test_only_jobs_ended_before_the_cut_are_learnt_from():
    jobs = pd.DataFrame(_history(0.3, 8))
    assert fitted_scaling(ElasticScaling(model="fitted"), jobs, T0 - pd.Timedelta(days=20)).fitted == ()
    assert dict(fitted_scaling(ElasticScaling(model="fitted"), jobs, T0).fitted)["training"] == pytest.approx(0.3,
                                                                                                            abs=1e-5)


def test_a_degraded_elastic_job_runs_by_the_fitted_fraction():
    # History: 8 training projects at 1-8 GPUs with s = 0.2, all ended before the window's start (T0).
    # In the window (as in test_rightsize_at_submit): two batch jobs hold 2 of 4 nodes; a training gang asks
    # 4 nodes (32 GPUs) at 10 s and is admitted on 2 (16): (0.2 + 0.8 / 16) / (0.2 + 0.8 / 32) = 1.1111 x 1000 s.
    window = [job(0, 0, 5000, 8, workload_class="batch"), job(1, 0, 5000, 8, workload_class="batch"),
              job(2, 10, 1000, 32, nodes=4)]
    jobs = pd.DataFrame(_history(0.2, 8) + window)
    spec = {"name": "f", "workload": {"start_utc": T0.isoformat()}, "policies": {"admission": {"key": "controls"}}}
    runs = {model: run_scenario(Scenario.from_dict({**spec, "elastic_scaling": {"model": model}}), jobs,
                                fleet(8, 8, 8, 8)).jobs for model in ("fitted", "amdahl")}
    assert runs["fitted"]["run_s"].iloc[2] == pytest.approx(1111.111, abs=1e-3)
    # amdahl keeps training's default 0.05: (0.05 + 0.95 / 16) / (0.05 + 0.95 / 32) = 1.372549
    assert runs["amdahl"]["run_s"].iloc[2] == pytest.approx(1372.549, abs=1e-3)

"""Simulation KPIs: exact values on a hand-built run, and golden runs on the bundled sample data."""
import pytest

from engine.analysis.sim_metrics import kpis, wait_reasons, waits_by
from engine.scenario import Scenario
from engine.telemetry.sample import ensure_sample
from engine.telemetry.store import Store
from sim_helpers import fleet, job, run
from test_scenario import SCENARIOS


def _hand_run():
    # starts 0, 100, 100; ends 100, 150, 110; waits 0, 90, 80 on one 4-GPU node.
    jobs = [job(0, 0, 100, 3, workload_class="training"), job(1, 10, 50, 2, workload_class="inference"),
            job(2, 20, 10, 1, workload_class="training", status="failed")]
    return run(jobs, fleet(4))


def test_kpis_exact():
    k = kpis(_hand_run())
    assert k["utilization"] == pytest.approx(410 / 600, abs=1e-12)
    assert k["idle_gpu_hours"] == pytest.approx(190 / 3600, abs=1e-12)
    assert k["wait_mean_s"] == pytest.approx(170 / 3, abs=1e-12)
    assert (k["wait_p50_s"], k["wait_p95_s"]) == (80.0, pytest.approx(89.0))
    assert k["wait_p99_s"] == pytest.approx(89.8)
    assert k["avg_bounded_slowdown"] == pytest.approx((1 + 2.8 + 9) / 3, abs=1e-12)
    assert (k["makespan_s"], k["jobs_completed"], k["jobs_failed"], k["jobs_not_run"]) == (150.0, 2, 1, 0)
    assert k["throughput_jobs_per_hour"] == pytest.approx(72.0)


def test_bounded_slowdown_tau_is_a_parameter():
    assert kpis(_hand_run(), tau_s=20.0)["avg_bounded_slowdown"] == pytest.approx((1 + 2.8 + 4.5) / 3)


def test_waits_by_class_and_reasons():
    result = _hand_run()
    table = waits_by(result)
    assert table["workload_class"].tolist() == ["inference", "training"]
    assert table["jobs"].tolist() == [1, 2]
    assert table["wait_mean_s"].tolist() == [90.0, 40.0]
    assert waits_by(result, "team")["jobs"].tolist() == [3]
    assert wait_reasons(result).to_dict("list") == {
        "reason": ["blocked-by-capacity", "started", "waiting-in-queue"], "jobs": [1, 1, 1]}


def test_empty_result_has_zero_kpis():
    k = kpis(run([job(0, 0, 10, 9)], fleet(4)))
    assert k["jobs_not_run"] == 1 and k["utilization"] == 0.0 and k["makespan_s"] == 0.0


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    store = Store.open(tmp_path_factory.mktemp("db") / "m.duckdb")
    ensure_sample(store)
    tables = store.jobs("sample"), store.fleet("sample")
    store.close()
    return tables


def _scenario(name, **workload):
    loaded = Scenario.load(SCENARIOS / f"{name}.toml").policies
    policies = {family: {"key": key, **params} for family, (key, params) in loaded.items()}
    return Scenario.from_dict({"name": name, "policies": policies, "workload": workload})


# Golden KPIs, recorded from this implementation; a change here must be explained.
GOLDEN_3_DAYS = {
    "fifo": {"utilization": 0.1796494246546349, "idle_gpu_hours": 224287.04666666666,
             "wait_mean_s": 2436.048051567536, "wait_p50_s": 0.0, "wait_p95_s": 14957.0,
             "wait_p99_s": 26269.16000000001, "avg_bounded_slowdown": 3.5049644986187074, "makespan_s": 745647.0,
             "jobs_completed": 3206, "jobs_failed": 207, "jobs_not_run": 0,
             "throughput_jobs_per_hour": 16.478038535660975},
    "easy-backfill": {"utilization": 0.17986096989064349, "idle_gpu_hours": 223965.48,
                      "wait_mean_s": 2178.174333430999, "wait_p50_s": 0.0, "wait_p95_s": 14599.799999999981,
                      "wait_p99_s": 25925.640000000007, "avg_bounded_slowdown": 3.4211333223061726,
                      "makespan_s": 744770.0, "jobs_completed": 3206, "jobs_failed": 207, "jobs_not_run": 0,
                      "throughput_jobs_per_hour": 16.497442163352446},
}


@pytest.mark.parametrize("name", sorted(GOLDEN_3_DAYS))
def test_golden_first_three_days_of_the_sample(sample, name):
    result = _scenario(name, start_utc="2026-08-03", end_utc="2026-08-06").run(*sample)
    assert kpis(result) == pytest.approx(GOLDEN_3_DAYS[name], rel=1e-9, abs=1e-9)


GOLDEN_FIFO = {"utilization": 0.391675592397179, "idle_gpu_hours": 2459262.0516666668,
               "wait_mean_s": 32167.6467960049, "wait_p50_s": 2517.0, "wait_p95_s": 168985.99999999997,
               "wait_p99_s": 320408.6800000003, "avg_bounded_slowdown": 22.658224070528185, "makespan_s": 11025496.0,
               "jobs_completed": 86704, "jobs_failed": 5509, "jobs_not_run": 0,
               "throughput_jobs_per_hour": 30.10901278273558}


@pytest.mark.slow
def test_golden_fifo_on_the_whole_sample(sample):
    result = Scenario.load(SCENARIOS / "fifo.toml").run(*sample)
    assert kpis(result) == pytest.approx(GOLDEN_FIFO, rel=1e-9, abs=1e-9)

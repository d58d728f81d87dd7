"""Burst to cloud (issue 4, item 3): [[burst]] pools rent cloud nodes after a provisioning delay when
a region's queue backs up, return them when idle, and bill them from renting to return."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shown
from sim_helpers import fleet, job

from engine.analysis.runs.cost import cost_report
from engine.analysis.runs.sim_metrics import kpis
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "sample_data" / "scenarios"
POOL = {"region": "r", "gpu_type": "A", "max_nodes": 2, "provision_min": 10, "trigger_wait_min": 30,
        "idle_release_min": 30, "usd_per_gpu_hour": 5.0}


def burst_run(rows, nodes=None, **pool):
    return run_scenario(Scenario.from_dict({"name": "t", "burst": [{**POOL, **pool}]}), pd.DataFrame(rows),
                                                                            fleet(8) if nodes is None else nodes)


def rentals(result) -> list[tuple]:
    return [(r.node, r.rented_s, r.up_s, r.returned_s) for r in result.burst.itertuples()]


def test_a_queue_head_waiting_past_the_trigger_rents_a_node_that_comes_up_after_the_delay():
    # r has one 8-GPU node. j0 holds it 0-7200 s; j1 (8 GPUs) arrives at 60 and heads the queue. At
    # 60 + 30 min = 1860 a node is rented; it is up 10 min later (2460) and j1 starts on it, ending at
    # 6060; after 30 idle minutes (7860) it goes back.
    result = burst_run([job(0, 0, 7200, 8), job(1, 60, 3600, 8)])
    assert result.jobs["start_s"].tolist() == [0.0, 2460.0]
    assert result.jobs["nodes"].tolist() == ["n0", "burst-r-A-1"]
    assert rentals(result) == [("burst-r-A-1", 1860.0, 2460.0, 7860.0)]
    assert result.burst["trigger_job_id"].tolist() == ["j1"]
    assert result.capacity_gpus == {"r": 8.0}  # burst GPUs are not installed capacity
    # The window ends at the data's end (7200 s): billed 8 GPUs x (7200 - 1860) s, usable from 2460.
    k = kpis(result)
    assert k["burst_rentals"] == 1
    assert k["burst_gpu_hours"] == pytest.approx(8 * (7200 - 1860) / 3600)
    held = 8 * 7200 + 8 * 3600
    assert k["utilization"] == pytest.approx(held / (8 * 7200 + 8 * (7200 - 2460)))


def test_without_the_wait_nothing_is_rented_and_the_result_is_the_plain_one():
    rows = [job(0, 0, 1000, 8), job(1, 60, 600, 8)]  # j1 waits 940 s < 30 min
    result = burst_run(rows)
    plain = run_scenario(Scenario.from_dict({"name": "t"}), pd.DataFrame(rows), fleet(8))
    assert result.jobs["start_s"].tolist() == plain.jobs["start_s"].tolist() == [0.0, 1000.0]
    assert len(result.burst) == 0 and plain.burst is None
    assert kpis(result)["utilization"] == kpis(plain)["utilization"]


def test_a_job_on_an_idle_node_cancels_its_return_and_the_node_is_returned_after_its_own_idle_time():
    # As the first test, and j2 arrives at 6500 while n0 is still busy: it takes the idle burst node
    # (idle since 6060), so the 7860 deadline lapses; j2 ends at 7100 and the node goes back at 8900.
    result = burst_run([job(0, 0, 7200, 8), job(1, 60, 3600, 8), job(2, 6500, 600, 8)])
    assert result.jobs["start_s"].tolist() == [0.0, 2460.0, 6500.0]
    assert rentals(result) == [("burst-r-A-1", 1860.0, 2460.0, 8900.0)]


def test_the_region_rents_for_every_waiting_gpu_up_to_the_pool_size():
    # Three 8-GPU jobs wait behind j0: ceil(24 / 8) = 3 nodes wanted, the pool has 2.
    rows = [job(0, 0, 9000, 8), *(job(i, 60, 3600, 8) for i in (1, 2, 3))]
    result = burst_run(rows)
    assert [r[:3] for r in rentals(result)] == [("burst-r-A-1", 1860.0, 2460.0), ("burst-r-A-2", 1860.0, 2460.0)]
    assert result.jobs["start_s"].tolist() == [0.0, 2460.0, 2460.0, 6060.0]  # j3 after j1 on a burst node


def test_a_head_the_pool_cannot_serve_rents_nothing():
    # j1 wants GPU type B; the pool rents A nodes.
    nodes = fleet(8, 8, gpu_type=["A", "B"])
    result = burst_run([job(0, 0, 9000, 8, gpu_type="B"), job(1, 60, 600, 8, gpu_type="B")], nodes)
    assert len(result.burst) == 0
    assert result.jobs["start_s"].tolist() == [0.0, 9000.0]


def test_an_evicted_job_heading_the_queue_again_rents_a_node():
    # j0 (hpo: preemptible, no checkpoints) holds the one 8-GPU node from 0 s; j1 (development,
    # express tier) arrives at 100 and evicts it. j0, requeued with all 5000 s of work left, heads
    # the queue: it has waited since its submit, so the check at 0 + 30 min rents a node, up at 2400,
    # where j0 runs again (to 7400). A head that had started once used to rent nothing and wait for j1.
    rows = [job(0, 0, 5000, 8, workload_class="hpo"), job(1, 100, 6000, 8, workload_class="development")]
    result = run_scenario(Scenario.from_dict({"name": "t", "burst": [POOL], "policies": {
        "preemption": {"key": "priority", "min_runtime_s": 0.0}}}), pd.DataFrame(rows), fleet(8))
    assert result.jobs["preemptions"].tolist() == [1, 0]
    assert result.segments[["job_id", "nodes", "start_s", "end_s"]].values.tolist() == [
        ["j0", "n0", 0.0, 100.0], ["j1", "n0", 100.0, 6100.0], ["j0", "burst-r-A-1", 2400.0, 7400.0]]
    assert rentals(result) == [("burst-r-A-1", 1800.0, 2400.0, 7400.0 + 1800.0)]


def test_cost_bills_rentals_from_renting_to_return_and_reconciles():
    result = burst_run([job(0, 0, 7200, 8), job(1, 60, 3600, 8)])
    nodes = fleet(8)
    report = cost_report(result, nodes, pd.DataFrame(columns=["region", "gpu_type", "tier", "usd_per_gpu_hour",
                                                             "assumed"]))
    row = report.spend[report.spend["tier"] == "burst"].iloc[0]
    billed = 8 * (7200 - 1860) / 3600
    assert (row["installed_gpus"], row["gpu_hours_used"]) == (0.0, 8.0)
    assert row["gpu_hours_paid"] == pytest.approx(billed)
    assert row["usd"] == pytest.approx(billed * 5.0)
    assert row["idle_usd"] == pytest.approx((billed - 8.0) * 5.0)
    assert report.totals["usd_burst"] == pytest.approx(billed * 5.0)
    assert report.jobs.set_index("job_id").loc["j1", "usd"] == pytest.approx(8.0 * 5.0)
    assert report.jobs["usd"].sum() + report.totals["idle_usd"] == pytest.approx(report.totals["usd"])


def test_no_job_ever_runs_on_a_burst_node_outside_its_rentals_on_random_workloads():
    for seed in range(4):
        rng = np.random.default_rng(seed)
        rows = [job(i, float(t), float(rng.integers(300, 6000)), int(rng.choice([1, 2, 4, 8])))
                for i, t in enumerate(np.sort(rng.integers(0, 20_000, 60)))]
        result = burst_run(rows, fleet(8, 8), max_nodes=3, provision_min=5, trigger_wait_min=10,
                           idle_release_min=10)
        assert len(result.burst)
        spans = result.burst.fillna({"returned_s": np.inf})
        on_burst = result.segments[result.segments["nodes"].str.startswith("burst-")]
        assert len(on_burst)
        for piece in on_burst.itertuples():
            mine = spans[spans["node"] == piece.nodes]
            end = piece.end_s if piece.end_s == piece.end_s else np.inf
            assert ((mine["up_s"] <= piece.start_s) & (end <= mine["returned_s"])).any(), piece
        again = burst_run(rows, fleet(8, 8), max_nodes=3, provision_min=5, trigger_wait_min=10,
                          idle_release_min=10)
        pd.testing.assert_frame_equal(result.burst, again.burst)


@pytest.mark.parametrize("entry, message", [
    ({"gpu_type": "A"}, "region is required"),
    ({"region": "r"}, "gpu_type is required"),
    ({"region": "r", "gpu_type": "A", "max_nodes": 0}, "max_nodes must be a whole number from 1 to 10,000"),
    ({"region": "r", "gpu_type": "A", "gpus_per_node": 2.5}, "gpus_per_node must be a whole number from 1 to 64"),
    ({"region": "r", "gpu_type": "A", "provision_min": -1}, "provision_min must be a number >= 0"),
    ({"region": "r", "gpu_type": "A", "cpus_per_node": 0}, "cpus_per_node must be a number > 0"),
    ({"region": "r", "gpu_type": "A", "nodes": 2}, "unknown key(s) nodes; valid: region, gpu_type, max_nodes"),
])
def test_bad_burst_entries_are_named(entry, message):
    with pytest.raises(ScenarioError, match=None) as caught:
        Scenario.from_dict({"name": "t", "burst": [entry]}, source="s.toml")
    assert message in str(caught.value) and "s.toml: [[burst]] #1" in str(caught.value)


def test_a_pool_in_a_region_the_fleet_lacks_is_refused_with_the_regions():
    scenario = Scenario.from_dict({"name": "t", "burst": [{**POOL, "region": "mars"}]})
    with pytest.raises(ScenarioError, match="region 'mars' is not in the fleet; its regions: r"):
        run_scenario(scenario, pd.DataFrame([job(0, 0, 100, 8)]), fleet(8))


@pytest.fixture(scope="module")
def sample_tables(sample_db):
    from engine.telemetry.store import Store
    from engine.world.facts import World

    store = Store.open(sample_db, read_only=True)
    try:
        return store.jobs("sample"), store.fleet("sample"), World.of_dataset(store, "sample")
    finally:
        store.close()


def test_burst_to_cloud_on_the_sample_week_halves_the_p95_wait_for_its_bill(sample_tables):
    # burst-to-cloud.toml is easy-backfill.toml plus pools in us-west (H100) and ap-south (A100);
    # the figures are pinned as measured (deterministic) on the sample's first 7 days. Re-measured on
    # 2026-12-02: users now give up on the scale-out inference replicas the telemetry withdrew (they
    # used to wait for their 24 h requests and trigger rentals: 96 -> 25), and the week is measured
    # over its own 168 h (dollars inside it).
    from engine.analysis.runs.world_kpis import world_kpis

    jobs, fleet_table, world = sample_tables
    start = pd.Timestamp(jobs["submit_utc"].min())
    week = {"start_utc": start, "end_utc": start + pd.Timedelta(days=7)}
    out = {}
    for name in ("easy-backfill", "burst-to-cloud"):
        scenario = replace(Scenario.load(SCENARIOS / f"{name}.toml"), **week)
        result = run_scenario(scenario, jobs, fleet_table, world)
        out[name] = {**kpis(result), **world_kpis(result, scenario.apply(jobs, fleet_table)[1], world.prices,
                                                  world.regions, world.carbon, jobs=jobs)}
    before, after = out["easy-backfill"], out["burst-to-cloud"]
    assert (before["wait_p95_s"], after["wait_p95_s"]) == pytest.approx((19983.5, 8991.95))
    assert (before["avg_bounded_slowdown"], after["avg_bounded_slowdown"]) == pytest.approx((4.6088, 2.9373), abs=1e-4)
    assert (before["burst_rentals"], after["burst_rentals"]) == (0, 25)
    assert after["burst_gpu_hours"] == pytest.approx(3861.65, abs=0.01)
    assert after["cost_burst_usd"] == pytest.approx(13883.5, abs=0.1)
    assert after["cost_usd"] - before["cost_usd"] == pytest.approx(11886.6, abs=0.1)


def test_the_cost_page_shows_what_each_region_rented_and_paid(sample_db, monkeypatch):
    import sys

    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(sample_db)])
    at = AppTest.from_file(str(SCENARIOS.parents[1] / "dashboard" / "app.py"), default_timeout=120)
    at.session_state["cc_scenarios"] = ["burst-to-cloud"]
    at.switch_page("app_pages/data.py").run()  # a first run (not the Overview, which would price the sample)
    at.switch_page("app_pages/costcarbon.py").run()
    assert not at.exception, at.exception
    assert not at.error, [shown(e) for e in at.error]
    table = [d.value for d in at.dataframe if "rentals" in d.value.columns][0]
    assert list(table["scenario"]) == ["burst-to-cloud", "burst-to-cloud"]
    assert list(table["region"]) == ["ap-south", "us-west"] and list(table["GPU type"]) == ["A100", "H100"]
    assert table["rentals"].sum() == 25 and table["spend (USD)"].sum() == pytest.approx(13883.5, abs=0.1)
    assert (table["most nodes at once"] <= 4).all() and (table["GPU-hours used"] <= table["GPU-hours billed"]).all()
    assert any("billed from renting to return" in shown(c) for c in at.caption)

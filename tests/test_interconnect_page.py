"""The What-if page's interconnect section (issue 27, item 2) through Streamlit's AppTest, and the
figures it draws (engine.analysis.runs.interconnect), on a hand-built fleet of two racks."""
import pandas as pd
import pytest
from conftest import shown
from test_whatif_page import whatif_app

from engine.analysis.runs.interconnect import interconnect_kpis, savings, summary
from engine.analysis.runs.sim_metrics import kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.batch import ImportBatch

T = pd.Timestamp
# Four 8-GPU nodes, n1 and n3 in rack k0, n2 and n4 in k1; one 2-node training job of 10 h. Lowest-index
# gangs take n1 + n2 (two racks: 0.7 + 0.3 x 400 / 200 = 1.3, 13 h, 3 h x 16 GPUs = 48 GPU-hours lost);
# the topology policy keeps it in k0 (10 h).
RACKS = ImportBatch("csv", {
    "jobs": pd.DataFrame({
        "job_id": ["t"], "workload_class": ["training"], "submit_utc": [T("2024-03-04 00:00")],
        "start_utc": [T("2024-03-04 00:00")], "end_utc": [T("2024-03-04 10:00")], "requested_runtime_s": [36000.0],
        "gpus": [16.0], "nodes": [2], "gpu_type": ["H100"], "region": ["eu"], "status": ["completed"]}),
    "fleet": pd.DataFrame({"region": ["eu"] * 4, "cluster": ["c"] * 4, "node": ["n1", "n2", "n3", "n4"],
                           "gpu_type": ["H100"] * 4, "gpus": [8] * 4, "rack": ["k0", "k1", "k0", "k1"],
                           "tier": ["reserved"] * 4}),
    "regions": pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Berlin"]}),
})
NAMES = ["conservative-interconnect", "topology-interconnect"]


def _runs():
    jobs, fleet = RACKS.tables["jobs"], RACKS.tables["fleet"]
    return [run_scenario(Scenario.from_dict({"name": n, "policies": {"gang": g}, "interconnect": {}}), jobs, fleet)
            for n, g in zip(NAMES, ("lowest-index", "topology"))]


def test_the_summary_and_the_saving_are_computed_by_hand():
    spread, kept = _runs()
    assert interconnect_kpis(spread) == pytest.approx({"multi_node_starts": 1, "spread_starts": 1,
                                                       "cross_cluster_starts": 0, "interconnect_mean_slowdown": 1.3,
                                                       "interconnect_extra_gpu_hours": 48.0})
    assert kpis(kept)["interconnect_extra_gpu_hours"] == 0.0
    table = summary(NAMES, [spread, kept])
    assert table["multi_node_jct_h"].tolist() == pytest.approx([13.0, 10.0])
    assert savings(table) == ["topology-interconnect spread 0 multi-node starts over racks or clusters against 1 "
                              "under conservative-interconnect: 48 GPU-hours less running on slow links, and its "
                              "multi-node jobs finished 3.00 h sooner on average (10.00 h against 13.00 h)."]
    assert interconnect_kpis(run_scenario(Scenario.from_dict({"name": "off"}), RACKS.tables["jobs"],
                                          RACKS.tables["fleet"])) == {}


def test_whatif_says_what_the_rack_aware_policy_saved(tmp_path, monkeypatch):
    app = whatif_app(tmp_path, monkeypatch, RACKS)
    app.multiselect(key="wi_candidates").set_value(NAMES)
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert "Interconnect" in [shown(h) for h in app.subheader]
    table = next(d.value for d in app.dataframe if "spread_starts" in d.value.columns)
    assert table["scenario"].tolist() == NAMES and table["spread_starts"].tolist() == [1, 0]
    said = " ".join(shown(m) for m in app.markdown)
    assert "48 GPU-hours less running on slow links" in said and "3.00 h sooner" in said

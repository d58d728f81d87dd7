"""The What-if page through Streamlit's AppTest, and the series it draws, on a tiny queue."""
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

from engine.analysis.runs.catalogue import CATALOGUE, shown_comparison
from engine.analysis.runs.catalogue import shown as shown_kpi
from engine.analysis.runs.matching import KPI_KEYS as MATCHING_KPIS
from engine.analysis.runs.sim_metrics import kpis
from engine.analysis.runs.sim_series import (
    fleet_series,
    group_comparison,
    kpi_comparison,
    region_series,
    wait_ecdf,
    why_waited,
)
from engine.analysis.runs.stranded import stranded_kpis
from engine.core.text import hours
from engine.policies import registry
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store

REPO = Path(__file__).parents[1]
APP = str(REPO / "dashboard" / "app.py")
SCENARIOS = REPO / "sample_data" / "scenarios"
T = pd.Timestamp
STRANDED_KPIS = stranded_kpis(pd.DataFrame(columns=["time_s", "region", "idle_gpus", "order_gpus", "elsewhere_gpus",
                                                    "fragmented_gpus", "nodes_in_use", "partial_idle_gpus"]), 900.0)

# One 4-GPU node. a holds 2 GPUs for 2 h; b wants all 4 (blocked until a ends); c wants 2 for 30 min:
# FIFO keeps c behind b (c waits 2 h 58 min), EASY backfills c at once (it ends long before b's reservation).
QUEUE = ImportBatch("csv", {
    "jobs": pd.DataFrame({
        "job_id": ["a", "b", "c"], "workload_class": ["training", "training", "batch"],
        "submit_utc": [T("2024-03-04 00:00"), T("2024-03-04 00:01"), T("2024-03-04 00:02")],
        "start_utc": [T("2024-03-04 00:00"), T("2024-03-04 02:00"), T("2024-03-04 03:00")],
        "end_utc": [T("2024-03-04 02:00"), T("2024-03-04 03:00"), T("2024-03-04 03:30")],
        "requested_runtime_s": [7200.0, 3600.0, 1800.0],
        "gpus": [2.0, 4.0, 2.0], "gpu_type": ["H100"] * 3, "region": ["eu"] * 3,
        "status": ["completed"] * 3}),
    "fleet": pd.DataFrame({"region": ["eu"], "node": ["n1"], "gpu_type": ["H100"], "gpus": [4], "tier": ["reserved"]}),
    "regions": pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Berlin"]}),
})


def _engine_runs():
    jobs, fleet = QUEUE.tables["jobs"], QUEUE.tables["fleet"]
    return {name: run_scenario(Scenario.load(SCENARIOS / f"{name}.toml"), jobs, fleet) for name in ("fifo", "easy-backfill")}


def _kpi_table(at):
    """The What-if KPI table's figures as shown (its label column, from the KPI catalogue, checked and dropped)."""
    table = [d.value for d in at.dataframe if "fifo" in d.value.columns][0]
    assert table.columns[0] == "what"
    assert all(table.loc[key, "what"] == CATALOGUE[key].label for key in table.index if key in CATALOGUE)
    return table.drop(columns=["what"])


@pytest.fixture
def app(tmp_path, monkeypatch):
    return whatif_app(tmp_path, monkeypatch, QUEUE)


def whatif_app(tmp_path, monkeypatch, batch: ImportBatch) -> AppTest:
    """The What-if page on a database holding `batch` as dataset "queue", fifo the baseline, one headroom seed."""
    db = tmp_path / "meridian.duckdb"
    store = Store.open(db)
    store.add_import("queue", batch, "queue.csv", "sha-queue")
    store.close()
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = "queue"  # not the sample's Overview first: it prices the whole sample
    at.switch_page("app_pages/whatif.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="wi_baseline").value == "recorded"   # the default: how the data was scheduled
    at.selectbox(key="wi_baseline").select("fifo").run()   # these tests compare fifo's figures
    at.number_input(key="wi_seeds").set_value(1).run()
    return at


def _kpi_tiles(app):
    """The KPI tiles, without the headroom headline's (labelled "<scenario>: ...")."""
    return [m for m in app.metric if ": " not in m.label]


def test_the_engine_waits_differ_between_fifo_and_easy():
    runs = _engine_runs()
    fifo, easy = (r.jobs.set_index("job_id") for r in runs.values())
    assert fifo.loc["c", "wait_s"] == 2 * 3600 + 58 * 60 and easy.loc["c", "wait_s"] == 0.0
    assert why_waited(runs["fifo"], "c")["reason"] == "blocked-by-capacity"
    series = fleet_series(runs["easy-backfill"], points=5)
    assert list(series["time_s"]) == [0.0, 2700.0, 5400.0, 8100.0, 10800.0]
    assert list(series["busy_gpus"]) == [2.0, 2.0, 2.0, 4.0, 0.0]
    assert list(series["idle_gpus"]) == [2.0, 2.0, 2.0, 0.0, 4.0]
    regions = region_series(runs["easy-backfill"], points=5)
    assert regions[["region", "busy_gpus", "idle_gpus"]].to_dict("list") == {
        "region": ["eu"] * 5, "busy_gpus": [2.0, 2.0, 2.0, 4.0, 0.0], "idle_gpus": [2.0, 2.0, 2.0, 0.0, 4.0]}
    assert regions["time_utc"].iloc[1] == T("2024-03-04 00:45")
    ecdf = wait_ecdf(runs["fifo"])
    assert ecdf.to_dict("list") == {"workload_class": ["batch", "training", "training"],
                                   "wait_s": [10680.0, 0.0, 7140.0], "fraction": [1.0, 0.5, 1.0]}


def test_whatif_compares_fifo_with_easy_backfill(app):
    assert app.multiselect(key="wi_candidates").value == ["easy-backfill"]
    app.number_input(key="wi_days").set_value(1.0)
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error
    runs = _engine_runs()
    expected = kpi_comparison([(name, kpis(r)) for name, r in runs.items()])
    table = _kpi_table(app)
    assert list(table.columns) == ["fifo", "easy-backfill", "easy-backfill Δ", "easy-backfill Δ%"]
    # the simulation's KPIs, each in its catalogue format (no seconds, no 4-decimal floats), then resource matching,
    # day-start wait and stranded ones
    pd.testing.assert_frame_equal(table.loc[expected.index], shown_comparison(expected).drop(columns="what"))
    day_start = ["day_start_wait_jobs", "day_start_wait_mean_s"]
    assert list(table.index[len(expected):]) == [*MATCHING_KPIS, *day_start, *STRANDED_KPIS]
    # a and b (training, 4 + 4 GPU-hours) on H100 in the standard queue fit; c (batch, 1 GPU-hour) is in the batch
    # queue but H100 is not a batch GPU type: 8 of 9 GPU-hours matched
    assert table.loc["resource_matching", "fifo"] == table.loc["gpu_type_matching", "easy-backfill"] == "88.9 %"
    assert table.loc["queue_matching", "fifo"] == "100.0 %"
    assert table.loc["wait_p95_s", "fifo"] == "2.9 h" and table.loc["utilization", "fifo"].endswith(" %")
    # FIFO keeps c (2 GPUs) waiting 2 h 58 min behind b while 2 GPUs sit free: stranded in its own region
    assert table.loc["stranded_order_gpu_hours", "fifo"] != "0" == table.loc["stranded_order_gpu_hours", "easy-backfill"]
    assert table.loc["wait_p95_s", "easy-backfill Δ"].startswith("-")
    assert any("jobs submitted from 2024-03-04 00:00 to 2024-03-05 00:00 UTC (3 jobs)" in shown(i)
               for i in app.info)
    assert table.loc["jct_p95_s", "fifo"] == shown_kpi("jct_p95_s", 10740 + 0.9 * (12480 - 10740))
    assert len(app.get("plotly_chart")) == 6
    assert [m.label for m in _kpi_tiles(app)][:7] == ["Utilisation", "p50 wait", "p95 wait", "p95 completion time",
                                                      "Avg bounded slowdown", "Idle GPU-hours", "Fragmented idle GPUs"]
    assert len(_kpi_tiles(app)) == 14
    # p95 waits 10,326 s (FIFO) and 6,426 s (EASY); p95 JCTs 12,306 s and 10,386 s
    tiles = {(i // 7, m.label): (m.value, m.delta) for i, m in enumerate(_kpi_tiles(app))}
    frag = expected.loc["frag_gpu_pct_of_idle", ["fifo", "easy-backfill"]].tolist()
    assert tiles[0, "Fragmented idle GPUs"][0] == f"{frag[0]:.1f}%"
    assert tiles[1, "Fragmented idle GPUs"] == (f"{frag[1]:.1f}%", f"{frag[1] - frag[0]:+.1f} pts")
    assert tiles[0, "p95 wait"] == ("2.9 h", "") and tiles[1, "p95 wait"] == ("1.8 h", "-1.1 h")
    assert tiles[1, "p95 completion time"] == ("2.9 h", "-32 min") and tiles[0, "p95 completion time"][0] == "3.4 h"
    _assert_group_tables(app, runs)
    app.selectbox(key="wi_lookup_scenario").select("fifo").run()
    app.selectbox(key="wi_lookup_job").select("c").run()
    text = " ".join(shown(m) for m in app.markdown)
    assert "Job c (batch, 2 GPUs, eu) waited 2 h 58 min in fifo: blocked-by-capacity." in text
    app.button(key="wi_open_job").click().run()   # the one job view, in the What-if run's window
    assert app.session_state["job_view"] == {"job_id": "c", "scenario": "fifo", "days": 1.0, "at": None,
                                             "page": "What-if"}
    app.switch_page("app_pages/job.py").run()
    assert not app.exception, app.exception
    text = " ".join(shown(m) for m in app.markdown)
    assert "**starts 2024-03-04 03:00 UTC** after waiting **2 h 58 min**" in text
    assert ("Why it waited: 66% behind other jobs in the queue (1 h 58 min); 34% first in line, but no node had room "
            "for it (1 h).") in text


def _assert_group_tables(app, runs):
    # FIFO: c (batch, 2 GPUs x 30 min) waits 2 h 58 min behind b; EASY backfills it at once.
    by_class = [d.value for d in app.dataframe if {"workload_class", "scenario"} <= set(d.value.columns)][0]
    expected = group_comparison(list(runs.items()), "workload_class")
    hours = [c for c in expected.columns if c.endswith("_s")]   # the page shows hours, not seconds
    pd.testing.assert_frame_equal(by_class, expected.assign(**{c: expected[c] / 3600 for c in hours}))
    assert by_class[["workload_class", "scenario", "jobs", "wait_mean_s", "jct_mean_s", "gpu_hours"]].to_dict(
        "list") == {"workload_class": ["batch", "batch", "training", "training"],
                    "scenario": ["fifo", "easy-backfill"] * 2, "jobs": [1, 1, 2, 2],
                    "wait_mean_s": pytest.approx([10680 / 3600, 0.0, 3570 / 3600, 3570 / 3600]),
                    "jct_mean_s": pytest.approx([12480 / 3600, 0.5, 8970 / 3600, 8970 / 3600]),
                    "gpu_hours": [1.0, 1.0, 8.0, 8.0]}
    training = (1 + 10740 / 3600) / 2   # a: 1; b: (7140 s wait + 3600 s run) / 3600 s
    assert by_class["avg_bounded_slowdown"].tolist() == pytest.approx([12480 / 1800, 1.0, training, training])
    by_team = [d.value for d in app.dataframe if {"team", "scenario"} <= set(d.value.columns)][0]
    assert by_team[["team", "scenario", "jobs", "finished"]].to_dict("list") == {
        "team": ["(none)", "(none)"], "scenario": ["fifo", "easy-backfill"], "jobs": [3, 3], "finished": [3, 3]}


def test_custom_scenario_widgets_cover_every_family(app):
    for family, keys in registry.families().items():
        box = app.selectbox(key=f"custom:{family}")
        assert box.options == keys
    app.selectbox(key="custom:placement").select("best-fit").run()
    assert app.number_input(key="custom:placement:best-fit:cpu_weight").value == 0.5
    app.selectbox(key="custom:admission").select("queue-length-limit").run()
    assert app.number_input(key="custom:admission:queue-length-limit:max_queued").value == 1000


def test_a_learned_order_runs_from_the_builder_with_a_packaged_agent(app):
    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    app.selectbox(key="custom:order").select("rl").run()
    assert app.text_input(key="custom:order:rl:model").value == "lublin-1"
    app.button(key="wi_run").click().run()
    assert not app.exception and not app.error, [shown(e) for e in app.error]
    table = _kpi_table(app)
    assert "custom" in table.columns and table.loc["jobs_completed", "custom"] == "3"


def test_a_batch_placement_search_runs_from_the_builder(app):
    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    app.selectbox(key="custom:placement").select("hybrid").run()
    assert app.number_input(key="custom:placement:hybrid:max_moves").value == 300
    app.button(key="wi_run").click().run()
    assert not app.exception and not app.error, [shown(e) for e in app.error]
    table = _kpi_table(app)
    assert "custom" in table.columns and table.loc["jobs_completed", "custom"] == "3"


def test_an_invalid_custom_scenario_is_an_error_message(app):
    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    app.selectbox(key="custom:admission").select("queue-length-limit").run()
    widget = app.number_input(key="custom:admission:queue-length-limit:max_queued")
    assert (widget.min, widget.max) == (0, 1_000_000_000)   # the parameter's range (engine.core.bounds)
    app.selectbox(key="custom:admission").select("controls").run()
    app.number_input(key="custom:admission:controls:elastic_min_fraction").set_value(0.0).run()   # in range, refused
    app.button(key="wi_run").click().run()
    assert not app.exception
    assert [shown(e) for e in app.error] == ["custom: elastic_min_fraction must be in (0, 1], got 0.0"]
    assert not [d for d in app.dataframe if "fifo" in d.value.columns]


def test_whatif_shows_cost_idle_cost_and_carbon_with_deltas(app):
    from dashboard.data import assumptions_text
    from engine.analysis.runs.cost import CostAssumptions
    from engine.analysis.runs.world_kpis import world_kpis

    app.number_input(key="wi_days").set_value(1.0)
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    table = [d.value for d in app.dataframe if "cost_usd" in d.value.index][0]
    assert table.loc["cost_usd", "what"] == "Spend"  # the catalogue's
    table = table.drop(columns=["what"])
    assert list(table.columns) == ["fifo", "easy-backfill", "easy-backfill Δ", "easy-backfill Δ%"]
    jobs, fleet = QUEUE.tables["jobs"], QUEUE.tables["fleet"]
    expected = {name: world_kpis(run, fleet, pd.DataFrame(), QUEUE.tables["regions"], None, jobs=jobs)
                for name, run in _engine_runs().items()}
    for name, values in expected.items():
        assert table[name].to_dict() == {key: shown_kpi(key, values[key]) for key in table.index}
    # 4 reserved H100s over the 3.5 h window at the price book's $2.40; 9 of 14 GPU-hours held
    assert table.loc["cost_usd", "fifo"] == "$34" and table.loc["idle_cost_usd", "fifo"] == "$12"
    assert table.loc["carbon_kg", "fifo"] == shown_kpi("carbon_kg", 9 * 0.7 * 1.2 * 0.48)
    assert table.loc["cost_usd", "easy-backfill Δ"] == "0"      # same fleet, same GPU-hours: only waits differ
    assert any("no carbon profile" in shown(c) and "default price book" in shown(c) for c in app.caption)
    app.session_state["cost_assumptions"] = assumptions_text(CostAssumptions(pue=1.5))   # set on Cost & carbon
    app.run()
    table = [d.value for d in app.dataframe if "cost_usd" in d.value.index][0]
    assert table.loc["carbon_kg", "fifo"] == shown_kpi("carbon_kg", 9 * 0.7 * 1.5 * 0.48)


def test_whatif_runs_every_bundled_scenario_including_routing(app):
    # One region only: routing scenarios keep every job home, and their KPIs equal their
    # non-routing twin's (follow-the-sun and the others use EASY + best-fit, like easy-backfill).
    app.multiselect(key="wi_candidates").set_value(["follow-the-sun", "residency-aware", "conservative-topology"])
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error
    table = _kpi_table(app)
    assert {"follow-the-sun", "residency-aware", "conservative-topology"} <= set(table.columns)
    easy = kpis(_engine_runs()["easy-backfill"])
    for name in ("follow-the-sun", "residency-aware"):
        assert table.loc["wait_p95_s", name] == shown_kpi("wait_p95_s", easy["wait_p95_s"])


def test_custom_scenario_edits_a_regions_prices_and_calendar(app):
    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    assert app.multiselect(key="custom:regions").options == ["eu"]
    app.multiselect(key="custom:regions").set_value(["eu"]).run()
    assert app.number_input(key="custom:region:eu:price_scale").value == 1.0
    app.number_input(key="custom:region:eu:price_scale").set_value(2.0)
    app.session_state["custom:calendars"] = {"edited_rows": {0: {"working_days": "Sun-Thu", "work_start_hour": 8}},
                                             "added_rows": [], "deleted_rows": []}
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error
    table = _kpi_table(app)
    assert list(table.columns)[:2] == ["fifo", "custom"]
    # the custom form's default policies are FIFO's: the same run, at twice the price book's $2.40
    assert table.loc["wait_p95_s", "custom"] == table.loc["wait_p95_s", "fifo"]
    world = [d.value for d in app.dataframe if "cost_usd" in d.value.index][0]
    assert world.loc["cost_usd", "fifo"] == "$34" and world.loc["cost_usd", "custom"] == "$67"
    assert world.loc["carbon_kg", "custom"] == world.loc["carbon_kg", "fifo"]


def test_custom_scenario_rents_cloud_burst_nodes_and_bills_them(app):
    # A pool of one 4-GPU H100 node in eu: b (4 GPUs, submitted 00:01) heads the queue behind a; at
    # 00:31 the node is rented, at 00:41 (10 min) it is up and b starts on it, c beside a on n1. b ends
    # at 01:41; the node goes back 30 idle minutes later (02:11): 4 GPUs x 100 min billed.
    from engine.world.pricebook import on_demand_price

    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    app.session_state["custom:burst"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"region": "eu", "gpu_type": "H100", "max_nodes": 1, "gpus_per_node": 4, "provision_min": 10,
         "trigger_wait_min": 30, "idle_release_min": 30}]}
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error
    table = _kpi_table(app)
    assert table.loc["wait_p50_s", "custom"] == "39 min" and table.loc["wait_p95_s", "custom"] == "40 min"
    assert table.loc["wait_p95_s", "fifo"] == "2.9 h"
    assert table.loc["burst_rentals", "custom"] == "1"
    world = [d.value for d in app.dataframe if "cost_usd" in d.value.index][0]
    assert world.loc["cost_burst_usd", "custom"] == shown_kpi("cost_burst_usd", 4 * 100 / 60 * on_demand_price("H100"))
    assert world.loc["cost_burst_usd", "fifo"] == "$0"


def test_the_headline_leads_with_the_work_served_and_the_gpus_needed_at_the_baselines_level(app):
    # On one 4-GPU node the recorded baseline (no source says how "queue" was scheduled: FCFS + EASY is
    # assumed) and easy-backfill are the same policies: the same headroom, the same GPUs needed.
    app.selectbox(key="wi_baseline").select("recorded").run()
    app.number_input(key="wi_seeds").set_value(2).run()
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [shown(e) for e in app.error]
    assert "Capacity at the same service level" in [h.value for h in app.subheader]
    lines = [shown(m) for m in app.markdown if "service level" in shown(m)]
    assert lines and lines[0].startswith("- **easy-backfill serves as much work as recorded at recorded's service level")
    tiles = {m.label: m.value for m in app.metric if ": " in m.label}
    assert tiles["recorded: load headroom"] == tiles["easy-backfill: load headroom"]
    assert tiles["recorded: GPUs needed"] == tiles["easy-backfill: GPUs needed"] == "4"
    assert any("Service level: p95 wait at most" in shown(c) for c in app.caption)


def test_custom_scenario_adds_a_node_by_a_fleet_edit_and_nothing_waits(app):
    # +4 H100 GPUs in eu clones n1: 8 GPUs, so a (2), b (4) and c (2) all start when submitted: no wait,
    # where FIFO on the one node keeps c waiting 2 h 58 min
    app.multiselect(key="wi_candidates").set_value(["custom (built below)"]).run()
    app.session_state["custom:fleet"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"region": "eu", "gpu_type": "H100", "gpus": 4}]}
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [shown(e) for e in app.error]
    table = _kpi_table(app)
    assert table.loc["wait_p95_s", "fifo"] == "2.9 h"
    assert table.loc["wait_p95_s", "custom"] == table.loc["wait_p50_s", "custom"] == hours(0.0)

"""The What-if page's runtime choices (dashboard.forms.runtimes) and the page running them."""
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

from dashboard.forms.runtimes import AS_SCENARIO, after_training, with_runtimes
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store
from tests.predict_helpers import synthetic

APP = str(Path(__file__).parents[1] / "dashboard" / "app.py")
FIFO = {"name": "fifo", "policies": {"order": "fcfs"}}
FAST = {"name": "fast", "policies": {"order": "fail-fast"}, "runtime": {"failure": True}}
CUT = pd.Timestamp("2026-03-10 12:00")


@pytest.mark.parametrize("runtime, twins, expected", [
    (AS_SCENARIO, False, [("fifo", "fifo", None), ("fast", "fast", {"failure": True})]),
    (AS_SCENARIO, True, [("fifo", "fifo", None),
                         ("fifo · predicted P50", "fifo · predicted P50", {"source": "predicted", "quantile": "p50"}),
                         ("fast", "fast", {"failure": True}),
                         ("fast · predicted P50", "fast · predicted P50",
                          {"source": "predicted", "quantile": "p50", "failure": True})]),
    ("predicted P90", True, [("fifo · predicted P90", "fifo · predicted P90", {"source": "predicted", "quantile": "p90"}),
                             ("fast · predicted P90", "fast · predicted P90",
                              {"source": "predicted", "quantile": "p90", "failure": True})]),
    ("users' requests", False, [("fifo · users' requests", "fifo · users' requests", {}),
                                ("fast · users' requests", "fast · users' requests", {"failure": True})]),
])
def test_runtime_overrides_and_twins(runtime, twins, expected):
    got = with_runtimes([("fifo", FIFO), ("fast", FAST)], runtime, twins)
    assert [(label, spec["name"], spec.get("runtime")) for label, spec in got] == expected
    assert all(spec["policies"] == {"fifo": FIFO, "fast": FAST}[spec["name"].split(" ")[0]]["policies"]
               for _, spec in got)


def test_predicting_scenarios_share_the_window_after_the_training_cut():
    assert after_training([("fifo", FIFO)], 7, CUT) == [("fifo", FIFO)]  # nothing predicts: first N days
    own = {**FIFO, "name": "own", "workload": {"start_utc": "2026-03-20T00:00:00"}}
    got = dict(after_training([("fifo", FIFO), ("fast", FAST), ("own", own)], 2, CUT))
    window = {"start_utc": "2026-03-10T12:00:00", "end_utc": "2026-03-12T12:00:00"}
    assert got["fifo"]["workload"] == got["fast"]["workload"] == window
    assert got["own"] == own  # a scenario's own window wins
    assert dict(after_training([("fast", FAST)], 0, CUT))["fast"]["workload"] == {"start_utc": "2026-03-10T12:00:00"}


@pytest.fixture
def app(tmp_path, monkeypatch):
    jobs = synthetic(n=1500, users=20)
    jobs = jobs.assign(job_id=[f"j{i:05d}" for i in range(len(jobs))], region="eu", gpu_type="A")
    fleet = pd.DataFrame({"region": ["eu"] * 2, "node": ["n1", "n2"], "gpu_type": ["A"] * 2, "gpus": [8, 8],
                          "tier": ["reserved"] * 2})
    db = tmp_path / "meridian.duckdb"
    store = Store.open(db)
    store.add_import("log", ImportBatch("csv", {"jobs": jobs, "fleet": fleet}), "log.csv", "sha-log")
    store.close()
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["dataset"] = "log"  # not the sample's Overview first: it prices the whole sample
    at.switch_page("app_pages/whatif.py").run()
    assert not at.exception, at.exception
    at.selectbox(key="wi_baseline").select("fifo").run()
    at.number_input(key="wi_seeds").set_value(1).run()
    return at


def test_whatif_compares_requests_with_predictions_after_the_training_cut(app):
    app.multiselect(key="wi_candidates").set_value(["easy-backfill"])
    app.number_input(key="wi_days").set_value(3.0)
    app.checkbox(key="wi_twins").check()
    app.button(key="wi_run").click().run()
    assert not app.exception, app.exception
    assert not app.error, [shown(e) for e in app.error]
    table = [d.value for d in app.dataframe if "fifo" in d.value.columns][0]
    runs = ["fifo", "fifo · predicted P50", "easy-backfill", "easy-backfill · predicted P50"]
    assert [c for c in table.columns if " Δ" not in c] == ["what", *runs]  # the label first
    cut = pd.to_datetime(app.session_state["wi_runs"][1][0].start_utc)
    assert all(run.start_utc == cut and run.end_utc == cut + pd.Timedelta(days=3) for run in app.session_state["wi_runs"][1])
    assert cut > pd.Timestamp("2026-03-02")  # after the training data, not the dataset's first days
    bsld = table.loc["avg_bounded_slowdown"]
    assert bsld["fifo"] == bsld["fifo · predicted P50"]  # FIFO never looks at runtimes
    assert bsld["easy-backfill"] != bsld["easy-backfill · predicted P50"]  # backfilling does

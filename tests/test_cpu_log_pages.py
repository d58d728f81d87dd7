"""A CPU log on the dashboard (issue 29, item 5): every page counts processors, not GPUs; its dollars appear
only when the dataset gives prices; Teams & fairness compares the log's users, not one team "(none)"."""
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import APP, shown
from streamlit.testing.v1 import AppTest

from engine.core import units
from engine.telemetry.batch import ImportBatch
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.ingest import ingest_bytes
from engine.telemetry.store import Store

# 30 jobs of three users over two days on an 8-processor machine, no groups (-1), as CTC-SP2 records them.
LOG = "; MaxProcs: 8\n; MaxNodes: 2\n; UnixStartTime: 1700000000\n" + "\n".join(
    f"{i + 1} {i * 3000} {(i % 4) * 60} 2400 {2 + i % 3} -1 -1 {2 + i % 3} 3600 -1 1 {i % 3 + 1} -1 -1 1 -1 -1 -1"
    for i in range(30)) + "\n"


def test_the_unit_comes_from_the_fleet_and_rewords_text():
    assert units.of(["cpu"]) is units.PROCESSOR and units.of(["H100", "cpu"]) is units.GPU and units.of([]) is units.GPU
    assert units.PROCESSOR.say("Idle GPU-hours on 4 GPUs ($/GPU-hour, gpus)") == \
        "Idle processor-hours on 4 processors ($/processor-hour, processors)"
    assert units.GPU.say("Idle GPU-hours") == "Idle GPU-hours"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cpu") / "m.duckdb"
    store = Store.open(path)
    ingest_bytes(store, LOG.encode(), "log.swf", dataset="log", options=ImportOptions(tz="UTC"))
    ingest_bytes(store, LOG.replace("; MaxProcs", "; Note: priced\n; MaxProcs").encode(), "priced.swf",
                 dataset="priced", options=ImportOptions(tz="UTC"))
    store.add_import("priced", ImportBatch("csv", {"prices": pd.DataFrame({
        "region": ["default"], "gpu_type": ["cpu"], "tier": ["reserved"], "usd_per_gpu_hour": [0.05],
        "assumed": [False]})}), "prices.csv", "sha-cpu-prices")
    store.close()
    return path


def _page(db: Path, monkeypatch, dataset: str, page: str) -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["dataset"] = dataset
    at.switch_page("app_pages/data.py").run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _words(at) -> str:
    return " ".join(shown(e) for kind in ("markdown", "caption", "info", "subheader") for e in getattr(at, kind)) \
        + " ".join(m.label for m in at.metric)


def test_the_overview_counts_processors_and_has_no_dollars_without_prices(db, monkeypatch):
    at = _page(db, monkeypatch, "log", "app_pages/overview.py")
    labels = {m.label: m.value for m in at.metric}
    assert "Idle processor-hours" in labels and labels["Spend a year"] in ("...", "n/a")
    words = _words(at)
    assert "8 processors (from the fleet table)" in words and "GPU" not in words.replace("GPU type 'cpu'", "")


def test_pages_that_price_say_why_a_cpu_log_has_no_dollars(db, monkeypatch):
    for page in ("app_pages/costcarbon.py", "app_pages/capacity.py", "app_pages/report.py"):
        at = _page(db, monkeypatch, "log", page)
        assert any("a CPU log's processors have no prices unless the dataset gives them" in shown(i) for i in at.info)


def test_a_cpu_log_with_its_own_prices_is_priced(db, monkeypatch):
    at = _page(db, monkeypatch, "priced", "app_pages/costcarbon.py")
    assert not any("no prices" in shown(i) for i in at.info)
    table = at.dataframe[0].value
    assert table.loc["cost_usd", "recorded"] not in ("$0", "n/a")


def test_teams_and_fairness_compares_the_logs_users(db, monkeypatch):
    at = _page(db, monkeypatch, "log", "app_pages/fairness.py")
    teams = next(d.value for d in at.dataframe if "fair_gpu_hours" in d.value.columns)
    assert sorted(teams["team"]) == ["u1", "u2", "u3"]
    assert "processors" in _words(at) or any("processor" in m.label for m in at.metric)

"""The Predictors page's workload-class section through AppTest on a real DuckDB file: a labelled dataset scored
(the tiles and table equal engine.predict.classify.evaluate's figures, the confusion matrix drawn), and a log
without labels classified by the model trained on the sample (slow: that training takes about 15 s)."""
import sys
from pathlib import Path

import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest
from test_predict_registry import database

from engine.predict.classify import CLASSES, evaluate
from engine.predict.features import zones_of
from engine.telemetry.batch import ImportBatch
from engine.telemetry.sample import read_bundle
from engine.telemetry.store import Store
from tests.predict_helpers import queued_log

APP = str(Path(__file__).parents[1] / "dashboard" / "app.py")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """`part`: every eighth job of the sample (labelled); `log`: a log whose jobs are all of one class."""
    path = tmp_path_factory.mktemp("classes") / "meridian.duckdb"
    database(path, read_bundle().tables["jobs"].iloc[::8].reset_index(drop=True), "part")
    store = Store.open(path)
    store.add_import("log", ImportBatch("csv", {"jobs": queued_log()}), "log.csv", "sha-log")
    store.close()
    return path


def _classified(db, monkeypatch, dataset: str, split: str = "time") -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["dataset"] = dataset
    at.switch_page("app_pages/predictors.py").run()
    assert not at.exception, at.exception
    assert not any(c.key == "pr_classes_confusion" for c in at.get("plotly_chart"))  # nothing before the click
    at.segmented_control(key="pr_classes_split").set_value(split).run()
    at.button(key="pr_classes_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [shown(e) for e in at.error]
    return at


def test_a_labelled_dataset_is_scored_with_its_confusion_matrix(db, monkeypatch):
    at = _classified(db, monkeypatch, "part")
    store = Store.open(db)
    jobs, regions = store.jobs("part"), store.regions("part")
    store.close()
    report = evaluate(jobs, zones_of(regions), "time")
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Accuracy"] == f"{report['accuracy']:.1%}" and tiles["Held-out jobs"] == f"{report['jobs_test']:,}"
    table = [d.value for d in at.dataframe if "recall" in d.value.columns][0]
    assert table["class"].tolist() == list(CLASSES)
    assert table["recall"].tolist() == [row["recall"] for row in report["per_class"]]
    charts = {c.key for c in at.get("plotly_chart")}
    assert {"pr_classes_confusion", "pr_classes_shares"} <= charts
    at.run()   # a rerun keeps the section open (cached)
    assert "pr_classes_confusion" in {c.key for c in at.get("plotly_chart")}


@pytest.mark.slow
def test_a_log_without_labels_gets_inferred_shares(db, monkeypatch):
    at = _classified(db, monkeypatch, "log")
    assert any("carries no workload classes" in shown(m) for m in at.markdown)
    keys = {c.key for c in at.get("plotly_chart")}
    assert "pr_classes_shares" in keys and "pr_classes_confusion" not in keys

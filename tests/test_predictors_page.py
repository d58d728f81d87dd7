"""The Predictors page through Streamlit's AppTest on a real DuckDB file: training, the evaluation,
one job's prediction, the queue's start intervals, their backtest, and right-sizing."""
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import shown
from streamlit.testing.v1 import AppTest

from engine.core.reasons import SHORT as WHY_WORDS
from engine.predict.failure import FailureSettings
from engine.predict.registry import ModelRegistry
from engine.predict.runtime import RuntimeSettings
from engine.telemetry.batch import ImportBatch
from engine.telemetry.store import Store
from tests.predict_helpers import queued_log

APP = str(Path(__file__).parents[1] / "dashboard" / "app.py")
FAST = dict(runtime=RuntimeSettings(max_iter=20), failure=FailureSettings(max_iter=20))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("predictors") / "meridian.duckdb"
    fleet = pd.DataFrame({"region": ["eu"] * 2, "node": ["n1", "n2"], "gpu_type": ["A"] * 2, "gpus": [8, 8],
                          "tier": ["reserved"] * 2})
    regions = pd.DataFrame({"region": ["eu"], "timezone": ["Europe/Stockholm"]})
    store = Store.open(path)
    store.add_import("log", ImportBatch("csv", {"jobs": queued_log(), "fleet": fleet, "regions": regions}), "log.csv",
                     "sha-log")
    jobs, regions = store.jobs("log"), store.regions("log")
    store.close()
    ModelRegistry.beside(path).train("log", jobs, regions, **FAST)
    return path


def _page(db, monkeypatch, dataset="log") -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--db", str(db)])
    at = AppTest.from_file(APP, default_timeout=300)
    at.session_state["dataset"] = dataset  # not the sample's Overview first: it prices the whole sample
    at.switch_page("app_pages/predictors.py").run()
    assert not at.exception, at.exception
    return at


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def test_the_evaluation_against_the_baselines_and_right_sizing(db, monkeypatch):
    at = _page(db, monkeypatch)
    text = " ".join(shown(m) for m in at.markdown)
    assert "**Model v1**" in text and "1,160 finished jobs" in text
    metrics = _metrics(at)
    assert {"Mean absolute log error", "Accuracy (min/max)", "Outlive their P50", "Inside P10-P90"} <= set(metrics)
    runtime = [d.value for d in at.dataframe if "runtime from" in d.value.columns][0]
    male = dict(zip(runtime["runtime from"], runtime["log error"]))
    assert male["Model (P50)"] < male["User's request"]  # the synthetic requests are 2-10x the runtime
    model_row = runtime.set_index("runtime from").loc["Model (P50)"]  # in the tiles' units
    assert f"{model_row['accuracy']:.1f}%" == metrics["Accuracy (min/max)"]
    assert f"{model_row['outlive']:.1f}%" == metrics["Outlive their P50"]
    failure = [d.value for d in at.dataframe if "probability from" in d.value.columns][0]
    assert failure.set_index("probability from").loc["Model (calibrated)", "roc_auc"] > 0.7
    # right-sizing: exactly the even users' 8-GPU jobs over-ask, each by 6 GPUs
    jobs = queued_log()
    wasteful = int(((jobs["gpus"] == 8) & (jobs["gpus_used_max"] == 2)).sum())
    assert metrics["Jobs over-asking"] == f"{wasteful:,}"
    teams = [d.value for d in at.dataframe if "freed_gpu_hours" in d.value.columns and "team" in d.value.columns]
    assert teams and teams[0]["freed_gpu_hours"].sum() > 0


def test_one_jobs_prediction_with_its_interval(db, monkeypatch):
    at = _page(db, monkeypatch)
    at.text_input(key="pr_job").set_value("j0500").run()
    assert not at.exception, at.exception
    sentence = [shown(m) for m in at.markdown if shown(m).startswith("**j0500**")][0]
    assert "the model expects it to run" in sentence and "Chance it fails or is cancelled" in sentence
    at.text_input(key="pr_job").set_value("nope").run()
    assert any("No job 'nope'" in shown(w) for w in at.warning)


def test_the_queue_at_the_end_gets_start_intervals_and_a_backtest_calibrates_them(db, monkeypatch):
    at = _page(db, monkeypatch)
    at.button(key="pr_eta_run").click().run()
    assert not at.exception, at.exception
    table = [d.value for d in at.dataframe if "expected start" in d.value.columns][0]
    assert len(table) == 40 and table["jobs ahead"].tolist() == list(range(40))
    starts = table[["earliest (UTC)", "most likely (UTC)", "latest (UTC)"]].apply(pd.to_datetime)
    assert (starts["earliest (UTC)"] <= starts["most likely (UTC)"]).all()
    assert (starts["most likely (UTC)"] <= starts["latest (UTC)"]).all()
    end = pd.to_datetime(queued_log()[["submit_utc", "start_utc", "end_utc"]].stack()).max()
    assert (starts["earliest (UTC)"] >= end).all()  # the queue as it was at the data's last instant
    why = table["why it waits"].value_counts()
    assert set(why.index) <= set(WHY_WORDS.values()) and why.sum() == 40
    sentence = [shown(m) for m in at.markdown if "jobs were waiting" in shown(m)][0]
    assert "Why: " + ", ".join(f"{n:,} {words}" for words, n in why.items()) in sentence
    at.button(key="pr_eta_backtest_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [shown(e) for e in at.error]
    metrics = _metrics(at)
    assert {"Raw 80% interval holds the start", "Calibrated", "Median interval width"} <= set(metrics)


def test_a_dataset_without_a_model_offers_training(db, monkeypatch):
    store = Store.open(db)
    store.add_import("fresh", ImportBatch("csv", {"jobs": queued_log().head(300)}), "fresh.csv", "sha-fresh")
    store.close()
    at = _page(db, monkeypatch, "fresh")
    assert any("No model for **fresh** yet" in shown(i) for i in at.info)
    assert at.button(key="pr_train").label == "Train the models"
    at.button(key="pr_train").click().run()
    assert not at.exception, at.exception
    assert not any("No model for" in shown(i) for i in at.info)  # the banner is the new model's, not a stale one
    assert any(m.value.startswith("**Model v1**") for m in at.markdown)


def test_a_queued_job_opens_in_the_job_view_with_its_interval_at_that_instant(db, monkeypatch):
    at = _page(db, monkeypatch)
    at.button(key="pr_eta_run").click().run()
    job = at.selectbox(key="pr_eta_job").options[5]
    at.selectbox(key="pr_eta_job").select(job).run()
    at.button(key="pr_open_job").click().run()
    view = at.session_state["job_view"]
    end = pd.to_datetime(queued_log()[["submit_utc", "start_utc", "end_utc"]].stack()).max()
    assert (view["job_id"], view["scenario"], view["days"], view["at"], view["page"]) == (
        job, "recorded", 0.0, end, "Predictors")
    at.switch_page("app_pages/job.py").run()
    assert not at.exception, at.exception
    assert any(f"From the queue as recorded at {end:%Y-%m-%d %H:%M} UTC" in shown(c) for c in at.caption)
    at.button(key="job_predict").click().run()
    assert not at.exception, at.exception
    tiles = _metrics(at)
    assert tiles["Jobs ahead in its region"] == "5" and "Interval width" in tiles
    assert any("interval is" in shown(m) for m in at.markdown)

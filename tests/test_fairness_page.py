"""The Teams & fairness page through Streamlit's AppTest on a day of the sample data, and the scenario
form's "Queues & quotas" tables."""
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import open_page, shown
from streamlit.testing.v1 import AppTest

from engine.analysis.runs.fairness import fairness_kpis, team_table
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.store import Store
from engine.world.facts import World

REPO = Path(__file__).parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
KPI_LABELS = ["Jain's index", "Deadlines met", "Inference misses", "Within max wait", "Preemptions", "Lost GPU-hours",
              "Starved jobs"]


@pytest.fixture
def app(sample_db, monkeypatch):
    return open_page(sample_db, monkeypatch, "app_pages/fairness.py", fair_days=1.0)


@pytest.fixture(scope="module")
def engine_runs(sample_db):
    """FIFO's and priority-fairshare's runs of the sample's first day, simulated directly."""
    store = Store.open(sample_db)
    try:
        jobs, fleet = store.jobs("sample"), store.fleet("sample")
        start = pd.to_datetime(jobs["submit_utc"]).min()
        runs = {}
        for name in ("fifo", "priority-fairshare"):
            scenario = replace(Scenario.load(SCENARIOS / f"{name}.toml"), start_utc=start,
                               end_utc=start + pd.Timedelta(days=1))
            runs[name] = run_scenario(scenario, jobs, fleet, World.of_dataset(store, "sample"))
        return runs
    finally:
        store.close()


def _frame(at, column: str) -> pd.DataFrame:
    return [d.value for d in at.dataframe if column in d.value.columns][0]


def test_the_page_shows_kpis_against_fifo_team_tables_and_opens_a_job_in_the_job_view(app, engine_runs):
    assert app.selectbox(key="fair_scenario").value == "priority-fairshare"
    tiles = {m.label: (m.value, m.delta) for m in app.metric}
    assert [m.label for m in app.metric][:7] == KPI_LABELS
    ours, fifo = (fairness_kpis(engine_runs[name]) for name in ("priority-fairshare", "fifo"))
    assert tiles["Starved jobs"] == (f"{ours['starved_jobs']:,}", f"{ours['starved_jobs'] - fifo['starved_jobs']:+,}")
    assert tiles["Within max wait"][0] == f"{100 * ours['max_wait_sla_attainment']:.1f}%"
    assert tiles["Jain's index"][0] == f"{ours['jain_index']:.3f}"
    teams = _frame(app, "wait_p95_h")  # hours on the page, not seconds
    expected = team_table(engine_runs["priority-fairshare"])
    assert teams["team"].tolist() == expected["team"].tolist()
    assert teams["wait_p95_h"].tolist() == pytest.approx((expected["wait_p95_s"] / 3600).tolist())
    assert {"queue", "attainment"} <= set(_frame(app, "attainment").columns)
    assert len(app.get("plotly_chart")) == 2   # shares, waits by team (a job's factors are in the job view)

    # the explainer picks the team with the longest wait and its longest-waiting job, and opens it
    team = app.selectbox(key="fair_team").value
    job = app.selectbox(key="fair_job").value
    job_id = engine_runs["priority-fairshare"].jobs["job_id"].iloc[job]
    text = " ".join(shown(m) for m in app.markdown)
    assert f"Job {job_id} of team {team} waited" in text and "mostly (" in text
    app.button(key="fair_open_job").click().run()
    assert app.session_state["job_view"] == {"job_id": job_id, "scenario": "priority-fairshare", "days": 1.0,
                                             "at": None, "page": "Teams & fairness"}


def test_picking_another_job_or_typing_one_opens_that_one(app):
    job = app.selectbox(key="fair_job")
    last = job.options[-1]   # "<job id> · waited <wait>", the team's shortest wait
    job.select_index(len(job.options) - 1).run()
    assert not app.exception and not app.error
    assert f"Job {last.split(' · ')[0]} of team" in " ".join(shown(m) for m in app.markdown)
    app.selectbox(key="fair_scenario").select("fifo").run()
    assert all(m.delta in ("", None) for m in app.metric[:7])
    app.text_input(key="fair_job_id").input("no-such-job").run()   # no dead end: the job view answers
    assert app.selectbox(key="fair_team").disabled and app.selectbox(key="fair_job").disabled  # the ID wins
    assert not app.warning
    app.text_input(key="fair_job_id").input("").run()  # cleared: the pickers are back
    assert not app.selectbox(key="fair_team").disabled and not app.selectbox(key="fair_job").disabled
    app.text_input(key="fair_job_id").input("no-such-job").run()
    app.button(key="fair_open_job").click().run()
    assert app.session_state["job_view"]["job_id"] == "no-such-job"


def _form():
    import streamlit as st

    from dashboard.forms.scenario import scenario_form

    st.session_state["scenario"] = scenario_form("custom")


def test_the_default_form_adds_no_sharing_tables_and_an_edited_quota_table_reaches_the_scenario():
    at = AppTest.from_function(_form, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert set(at.session_state["scenario"]) == {"name", "policies"}
    at.session_state["custom:quotas"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"holder": "vision", "nominal_gpus": 16, "borrowing_limit_gpus": 0, "cohort": "eu"}]}
    at.session_state["custom:queues"] = {"edited_rows": {"4": {"max_wait_s": 3600}}, "deleted_rows": [],
                                         "added_rows": []}
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    scenario = at.session_state["scenario"]
    assert scenario["quota"] == [{"holder": "vision", "nominal_gpus": 16.0, "borrowing_limit_gpus": 0.0,
                                  "cohort": "eu"}]
    assert scenario["queue"][4]["name"] == "standard" and scenario["queue"][4]["max_wait_s"] == 3600.0
    parsed = Scenario.from_dict(scenario)
    assert parsed.quotas[0].holder == "vision" and parsed.quotas[0].nominal_gpus == 16.0
    assert parsed.queues[4].max_wait_s == 3600.0 and parsed.queues[0].max_gpus == float("inf")


def test_the_queue_table_says_which_queues_may_use_spot_and_an_edit_reaches_the_scenario():
    at = AppTest.from_function(_form, default_timeout=60)
    at.run()
    at.session_state["custom:queues"] = {"edited_rows": {"1": {"spot": True}}, "deleted_rows": [], "added_rows": []}
    at.run()
    assert not at.exception, at.exception
    assert not at.error
    parsed = Scenario.from_dict(at.session_state["scenario"])
    assert [(q.name, q.spot) for q in parsed.queues] == [("reserved", False), ("express", True), ("batch", True),
                                                         ("preemptible", True), ("standard", True)]
    at.session_state["custom:queues"] = {"edited_rows": {"0": {"spot": True}}, "deleted_rows": [], "added_rows": []}
    at.run()
    assert [shown(e) for e in at.error] == ["queues: queue reserved: guaranteed work cannot run on spot nodes "
                                            "(spot = true)"]


def test_an_invalid_sharing_table_is_an_error_message():
    at = AppTest.from_function(_form, default_timeout=60)
    at.session_state["custom:quotas"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"nominal_gpus": 16}]}
    at.run()
    assert not at.exception, at.exception
    assert [shown(e) for e in at.error] == ["quotas: every [[quota]] needs a holder (a team or queue name)"]

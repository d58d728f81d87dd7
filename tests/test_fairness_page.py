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
    """FIFO's, priority-fairshare's and quotas-preemption's runs of the sample's first day, simulated directly."""
    store = Store.open(sample_db)
    try:
        jobs, fleet = store.jobs("sample"), store.fleet("sample")
        start = pd.to_datetime(jobs["submit_utc"]).min()
        runs = {}
        for name in ("fifo", "priority-fairshare", "quotas-preemption"):
            scenario = replace(Scenario.load(SCENARIOS / f"{name}.toml"), start_utc=start,
                               end_utc=start + pd.Timedelta(days=1))
            runs[name] = run_scenario(scenario, jobs, fleet, World.of_dataset(store, "sample"))
        return runs
    finally:
        store.close()


def _frame(at, column: str) -> pd.DataFrame:
    return [d.value for d in at.dataframe if column in d.value.columns][0]


def test_the_page_shows_kpis_against_fifo_team_tables_and_a_job_story(app, engine_runs):
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
    assert len(app.get("plotly_chart")) == 3   # shares, waits by team, the job's priority factors

    # the explainer opens on the team with the longest wait and its longest-waiting job
    team = app.selectbox(key="fair_team").value
    text = " ".join(shown(m) for m in app.markdown)
    assert f"of team **{team}**" in text and "starts 20" in text and "Why it waited:" in text
    factors = _frame(app, "factor")
    assert factors["factor"].tolist() == ["age", "fairshare", "qos", "size", "deadline", "total"]
    assert list(factors.columns)[:3] == ["factor", "weight", "submitted"]
    total = factors.set_index("factor")["submitted"]
    assert total["total"] == pytest.approx(total.drop("total").sum())


def test_picking_another_job_tells_its_story_and_fifo_has_no_factors(app):
    job = app.selectbox(key="fair_job")
    last = job.options[-1]   # "<job id> · waited <wait>", the team's shortest wait
    job.select_index(len(job.options) - 1).run()
    assert not app.exception and not app.error
    assert f"Job **{last.split(' · ')[0]}**" in " ".join(shown(m) for m in app.markdown)
    app.selectbox(key="fair_scenario").select("fifo").run()
    assert not app.exception and not app.error
    assert all(m.delta in ("", None) for m in app.metric[:7])
    text = " ".join(shown(m) for m in app.markdown)
    assert "The order *fcfs* has no priority factors" in text
    assert not [d for d in app.dataframe if "factor" in d.value.columns]


def test_a_job_held_back_by_its_quota_shows_its_teams_quota(app, engine_runs):
    result = engine_runs["quotas-preemption"]
    jobs = result.jobs
    row = int(jobs.index[jobs["reason"] == "blocked-by-quota"][0])
    team, region = jobs.at[row, "team"], jobs.at[row, "region"]
    app.selectbox(key="fair_scenario").select("quotas-preemption").run()
    app.text_input(key="fair_job_id").input(jobs.at[row, "job_id"]).run()  # looked up by id, whatever the team
    assert not app.exception and not app.error
    text = " ".join(shown(m) for m in app.markdown)
    assert "its team had used its quota and could borrow no more" in text
    quota = result.quotas.set_index(["region", "holder"]).loc[(region, team)]
    assert f"Team {team} may hold at most {quota['most_gpus']:g} GPUs at once in {region} (nominal quota " in text
    assert f"It asks for {jobs.at[row, 'gpus']:g} GPUs." in text
    assert app.selectbox(key="fair_team").disabled and app.selectbox(key="fair_job").disabled  # the ID wins
    app.text_input(key="fair_job_id").input("no-such-job").run()
    assert [shown(w) for w in app.warning] == ["No job no-such-job was submitted in this window of sample."]
    app.text_input(key="fair_job_id").input("").run()  # cleared: the pickers are back
    assert not app.selectbox(key="fair_team").disabled and not app.selectbox(key="fair_job").disabled
    assert not app.warning and "Why it waited" in " ".join(shown(m) for m in app.markdown)


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


def test_an_invalid_sharing_table_is_an_error_message():
    at = AppTest.from_function(_form, default_timeout=60)
    at.session_state["custom:quotas"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"nominal_gpus": 16}]}
    at.run()
    assert not at.exception, at.exception
    assert [shown(e) for e in at.error] == ["quotas: every [[quota]] needs a holder (a team or queue name)"]

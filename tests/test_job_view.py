"""The one job view (issue 29, item 6): opened from Teams & fairness, What-if and Predictors, it simulates the job
in the window that holds it (no "not in this window" dead end) and predicts its start with how wide the interval is
and why."""
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from conftest import open_page, shown

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.store import Store
from engine.world.facts import World

SCENARIOS = Path(__file__).parents[1] / "sample_data" / "scenarios"


@pytest.fixture(scope="module")
def sample_jobs(sample_db) -> pd.DataFrame:
    store = Store.open(sample_db)
    try:
        jobs = store.jobs("sample")
    finally:
        store.close()
    return jobs.assign(wait_s=(pd.to_datetime(jobs["start_utc"]) - pd.to_datetime(jobs["submit_utc"])).dt.total_seconds())


def _view(app):
    """The Job page after a page's "Open job ... in the job view" (st.switch_page in a real browser)."""
    app.switch_page("app_pages/job.py").run()
    assert not app.exception, app.exception
    return app


def _text(app) -> str:
    return " ".join(shown(e) for kind in ("markdown", "info", "warning", "caption") for e in getattr(app, kind))


def test_from_teams_and_fairness_the_job_opens_in_the_same_run_with_its_priority_factors(sample_db, monkeypatch):
    app = open_page(sample_db, monkeypatch, "app_pages/fairness.py", fair_days=1.0)
    team = app.selectbox(key="fair_team").value
    app.button(key="fair_open_job").click().run()
    text = _text(_view(app))
    assert f"of team {team}" in text and "starts 20" in text and "Why it waited:" in text
    assert "Simulated over the first 1 day" in text and "simulated over its first" not in text   # the page's window
    factors = next(d.value for d in app.dataframe if "factor" in d.value.columns)
    assert factors["factor"].tolist() == ["age", "fairshare", "qos", "size", "deadline", "total"]
    assert list(factors.columns)[:3] == ["factor", "weight", "submitted"]
    total = factors.set_index("factor")["submitted"]
    assert total["total"] == pytest.approx(total.drop("total").sum())
    assert app.selectbox(key="job_scenario_in").value == "priority-fairshare"


def test_a_job_after_the_pages_window_opens_in_a_window_that_holds_it(sample_db, monkeypatch, sample_jobs):
    later = sample_jobs[pd.to_datetime(sample_jobs["submit_utc"]) >= pd.Timestamp("2026-08-05 06:00")].iloc[0]
    app = open_page(sample_db, monkeypatch, "app_pages/fairness.py", fair_days=1.0)
    app.text_input(key="fair_job_id").input(later["job_id"]).run()
    app.button(key="fair_open_job").click().run()
    text = _text(_view(app))
    assert (f"Job {later['job_id']} was submitted on day 3 of the dataset, after the Teams & fairness page's window "
            "(its first 1 day): it is simulated over its first 5 days instead.") in text
    assert "Simulated over the first 5 days" in text and "Why it waited" in text or "after waiting" in text
    app.text_input(key="job_id_in").input("no-such-job").run()
    assert "No job no-such-job in dataset sample." in _text(app)


def test_a_job_held_back_by_its_quota_shows_its_teams_quota(sample_db, monkeypatch):
    store = Store.open(sample_db)
    jobs, fleet, world = store.jobs("sample"), store.fleet("sample"), World.of_dataset(store, "sample")
    store.close()
    start = pd.to_datetime(jobs["submit_utc"]).min()
    result = run_scenario(replace(Scenario.load(SCENARIOS / "quotas-preemption.toml"), start_utc=start,
                                  end_utc=start + pd.Timedelta(days=1)), jobs, fleet, world)
    row = int(result.jobs.index[result.jobs["reason"] == "blocked-by-quota"][0])
    job_id, team, region = (result.jobs.at[row, c] for c in ("job_id", "team", "region"))
    app = open_page(sample_db, monkeypatch, "app_pages/fairness.py", fair_days=1.0, fair_scenario="quotas-preemption")
    app.text_input(key="fair_job_id").input(job_id).run()
    app.button(key="fair_open_job").click().run()
    text = _text(_view(app))
    assert "its team had used its quota and could borrow no more" in text
    quota = result.quotas.set_index(["region", "holder"]).loc[(region, team)]
    assert f"Team {team} may hold at most {quota['most_gpus']:g} GPUs at once in {region} (nominal quota " in text
    assert f"It asks for {result.jobs.at[row, 'gpus']:g} GPUs." in text


def test_the_predicted_start_says_how_wide_it_is_and_why(sample_db, monkeypatch, sample_jobs):
    waited = sample_jobs[(pd.to_datetime(sample_jobs["submit_utc"]) >= pd.Timestamp("2026-08-05 06:00"))
                         & (sample_jobs["wait_s"] > 3 * 3600)].iloc[0]
    app = open_page(sample_db, monkeypatch, "app_pages/job.py",
                    job_view={"job_id": waited["job_id"], "scenario": "recorded", "days": 7.0, "at": None, "page": ""})
    app.button(key="job_predict").click().run()
    assert not app.exception, app.exception
    tiles = {m.label: m.value for m in app.metric}
    assert tiles["Most likely start"].startswith(("in ", "now")) and tiles["Interval width"] != "unbounded"
    text = _text(app)
    assert f"The 80% interval is {tiles['Interval width']} wide. It starts when GPUs come free in " \
           f"{waited['region']}: " in text
    assert "of its run left" in text and "It actually started 3 h" in text
    drivers = next(d.value for d in app.dataframe if "left_p90_h" in d.value.columns)
    assert drivers["share"].max() <= 100 and (drivers["left_p10_h"] <= drivers["left_p90_h"]).all()

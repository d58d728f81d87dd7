"""The Optimise page (AppTest on a real DuckDB file): a study of one-day windows on the sample runs,
shows the front, its held-out check and the hypervolume, and a picked point reaches the What-if page."""
from __future__ import annotations

import tomllib

import pytest
from conftest import open_page, shown

from dashboard.data.optimise import bundled_studies


def _small_study() -> str:
    text = bundled_studies()["priority-weights"].read_text(encoding="utf-8")
    return text.replace("days = 7", "days = 1")


@pytest.fixture(scope="module")
def ran(sample_db, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    try:
        at = open_page(sample_db, mp, "app_pages/optimise.py", dataset="sample")
        at.text_area(key="opt_text:priority-weights").input(_small_study())
        at.number_input(key="opt_trials").set_value(4)
        at.number_input(key="opt_population").set_value(4)
        at.run()
        at.button(key="opt_run").click().run(timeout=300)
        assert not at.exception, at.exception
        yield at
    finally:
        mp.undo()


def test_the_page_runs_a_study_and_shows_its_front(ran):
    metrics = {m.label: m.value for m in ran.metric}
    assert metrics["Trials"] == "4" and int(metrics["On the front"]) >= 1
    assert metrics["Simulations"] == str(2 * 5 + int(metrics["On the front"]) + 1)
    front = ran.dataframe[0].value
    assert "baseline" in set(front[""]) and "backfill" in front.columns and "p95 wait" in front.columns
    held = ran.dataframe[1].value
    assert list(held[""])[-1] == "baseline" and len(held) == int(metrics["On the front"]) + 1
    assert len(ran.get("plotly_chart")) == 3   # the 2-D front, parallel coordinates (5 objectives), hypervolume


def test_a_picked_point_is_a_scenario_and_a_choice_on_the_what_if_page(ran):
    code = ran.get("code")[0].value
    scenario = tomllib.loads(code)
    assert scenario["name"].startswith("priority-weights-trial-") and scenario["policies"]["order"]["key"]
    ran.button(key="opt_use").click().run()
    assert any("is now a choice on the What-if page" in shown(s) for s in ran.success)
    ran.switch_page("app_pages/whatif.py").run()
    assert not ran.exception, ran.exception
    assert scenario["name"] in ran.selectbox(key="wi_baseline").options


def test_a_broken_study_file_is_one_message_not_a_traceback(sample_db, monkeypatch):
    at = open_page(sample_db, monkeypatch, "app_pages/optimise.py", dataset="sample")
    at.text_area(key="opt_text:priority-weights").input('base = "nowhere.toml"\n').run()
    assert not at.exception
    assert any("cannot read the base scenario" in e.value or "objectives" in e.value for e in at.error)

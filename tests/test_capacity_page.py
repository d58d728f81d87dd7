"""The Capacity planning page through Streamlit's AppTest on the sample: the plan for two days of
demand, its tables and charts, and the plan form's errors."""
import json

from conftest import open_page, shown

FORM = {"days": 2.0, "warmup_days": 1.0, "max_iterations": 4,
        "slo": {"inference": 0.5, "development": 2.0, "batch": 6.0, "hpo": 12.0, "training": 24.0},
        "capacity": {"flexible_classes": ["batch", "hpo", "training"], "spot_max_share": 0.25,
                     "spot_efficiency": 0.9, "spot_interruptions_per_node_hour": 0.01, "keep_reserved": False}}


def _table(at, column):
    """The page's table that has `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_page_waits_for_the_form_before_planning(sample_db, monkeypatch):
    at = open_page(sample_db, monkeypatch, "app_pages/capacity.py")
    assert any("Find the cheapest fleet" in shown(i) for i in at.info)
    assert [n.label for n in at.number_input][:3] == ["Plan on the last N days", "Warm-up days", "Rounds at most"]
    assert {n.label for n in at.number_input} >= {"inference", "batch", "hpo", "training", "development"}


def test_a_plan_shows_the_fleet_its_cost_and_the_curves(sample_db, monkeypatch):
    request = json.dumps({"form": FORM, "growth": 1.3})
    at = open_page(sample_db, monkeypatch, "app_pages/capacity.py", cap_request=request)
    tiles = {m.label.split(" (today")[0]: m.value for m in at.metric}
    assert set(tiles) == {"GPUs (plan)", "Cost per year (plan)", "Utilisation (plan)", "Targets met"}
    assert tiles["Targets met"] == "5 of 5 (plan)"
    slo = _table(at, "margin_h_plan")
    assert list(slo["workload_class"]) == ["batch", "development", "hpo", "inference", "training"]
    assert slo["met_plan"].all() and (slo["margin_h_plan"] >= 0).all()
    fleet = _table(at, "plan_total")
    assert len(fleet) == 14 and fleet["today_total"].sum() == 1320
    assert int(tiles["GPUs (plan)"].replace(",", "")) == fleet["plan_total"].sum()
    assert len(at.get("plotly_chart")) == 3
    text = " ".join(shown(m) for m in at.markdown)
    assert "With **+30 % demand**" in text and "Integer program" in text


def test_a_bad_check_scenario_is_reported_not_raised(sample_db, monkeypatch):
    request = json.dumps({"form": {**FORM, "scenario": "missing.toml"}, "growth": 1.3})
    monkeypatch.setattr("sys.argv", ["app.py", "--db", str(sample_db)])
    from conftest import APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["cap_request"] = request
    at.switch_page("app_pages/capacity.py").run()
    assert not at.exception
    assert any("missing.toml" in shown(e) for e in at.error)

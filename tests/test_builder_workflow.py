"""The scenario builder's [[chain]] and [experiments] sections (dashboard.forms.workflow_sections) in
Streamlit's AppTest: untouched they add nothing; the experiments' declared fields have their widgets with
their ranges; what they build is what Scenario.from_dict accepts."""
from __future__ import annotations

import pandas as pd
from conftest import assert_declared_widgets
from streamlit.testing.v1 import AppTest

from dashboard.forms.workflow_sections import chain_entries
from engine.scenario.experiments import ExperimentSettings
from engine.scenario.spec import Scenario


def _sections():
    import streamlit as st

    from dashboard.forms.workflow_sections import chain_section, experiments_section

    st.session_state["chains"] = chain_section("t", ["ap-northeast", "eu-west", "us-east"], ["vision"])
    st.session_state["experiments"] = experiments_section("t", ["speech", "vision"])


def _app() -> AppTest:
    app = AppTest.from_function(_sections, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_untouched_sections_add_nothing_and_every_declared_field_has_its_widget():
    app = _app()
    assert app.session_state["chains"] == [] and app.session_state["experiments"] == {}
    assert_declared_widgets(app, ExperimentSettings, "t:experiments")


def test_picking_teams_builds_the_experiments_table():
    app = _app()
    app.number_input(key="t:experiments:fill_share").set_value(0.25).run()
    assert app.session_state["experiments"] == {}  # no team yet
    app.multiselect(key="t:experiments:teams").select("vision").run()
    app.multiselect(key="t:experiments:kinds").select("batch").run()
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["experiments"]
    assert built == {"teams": ["vision"], "kinds": ["hpo", "batch"], "fill_share": 0.25}
    scenario = Scenario.from_dict({"name": "built", "experiments": built})
    assert scenario.experiments.teams == ("vision",) and scenario.experiments.settings.fill_share == 0.25
    app.selectbox(key="t:experiments:sizing").set_value("per-type").run()
    app.number_input(key="t:experiments:max_nodes").set_value(4).run()
    built = app.session_state["experiments"]
    assert built["sizing"] == "per-type" and built["max_nodes"] == 4
    scenario = Scenario.from_dict({"name": "built", "experiments": built})
    assert scenario.experiments.sizing == "per-type" and scenario.experiments.settings.max_nodes == 4


def test_the_chain_rows_become_chain_entries_the_parser_accepts():
    rows = pd.DataFrame([
        {"stage_1": "ap-northeast", "stage_2": "eu-west", "stage_3": "us-east", "stage_4": None,
         "chain_class": "training", "chain_team": None, "count": 8, "checkpoint_gb": 200.0},
        {"stage_1": "eu-west", "stage_2": None, "stage_3": "us-east", "stage_4": None,  # one stage: left out
         "chain_class": None, "chain_team": None, "count": 3, "checkpoint_gb": 0.0}])
    entries = chain_entries(rows)
    assert entries == [{"stages": ["ap-northeast", "eu-west", "us-east"], "count": 8, "checkpoint_gb": 200.0,
                        "workload_class": "training"}]
    scenario = Scenario.from_dict({"name": "built", "chain": entries})
    assert scenario.chains[0].stages == ("ap-northeast", "eu-west", "us-east") and scenario.chains[0].count == 8

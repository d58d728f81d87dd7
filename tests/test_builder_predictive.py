"""The scenario builder's [predictive_scaling] section (dashboard.forms.world_sections.predictive_section)
in Streamlit's AppTest: every declared field has its widget with its range, nothing is added until it
is ticked, and what it builds is a table Scenario.from_dict accepts with those values."""
from __future__ import annotations

from conftest import assert_declared_widgets
from streamlit.testing.v1 import AppTest

from engine.scenario.predictive import PredictiveScaling
from engine.scenario.spec import Scenario


def _section():
    import streamlit as st

    from dashboard.forms.world_sections import predictive_section

    st.session_state["built"] = predictive_section("t")


def _app() -> AppTest:
    app = AppTest.from_function(_section, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_every_field_has_its_widget_and_an_untouched_section_adds_nothing():
    app = _app()
    assert app.session_state["built"] == {}
    assert_declared_widgets(app, PredictiveScaling, "t:predictive")


def test_a_value_without_the_switch_adds_nothing_and_with_it_builds_the_table():
    app = _app()
    app.number_input(key="t:predictive:headroom_quantile").set_value(0.9).run()
    assert app.session_state["built"] == {}
    app.checkbox(key="t:predictive:enabled").check()
    app.checkbox(key="t:predictive:reserved").check()
    app.run()
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]
    assert built == {"enabled": True, "headroom_quantile": 0.9, "reserved": True}
    scenario = Scenario.from_dict({"name": "built", "predictive_scaling": built,
                                   "burst": [{"region": "us-east", "gpu_type": "A100"}],
                                   "workload": {"start_utc": "2026-10-12T00:00:00"}})
    assert scenario.predictive == PredictiveScaling(enabled=True, headroom_quantile=0.9, reserved=True)

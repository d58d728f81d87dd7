"""The scenario builder's [rightsize] and [elastic_scaling] sections (dashboard.forms.sizing_sections) in
Streamlit's AppTest: every declared number and switch has its widget with its range, nothing is added
until the section is switched on, and what it builds is a table Scenario.from_dict accepts with those values."""
from __future__ import annotations

from dataclasses import fields

import pandas as pd
from streamlit.testing.v1 import AppTest

from dashboard.forms.runtimes import after_training
from engine.scenario.rightsize import RightSize
from engine.scenario.spec import Scenario
from engine.world.elastic import NUMERIC, ElasticScaling


def _sections():
    import streamlit as st

    from dashboard.forms.sizing_sections import elastic_section, rightsize_section

    st.session_state["rightsize"] = rightsize_section("t")
    st.session_state["elastic"] = elastic_section("t")


def _app() -> AppTest:
    app = AppTest.from_function(_sections, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_every_field_has_its_widget_and_untouched_sections_add_nothing():
    app = _app()
    assert app.session_state["rightsize"] == {} and app.session_state["elastic"] == {}
    assert app.checkbox(key="t:rightsize:enabled").value is False
    for spec in [f for f in fields(RightSize) if f.type == "float"] + list(NUMERIC):
        prefix = "t:rightsize" if spec in fields(RightSize) else "t:elastic"
        widget = app.number_input(key=f"{prefix}:{spec.name}")
        assert widget.value == spec.default
        assert (widget.min, widget.max) == (spec.metadata["min"], spec.metadata["max"]), spec.name
    assert app.multiselect(key="t:rightsize:classes").value == ["training", "inference", "development", "batch", "hpo"]
    assert app.radio(key="t:elastic:model").value == "perfect"


def test_switched_on_they_build_the_tables_the_parser_reads():
    app = _app()
    app.number_input(key="t:rightsize:margin_pct").set_value(50.0).run()
    app.number_input(key="t:elastic:training_serial_fraction").set_value(0.2).run()
    assert app.session_state["rightsize"] == {} and app.session_state["elastic"] == {}
    app.checkbox(key="t:rightsize:enabled").check()
    app.multiselect(key="t:rightsize:classes").set_value(["training", "batch"])
    app.radio(key="t:elastic:model").set_value("amdahl")
    app.run()
    assert not app.error, [e.value for e in app.error]
    rightsize, elastic = app.session_state["rightsize"], app.session_state["elastic"]
    assert rightsize == {"enabled": True, "margin_pct": 50.0, "classes": "training,batch"}
    assert elastic == {"model": "amdahl", "training_serial_fraction": 0.2}
    scenario = Scenario.from_dict({"name": "built", "rightsize": rightsize, "elastic_scaling": elastic})
    assert scenario.rightsize == RightSize(enabled=True, margin_pct=50.0, classes="training,batch")
    assert scenario.elastic == ElasticScaling(model="amdahl", training_serial_fraction=0.2)


def test_memory_sizing_and_the_fitted_model_are_offered_too():
    app = _app()
    app.checkbox(key="t:rightsize:enabled").check()
    app.checkbox(key="t:rightsize:memory").check()
    app.number_input(key="t:rightsize:memory_margin_pct").set_value(25.0)
    app.radio(key="t:elastic:model").set_value("fitted")
    app.run()
    assert not app.error, [e.value for e in app.error]
    assert app.session_state["rightsize"] == {"enabled": True, "memory": True, "memory_margin_pct": 25.0}
    assert app.session_state["elastic"] == {"model": "fitted"}


def test_a_right_sized_scenario_moves_every_scenario_to_the_models_training_cut():
    # the GPU-need model trains on the jobs before the cut: every scenario replays the same days after it
    cut = pd.Timestamp("2026-10-01T14:00:00")
    chosen = [("base", {"name": "base"}), ("sized", {"name": "sized", "rightsize": {"enabled": True}})]
    moved = after_training(chosen, 7, cut)
    assert [spec["workload"] for _, spec in moved] == [
        {"start_utc": "2026-10-01T14:00:00", "end_utc": "2026-10-08T14:00:00"}] * 2
    assert after_training([("base", {"name": "base"})], 7, cut) == [("base", {"name": "base"})]

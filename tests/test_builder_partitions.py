"""The scenario builder's [partitions] section (dashboard.forms.partitions_section) in Streamlit's
AppTest: off until ticked, then only what differs from the defaults reaches the scenario, which
Scenario.from_dict accepts with those values."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from engine.scenario.spec import Scenario
from engine.world.partitions import Partitions


def _section():
    import streamlit as st

    from dashboard.forms.partitions_section import partitions_section

    st.session_state["built"] = partitions_section("t")


def _app() -> AppTest:
    app = AppTest.from_function(_section, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_partitions_are_off_until_ticked_then_the_changes_reach_the_scenario():
    app = _app()
    app.selectbox(key="t:partitions:mode").select("mps")
    app.run()
    assert app.session_state["built"] == {}  # not ticked: nothing, whatever the choices
    app.checkbox(key="t:partitions:enabled").check()
    app.selectbox(key="t:partitions:development_profile").select("2g")
    app.number_input(key="t:partitions:mps_interference").set_value(0.2)
    app.number_input(key="t:partitions:replicas").set_value(3)
    app.run()
    built = app.session_state["built"]
    assert built == {"enabled": True, "mode": "mps", "development_profile": "2g", "mps_interference": 0.2,
                     "replicas": 3}
    assert Scenario.from_dict({"name": "p", "partitions": built}).partitions == Partitions(
        enabled=True, mode="mps", development_profile="2g", mps_interference=0.2, replicas=3)


def test_every_declared_field_but_the_model_names_has_its_widget():
    app = _app()
    keys = {w.key for kind in (app.checkbox, app.selectbox, app.number_input) for w in kind}
    assert keys == {f"t:partitions:{name}" for name in Partitions.__dataclass_fields__ if name != "gpu_models"}

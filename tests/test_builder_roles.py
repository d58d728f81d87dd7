"""The scenario builder's region roles section (dashboard.forms.roles) in Streamlit's AppTest: untouched it
adds nothing, an edge location becomes a [[fleet]] edit with like and an edge role, the roles and numbers
chosen reach the [roles] table the parser reads (the same through a TOML file), and what the parser refuses
shows its message and adds nothing."""
from __future__ import annotations

import pandas as pd
from conftest import shown
from streamlit.testing.v1 import AppTest

from engine.scenario.edits import FleetEdit
from engine.scenario.files import scenario_toml
from engine.scenario.spec import Scenario
from engine.world.roles import Roles


def _section():
    import streamlit as st

    from dashboard.forms.roles import roles_section

    roles, edges = roles_section("t", ["eu-west", "eu-north"], ["H100", "L4"])
    st.session_state["built"] = {"roles": roles, "fleet": edges}


def _app() -> AppTest:
    app = AppTest.from_function(_section, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_untouched_it_adds_nothing_and_the_numbers_start_at_their_declared_defaults():
    app = _app()
    assert app.session_state["built"] == {"roles": {}, "fleet": []}
    for name in ("storage_usd_per_gb_month", "restore_delay_s", "checkpoint_gb_per_gpu"):
        widget = app.number_input(key=f"t:roles:{name}")
        spec = Roles.__dataclass_fields__[name]
        assert (widget.value, widget.min, widget.max) == (spec.default, spec.metadata["min"], spec.metadata["max"])


def test_an_edge_location_and_an_archive_reach_the_scenario_as_the_same_toml_would(tmp_path):
    app = _app()
    app.session_state["t:edges"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"region": "edge-fra", "like": "eu-west", "gpu_type": "L4", "tier": "on-demand", "gpus": 8},
        {"region": "edge-half", "like": "eu-west"}]}   # incomplete: left out
    app.run()
    app.multiselect(key="t:roles:archive").set_value(["eu-north"])
    app.selectbox(key="t:roles:checkpoints").set_value("archive")
    app.number_input(key="t:roles:restore_delay_s").set_value(600.0)
    app.run()
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]
    assert built["fleet"] == [{"region": "edge-fra", "like": "eu-west", "gpu_type": "L4", "add_gpus": 8,
                               "tier": "on-demand"}]
    assert built["roles"] == {"archive": ["eu-north"], "edge": ["edge-fra"], "checkpoints": "archive",
                              "restore_delay_s": 600.0}
    data = {"fleet": built["fleet"], "roles": built["roles"]}
    path = tmp_path / "built.toml"
    path.write_text(scenario_toml(data), encoding="utf-8")
    scenario = Scenario.load(path)
    assert scenario == Scenario.from_dict(data, default_name="built")
    assert scenario.roles == Roles(edge=("edge-fra",), archive=("eu-north",), checkpoints="archive",
                                   restore_delay_s=600.0)
    assert scenario.fleet_edits == (FleetEdit("edge-fra", "L4", 8, "on-demand", like="eu-west"),)
    fleet = pd.DataFrame({"region": ["eu-west"], "gpu_type": ["L4"], "tier": ["on-demand"], "gpus": [4],
                          "node": ["w0"]})
    _, ran = scenario.apply(pd.DataFrame({"submit_utc": pd.Series(dtype="datetime64[ns]")}), fleet)
    assert ran.groupby("region")["gpus"].sum().to_dict() == {"edge-fra": 8, "eu-west": 4}


def test_archiving_without_an_archive_region_shows_the_parsers_message_and_adds_nothing():
    app = _app()
    app.selectbox(key="t:roles:checkpoints").set_value("archive")
    app.run()
    assert [shown(e) for e in app.error] == [
        "[roles]: [roles] checkpoints = \"archive\" needs an archive region (archive = [\"region\", ...])"]
    assert app.session_state["built"]["roles"] == {}


def test_archived_datasets_reach_the_roles_table():
    app = _app()
    app.multiselect(key="t:roles:archive").set_value(["eu-north"])
    app.selectbox(key="t:roles:datasets").set_value("named")
    app.text_input(key="t:roles:dataset_names").set_value("vision@eu-west, speech@eu-north")
    app.number_input(key="t:roles:dataset_idle_days").set_value(14.0)
    app.run()
    assert not app.error, [e.value for e in app.error]
    roles = app.session_state["built"]["roles"]
    assert roles == {"archive": ["eu-north"], "datasets": "named", "dataset_names": ["vision@eu-west", "speech@eu-north"],
                     "dataset_idle_days": 14.0}
    assert Scenario.from_dict({"roles": roles}, default_name="t").roles == Roles(
        archive=("eu-north",), datasets="named", dataset_names=("vision@eu-west", "speech@eu-north"),
        dataset_idle_days=14.0)

"""The scenario builder's [spot], [data], [[outage]], [interconnect], [clusters] and [handoff] sections (dashboard.forms.world_sections) in Streamlit's
AppTest: drawn from the declarations, only what differs from the defaults reaches the scenario, and
the scenario they build is one Scenario.from_dict accepts with those values."""
from __future__ import annotations

from conftest import assert_declared_widgets, shown
from streamlit.testing.v1 import AppTest

from engine.scenario.spec import Scenario
from engine.world.data_model import DataModel


def _sections():
    import streamlit as st

    from dashboard.forms.world_sections import (
        clusters_section,
        data_section,
        handoff_section,
        interconnect_section,
        outage_section,
        spot_section,
        workload_section,
    )

    st.session_state["built"] = {"workload": workload_section("t"), "spot": spot_section("t"),
                                 "data": data_section("t"), "outage": outage_section("t", ["eu-west", "us-east"]),
                                 "interconnect": interconnect_section("t"), "clusters": clusters_section("t"),
                                 "handoff": handoff_section("t")}


def _app() -> AppTest:
    app = AppTest.from_function(_sections, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def test_untouched_sections_add_nothing():
    app = _app()
    assert app.session_state["built"] == {"workload": {}, "spot": {}, "data": {}, "outage": [], "interconnect": {},
                                          "clusters": {}, "handoff": {}}


def test_every_data_field_has_its_widget_with_its_range():
    app = _app()
    assert_declared_widgets(app, DataModel, "t:data")


def test_the_sections_build_a_scenario_with_the_chosen_values():
    app = _app()
    app.number_input(key="t:data:transfer_gbps").set_value(10.0)
    app.number_input(key="t:data:replicate_after").set_value(3)
    app.checkbox(key="t:data:prefetch").check()
    app.number_input(key="t:spot:interruptions_per_node_hour").set_value(0.05)
    app.number_input(key="t:spot:fallback_after").set_value(2)
    app.selectbox(key="t:spot:rule").select("let any job use spot nodes (as a recorded history may have)")
    app.run()
    assert not app.error, [e.value for e in app.error]
    built = dict(app.session_state["built"])
    assert built.pop("outage") == [] and built.pop("workload") == {} and built.pop("interconnect") == {}
    assert built.pop("clusters") == {} and built.pop("handoff") == {}
    assert built == {"spot": {"interruptions_per_node_hour": 0.05, "fallback_after": 2, "interruptible_only": False},
                     "data": {"transfer_gbps": 10.0, "replicate_after": 3, "prefetch": True}}
    scenario = Scenario.from_dict({"name": "built", **built})
    assert scenario.data == DataModel(transfer_gbps=10.0, replicate_after=3, prefetch=True)
    assert (scenario.spot.interruptions_per_node_hour, scenario.spot.fallback_after) == (0.05, 2)
    assert scenario.spot.keeps_work_off_spot is False


def test_the_rule_always_on_without_interruptions():
    app = _app()
    app.selectbox(key="t:spot:rule").select("always keep non-interruptible work off spot nodes").run()
    assert app.session_state["built"]["spot"] == {"interruptible_only": True}
    assert Scenario.from_dict({"name": "s", "spot": {"interruptible_only": True}}).spot.keeps_work_off_spot


def test_an_outage_row_reaches_the_scenario_and_a_reversed_one_is_the_parsers_message():
    app = _app()
    app.session_state["t:outages"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"region": "us-east", "start_utc": "2026-08-05T12:00:00", "end_utc": "2026-08-06T00:00:00"}]}
    app.run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    outage = app.session_state["built"]["outage"]
    assert outage == [{"region": "us-east", "start_utc": "2026-08-05T12:00:00", "end_utc": "2026-08-06T00:00:00"}]
    parsed = Scenario.from_dict({"name": "down", "outage": outage}).outages[0]
    assert (parsed.region, str(parsed.start_utc), str(parsed.end_utc)) == ("us-east", "2026-08-05 12:00:00",
                                                                   "2026-08-06 00:00:00")
    app.session_state["t:outages"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"region": "eu-west", "start_utc": "2026-08-06T00:00:00", "end_utc": "2026-08-05T00:00:00"}]}
    app.run()
    assert [shown(e) for e in app.error] == ["outages: [[outage]] of eu-west ends before it starts"]
    assert app.session_state["built"]["outage"] == []


def test_growth_and_load_reach_the_scenario_within_their_limits():
    app = _app()
    growth, scale = app.number_input(key="t:workload:growth"), app.number_input(key="t:workload:load_scale")
    assert (growth.min, growth.max, scale.min, scale.max) == (1e-3, 100.0, 1e-3, 1e3)
    growth.set_value(1.3)
    scale.set_value(0.5)
    app.run()
    workload = app.session_state["built"]["workload"]
    assert workload == {"growth": 1.3, "load_scale": 0.5}
    scenario = Scenario.from_dict({"name": "grown", "workload": workload})
    assert (scenario.growth, scenario.load_scale) == (1.3, 0.5)


def test_the_interconnect_is_off_until_ticked_then_its_changes_reach_the_scenario():
    from engine.world.interconnect import Interconnect

    app = _app()
    app.number_input(key="t:interconnect:cross_cluster_gbps").set_value(25.0).run()
    assert app.session_state["built"]["interconnect"] == {}        # not ticked: nothing, whatever the numbers
    app.checkbox(key="t:interconnect:enabled").check()
    app.number_input(key="t:interconnect:training_comm_fraction").set_value(0.5)
    app.run()
    built = app.session_state["built"]["interconnect"]
    assert built == {"enabled": True, "cross_cluster_gbps": 25.0, "training_comm_fraction": 0.5}
    assert Scenario.from_dict({"name": "ic", "interconnect": built}).interconnect == Interconnect(
        enabled=True, cross_cluster_gbps=25.0, training_comm_fraction=0.5)
    app.number_input(key="t:interconnect:rack_gbps").set_value(10.0).run()   # slower than across racks: refused
    assert [shown(e) for e in app.error] == ["[interconnect]: [interconnect] bandwidths must not rise with the "
                                             "spread: rack_gbps 10 >= cluster_gbps 200 >= cross_cluster_gbps 25"]
    assert app.session_state["built"]["interconnect"] == {}


def test_racks_per_cluster_is_drawn_from_its_declaration_and_reaches_the_scenario():
    from engine.scenario.clusters import ClusterSplit

    app = _app()
    racks = app.number_input(key="t:clusters:racks_per_cluster")
    assert (racks.min, racks.max, racks.value) == (0, 10_000, 0) and "racks" in racks.label
    racks.set_value(2).run()
    built = app.session_state["built"]["clusters"]
    assert built == {"racks_per_cluster": 2}
    assert Scenario.from_dict({"name": "split", "clusters": built}).clusters == ClusterSplit(2)


def test_the_handoff_is_off_until_ticked_then_its_declared_fields_reach_the_scenario():
    from engine.scenario.handoff import Handoff

    app = _app()
    assert_declared_widgets(app, Handoff, "t:handoff")
    app.number_input(key="t:handoff:min_run_h").set_value(6.0).run()
    assert app.session_state["built"]["handoff"] == {}              # not ticked: nothing, whatever the numbers
    app.checkbox(key="t:handoff:enabled").check()
    app.number_input(key="t:handoff:transfer_gbps").set_value(25.0)
    app.run()
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]["handoff"]
    assert built == {"enabled": True, "min_run_h": 6.0, "transfer_gbps": 25.0}
    scenario = Scenario.from_dict({"name": "live", "handoff": built, "policies": {"routing": "follow-the-sun"}})
    assert scenario.handoff == Handoff(enabled=True, min_run_h=6.0, transfer_gbps=25.0)

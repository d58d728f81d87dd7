"""The scenario builder's calendar, off-peak, fleet-edit and latency sections (dashboard.forms.region_sections,
dashboard.forms.fleet_latency) in Streamlit's AppTest: each row starts at what the region keeps by default,
only what the user changed reaches the scenario, the dict they build gives the same Scenario through a TOML
file as through Scenario.from_dict, and what the parser refuses shows the parser's message and adds nothing."""
from __future__ import annotations

import pandas as pd
from conftest import shown
from streamlit.testing.v1 import AppTest

from dashboard.forms.region_sections import calendar_frame, merged, off_peak_frame
from engine.scenario.edits import FleetEdit
from engine.scenario.files import scenario_toml
from engine.scenario.spec import Scenario
from engine.scenario.world import OFF_PEAK, RegionEdit
from engine.world.latency import Latency

REGIONS = pd.DataFrame({"region": ["eu-west", "me-central", "lab"], "timezone": ["Europe/Dublin", "Asia/Riyadh", "UTC"],
                        "country": ["IE", "SA", None]})
FLEET = pd.DataFrame({"region": ["eu-west", "eu-west", "me-central"], "gpu_type": ["H100", "H100", "A100"],
                      "tier": ["reserved", "on-demand", "reserved"], "gpus": [8, 8, 4],
                      "node": ["e0", "e1", "m0"]})


def _sections():
    import streamlit as st
    from test_builder_region_fleet_latency import FLEET, REGIONS

    from dashboard.forms.fleet_latency import fleet_section, latency_section
    from dashboard.forms.region_sections import calendar_choice, calendar_section, off_peak_section

    st.session_state["built"] = {
        "calendars": calendar_section("t", REGIONS), "off_peak": off_peak_section("t", REGIONS),
        "calendar": calendar_choice("t"),
        "fleet": fleet_section("t", ["eu-west", "me-central"], ["A100", "H100"], FLEET),
        "latency": latency_section("t", ["eu-west", "me-central"])}


def _app() -> AppTest:
    app = AppTest.from_function(_sections, default_timeout=60)
    app.run()
    assert not app.exception, app.exception
    return app


def _edit(app: AppTest, key: str, edited: dict | None = None, added: list | None = None) -> AppTest:
    app.session_state[key] = {"edited_rows": edited or {}, "added_rows": added or [], "deleted_rows": []}
    app.run()
    assert not app.exception, app.exception
    return app


def _same_through_toml(data: dict, tmp_path) -> Scenario:
    """Scenario.from_dict(data), after checking that the same dict written as TOML loads to the same Scenario."""
    path = tmp_path / "built.toml"
    path.write_text(scenario_toml(data), encoding="utf-8")
    direct = Scenario.from_dict(data, default_name="built")
    assert Scenario.load(path) == direct
    return direct


def test_untouched_sections_add_nothing_and_rows_start_at_the_regions_defaults():
    app = _app()
    assert app.session_state["built"] == {"calendars": {}, "off_peak": {}, "calendar": {}, "fleet": [], "latency": {}}
    assert not app.error
    frame = calendar_frame(REGIONS)
    # Saudi Arabia works Sun-Thu, Ireland Mon-Fri; a region without a country: Mon-Fri, no holidays
    assert frame[["region", "country_week", "working_days", "holiday_country"]].values.tolist() == [
        ["eu-west", "Mon-Fri", "Mon-Fri", "IE"], ["me-central", "Sun-Thu", "Sun-Thu", "SA"], ["lab", "Mon-Fri", "Mon-Fri", ""]]
    assert frame[["work_start_hour", "work_end_hour"]].drop_duplicates().values.tolist() == [[9, 18]]
    assert off_peak_frame(REGIONS)[list(OFF_PEAK)].isna().all().all()          # no window unless the table has one


def test_a_calendar_edit_reaches_the_scenario_as_the_same_toml_would(tmp_path):
    app = _edit(_app(), "t:calendars", {0: {"working_days": "Sun-Thu", "work_start_hour": 8, "holiday_country": "DE-BY"},
                                        1: {"holiday_country": None}, 2: {"work_end_hour": 18}})
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]["calendars"]
    # lab's 18 is its default: no edit; me-central's blanked holidays: none ("")
    assert built == {"eu-west": {"working_days": "Sun-Thu", "work_start_hour": 8, "holiday_country": "DE-BY"},
                     "me-central": {"holiday_country": ""}}
    scenario = _same_through_toml({"region": merged(built)}, tmp_path)
    assert scenario.region_edits == (RegionEdit("eu-west", working_days="Sun-Thu", work_start_hour=8,
                                                holiday_country="DE-BY"), RegionEdit("me-central", holiday_country=""))


def test_an_unknown_holiday_country_shows_the_parsers_message_and_adds_nothing():
    app = _edit(_app(), "t:calendars", {0: {"holiday_country": "XX"}, 1: {"working_days": "Mon-Fri"}})
    assert [shown(e) for e in app.error] == [
        "Calendars: [[region]] eu-west: holiday country 'XX': not a country of the holidays package; use an ISO 3166 "
        "alpha-2 code such as US, DE or JP, optionally with a subdivision: US-CA, DE-BY"]
    assert app.session_state["built"]["calendars"] == {}


def test_an_off_peak_window_reaches_the_scenario_and_half_a_window_is_refused(tmp_path):
    app = _edit(_app(), "t:off_peak", {1: {"off_peak_start_hour": 22, "off_peak_end_hour": 6, "off_peak_discount": 0.3}})
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]["off_peak"]
    assert built == {"me-central": {"off_peak_start_hour": 22, "off_peak_end_hour": 6, "off_peak_discount": 0.3}}
    scenario = _same_through_toml({"region": merged(built, {"me-central": {"price_scale": 0.8}})}, tmp_path)
    assert scenario.region_edits == (RegionEdit("me-central", price_scale=0.8, off_peak_start_hour=22,
                                                off_peak_end_hour=6, off_peak_discount=0.3),)
    app = _edit(_app(), "t:off_peak", {0: {"off_peak_start_hour": 22}})
    assert [shown(e) for e in app.error] == [
        "Off-peak windows: [[region]] eu-west: an off-peak window needs off_peak_start_hour, off_peak_end_hour and "
        "off_peak_discount together"]
    assert app.session_state["built"]["off_peak"] == {}


def test_fleet_edits_reach_the_scenario_and_edit_the_fleet_by_whole_nodes(tmp_path):
    app = _edit(_app(), "t:fleet", added=[{"region": "eu-west", "gpu_type": "H100", "gpus": 12},
                                          {"region": "me-central", "gpu_type": "A100", "tier": "reserved", "gpus": -4},
                                          {"region": "eu-west", "gpu_type": "H100", "gpus": 0}])
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]["fleet"]
    assert built == [{"region": "eu-west", "gpu_type": "H100", "add_gpus": 12},
                     {"region": "me-central", "gpu_type": "A100", "remove_gpus": 4, "tier": "reserved"}]
    scenario = _same_through_toml({"fleet": built}, tmp_path)
    assert scenario.fleet_edits == (FleetEdit("eu-west", "H100", 12), FleetEdit("me-central", "A100", -4, "reserved"))
    _, fleet = scenario.apply(pd.DataFrame({"submit_utc": pd.Series(dtype="datetime64[ns]")}), FLEET)
    # 12 GPUs = 2 clones of eu-west's last 8-GPU H100 node (rounded up): 8 + 8 + 16; me-central's only node removed
    assert fleet.groupby("region")["gpus"].sum().to_dict() == {"eu-west": 32}


def test_a_fleet_edit_the_dataset_cannot_take_shows_the_message_and_adds_nothing():
    app = _edit(_app(), "t:fleet", added=[{"region": "me-central", "gpu_type": "H100", "gpus": 8}])
    assert [shown(e) for e in app.error] == [
        "Fleet edits: fleet edit: no H100 nodes in region 'me-central'; regions with that type: eu-west"]
    assert app.session_state["built"]["fleet"] == []


def test_latency_pairs_and_the_slo_reach_the_scenario(tmp_path):
    app = _app()
    slo = app.number_input(key="t:latency:slo_ms")
    assert (slo.value, slo.min, slo.max) == (100.0, 0.0, 60_000.0)   # Latency.slo_ms's declaration
    slo.set_value(80.0)
    app = _edit(app, "t:latency", added=[{"a": "me-central", "b": "eu-west", "ms": 120.0}, {"a": "eu-west"}])
    assert not app.error, [e.value for e in app.error]
    built = app.session_state["built"]["latency"]
    assert built == {"slo_ms": 80.0, "ms": {"me-central:eu-west": 120.0}}
    scenario = _same_through_toml({"latency": built}, tmp_path)
    assert scenario.latency == Latency(80.0, {("eu-west", "me-central"): 120.0})


def test_a_pair_of_one_region_or_beyond_the_range_shows_the_parsers_message_and_adds_nothing():
    app = _edit(_app(), "t:latency", added=[{"a": "eu-west", "b": "eu-west", "ms": 5.0}])
    assert [shown(e) for e in app.error] == ["[latency]: [latency] ms key 'eu-west:eu-west' must name two regions "
                                             "as \"a:b\""]
    assert app.session_state["built"]["latency"] == {}
    app = _edit(_app(), "t:latency", added=[{"a": "eu-west", "b": "me-central", "ms": 70_000.0}])
    assert [shown(e) for e in app.error] == ["[latency]: [latency] ms 'eu-west:me-central' must be from 0 to 60,000 "
                                             "(ms), got 70000.0"]
    assert app.session_state["built"]["latency"] == {}


def test_the_teams_hours_toggle_sets_the_calendar_key(tmp_path):
    app = _app()
    app.toggle(key="t:calendar_choice").set_value(True).run()
    assert not app.exception, app.exception
    built = app.session_state["built"]["calendar"]
    assert built == {"calendar": "team"}
    assert _same_through_toml({"name": "b", **built}, tmp_path).calendar == "team"


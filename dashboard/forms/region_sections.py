"""The scenario builder's [[region]] sections: prices and carbon per picked region, a calendar table
(working week, hours, holidays) and an off-peak table with a row per region of the dataset's regions
table. The tables' columns are drawn from RegionEdit's declarations (engine.scenario.world: label, help,
unit and range or the weeks offered). Each section gives {region: the fields that differ from what the
region keeps by default}; `merged` joins them into one [[region]] entry per region, as the parser wants.

Widget keys: "{prefix}:regions" (the regions whose prices and carbon are edited),
"{prefix}:region:{region}:price_scale" and ":carbon_scale", "{prefix}:calendars" and "{prefix}:off_peak"
(the tables), "{prefix}:calendar_choice" (the top-level `calendar` key: the teams' hours instead of the
regions'). A calendar row starts at what the region keeps by default: its own working_days, else its
country's week (shown beside it, engine.world.countries), 9-18, its country's public holidays; an
off-peak row at the regions table's window (blank: none). A section the parser refuses shows its message
and adds nothing.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dashboard.forms.declared import checked, declared_column
from engine.core.escaping import markdown_text
from engine.scenario.world import CALENDAR_KEYS, OFF_PEAK, declared, parse_region_edits
from engine.world.calendar import REGION_END_HOUR, REGION_START_HOUR
from engine.world.countries import working_days_of
from engine.world.team_hours import TEAM

HOURS = ("work_start_hour", "work_end_hour", "off_peak_start_hour", "off_peak_end_hour")
SCALES = {"price_scale": ("price ×", "multiplies all its prices, every tier"),
          "carbon_scale": ("carbon ×", "multiplies its hourly grid intensity")}


def _blank(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str)
                                                                                 and not value.strip())


def _cell(name: str, value):
    """A table cell as the scenario file holds it: hours whole, the discount a float, text stripped; a
    blank holiday cell is "" (no holidays), any other blank cell None."""
    if _blank(value):
        return "" if name == "holiday_country" else None
    if name in HOURS:
        return int(value) if float(value) == int(value) else float(value)
    return float(value) if name == "off_peak_discount" else str(value).strip()


def _column(regions: pd.DataFrame, name: str) -> list:
    return list(regions[name]) if name in regions else [None] * len(regions)


def calendar_frame(regions: pd.DataFrame) -> pd.DataFrame:
    """What each region of the regions table keeps by default: its country, that country's week, its
    working week (its own working_days, else its country's), 9-18 and its country's holidays."""
    names = [str(r) for r in _column(regions, "region")]
    countries = ["" if _blank(c) else str(c) for c in _column(regions, "country")]
    weeks = [working_days_of(c or None) for c in countries]
    own = [w if _blank(o) else str(o) for o, w in zip(_column(regions, "working_days"), weeks)]
    text = {name: pd.Series(values, dtype=object) for name, values in (
        ("region", names), ("country", countries), ("country_week", weeks), ("working_days", own))}
    hours = {name: pd.Series([hour] * len(names), dtype="int64") for name, hour in (
        ("work_start_hour", REGION_START_HOUR), ("work_end_hour", REGION_END_HOUR))}
    return pd.DataFrame({**text, **hours, "holiday_country": pd.Series(countries, dtype=object)})


def off_peak_frame(regions: pd.DataFrame) -> pd.DataFrame:
    """Each region's off-peak window in the regions table (blank: none)."""
    frame = pd.DataFrame({"region": pd.Series([str(r) for r in _column(regions, "region")], dtype=object)})
    for name in OFF_PEAK:
        frame[name] = pd.to_numeric(pd.Series(_column(regions, name), dtype=object), errors="coerce").astype("float64")
    return frame


def changes(edited: pd.DataFrame, prefill: pd.DataFrame, names: tuple[str, ...]) -> dict[str, dict]:
    """{region: {field: value}} of the cells of `names` that differ from the prefill (a blank number cell
    is no change; a blank holiday cell is "" (no holidays) when the region kept some)."""
    out = {}
    for row, before in zip(edited.to_dict("records"), prefill.to_dict("records")):
        entry = {}
        for name in names:
            value, default = _cell(name, row.get(name)), _cell(name, before.get(name))
            if value is not None and value != default:
                entry[name] = value
        if entry:
            out[before["region"]] = entry
    return out


def _region_table(key: str, prefill: pd.DataFrame, names: tuple[str, ...], what: str, shown: dict,
                  required: tuple[str, ...] = ()) -> dict[str, dict]:
    """A table of one row per region, its columns `names` drawn from RegionEdit's declarations (plus the
    read-only columns of `shown`; `required` ones cannot be emptied); the regions' changed cells when the
    parser accepts them all, else {} with the parser's message shown."""
    if prefill.empty:
        st.caption("The dataset has no regions table: no region to edit.")
        return {}
    config = {**shown, **{name: declared_column(declared(name), required=name in required) for name in names}}
    edited = st.data_editor(prefill, hide_index=True, num_rows="fixed", key=key, disabled=("region", *shown),
                            column_config=config)
    return checked(changes(edited, prefill, names), lambda table, where: parse_region_edits(
        [{"region": region, **fields} for region, fields in table.items()], where), what)


def calendar_choice(prefix: str) -> dict:
    """The scenario's top-level `calendar` key ("{prefix}:calendar_choice"): {} for region calendars (the
    default), {"calendar": "team"} for the teams table's (engine.world.team_hours)."""
    teams = st.toggle("Count the teams' own working hours", key=f"{prefix}:calendar_choice",
                      help="calendar = \"team\": a job's home is at work on its team's calendar (teams table: "
                           "time zone, hours, week, holidays), a region while any team homed there is; follow-the-sun "
                           "routing, timing and the live hand-off read it (a region's day starts once per team)")
    return {"calendar": TEAM} if teams else {}


def calendar_section(prefix: str, regions: pd.DataFrame) -> dict[str, dict]:
    """The calendar table: working week, working hours and holidays per region."""
    st.caption("When each region's people work, in its local time: follow-the-sun routing, the off-hours "
               "facts every router sees, the Time zones page and the reclaim clock read it. A row starts at "
               "what the region keeps by default; change a cell to edit it.")
    week = st.column_config.TextColumn("country's week", help="the working week of its country "
                                                              "(engine.world.countries; Sun-Thu in Saudi Arabia, "
                                                              "Sat-Wed in Iran, ...)")
    return _region_table(f"{prefix}:calendars", calendar_frame(regions), CALENDAR_KEYS, "Calendars",
                         {"country": st.column_config.TextColumn("country"), "country_week": week},
                         required=("working_days", "work_start_hour", "work_end_hour"))


def off_peak_section(prefix: str, regions: pd.DataFrame) -> dict[str, dict]:
    """The off-peak table: a discounted local window per region (all three cells, or none)."""
    st.caption("Local hours in which on-demand and spot GPU-hours cost less: the cost report counts them and "
               "price-aware routing sees the discounted price at the hour it routes. A window needs all three "
               "cells.")
    return _region_table(f"{prefix}:off_peak", off_peak_frame(regions), OFF_PEAK, "Off-peak windows", {})


def price_carbon_section(prefix: str, names: list[str]) -> dict[str, dict]:
    """Prices and carbon of the regions picked: each a multiplier, 1 leaving it alone."""
    picked = st.multiselect("Edit regions", names, key=f"{prefix}:regions",
                            help="prices and carbon steer the cheapest and lowest-carbon routers and the cost and "
                                 "carbon figures")
    out = {}
    for region in picked:
        columns = st.columns(len(SCALES))
        values = {name: column.number_input(f"{markdown_text(region)} · {label}", min_value=0.01, value=1.0, step=0.05,
                                            key=f"{prefix}:region:{region}:{name}", help=helped)
                  for column, (name, (label, helped)) in zip(columns, SCALES.items())}
        values = {name: float(value) for name, value in values.items() if value != 1.0}
        if values:
            out[region] = values
    return out


def merged(*sections: dict[str, dict]) -> list[dict]:
    """One [[region]] entry per region edited by any of `sections`, in the order first edited."""
    out: dict[str, dict] = {}
    for section in sections:
        for region, fields in section.items():
            out.setdefault(region, {"region": region}).update(fields)
    return list(out.values())

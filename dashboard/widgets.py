"""A scenario form built from the policy registry: one selectbox per family with its registered
keys, then one input per parameter of the chosen policy, typed from the parameter's type and default.

Widget keys: "{prefix}:{family}" for the policy choice, "{prefix}:{family}:{key}:{parameter}" for a
parameter. A "Regions" expander edits regions of the current dataset (engine.scenario_world):
"{prefix}:regions" picks them, "{prefix}:region:{region}:{field}" holds price_scale, carbon_scale,
working_days, work_start_hour and work_end_hour; inputs left at their defaults (x1, Mon-Fri 9-18) edit
nothing. The form returns the scenario as the dict Scenario.from_dict reads.
"""
from __future__ import annotations

import streamlit as st

from dashboard import data
from engine.policies import registry
from engine.scenario import DEFAULTS
from engine.world.calendar import REGION_END_HOUR, REGION_START_HOUR, REGION_WORKING_DAYS

WORKING_WEEKS = ("Mon-Fri", "Sun-Thu", "Sat-Wed", "Mon-Sat", "Mon-Sun")
REGION_DEFAULTS = {"price_scale": 1.0, "carbon_scale": 1.0, "working_days": REGION_WORKING_DAYS,
                   "work_start_hour": REGION_START_HOUR, "work_end_hour": REGION_END_HOUR}


def _parameter_input(family: str, key: str, param: registry.Parameter, prefix: str):
    widget_key = f"{prefix}:{family}:{key}:{param.name}"
    label = f"{key} · {param.name}"
    if param.type is bool:
        return st.checkbox(label, value=bool(param.default), help=param.help or None, key=widget_key)
    if param.type is int:
        return int(st.number_input(label, value=int(param.default), step=1, help=param.help or None,
                                   key=widget_key))
    if param.type is float:
        return float(st.number_input(label, value=float(param.default), help=param.help or None,
                                     key=widget_key))
    return st.text_input(label, value=str(param.default), help=param.help or None, key=widget_key)


def _dataset_regions() -> list[str]:
    """The regions of the dataset picked in the sidebar (its regions and prices tables), sorted."""
    dataset = st.session_state.get("dataset")
    if not dataset:
        return []
    tables = data.world_tables(dataset)
    return sorted({str(r) for name in ("regions", "prices") if "region" in tables[name]
                   for r in tables[name]["region"].dropna()})


def _region_edit(region: str, prefix: str) -> dict:
    """One region's inputs in a row; the [[region]] entry with the values that differ from the defaults."""
    key = f"{prefix}:region:{region}"
    price, carbon, week, start, end = st.columns(5)
    values = {
        "price_scale": price.number_input(f"{region} · price ×", min_value=0.01, value=1.0, step=0.05,
                                          key=f"{key}:price_scale", help="multiplies all its prices, every tier"),
        "carbon_scale": carbon.number_input(f"{region} · carbon ×", min_value=0.01, value=1.0, step=0.05,
                                            key=f"{key}:carbon_scale", help="multiplies its hourly grid intensity"),
        "working_days": week.selectbox("working days", WORKING_WEEKS, key=f"{key}:working_days"),
        "work_start_hour": int(start.number_input("starts (h)", 0, 23, REGION_START_HOUR,
                                                  key=f"{key}:work_start_hour")),
        "work_end_hour": int(end.number_input("ends (h)", 0, 23, REGION_END_HOUR, key=f"{key}:work_end_hour")),
    }
    return {"region": region, **{k: v for k, v in values.items() if v != REGION_DEFAULTS[k]}}


def scenario_form(prefix: str = "custom") -> dict:
    """Draw the form; return {"name", "policies": {family: {"key": ..., **parameters}}} and, when a
    region is edited, "region": [{"region": ..., edited fields}, ...]."""
    name = st.text_input("Name", value="custom", key=f"{prefix}:name")
    policies = {}
    families = registry.families()
    columns = st.columns(len(families))
    for column, (family, keys) in zip(columns, families.items()):
        with column:
            default = DEFAULTS.get(family, keys[0])
            key = st.selectbox(family.capitalize(), keys, index=keys.index(default) if default in keys else 0,
                               key=f"{prefix}:{family}")
            spec = {"key": key}
            for param in registry.parameters(family, key):
                spec[param.name] = _parameter_input(family, key, param, prefix)
            policies[family] = spec
    scenario = {"name": name.strip() or "custom", "policies": policies}
    with st.expander("Regions: prices, carbon, working hours"):
        picked = st.multiselect("Edit regions", _dataset_regions(), key=f"{prefix}:regions",
                                help="local working hours steer follow-the-sun; prices and carbon steer the "
                                     "cheapest and lowest-carbon routers and the cost and carbon figures")
        edits = [edit for edit in (_region_edit(region, prefix) for region in picked) if len(edit) > 1]
    if edits:
        scenario["region"] = edits
    return scenario

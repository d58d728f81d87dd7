"""A scenario form built from the policy registry: one selectbox per family with its registered
keys, then one input per parameter of the chosen policy, typed from the parameter's type and default.

Widget keys: "{prefix}:{family}" for the policy choice, "{prefix}:{family}:{key}:{parameter}" for a
parameter. The form returns the scenario as the dict Scenario.from_dict reads.
"""
from __future__ import annotations

import streamlit as st

from engine.policies import registry
from engine.scenario import DEFAULTS


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


def scenario_form(prefix: str = "custom") -> dict:
    """Draw the form; return {"name", "policies": {family: {"key": ..., **parameters}}}."""
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
    return {"name": name.strip() or "custom", "policies": policies}

"""The scenario builder's [partitions] section (engine.world.partitions.Partitions): MIG instances for
inference and development jobs, or time-slicing / MPS with interference between co-tenants.

Drawn from Partitions' declarations (dashboard.forms.declared): a checkbox for its switches, a
select box for each field with choices (the mode, each class's profile), a bounded number input for
each number. Widget keys "{prefix}:partitions:{field}". Off unless ticked; then only what differs from
the defaults, checked by the scenario parser (engine.scenario.partitions)."""
from __future__ import annotations

from dataclasses import fields

import streamlit as st

from dashboard.forms.declared import checked, declared_input, label_of
from engine.scenario.partitions import parse_partitions
from engine.world.partitions import Partitions

MIG_ONLY = ("inference_profile", "development_profile", "reconfigure_s", "idle_s")  # the rest: time-slicing, MPS


def partitions_section(prefix: str) -> dict:
    """The [partitions] table, {} unless "Partition GPUs" is ticked."""
    st.caption("MIG: a job of the rule (inference or development, one GPU at most on one node of an A100 or H100) "
               "gets an instance of its class's profile at a valid position, a GPU switching into MIG mode being "
               "unusable for the reconfiguration time. Time-slicing and MPS: the rule's jobs ask for one replica "
               "and every job sharing a GPU runs 1 + c k times slower with k co-tenants (the defaults and their "
               "sources: the README, on `[partitions]`).")
    defaults, entry = Partitions(), {}
    left, right = st.columns(2)
    for spec in fields(Partitions):
        if spec.name == "gpu_models":  # a fleet's model names: in the TOML file only
            continue
        column = left if spec.name == "enabled" or spec.name in MIG_ONLY or spec.name == "mode" else right
        key, default = f"{prefix}:partitions:{spec.name}", getattr(defaults, spec.name)
        with column:
            if "choices" in spec.metadata:
                choices = list(spec.metadata["choices"])
                value = st.selectbox(label_of(spec), choices, index=choices.index(default), key=key,
                                     help=spec.metadata.get("help"))
            else:
                value = declared_input(spec, key, default)
        if value != default:
            entry[spec.name] = value
    if not entry.pop("enabled", False):
        return {}
    return checked({"enabled": True, **entry}, parse_partitions, "[partitions]")

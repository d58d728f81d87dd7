"""The scenario builder's region roles section: the [roles] table (engine.scenario.roles) and the edge
locations it may add as [[fleet]] edits with `like` (engine.scenario.edits), drawn from the declarations of
engine.world.roles.Roles (each role's label and help, the checkpoint places offered, the numbers' units and
ranges) and of FleetEdit (the edge table's columns).

Widget keys: "{prefix}:edges" (a table of new edge locations: name, like region, GPU type, tier, GPUs),
"{prefix}:roles:{role}" (a multiselect of regions per role; the new edge locations are edge already),
"{prefix}:roles:checkpoints", "{prefix}:roles:datasets", "{prefix}:roles:dataset_names" (names separated by
commas) and "{prefix}:roles:{number}". `roles_section` returns the [roles] table
and the [[fleet]] entries of the edge locations; what the parser refuses shows its message and adds nothing.
"""
from __future__ import annotations

import math
from dataclasses import fields

import pandas as pd
import streamlit as st

from dashboard.forms.declared import blank, checked, declared_column, declared_input, empty_table, field_of, label_of
from engine.core.vocabulary import TIERS
from engine.scenario.edits import FleetEdit, parse_fleet_edit
from engine.scenario.roles import parse_roles
from engine.world.roles import CHECKPOINT_PLACES, DATASET_CHOICES, ROLE_NAMES, Roles

EDGE_COLUMNS = ("region", "like", "gpu_type", "tier", "gpus")
NUMBERS = ("storage_usd_per_gb_month", "restore_delay_s", "checkpoint_gb_per_gpu", "dataset_idle_days")


def edge_frame() -> pd.DataFrame:
    """The empty table of edge locations the editor starts from."""
    return empty_table(EDGE_COLUMNS, ("gpus",))


def edge_entries(frame: pd.DataFrame) -> list[dict]:
    """[[fleet]] entries (add_gpus with like) of the complete rows of the edge table."""
    out = []
    for row in frame.to_dict("records"):
        if any(blank(row.get(name)) for name in ("region", "like", "gpu_type", "gpus")) or row["gpus"] <= 0:
            continue
        entry = {"region": str(row["region"]).strip(), "like": str(row["like"]), "gpu_type": str(row["gpu_type"]),
                 "add_gpus": int(math.ceil(float(row["gpus"])))}
        if not blank(row.get("tier")):
            entry["tier"] = str(row["tier"])
        out.append(entry)
    return out


def roles_entry(chosen: dict[str, list[str]], edges: list[dict], checkpoints: str, numbers: dict,
                datasets: str = "none", names: str = "") -> dict:
    """The [roles] table: each role's regions (the edge locations added to edge), checkpoints, the archived
    datasets (`names`: dataset names separated by commas) and the numbers when not their defaults; {} when
    nothing is set."""
    roles = {role: list(dict.fromkeys(regions)) for role, regions in chosen.items() if regions}
    new = [entry["region"] for entry in edges]
    if new:
        roles["edge"] = list(dict.fromkeys([*roles.get("edge", []), *new]))
    defaults = Roles()
    if checkpoints != defaults.checkpoints:
        roles["checkpoints"] = checkpoints
    if datasets != defaults.datasets:
        roles["datasets"] = datasets
    listed = [name.strip() for name in names.split(",") if name.strip()]
    if listed:
        roles["dataset_names"] = listed
    roles.update({name: value for name, value in numbers.items() if value != getattr(defaults, name)})
    return roles


def _parse_edges(entries: list[dict], where: str) -> None:
    for entry in entries:
        parse_fleet_edit(entry, where)


def roles_section(prefix: str, regions: list[str], gpu_types: list[str]) -> tuple[dict, list[dict]]:
    """([roles] table, the edge locations' [[fleet]] entries)."""
    st.caption("A region may hold several roles. Edge locations are small inference fleets near users: latency-aware "
               "routing serves inference there first (within the SLO of its users, with round trips under *Latency*); "
               "no other work runs there. Overflow and disaster recovery limit where moved work may go; archive "
               "regions keep the checkpoints of evicted jobs when checkpoints go to the archive, and the datasets chosen "
               "(all, or named ones; from the start, or once idle for some days) until a job needs them again.")
    st.markdown("**New edge locations**, each modelled on a region (its time zone, jurisdiction, prices and grid)")
    declared = {spec.name: spec for spec in fields(FleetEdit)}
    edited = st.data_editor(edge_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:edges", column_config={
        "region": st.column_config.TextColumn("Edge location", help="a new region's name", required=True),
        "like": declared_column(declared["like"], regions, required=True),
        "gpu_type": declared_column(declared["gpu_type"], gpu_types, required=True),
        "tier": declared_column(declared["tier"], TIERS),
        "gpus": st.column_config.NumberColumn("GPUs", min_value=1, step=1, format="%d", required=True,
                                              help="added as whole nodes of the like region's")})
    edges = checked(edge_entries(edited), _parse_edges, "Edge locations")
    options = list(dict.fromkeys([*regions, *(entry["region"] for entry in edges)]))
    chosen = {}
    left, right = st.columns(2)
    with left:
        for role in ROLE_NAMES:
            spec = field_of(Roles, role)
            chosen[role] = st.multiselect(label_of(spec), options, key=f"{prefix}:roles:{role}",
                                          help=spec.metadata.get("help"))
    with right:
        spec = field_of(Roles, "checkpoints")
        checkpoints = st.selectbox(label_of(spec), CHECKPOINT_PLACES, key=f"{prefix}:roles:checkpoints",
                                   help=spec.metadata.get("help"))
        spec = field_of(Roles, "datasets")
        datasets = st.selectbox(label_of(spec), DATASET_CHOICES, key=f"{prefix}:roles:datasets",
                                help=spec.metadata.get("help"))
        spec = field_of(Roles, "dataset_names")
        names = st.text_input(label_of(spec), key=f"{prefix}:roles:dataset_names",
                              help=f"{spec.metadata.get('help')}; separated by commas")
        numbers = {name: declared_input(field_of(Roles, name), f"{prefix}:roles:{name}", getattr(Roles(), name))
                   for name in NUMBERS}
    entry = roles_entry(chosen, edges, checkpoints, numbers, datasets, names)
    return checked(entry, parse_roles, "[roles]"), edges

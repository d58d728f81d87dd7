"""The scenario builder's [[fleet]] edits and [latency] table, drawn from their declarations:
engine.scenario.edits.FleetEdit's fields (region, GPU type, GPUs to add or remove with their range,
tier) and engine.world.latency's (Latency.slo_ms and LatencyPair: unit, range, label, help).

Widget keys "{prefix}:fleet" (a table, one edit a row, applied in order), "{prefix}:latency:slo_ms" and
"{prefix}:latency" (a table of region pairs and their round trip). Each returns only what edits the
scenario; what the parser (or, for fleet edits, applying them to the dataset's fleet) refuses shows its
message and adds nothing.
"""
from __future__ import annotations

from dataclasses import fields

import pandas as pd
import streamlit as st

from dashboard.forms.declared import blank, checked, declared_column, declared_input, empty_table, field_of
from engine.core.errors import ScenarioError
from engine.core.vocabulary import TIERS
from engine.scenario.edits import FleetEdit, edit_fleet, parse_fleet_edit
from engine.world.latency import DEFAULT_SLO_MS, Latency, LatencyPair, parse_latency

FLEET_COLUMNS = ("region", "gpu_type", "tier", "gpus")


def fleet_frame() -> pd.DataFrame:
    """The empty fleet-edit table the editor starts from."""
    return empty_table(FLEET_COLUMNS, ("gpus",))


def fleet_entries(frame: pd.DataFrame) -> list[dict]:
    """[[fleet]] entries of the edited table: rows with a region, a GPU type and GPUs other than 0; a
    positive count is add_gpus, a negative one remove_gpus; a blank tier is any."""
    out = []
    for row in frame.to_dict("records"):
        if any(blank(row.get(name)) for name in ("region", "gpu_type", "gpus")) or row["gpus"] == 0:
            continue
        gpus = int(row["gpus"]) if float(row["gpus"]) == int(row["gpus"]) else float(row["gpus"])
        entry = {"region": str(row["region"]), "gpu_type": str(row["gpu_type"]),
                 "add_gpus" if gpus > 0 else "remove_gpus": abs(gpus)}
        if not blank(row.get("tier")):
            entry["tier"] = str(row["tier"])
        out.append(entry)
    return out


def _applies(entries: list[dict], fleet: pd.DataFrame | None, source: str) -> None:
    """Each entry passes the parser and, in order, applies to the dataset's `fleet` (when given)."""
    edits = [parse_fleet_edit(entry, source) for entry in entries]
    for edit in edits if fleet is not None and len(fleet) else ():
        try:
            fleet = edit_fleet(fleet, edit)
        except ScenarioError as exc:
            raise ScenarioError(f"{source}: {exc}") from None


def fleet_section(prefix: str, regions: list[str], gpu_types: list[str], fleet: pd.DataFrame | None) -> list[dict]:
    """The [[fleet]] edits: whole nodes added to or removed from a region's GPU type."""
    st.caption("Whole nodes added (cloned from the region's last node of the type, rounded up to a whole node) "
               "or removed (its last nodes), one row an edit, applied in order before the run.")
    declared = {spec.name: spec for spec in fields(FleetEdit)}
    edited = st.data_editor(fleet_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:fleet", column_config={
        "region": declared_column(declared["region"], regions, required=True),
        "gpu_type": declared_column(declared["gpu_type"], gpu_types, required=True),
        "tier": declared_column(declared["tier"], TIERS),
        "gpus": declared_column(declared["gpus"], required=True)})
    return checked(fleet_entries(edited), lambda entries, where: _applies(entries, fleet, where), "Fleet edits")


def latency_frame() -> pd.DataFrame:
    """The empty table of region pairs the editor starts from."""
    return pd.DataFrame({"a": pd.Series(dtype=object), "b": pd.Series(dtype=object), "ms": pd.Series(dtype="float64")})


def latency_entry(slo_ms: float, frame: pd.DataFrame) -> dict:
    """The [latency] table: slo_ms when not the default, ms {"a:b": round trip} of the complete rows;
    {} when neither (no table: only a job's home meets the SLO)."""
    pairs = {f"{row['a']}:{row['b']}": float(row["ms"]) for row in frame.to_dict("records")
             if not any(blank(row.get(name)) for name in ("a", "b", "ms"))}
    entry = {"slo_ms": float(slo_ms)} if slo_ms != DEFAULT_SLO_MS else {}
    return {**entry, "ms": pairs} if pairs else entry


def latency_section(prefix: str, regions: list[str]) -> dict:
    """The [latency] table: the inference SLO and the round trip between pairs of regions."""
    st.caption("Round trips between regions, the same both ways; a pair not given is unreachable within any SLO. "
               "Latency-aware routing serves inference from the nearest region within the SLO of its users (its "
               "home), and soft-constraint routing weighs it.")
    slo = declared_input(field_of(Latency, "slo_ms"), f"{prefix}:latency:slo_ms", DEFAULT_SLO_MS)
    pair = {spec.name: spec for spec in fields(LatencyPair)}
    edited = st.data_editor(latency_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:latency",
                            column_config={"a": declared_column(pair["a"], regions, required=True),
                                           "b": declared_column(pair["b"], regions, required=True),
                                           "ms": declared_column(pair["ms"], required=True)})
    return checked(latency_entry(slo, edited), lambda table, where: parse_latency(table, where, ScenarioError),
                   "[latency]")


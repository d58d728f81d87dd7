"""The scenario builder's "Cloud burst" table: one row per [[burst]] pool (engine.scenario.burst).

Widget key "{prefix}:burst". Rows with no region are ignored; a blank price takes the region's
on-demand price for the GPU type. The pools reach the scenario as its "burst" list once valid;
an invalid table shows the parser's message and adds nothing.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.scenario.burst import BurstPool, parse_bursts

NUMBERS = ("max_nodes", "gpus_per_node", "provision_min", "trigger_wait_min", "idle_release_min", "usd_per_gpu_hour")
WHOLE = ("max_nodes", "gpus_per_node")
DEFAULT = BurstPool(region="", gpu_type="")


def burst_frame() -> pd.DataFrame:
    """The empty table the editor starts from."""
    return pd.DataFrame({"region": pd.Series(dtype=object), "gpu_type": pd.Series(dtype=object),
                         **{name: pd.Series(dtype=float) for name in NUMBERS}})


def burst_entries(frame: pd.DataFrame) -> list[dict]:
    """The [[burst]] entries of the edited table: rows with a region, blank cells left out (the
    parser's defaults), whole-number columns as integers."""
    out = []
    for row in frame.to_dict("records"):
        if not isinstance(row.get("region"), str) or not row["region"].strip():
            continue
        entry = {"region": row["region"], "gpu_type": row.get("gpu_type") if isinstance(row.get("gpu_type"), str) else ""}
        for name in NUMBERS:
            value = row.get(name)
            if value is not None and value == value:
                entry[name] = int(value) if name in WHOLE and float(value).is_integer() else float(value)
        out.append(entry)
    return out


def burst_section(prefix: str, regions: list[str], gpu_types: list[str]) -> list[dict]:
    """Draw the table; return the valid [[burst]] entries ([] when none or invalid)."""
    st.caption("Cloud capacity a region rents when the job at the front of its queue has waited the trigger "
               f"time: up to max_nodes nodes (default {DEFAULT.max_nodes} x {DEFAULT.gpus_per_node} GPUs), usable "
               f"after the provisioning delay (default {DEFAULT.provision_min:.0f} min), billed from renting until "
               f"handed back after idle_release_min idle minutes (default {DEFAULT.idle_release_min:.0f}). "
               "A blank price is the region's on-demand price.")
    number = st.column_config.NumberColumn
    edited = st.data_editor(burst_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:burst",
                            column_config={
                                "region": st.column_config.SelectboxColumn(options=regions, required=True),
                                "gpu_type": st.column_config.SelectboxColumn("GPU type", options=gpu_types,
                                                                             required=True),
                                "max_nodes": number("max nodes", min_value=1, step=1),
                                "gpus_per_node": number("GPUs per node", min_value=1, step=1),
                                "provision_min": number("provisioning (min)", min_value=0.0, format="%g"),
                                "trigger_wait_min": number("trigger wait (min)", min_value=0.0, format="%g"),
                                "idle_release_min": number("released after idle (min)", min_value=0.0, format="%g"),
                                "usd_per_gpu_hour": number("USD per GPU-hour", min_value=0.0, format="$%.2f")})
    entries = burst_entries(edited)
    try:
        parse_bursts(entries, "cloud burst")
    except ScenarioError as exc:
        st.error(markdown_text(exc))
        return []
    return entries

"""The scenario builder's [workload] growth and load, [data], [spot], [[outage]], [interconnect],
[clusters], [predictive_scaling] and [handoff] sections.

[data], [interconnect], [clusters], [predictive_scaling] and [handoff] are drawn from the declarations of
engine.world.data_model.DataModel, engine.world.interconnect.Interconnect,
engine.scenario.clusters.ClusterSplit, engine.scenario.predictive.PredictiveScaling and
engine.scenario.handoff.Handoff (each field's
label, unit, range and help, or a checkbox for a switch: dashboard.forms.declared), so a new field
appears here with no new widget code; [spot]
from SpotModel's fields with the rate's limit (engine.scenario.limits.SPOT_RATE_MAX). Each returns
only what differs from the defaults, checked by the scenario parser (an invalid section shows the
parser's message and adds nothing). Widget keys "{prefix}:workload:{field}", "{prefix}:data:{field}",
"{prefix}:spot:{field}" and "{prefix}:outages" (a table: region, start and end in UTC). The What-if
page's window (its first N days) is added to [workload] by the page, not here.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.forms.declared import checked, declared_inputs
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.scenario.clusters import ClusterSplit, parse_clusters
from engine.scenario.data import parse_data
from engine.scenario.handoff import Handoff, parse_handoff
from engine.scenario.limits import GROWTH, LOAD_SCALE, SPOT_RATE_MAX
from engine.scenario.predictive import PredictiveScaling, parse_predictive
from engine.scenario.sharing import parse_spot
from engine.scenario.world import parse_outages
from engine.world.data_model import DataModel
from engine.world.interconnect import Interconnect, parse_interconnect

# the [spot] rule, as the builder offers it: label -> interruptible_only (None: unset)
SPOT_RULES = {"keep non-interruptible work off spot nodes when interruptions are drawn": None,
              "always keep non-interruptible work off spot nodes": True,
              "let any job use spot nodes (as a recorded history may have)": False}


def workload_section(prefix: str) -> dict:
    """[workload] growth and load_scale: more jobs of the same mix and shape, or the same jobs arriving
    denser (engine.scenario.demand); 1 leaves the workload as recorded."""
    left, right = st.columns(2)
    growth = left.number_input("Growth (x the jobs)", min_value=GROWTH[0], max_value=GROWTH[1], value=1.0,
                               format="%g", key=f"{prefix}:workload:growth",
                               help="1.3: 30 % more jobs, each region's hour-of-week shape and the job mix kept "
                                    "(seeded resampling)")
    scale = right.number_input("Load scale (x the arrival rate)", min_value=LOAD_SCALE[0], max_value=LOAD_SCALE[1],
                               value=1.0, format="%g", key=f"{prefix}:workload:load_scale",
                               help="1.5: the same jobs arriving 1.5x as densely (inter-arrival times / 1.5)")
    return {name: float(value) for name, value in (("growth", growth), ("load_scale", scale)) if value != 1.0}


def data_section(prefix: str) -> dict:
    """The [data] table: the bandwidth between regions and each data mechanism."""
    st.caption("How jobs' input data moves when they run away from it: a transfer delay at the bandwidth, "
               "egress at the data region's price, and replicas, prefetch, compression and incremental sync.")
    left, right = st.columns(2)
    with left:
        entry = declared_inputs(DataModel, f"{prefix}:data")
    right.caption("A mechanism changes nothing until the bandwidth is above 0 (transfers are instant otherwise); "
                  "egress is counted either way.")
    return checked(entry, parse_data, "[data]")


def interconnect_section(prefix: str) -> dict:
    """The [interconnect] table: off unless ticked; then the bandwidths and each class's share of time
    communicating that differ from the documented defaults."""
    st.caption("A multi-node job runs (1 - c) + c x rack / B times its recorded time, B the bandwidth between its "
               "farthest nodes and c its class's share of time communicating (the defaults and their sources: the "
               "README, on `[interconnect]`).")
    left, right = st.columns(2)
    with left:
        entry = declared_inputs(Interconnect, f"{prefix}:interconnect")
    right.caption("Topology-aware gang placement then shows its effect in completion times and headroom.")
    if not entry.pop("enabled", False):
        return {}
    return checked({"enabled": True, **entry}, lambda table, what: parse_interconnect(table, what, ScenarioError),
                    "[interconnect]")


def clusters_section(prefix: str) -> dict:
    """The [clusters] table: split each of the fleet's clusters by racks, so the cluster policy has a
    choice; {} to keep the fleet's clusters."""
    st.caption("A region's clusters come from the fleet's `cluster` column. Where each holds one GPU type (the "
               "sample's), a job's type names its cluster; split them by racks to give the cluster policy "
               "(above, with the other policies) a choice.")
    entry = declared_inputs(ClusterSplit, f"{prefix}:clusters")
    return checked(entry, parse_clusters, "[clusters]") if entry else {}


def predictive_section(prefix: str) -> dict:
    """The [predictive_scaling] table: off unless ticked; then the forecast's and the renting's values
    that differ from the defaults. It acts on the Cloud burst pools and needs a window start with whole
    weeks of data before it (the scenario's parser says so when either is missing)."""
    st.caption("Rent the Cloud burst pools' nodes ahead of the hours a seasonal forecast (the same hour of the week "
               "in the last weeks before the window) says will be short, instead of when the queue has waited.")
    entry = declared_inputs(PredictiveScaling, f"{prefix}:predictive")
    if not entry.pop("enabled", False):
        return {}
    return checked({"enabled": True, **entry}, parse_predictive, "[predictive_scaling]")


def handoff_section(prefix: str) -> dict:
    """The [handoff] table: off unless ticked; then the move's costs and limits that differ from the
    defaults. It moves work a routing policy sent away from home (home-only routing borrows nothing)."""
    st.caption("Live follow-the-sun: as a region's working day begins and its own work queues, running training, "
               "batch and HPO jobs borrowed from other regions are checkpointed and moved, running, to an "
               "off-hours region their data may go to (home first). Needs a routing policy other than home-only.")
    entry = declared_inputs(Handoff, f"{prefix}:handoff")
    if not entry.pop("enabled", False):
        return {}
    return checked({"enabled": True, **entry}, parse_handoff, "[handoff]")


def spot_section(prefix: str) -> dict:
    """The [spot] table: the interruption rate, fallback and the placement rule."""
    st.caption("Spot nodes (tier spot in the fleet) the cloud takes back at random: their jobs are evicted and "
               "keep the work up to their queue's last checkpoint.")
    left, right = st.columns(2)
    rate = left.number_input("Interruptions per spot node-hour", min_value=0.0, max_value=float(SPOT_RATE_MAX),
                             value=0.0, format="%g", key=f"{prefix}:spot:interruptions_per_node_hour",
                             help="0: spot nodes are never taken back")
    fallback = right.number_input("Fall back to on-demand after N interruptions (0: never)", min_value=0,
                                  max_value=1_000, value=0, step=1, key=f"{prefix}:spot:fallback_after")
    rule = st.selectbox("Which work may run on spot nodes", list(SPOT_RULES), key=f"{prefix}:spot:rule",
                        help="non-interruptible work: queue classes that neither checkpoint nor may be preempted, "
                             "and guaranteed ones, which never may")
    entry = {name: value for name, value, default in (
        ("interruptions_per_node_hour", float(rate), 0.0), ("fallback_after", int(fallback), 0),
        ("interruptible_only", SPOT_RULES[rule], None)) if value != default}
    return checked(entry, parse_spot, "[spot]")


def outage_frame() -> pd.DataFrame:
    """The empty outage table the editor starts from."""
    return pd.DataFrame({"region": pd.Series(dtype=object), "start_utc": pd.Series(dtype="datetime64[ns]"),
                         "end_utc": pd.Series(dtype="datetime64[ns]")})


def outage_entries(frame: pd.DataFrame) -> list[dict]:
    """The [[outage]] entries of the edited table: rows with a region, times as ISO text (UTC)."""
    out = []
    for row in frame.to_dict("records"):
        if not isinstance(row.get("region"), str) or not row["region"].strip():
            continue
        entry = {"region": row["region"]}
        for key in ("start_utc", "end_utc"):
            stamp = pd.Timestamp(row[key]) if row.get(key) is not None else pd.NaT
            if not pd.isna(stamp):
                entry[key] = stamp.isoformat()
        out.append(entry)
    return out


def outage_section(prefix: str, regions: list[str]) -> list[dict]:
    """The [[outage]] table: a region's whole fleet down over a UTC range (its running jobs evicted)."""
    st.caption("A region's whole fleet down from start to end (UTC): its running jobs are evicted (keeping the "
               "work up to their last checkpoint) and it schedules nothing until it is back; a routing policy "
               "sends its waiting work elsewhere.")
    edited = st.data_editor(outage_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:outages",
                            column_config={
                                "region": st.column_config.SelectboxColumn(options=regions, required=True),
                                "start_utc": st.column_config.DatetimeColumn("down from (UTC)", required=True),
                                "end_utc": st.column_config.DatetimeColumn("back at (UTC)", required=True)})
    entries = outage_entries(edited)
    try:
        parse_outages(entries, "outages")
    except ScenarioError as exc:
        st.error(markdown_text(exc))
        return []
    return entries

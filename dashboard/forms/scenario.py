"""A scenario form built from the policy registry: one selectbox per family with its registered
keys, then one input per parameter of the chosen policy, typed from the parameter's type and default.

Widget keys: "{prefix}:{family}" for the policy choice, "{prefix}:{family}:{key}:{parameter}" for a
parameter. The [[region]] sections (dashboard.forms.region_sections): "Regions: prices, carbon"
("{prefix}:regions" picks regions, "{prefix}:region:{region}:price_scale" and ":carbon_scale"),
"Calendars and holidays" ("{prefix}:calendars": working week, hours and holidays per region, each row
starting at the region's default: its country's week, 9-18, its country's holidays; "{prefix}:calendar_choice":
the top-level `calendar = "team"`) and "Off-peak
windows" ("{prefix}:off_peak"), merged into one entry per region. A "Queues & quotas" expander holds three tables (engine.scenario.sharing): "{prefix}:queues"
(the queue classes, prefilled with engine.scenario.queues.DEFAULT_QUEUES; a blank limit is none),
"{prefix}:quotas" (quota entries, empty) and "{prefix}:teams" (share weights and organisations,
prefilled from the dataset's teams table); a table reaches the scenario as "queue", "quota" or "team"
only once it differs from its prefill. A "Runtimes & failures" expander sets the [runtime] table
(engine.scenario.runtime): "{prefix}:runtime_source" and "{prefix}:failure". A "Cloud burst" expander
holds the [[burst]] pools (dashboard.forms.burst, "{prefix}:burst"); "Fleet edits" and "Latency" the
[[fleet]] and [latency] tables (dashboard.forms.fleet_latency); "Staged workflows" and "Automated experiments"
the [[chain]] and [experiments] tables (dashboard.forms.workflow_sections); "Region roles" the [roles] table and
new edge locations, added to the [[fleet]] edits (dashboard.forms.roles). The form returns the scenario as
the dict Scenario.from_dict reads.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.forms.burst import burst_section
from dashboard.forms.fleet_latency import fleet_section, latency_section
from dashboard.forms.partitions_section import partitions_section
from dashboard.forms.region_sections import (
    calendar_choice,
    calendar_section,
    merged,
    off_peak_section,
    price_carbon_section,
)
from dashboard.forms.roles import roles_section
from dashboard.forms.runtimes import RUNTIME_LABELS
from dashboard.forms.sizing_sections import elastic_section, rightsize_section
from dashboard.forms.workflow_sections import chain_section, experiments_section
from dashboard.forms.world_sections import (
    clusters_section,
    data_section,
    handoff_section,
    interconnect_section,
    outage_section,
    predictive_section,
    spot_section,
    workload_section,
)
from engine.core.errors import ScenarioError
from engine.core.escaping import markdown_text
from engine.policies import registry
from engine.scenario.queues import DEFAULT_QUEUES
from engine.scenario.sharing import parse_queues, parse_quotas, parse_teams
from engine.scenario.spec import DEFAULTS

QUEUE_NUMBERS = ("priority", "min_gpus", "max_gpus", "max_requested_s", "checkpoint_s", "max_wait_s",
                 "starve_after_s")
UNLIMITED = ("max_gpus", "max_requested_s", "max_wait_s", "starve_after_s")  # blank: no limit (inf)
POLICIES_PER_ROW = 5   # policy choices per row: ten in one row cut their values at a laptop's width
QUEUE_COLUMNS = ("name", "priority", "classes", "qos", "min_gpus", "max_gpus", "max_requested_s", "guaranteed",
                 "preemptible", "spot", "checkpoint_s", "max_wait_s", "starve_after_s", "max_queued")
QUEUE_FLAGS = ("guaranteed", "preemptible", "spot")
QUOTA_NUMBERS = ("nominal_gpus", "borrowing_limit_gpus", "lending_limit_gpus")
QUOTA_COLUMNS = ("holder", *QUOTA_NUMBERS, "cohort", "region")


def _parameter_input(family: str, key: str, param: registry.Parameter, prefix: str):
    widget_key = f"{prefix}:{family}:{key}:{param.name}"
    label = f"{key} · {param.name}"
    if param.type is bool:
        return st.checkbox(label, value=bool(param.default), help=param.help or None, key=widget_key)
    bound = param.bound   # the parameter's range and unit (engine.core.bounds): the widget cannot leave it
    limits = {} if bound is None else {"min_value": param.type(bound.low), "max_value": param.type(bound.high)}
    shown = param.help if bound is None else f"{param.help} ({bound.unit})".lstrip()
    if param.type is int:
        return int(st.number_input(label, value=int(param.default), step=1, help=shown or None,
                                   key=widget_key, **limits))
    if param.type is float:
        return float(st.number_input(label, value=float(param.default), help=shown or None,
                                     key=widget_key, **limits))
    return st.text_input(label, value=str(param.default), help=param.help or None, key=widget_key)


def _dataset_regions() -> list[str]:
    """The regions of the dataset picked in the sidebar (its regions and prices tables), sorted."""
    dataset = st.session_state.get("dataset")
    if not dataset:
        return []
    tables = data.world_tables(dataset)
    return sorted({str(r) for name in ("regions", "prices") if "region" in tables[name]
                   for r in tables[name]["region"].dropna()})


def scenario_form(prefix: str = "custom") -> dict:
    """Draw the form; return {"name", "policies": {family: {"key": ..., **parameters}}} and, when a
    region is edited, "region": [{"region": ..., edited fields}, ...]; "calendar" when the teams' hours
    count; when a sharing table is
    edited, "queue", "quota" or "team" (lists of entries as engine.scenario.sharing reads them); and
    "workload", "runtime", "burst", "predictive_scaling", "handoff", "spot", "outage", "fleet", "latency",
    "interconnect", "clusters", "partitions", "data", "chain", "experiments", "roles", "rightsize" and
    "elastic_scaling" when those sections differ from their defaults (new edge locations are [[fleet]] entries)."""
    name = st.text_input("Name", value="custom", key=f"{prefix}:name")
    policies = {}
    families = list(registry.families().items())
    cells = [cell for start in range(0, len(families), POLICIES_PER_ROW) for cell in st.columns(POLICIES_PER_ROW)]
    for column, (family, keys) in zip(cells, families):
        with column:
            default = DEFAULTS.get(family, keys[0])
            key = st.selectbox(family.capitalize(), keys, index=keys.index(default) if default in keys else 0,
                               key=f"{prefix}:{family}")
            spec = {"key": key}
            for param in registry.parameters(family, key):
                spec[param.name] = _parameter_input(family, key, param, prefix)
            policies[family] = spec
    scenario = {"name": name.strip() or "custom", "policies": policies}
    with st.expander("Workload: growth and load"):
        workload = workload_section(prefix)
    if workload:
        scenario["workload"] = workload
    regions = _table("regions")
    with st.expander("Regions: prices, carbon"):
        prices = price_carbon_section(prefix, _dataset_regions())
    with st.expander("Calendars and holidays"):
        scenario.update(calendar_choice(prefix))
        calendars = calendar_section(prefix, regions)
    with st.expander("Off-peak windows"):
        off_peak = off_peak_section(prefix, regions)
    edits = merged(prices, calendars, off_peak)
    if edits:
        scenario["region"] = edits
    with st.expander("Queues & quotas"):
        scenario.update(_sharing_tables(prefix))
    sections = (("Runtimes & failures", "runtime", lambda: runtime_section(prefix, policies["order"]["key"])),
                ("Cloud burst", "burst", lambda: burst_section(prefix, *_fleet_choices())),
                ("Predictive scaling: rent ahead of the forecast peak", "predictive_scaling",
                 lambda: predictive_section(prefix)),
                ("Live follow-the-sun: hand running work over", "handoff", lambda: handoff_section(prefix)),
                ("Spot interruptions", "spot", lambda: spot_section(prefix)),
                ("Outages", "outage", lambda: outage_section(prefix, _dataset_regions())),
                ("Fleet edits: GPUs added or removed", "fleet",
                 lambda: fleet_section(prefix, *_fleet_choices(), _table("fleet_nodes"))),
                ("Latency: round trips between regions, the inference SLO", "latency",
                 lambda: latency_section(prefix, _fleet_choices()[0])),
                ("Interconnect: slower multi-node jobs across racks and clusters", "interconnect",
                 lambda: interconnect_section(prefix)),
                ("Clusters: split the fleet's clusters by racks", "clusters", lambda: clusters_section(prefix)),
                ("GPU partitions: MIG, time-slicing, MPS", "partitions", lambda: partitions_section(prefix)),
                ("Data: transfers, replicas, prefetch, compression", "data", lambda: data_section(prefix)),
                ("Staged workflows: chains of jobs across regions", "chain",
                 lambda: chain_section(prefix, _fleet_choices()[0], _team_names())),
                ("Automated experiments for nights and weekends", "experiments",
                 lambda: experiments_section(prefix, _team_names())),
                ("Right-sizing at submit: predicted GPUs, out-of-memory restarts", "rightsize",
                 lambda: rightsize_section(prefix)),
                ("Elastic scaling: Amdahl instead of perfect scaling", "elastic_scaling",
                 lambda: elastic_section(prefix)))
    for title, key, draw in sections:  # each adds its table only when it differs from the defaults
        with st.expander(title):
            value = draw()
        if value:
            scenario[key] = value
    with st.expander("Region roles: edge locations, overflow, disaster recovery, archive"):
        roles, edges = roles_section(prefix, *_fleet_choices())
    if roles:
        scenario["roles"] = roles
    if edges:
        scenario["fleet"] = [*scenario.get("fleet", []), *edges]
    return scenario


def _table(name: str) -> pd.DataFrame:
    """The sidebar's dataset's world table `name` (engine.world tables, "fleet_nodes"); empty without one."""
    dataset = st.session_state.get("dataset")
    return data.world_tables(dataset)[name] if dataset else pd.DataFrame()


def _team_names() -> list[str]:
    """The teams of the sidebar's dataset's teams table, sorted."""
    dataset = st.session_state.get("dataset")
    teams = data.teams_table(dataset) if dataset else pd.DataFrame()
    return sorted(teams["team"].astype(str)) if "team" in teams else []


def _fleet_choices() -> tuple[list[str], list[str]]:
    """The regions and GPU types of the sidebar's dataset's fleet."""
    dataset = st.session_state.get("dataset")
    if not dataset:
        return [], []
    tables = data.world_tables(dataset)
    return list(tables["fleet_regions"]["region"]), list(tables["gpu_types"]["gpu_type"])


def runtime_section(prefix: str, order: str) -> dict:
    """The [runtime] table: what the scheduler knows of runtimes ("{prefix}:runtime_source") and
    failures ("{prefix}:failure"); {} for the defaults (the users' requests, no failure predictions)."""
    source = st.radio("Runtime the scheduler sees", list(RUNTIME_LABELS), horizontal=True, key=f"{prefix}:runtime_source",
                      help="Policies (queue orders, backfilling) see this runtime; the jobs still run for their "
                           "recorded runtimes. Predictions come from models trained on the jobs that ended before "
                           "the simulated window.")
    needs = registry.policy_class("order", order).traits.needs_failure
    failure = st.checkbox("Predict each job's chance of failing", value=needs, disabled=needs, key=f"{prefix}:failure",
                          help="Failure-aware orders (fail-fast) read it; the order chosen above needs it"
                          if needs else "Failure-aware orders (fail-fast) read it")
    out = dict(RUNTIME_LABELS[source])
    if failure or needs:
        out["failure"] = True
    return out


def queue_frame() -> pd.DataFrame:
    """DEFAULT_QUEUES as the queue table's rows: lists as comma-separated text, inf limits blank."""
    rows = []
    for queue in DEFAULT_QUEUES:
        row = {name: getattr(queue, name) for name in QUEUE_COLUMNS}
        row.update(classes=", ".join(queue.classes), qos=", ".join(queue.qos))
        row.update({name: None if math.isinf(row[name]) else row[name] for name in UNLIMITED})
        rows.append(row)
    return pd.DataFrame(rows, columns=list(QUEUE_COLUMNS)).astype({n: "float64" for n in QUEUE_NUMBERS})


def quota_frame() -> pd.DataFrame:
    """An empty quota table."""
    return pd.DataFrame({name: pd.Series(dtype="float64" if name in QUOTA_NUMBERS else "object")
                         for name in QUOTA_COLUMNS})


def team_frame(teams: pd.DataFrame) -> pd.DataFrame:
    """name (the team's), weight (the dataset's share_weight, blank when unknown), org (blank) per team
    of `teams`. The column is "name", shown as "team", so the table is not taken for a per-team result."""
    names = teams["team"].astype(str) if "team" in teams else pd.Series(dtype="object")
    weight = pd.to_numeric(teams["share_weight"], errors="coerce") if "share_weight" in teams \
        else pd.Series(float("nan"), index=names.index)
    return pd.DataFrame({"name": names.to_numpy(object), "weight": weight.to_numpy("float64"),
                         "org": pd.Series("", index=names.index, dtype="object").to_numpy(object)})


def _blank(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str)
                                                                                 and not value.strip())


def _rows(frame: pd.DataFrame) -> list[dict]:
    """The table's non-blank rows, each without its blank cells."""
    rows = [{k: (v.strip() if isinstance(v, str) else v) for k, v in row.items() if not _blank(v)}
            for row in frame.to_dict("records")]
    return [row for row in rows if row]


def queue_entries(frame: pd.DataFrame) -> list[dict]:
    """[[queue]] entries from the queue table: numbers as floats (a blank limit is inf), lists split
    on commas, flags as booleans, max_queued an integer."""
    entries = []
    for row in _rows(frame):
        entry = {}
        for name, value in row.items():
            if name in ("classes", "qos"):
                items = [item.strip() for item in str(value).split(",") if item.strip()]
                if items:
                    entry[name] = items
            elif name in QUEUE_FLAGS:
                entry[name] = bool(value)
            elif name == "max_queued":
                entry[name] = int(value)
            elif name in QUEUE_NUMBERS:
                entry[name] = float(value)
            else:
                entry[name] = str(value)
        entry.update({name: math.inf for name in UNLIMITED if name not in entry})
        entries.append(entry)
    return entries


def quota_entries(frame: pd.DataFrame) -> list[dict]:
    """[[quota]] entries from the quota table: its non-blank cells, numbers as floats."""
    return [{k: float(v) if k in QUOTA_NUMBERS else str(v) for k, v in row.items()} for row in _rows(frame)]


def team_entries(frame: pd.DataFrame) -> list[dict]:
    """[[team]] entries from the team table: team (its name), weight (when set), org (when set)."""
    return [{"team" if k == "name" else k: float(v) if k == "weight" else str(v) for k, v in row.items()}
            for row in _rows(frame)]


def _edited(edited: pd.DataFrame, prefill: pd.DataFrame) -> bool:
    return _rows(edited) != _rows(prefill)


def _sharing_tables(prefix: str) -> dict:
    """The "Queues & quotas" tables; the scenario's "queue", "quota" and "team" lists that were edited."""
    dataset = st.session_state.get("dataset")
    teams = data.teams_table(dataset) if dataset else pd.DataFrame()
    number = st.column_config.NumberColumn
    st.caption("Queue classes: a job joins the first queue whose rules (classes, qos, GPUs, requested runtime) "
               "it matches, the last one takes the rest; blank limits are none. Times in seconds.")
    queues = st.data_editor(queue_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:queues",
                            column_config={
                                "priority": number("tier (0-1)", min_value=0.0, max_value=1.0, format="%g"),
                                "classes": st.column_config.TextColumn(help="workload classes, comma-separated"),
                                "qos": st.column_config.TextColumn(help="recorded QoS values, comma-separated"),
                                "spot": st.column_config.CheckboxColumn(
                                    "may use spot", help="its jobs may run on spot nodes (by default the "
                                                         "preemptible and checkpointing queues; never a guaranteed "
                                                         "one); kept off them where the [spot] rule holds"),
                                "min_gpus": number("min GPUs", format="%g"), "max_gpus": number("max GPUs", format="%g"),
                                "max_requested_s": number("max requested runtime (s)", format="%,.0f"),
                                "checkpoint_s": number("checkpoint every (s)", format="%,.0f"),
                                "max_wait_s": number("max wait (s)", format="%,.0f"),
                                "starve_after_s": number("starved after (s)", format="%,.0f"),
                                "max_queued": number("max queued", step=1, min_value=0, format="%,d")})
    st.caption("Quotas (used by the kueue and team-limit quota policies): a holder is a team or a queue; blank "
               "cells take the policy's defaults.")
    quotas = st.data_editor(quota_frame(), num_rows="dynamic", hide_index=True, key=f"{prefix}:quotas",
                            column_config={"holder": st.column_config.TextColumn(required=True),
                                           "nominal_gpus": number("nominal GPUs", format="%g"),
                                           "borrowing_limit_gpus": number("borrowing limit (GPUs)", format="%g"),
                                           "lending_limit_gpus": number("lending limit (GPUs)", format="%g")})
    st.caption("Team share weights (fair share, entitlements) and organisations (hierarchical fair share).")
    team_table = team_frame(teams)
    edited_teams = st.data_editor(team_table, num_rows="dynamic", hide_index=True, key=f"{prefix}:teams",
                                  column_config={"name": st.column_config.TextColumn("team", required=True),
                                                 "weight": number(min_value=0.0, format="%g")})
    out = {}
    if _edited(queues, queue_frame()):
        out["queue"] = queue_entries(queues)
    quota_list = quota_entries(quotas)
    if quota_list:
        out["quota"] = quota_list
    if _edited(edited_teams, team_table):
        out["team"] = team_entries(edited_teams)
    try:
        parse_queues(out.get("queue"), "queues")
        parse_quotas(out.get("quota", []), "quotas")
        parse_teams(out.get("team", []), "teams")
    except ScenarioError as exc:
        st.error(markdown_text(exc))
    return out

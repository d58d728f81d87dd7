"""The scenario builder's staged workflows ([[chain]]) and automated experiments ([experiments]) sections.

[[chain]]: a table, one row per chain entry (widget key "{prefix}:chains"): up to MAX_STAGES stage regions
(a blank stage ends the chain), the workload class and team of its jobs (columns chain_class and
chain_team: a page's result tables keep "workload_class" and "team" to themselves; blank: any), how many chains and
the checkpoint each stage hands over (engine.scenario.chains). [experiments]: the teams and kinds
("{prefix}:experiments:teams", ":kinds"), the sizing (":sizing") and the numbers drawn from the declarations of
engine.scenario.experiments.ExperimentSettings (dashboard.forms.declared). Each returns only what
differs from the defaults (none: nothing), checked by the scenario parser (an invalid section shows
the parser's message and adds nothing).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.forms.declared import checked, declared_inputs
from engine.core.vocabulary import WORKLOAD_CLASSES
from engine.scenario.chains import CHAIN_COUNT_MAX, CHECKPOINT_GB_MAX, parse_chains
from engine.scenario.experiments import KINDS, SIZINGS, ExperimentSettings, parse_experiments

MAX_STAGES = 4
STAGES = [f"stage_{k}" for k in range(1, MAX_STAGES + 1)]


def chain_entries(table: pd.DataFrame) -> list[dict]:
    """The [[chain]] entries of the editor's rows (rows without two stages are left out)."""
    entries = []
    for row in table.to_dict("records"):
        stages = []
        for column in STAGES:
            if _blank(row.get(column)):
                break
            stages.append(str(row[column]))
        if len(stages) < 2:
            continue
        entry = {"stages": stages, "count": int(row.get("count") or 10),
                 "checkpoint_gb": float(row.get("checkpoint_gb") or 0.0)}
        if not _blank(row.get("chain_class")):
            entry["workload_class"] = str(row["chain_class"])
        if not _blank(row.get("chain_team")):
            entry["team"] = str(row["chain_team"])
        entries.append(entry)
    return entries


def chain_section(prefix: str, regions: list[str], teams: list[str]) -> list[dict]:
    """The [[chain]] entries: staged workflows built from the workload's own jobs."""
    st.caption("Each row chains the workload's jobs across regions: a job of stage 1, then the first job of "
               "stage 2 submitted after it, and so on. A stage starts only when the one before has ended and its "
               "checkpoint has moved to the stage's region ([data] bandwidth; egress at the leaving region's "
               "price).")
    frame = pd.DataFrame({**{column: pd.Series(dtype="str") for column in STAGES},
                          "chain_class": pd.Series(dtype="str"), "chain_team": pd.Series(dtype="str"),
                          "count": pd.Series(dtype="int64"), "checkpoint_gb": pd.Series(dtype="float64")})
    edited = st.data_editor(frame, num_rows="dynamic", hide_index=True, key=f"{prefix}:chains", column_config={
        **{column: st.column_config.SelectboxColumn(f"stage {k + 1}", options=regions)
           for k, column in enumerate(STAGES)},
        "chain_class": st.column_config.SelectboxColumn("class", options=list(WORKLOAD_CLASSES),
                                                        help="the stages' jobs' class; blank: any"),
        "chain_team": st.column_config.SelectboxColumn("team", options=teams, help="the stages' jobs' team; blank: any"),
        "count": st.column_config.NumberColumn("chains", min_value=1, max_value=CHAIN_COUNT_MAX, step=1,
                                               format="%d", default=10),
        "checkpoint_gb": st.column_config.NumberColumn("checkpoint (GB)", min_value=0.0, max_value=CHECKPOINT_GB_MAX,
                                                       format="%g", default=0.0)})
    return checked(chain_entries(edited), parse_chains, "[[chain]]")


def experiments_section(prefix: str, teams: list[str]) -> dict:
    """The [experiments] table: off until a team is picked; then the kinds and the numbers that differ
    from the defaults."""
    st.caption("Teams queue sweeps and evaluation batches for their nights and weekends, sized to fill a share of "
               "the GPUs their home region is forecast to leave idle while they are off work (a seasonal forecast "
               "from the weeks before the window).")
    left, right = st.columns(2)
    chosen = left.multiselect("Teams", teams, key=f"{prefix}:experiments:teams")
    kinds = right.multiselect("Kinds", list(KINDS), default=["hpo"], key=f"{prefix}:experiments:kinds",
                              help="hpo: hyper-parameter sweeps; batch: evaluation batches")
    sizing = st.selectbox("Sized for", SIZINGS, key=f"{prefix}:experiments:sizing",
                          help="largest-type: the home region's most installed GPU type only; per-type: every GPU "
                               "type there, each from its own idle forecast")
    entry = declared_inputs(ExperimentSettings, f"{prefix}:experiments")
    if not chosen:
        return {}
    table = {"teams": list(chosen), **({"kinds": list(kinds)} if list(kinds) != ["hpo"] else {}),
             **({"sizing": sizing} if sizing != SIZINGS[0] else {}), **entry}
    return checked(table, parse_experiments, "[experiments]")


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value) or not str(value).strip()

"""The Fidelity page's reinforcement-learning section: the packaged agents on RLScheduler's test sequences
against SJF, F1 and the published RL figures, and on logs they never saw (engine/service/rl/fidelity.py)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.charts import agents as charts_agents
from dashboard.charts.view import plot
from dashboard.data import agents as data_agents
from engine.core.escaping import markdown_text

BACKFILLS = {"none": "none", "compat": "RLScheduler's"}
NOTES = """
- **Published result** (Zhang et al., *RLScheduler*, SC'20): an agent trained on Lublin-1 reached an average
  bounded slowdown of 254.67 without backfilling (F1 258.37, SJF 277.35) and 58.64 with the authors' backfilling
  (SJF 73.31, F1 75.07), over the same ten 1,024-job sequences; their other logs' RL figures came from agents
  trained elsewhere, which is what the generalisation rows test here.
- **Ours** (`meridian rl train`, `meridian rl evaluate`): RLScheduler's environment and kernel policy in numpy,
  trained on 256-job windows that share no job with the test sequences, first copying F1's picks, then PPO; each
  agent is tested greedily on the ten sequences with the log's own feature scales. SJF and F1 are replayed on the
  same sequences by the published reproduction above (they equal the published figures on Lublin-1).
- **Generalisation**: the Lublin-1 agents on Lublin-2 (`lublin_256_new2`) and HPC2N, never trained on them, and
  agents trained on HPC2N on HPC2N.
- The record is `engine/service/rl/fidelity_rl.json`, made by `benchmarks/rl_fidelity.py`.
"""


def rl_section() -> None:
    """Draw the section (the committed record; nothing runs)."""
    st.header("A learned scheduler against RLScheduler's published result")
    try:
        record = data_agents.record()
    except (OSError, ValueError, KeyError) as exc:
        st.error(markdown_text(f"The RL record cannot be read ({type(exc).__name__}: {str(exc)[:200]}); recreate it "
                               "with `python benchmarks/rl_fidelity.py`."))
        return
    runs = record.runs
    own = runs[runs["log"] == "Lublin-1"]
    beaten = int(own["beats_SJF_and_F1"].sum())
    st.markdown(f"**On Lublin-1 the agents beat both SJF and F1 in {beaten} of {len(own)} modes** (average bounded "
                "slowdown over the ten test sequences, lower is better).")
    shown = runs.assign(backfill=runs["backfill"].map(BACKFILLS)).rename(columns={
        "agent": "agent name", "agent_bsld": "agent", "trained_on": "agent trained on", "published_RL": "RL published",
        "published_SJF": "SJF published", "published_F1": "F1 published"})
    st.dataframe(shown, hide_index=True, key="fid_rl_table", column_config={
        **{c: st.column_config.NumberColumn(format="%.2f") for c in
           ("agent", "SJF", "F1", "FCFS", "RL published", "SJF published", "F1 published")},
        "beats_SJF_and_F1": st.column_config.CheckboxColumn("beats SJF and F1")})
    cost = record.training
    if len(cost) and {"decisions", "minutes", "workers", "cpus"} <= set(cost.columns):
        st.caption(markdown_text("Training cost: " + "; ".join(
            f"{r.agent}: {r.decisions:,.0f} decisions, {r.minutes:.1f} min on {r.workers:.0f} process(es)"
            for r in cost.itertuples()) + f" (a {cost['cpus'].max():.0f}-core machine shared with other work)."))
    pick = st.selectbox("Sequences of", [f"{r.agent} on {r.log} ({r.backfill})" for r in runs.itertuples()],
                        key="fid_rl_pick")
    agent, log, backfill = runs.iloc[[f"{r.agent} on {r.log} ({r.backfill})" for r in runs.itertuples()].index(pick)][
        ["agent", "log", "backfill"]]
    rows = record.sequences
    rows = rows[(rows["agent"] == agent) & (rows["log"] == log) & (rows["backfill"] == backfill)]
    frame = pd.DataFrame({"start": rows["start"], "agent": rows["agent_bsld"], "SJF": rows["SJF"], "F1": rows["F1"]})
    plot(st, charts_agents.sequences(frame, f"{pick}: each test sequence"), theme=None,
         key="fid_rl_chart")
    with st.expander("Method"):
        st.markdown(NOTES)

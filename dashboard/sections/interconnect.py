"""The What-if page's interconnect section: for the compared scenarios with an [interconnect]
(engine.world.interconnect), how many multi-node starts spanned racks or clusters, the network's slowdown
and the GPU-hours it cost, and what each one's gang placement saved against the one that lost the most
(engine.analysis.runs.interconnect)."""
from __future__ import annotations

import streamlit as st

from dashboard.charts.view import say
from engine.analysis.runs.interconnect import savings, summary
from engine.core.escaping import markdown_text

EXPLAINED = (
    "Under an [interconnect] a multi-node job runs slower when its nodes span racks or clusters: its share of "
    "time spent communicating (training 0.3, batch and development 0.05, inference none, in one rack) stretches "
    "by the rack's bandwidth over the farthest link's (400 Gbit/s per GPU in a rack, 200 across racks, 50 across "
    "clusters by default), so a training job takes 1.3x its time across racks. One-node jobs are never slowed. "
    "Compare conservative-interconnect (plain gang placement) with topology-interconnect (gangs kept in one rack) "
    "to see what rack-aware placement saves.")


def interconnect_section(names: list[str], results: list) -> None:
    """Draw the section when any compared scenario has the interconnect; nothing otherwise."""
    table = summary(names, results)
    if not len(table):
        return
    st.subheader("Interconnect")
    st.caption(say(EXPLAINED))
    number = st.column_config.NumberColumn
    st.dataframe(table, hide_index=True, key="wi_interconnect",
                 column_config={"multi_node_starts": number("multi-node starts", format="%,d"),
                                "spread_starts": number("spread over racks", format="%,d"),
                                "cross_cluster_starts": number("over clusters", format="%,d"),
                                "interconnect_mean_slowdown": number("mean slowdown", format="x%.3f"),
                                "interconnect_extra_gpu_hours": number("GPU-hours lost", format="%,.0f"),
                                "multi_node_jct_h": number("multi-node mean completion (h)", format="%,.2f")})
    lines = savings(table)
    for line in lines:
        st.markdown(markdown_text(say(line)))
    if not lines:
        st.caption("Add a second scenario with the interconnect to see what its gang placement saves against this one.")

"""The What-if page's by-cluster section: for each compared scenario, what each cluster of each region
held and served (engine.analysis.runs.clusters), a chart of one measure and the table."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.charts.clusters import cluster_bars
from dashboard.charts.view import plot, say
from engine.analysis.runs.catalogue import heading, label
from engine.analysis.runs.clusters import by_cluster

EXPLAINED = (
    "Clusters come from the fleet's `cluster` column (split by racks under a scenario's [clusters]); a cluster "
    "policy other than `any` picks each job's cluster (GPU type, free capacity, racks) before its nodes. GPU-hours "
    "are held on the cluster's nodes inside the measurement window (a multi-node job's split over its nodes by "
    "their GPUs); utilisation is those over the cluster's GPUs x the window; jobs and waits count each job where "
    "its first node is.")
MEASURES = ("cluster_utilization", "cluster_gpu_hours", "cluster_jobs", "cluster_wait_mean_s", "cluster_wait_p95_s")


def clusters_section(names: list[str], results: list) -> None:
    """Draw the section for the compared runs; nothing when no run has more than one cluster in a region."""
    tables = {name: by_cluster(result) for name, result in zip(names, results)}
    if not any(len(t) and t.groupby("region").size().max() > 1 for t in tables.values()):
        return
    st.subheader("By cluster")
    st.caption(say(EXPLAINED))
    measure = st.selectbox("Measure", MEASURES, format_func=label, key="wi_cluster_measure")
    plot(st, cluster_bars(tables, measure), key="wi_cluster_chart")
    shown = pd.concat([t.assign(scenario=name) for name, t in tables.items()], ignore_index=True)
    shown = shown[["scenario", "region", "cluster", "gpus", *MEASURES]]
    number = st.column_config.NumberColumn
    st.dataframe(shown.assign(cluster_utilization=100 * shown["cluster_utilization"],
                              cluster_wait_mean_s=shown["cluster_wait_mean_s"] / 3600,
                              cluster_wait_p95_s=shown["cluster_wait_p95_s"] / 3600),
                 hide_index=True, key="wi_clusters",
                 column_config={"gpus": number("GPUs", format="%,d"),
                                "cluster_utilization": number(heading("cluster_utilization", "%"), format="%.1f"),
                                "cluster_gpu_hours": number(heading("cluster_gpu_hours"), format="%,.0f"),
                                "cluster_jobs": number(heading("cluster_jobs"), format="%,d"),
                                "cluster_wait_mean_s": number(heading("cluster_wait_mean_s", "h"), format="%,.2f"),
                                "cluster_wait_p95_s": number(heading("cluster_wait_p95_s", "h"), format="%,.2f")})

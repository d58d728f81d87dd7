"""The What-if page's GPU partitions section: for the compared scenarios with [partitions]
(engine.world.partitions), the GPU-hours held, the MIG instances, slices used, reconfigurations and
repacks with their drain cost, and the interference on shared GPUs (engine.analysis.runs.partitions)."""
from __future__ import annotations

import streamlit as st

from dashboard.charts.view import say
from engine.analysis.runs.partitions import summary

EXPLAINED = (
    "Under [partitions] an inference or development job asking one GPU at most gets a MIG instance (mode mig: "
    "compute/7 of a GPU at a valid position, slower by its measured GPU share over compute/7 when it outgrows the "
    "instance, a GPU switching into MIG mode unusable for the reconfiguration time; with repack, a layout "
    "reconfigured for a profile no free position takes, its blocking instances drained or waited for) or "
    "one replica of a shared GPU (time-slicing, MPS: every job sharing a GPU runs 1 + c k times slower with k "
    "co-tenants; inference keeps its share). Compare mig-inference with the same scenario without the table to see "
    "the GPU-hours MIG frees and what sharing costs in completion time.")


def partitions_section(names: list[str], results: list) -> None:
    """Draw the section when any compared scenario has partitions; nothing otherwise."""
    table = summary(names, results)
    if not len(table):
        return
    st.subheader("GPU partitions")
    st.caption(say(EXPLAINED))
    number = st.column_config.NumberColumn
    st.dataframe(table, hide_index=True, key="wi_partitions",
                 column_config={"gpu_hours_held": number("GPU-hours held", format="%,.0f"),
                                "mig_instances": number("MIG instances", format="%,d"),
                                "mig_slice_gpu_hours": number("on instances (GPU-h)", format="%,.0f"),
                                "mig_mode_gpu_hours": number("GPUs in MIG mode (GPU-h)", format="%,.0f"),
                                "mig_slice_use": number("slices used", format="percent"),
                                "mig_gpu_hours_saved": number("GPU-h saved by MIG", format="%,.0f"),
                                "mig_reconfigurations": number("reconfigurations", format="%,d"),
                                "mig_drain_gpu_hours": number("drain (GPU-h)", format="%,.1f"),
                                "mig_repacks": number("repacks", format="%,d"),
                                "mig_repack_drained": number("instances drained", format="%,d"),
                                "mig_repack_drain_gpu_hours": number("repack drain (GPU-h)", format="%,.1f"),
                                "shared_gpu_pieces": number("pieces on shared GPUs", format="%,d"),
                                "interference_mean_slowdown": number("interference", format="x%.3f"),
                                "interference_extra_gpu_hours": number("GPU-h lost to interference", format="%,.0f"),
                                "rule_jct_h": number("inference + development completion (h)", format="%,.2f")})

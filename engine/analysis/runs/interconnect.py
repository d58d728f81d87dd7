"""What the network cost a run under an [interconnect] (engine.world.interconnect), and what one
scenario's gang placement saved against another's. A run without an `interconnect` table has none
of these.

A multi-node start is *spread* when its nodes span racks (level cluster) or clusters (level region);
its extra GPU-hours are the running the spread added times the GPUs it held.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.output.result import SimulationResult


def interconnect_kpis(result: SimulationResult) -> dict[str, float]:
    """multi_node_starts, spread_starts (over racks or clusters), cross_cluster_starts,
    interconnect_mean_slowdown (over multi-node starts; 1 without any) and interconnect_extra_gpu_hours;
    {} for a run without the interconnect."""
    table = result.interconnect
    if table is None:
        return {}
    return {"multi_node_starts": len(table), "spread_starts": int((table["level"] != "rack").sum()),
            "cross_cluster_starts": int((table["level"] == "region").sum()),
            "interconnect_mean_slowdown": float(table["slowdown"].mean()) if len(table) else 1.0,
            "interconnect_extra_gpu_hours": float(table["extra_gpu_hours"].sum())}


def multi_node_jct_h(result: SimulationResult) -> float:
    """Mean completion time (submit to end, hours) of the finished jobs that ran on more than one node
    (NaN without any)."""
    jobs = result.jobs
    wide = jobs[jobs["nodes"].str.contains(";", regex=False) & jobs["end_s"].notna()]
    return float(np.mean(wide["end_s"] - wide["submit_s"]) / 3600.0) if len(wide) else float("nan")


def summary(names: list[str], results: list[SimulationResult]) -> pd.DataFrame:
    """One row per run with the interconnect: scenario, the interconnect KPIs and multi_node_jct_h."""
    rows = [{"scenario": name, **interconnect_kpis(result), "multi_node_jct_h": multi_node_jct_h(result)}
            for name, result in zip(names, results) if result.interconnect is not None]
    return pd.DataFrame(rows)


def savings(table: pd.DataFrame) -> list[str]:
    """Sentences: what each run's placement saved against the run of the table (a `summary`) that lost
    the most GPU-hours to the spread; none with fewer than two runs."""
    if len(table) < 2:
        return []
    worst = table.loc[table["interconnect_extra_gpu_hours"].idxmax()]
    lines = []
    for row in table.itertuples(index=False):
        if row.scenario == worst["scenario"]:
            continue
        saved = worst["interconnect_extra_gpu_hours"] - row.interconnect_extra_gpu_hours
        faster = worst["multi_node_jct_h"] - row.multi_node_jct_h
        lines.append(f"{row.scenario} spread {row.spread_starts:,} multi-node starts over racks or clusters against "
                     f"{worst['spread_starts']:,} under {worst['scenario']}: {saved:,.0f} GPU-hours less running on "
                     f"slow links, and its multi-node jobs finished {faster:,.2f} h sooner on average "
                     f"({row.multi_node_jct_h:,.2f} h against {worst['multi_node_jct_h']:,.2f} h).")
    return lines

"""A run by cluster: what each cluster of each region held and served (issue 27, item 1).

`by_cluster(result)`: one row per (region, cluster) of the run's fleet (`SimulationResult.clusters`,
the fleet's `cluster` column after a scenario's [clusters] split), sorted by both:

- gpus: installed GPUs of the cluster's nodes (rented burst nodes are left out: the burst KPIs count them);
- cluster_jobs: jobs whose first piece of running started on the cluster (a job spanning clusters
  counts where its first node is);
- cluster_gpu_hours: GPU-hours held on its nodes inside the measurement window (the run's `utilization`
  window, engine.analysis.runs.held); a multi-node piece holds whole nodes, so its GPU-hours are split
  over its nodes by their GPUs; the clusters' figures add up to the run's busy GPU-hours on installed nodes;
- cluster_utilization: cluster_gpu_hours / (gpus x the window's hours), 0-1;
- cluster_wait_mean_s, cluster_wait_p95_s: the wait before the first start of its cluster_jobs.

The catalogue's "cluster" group (engine.analysis.runs.catalogue) names these columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.held import finished_jobs, holding, window_end_s
from engine.sim.output.result import SimulationResult

COLUMNS = ["region", "cluster", "gpus", "cluster_jobs", "cluster_gpu_hours", "cluster_utilization",
           "cluster_wait_mean_s", "cluster_wait_p95_s"]


def by_cluster(result: SimulationResult) -> pd.DataFrame:
    """The by-cluster table (see the module docstring); empty for a result without a clusters table."""
    nodes = result.clusters
    if nodes is None or not len(nodes):
        return pd.DataFrame(columns=COLUMNS)
    if result.burst is not None and len(result.burst):
        nodes = nodes[~nodes["node"].isin(set(result.burst["node"].astype(str)))]
    nodes = nodes.reset_index(drop=True)
    groups = nodes[["region", "cluster"]].drop_duplicates().sort_values(["region", "cluster"]).reset_index(drop=True)
    group_of = {(r, c): i for i, (r, c) in enumerate(zip(groups["region"], groups["cluster"]))}
    node_group = {(r, n): group_of[(r, c)] for r, c, n in zip(nodes["region"], nodes["cluster"], nodes["node"])}
    node_gpus = {(r, n): float(g) for r, n, g in zip(nodes["region"], nodes["node"], nodes["gpus"])}
    horizon = window_end_s(result, finished_jobs(result.jobs))
    pieces = holding(result, horizon)
    gpu_h = np.zeros(len(groups))
    first_group = {}
    for row, region, listed, gpu_s in zip(pieces["row"].tolist(), pieces["region"].tolist(),
                                          pieces["nodes"].tolist(), pieces["gpu_s"].tolist()):
        held = [(region, n) for n in listed.split(";") if (region, n) in node_group]
        if not held:
            continue
        first_group.setdefault(row, node_group[held[0]])  # pieces come in start order within a job
        weights = np.array([node_gpus[k] for k in held])
        share = weights / weights.sum() if weights.sum() > 0 else np.full(len(held), 1.0 / len(held))
        np.add.at(gpu_h, [node_group[k] for k in held], gpu_s / 3600.0 * share)
    wait = result.jobs["wait_s"].to_numpy(np.float64)
    rows = np.fromiter(first_group, np.int64, len(first_group))
    where = np.fromiter(first_group.values(), np.int64, len(first_group))
    gpus = nodes.groupby(["region", "cluster"], sort=True)["gpus"].sum().to_numpy(np.float64)
    table = groups.assign(gpus=gpus)
    waits = [wait[rows[where == g]] for g in range(len(groups))]
    table["cluster_jobs"] = [len(w) for w in waits]
    table["cluster_gpu_hours"] = gpu_h
    table["cluster_utilization"] = np.where(gpus * horizon > 0, gpu_h * 3600.0 / np.maximum(gpus * horizon, 1e-9), 0.0)
    table["cluster_wait_mean_s"] = [float(w.mean()) if len(w) else 0.0 for w in waits]
    table["cluster_wait_p95_s"] = [float(np.quantile(w, 0.95)) if len(w) else 0.0 for w in waits]
    return table[COLUMNS]

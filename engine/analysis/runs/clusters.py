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

from engine.analysis.runs.held import finished_jobs, holding, piece_positions, window_end_s
from engine.core.codes import first_rows
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
    horizon = window_end_s(result, finished_jobs(result.jobs))
    pieces = holding(result, horizon)
    gpu_h, rows, where = _held_by_group(pieces, nodes, groups)
    wait = result.jobs["wait_s"].to_numpy(np.float64)
    gpus = nodes.groupby(["region", "cluster"], sort=True)["gpus"].sum().to_numpy(np.float64)
    table = groups.assign(gpus=gpus)
    waits = [wait[rows[where == g]] for g in range(len(groups))]
    table["cluster_jobs"] = [len(w) for w in waits]
    table["cluster_gpu_hours"] = gpu_h
    table["cluster_utilization"] = np.where(gpus * horizon > 0, gpu_h * 3600.0 / np.maximum(gpus * horizon, 1e-9), 0.0)
    table["cluster_wait_mean_s"] = [float(w.mean()) if len(w) else 0.0 for w in waits]
    table["cluster_wait_p95_s"] = [float(np.quantile(w, 0.95)) if len(w) else 0.0 for w in waits]
    return table[COLUMNS]


def _held_by_group(pieces: pd.DataFrame, nodes: pd.DataFrame, groups: pd.DataFrame):
    """GPU-hours held per group, and each job's group (rows, where: the group of the first of its
    pieces on a known node; pieces come in start order within a job). A piece's GPU-seconds are split
    over its known nodes by their GPUs (evenly when those hold none)."""
    group_key = pd.Index(groups["region"].astype(str) + "\x1f" + groups["cluster"].astype(str))
    node_group = group_key.get_indexer(nodes["region"].astype(str) + "\x1f" + nodes["cluster"].astype(str))
    piece, at = piece_positions(pieces["region"], pieces["nodes"], nodes["region"].astype(str).to_numpy(object),
                                nodes["node"].astype(str).to_numpy(object))
    piece, at = piece[at >= 0], at[at >= 0]
    group = node_group[at]
    weight = nodes["gpus"].to_numpy(np.float64)[at]
    total = np.bincount(piece, weight, len(pieces))[piece]
    count = np.bincount(piece, None, len(pieces))[piece]
    share = np.divide(weight, total, out=1.0 / np.maximum(count, 1), where=total > 0)
    gpu_h = np.zeros(len(groups))
    np.add.at(gpu_h, group, pieces["gpu_s"].to_numpy(np.float64)[piece] / 3600.0 * share)
    lead = np.flatnonzero(np.concatenate([piece[:1] >= 0, piece[1:] != piece[:-1]]))  # each piece's first known node
    code, rows = pd.factorize(pieces["row"].to_numpy(np.int64)[piece[lead]])  # then each job's first such piece
    return gpu_h, rows.astype(np.int64), group[lead[first_rows(code)]].astype(np.int64)

"""What a run's region roles did ([roles], engine.world.roles), as flat KPIs. W is the measurement window
(engine.analysis.runs.cost.window_s); a month is 30 days.

Edge (a run whose [roles] names edge regions; `latency_slo_attainment`, the share of started inference
jobs served within the SLO of their users, is a sim KPI, engine.analysis.runs.sim_metrics):

  request_hours               hours inference jobs served inside W: sum over the pieces of running of inference
                              jobs of their time inside W (an inference job serves its users' requests while it
                              runs, so an hour of it is a request-hour)
  edge_request_share          request-hours served in edge regions / request_hours (0 without request-hours)
  usd_per_request_hour        the inference jobs' spend (their GPU-hours x their prices, egress included:
                              engine.analysis.runs.cost's job usd) / request_hours

Archive (a run with [roles] checkpoints = "archive": its `checkpoints` table, engine.sim.processes.archive):

  checkpoints_archived        checkpoints of evicted jobs stored in an archive region
  checkpoint_storage_usd      sum over them of gb x usd_per_gb_month x the months stored inside W (from stored_s
                              to restored_s, or to W when never restored): part of `cost_usd`
  checkpoint_egress_usd       sum of their egress_usd (the write to an archive in another region, the read back
                              into another region): part of `egress_usd` and of `cost_usd`, booked to the job
  restore_wait_hours          hours jobs were held by restores: sum of restored_s - asked_s

Archived datasets (a run whose [roles] archives datasets: its `archived_datasets` table,
engine.sim.processes.dataset_archive):

  datasets_archived           periods datasets spent in an archive region (one per archiving)
  dataset_storage_usd         sum over them of gb x usd_per_gb_month x the months stored inside W (from stored_s
                              to restored_s, or to W when never restored): part of `cost_usd`
  dataset_storage_saved_usd   the same GB-months at hot_usd_per_gb_month ([data] storage_usd_per_gb_month) less
                              dataset_storage_usd: what keeping them hot would have cost more (not in `cost_usd`:
                              hot storage of a dataset's home is outside the bill)
  dataset_egress_usd          sum of their egress_usd (the write into an archive in another region, the restore
                              out of it): part of `egress_usd` and of `cost_usd`, booked to the job that asked
                              for the restore (to no job, job_id "", while never asked for: in the total only)
  dataset_restores            restores asked for
  dataset_restore_wait_hours  hours jobs were held by dataset restores: sum of held_s (every job held, from its
                              arrival to the restore)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.cost import CostReport, window_s
from engine.sim.output.result import SimulationResult

EDGE_KEYS = ("request_hours", "edge_request_share", "usd_per_request_hour")
ARCHIVE_KEYS = ("checkpoints_archived", "checkpoint_storage_usd", "checkpoint_egress_usd", "restore_wait_hours")
DATASET_KEYS = ("datasets_archived", "dataset_storage_usd", "dataset_storage_saved_usd", "dataset_egress_usd",
                "dataset_restores", "dataset_restore_wait_hours")
MONTH_S = 30 * 86_400.0


def edge_regions(result: SimulationResult) -> set[str]:
    """The regions the run's [roles] made edge locations (none without [roles])."""
    if result.roles is None:
        return set()
    return {r for r, roles in zip(result.roles["region"], result.roles["roles"]) if "edge" in roles.split(",")}


def _months(table: pd.DataFrame, horizon: float) -> np.ndarray:
    """Months (30 days) each row of an archive table was stored inside [0, horizon]."""
    restored = table["restored_s"].to_numpy(np.float64)
    until = np.minimum(np.where(np.isnan(restored), horizon, restored), horizon)
    return np.maximum(until - table["stored_s"].to_numpy(np.float64), 0.0) / MONTH_S


def _storage(table: pd.DataFrame | None, result: SimulationResult, price: str = "usd_per_gb_month") -> pd.Series:
    """archive region -> dollars of keeping `table`'s rows inside the window at `price` (empty without rows)."""
    if table is None or table.empty:
        return pd.Series(dtype=float)
    usd = table["gb"].to_numpy(np.float64) * table[price].to_numpy(np.float64) * _months(table, window_s(result))
    return pd.Series(usd, index=table["archive_region"].astype(str)).groupby(level=0, sort=True).sum()


def archive_storage_by_region(result: SimulationResult) -> pd.Series:
    """archive region -> dollars of keeping its checkpoints and datasets inside the window (empty without)."""
    parts = [part for part in (_storage(result.checkpoints, result), _storage(result.archived_datasets, result))
             if not part.empty]
    return pd.concat(parts).groupby(level=0, sort=True).sum() if parts else pd.Series(dtype=float)


def checkpoint_storage_usd(result: SimulationResult) -> float:
    """Dollars of keeping the archived checkpoints inside the window (0 without a checkpoints table)."""
    return float(_storage(result.checkpoints, result).sum())


def archive_storage_usd(result: SimulationResult) -> float:
    """Dollars of keeping the archived checkpoints and datasets inside the window: part of `cost_usd`."""
    return float(archive_storage_by_region(result).sum())


def with_archive_egress(moved: pd.Series, result: SimulationResult) -> pd.Series:
    """`moved` (job_id -> egress USD) with each job's checkpoint egress and the egress of the dataset restores
    it asked for (and of those datasets' writes into the archive) added; the writes of datasets never
    restored go under job_id "" (no job: in the total only)."""
    for table in (result.checkpoints, result.archived_datasets):
        if table is None or not (table["egress_usd"] > 0).any():
            continue
        table = table[table["egress_usd"] > 0]
        extra = table.groupby(table["job_id"].astype(str), sort=True)["egress_usd"].sum()
        moved = moved.add(extra, fill_value=0.0).rename("egress_usd")
    return moved


def roles_kpis(result: SimulationResult, cost: CostReport) -> dict[str, float]:
    """EDGE_KEYS for a run with edge regions, ARCHIVE_KEYS for one with archived checkpoints, DATASET_KEYS for one
    that archives datasets ({} otherwise)."""
    out: dict[str, float] = {}
    edges = edge_regions(result)
    if edges:
        horizon = window_s(result)
        pieces = result.held()
        pieces = pieces[pieces["workload_class"].astype(str) == "inference"]
        end = pieces["end_s"].to_numpy(np.float64)
        end = np.where(np.isnan(end), horizon, end)
        hours = np.maximum(np.minimum(end, horizon) - np.maximum(pieces["start_s"].to_numpy(np.float64), 0.0), 0.0) / 3600
        total = float(hours.sum())
        at_edge = float(hours[pieces["region"].astype(str).isin(edges).to_numpy(bool)].sum())
        spend = float(cost.jobs.loc[cost.jobs["workload_class"].astype(str) == "inference", "usd"].sum())
        out.update(request_hours=total, edge_request_share=at_edge / total if total > 0 else 0.0,
                   usd_per_request_hour=spend / total if total > 0 else 0.0)
    table = result.checkpoints
    if table is not None:
        asked = table["asked_s"].notna().to_numpy(bool)
        held = (table["restored_s"] - table["asked_s"]).to_numpy(np.float64)[asked]
        out.update(checkpoints_archived=float(len(table)), checkpoint_storage_usd=checkpoint_storage_usd(result),
                   checkpoint_egress_usd=float(table["egress_usd"].sum()),
                   restore_wait_hours=float(held.sum() / 3600.0))
    table = result.archived_datasets
    if table is not None:
        stored = float(_storage(table, result).sum())
        out.update(datasets_archived=float(len(table)), dataset_storage_usd=stored,
                   dataset_storage_saved_usd=float(_storage(table, result, "hot_usd_per_gb_month").sum()) - stored,
                   dataset_egress_usd=float(table["egress_usd"].sum()),
                   dataset_restores=float(table["asked_s"].notna().sum()),
                   dataset_restore_wait_hours=float(table["held_s"].sum() / 3600.0))
    return out

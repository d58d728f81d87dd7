"""What a run's data mechanisms moved, stored, saved and cost (engine.sim.processes.data_moves), as flat
KPIs; only for a run with a `transfers` table ([data] replicas, prefetch, compression or incremental
sync). W is the measurement window (engine.analysis.runs.cost.window_s); p(r) the egress price of
region r per GB (regions.egress_usd_per_gb, $0 when unknown); a month is 30 days.

  data_moved_gb               GB sent between regions (compressed), replica copies included
  data_transfers              transfers that sent data (a replica read sends none)
  replicas_created            replica copies made (dataset, region)
  replica_storage_usd         sum over replicas of size_gb x storage_usd_per_gb_month x the months from the
                              copy being complete to W: part of `cost_usd`
  replica_egress_usd          what copying the replicas cost: their moved_gb x p(home): part of `egress_usd`
  replica_egress_saved_usd    what the jobs that read a replica would have paid to move their own data:
                              their raw_gb / compression_ratio x p(home)
  compression_cpu_hours       CPU time spent compressing and decompressing (compress_s_per_gb x raw GB)
  data_wait_hours             the hours jobs were held by their data after they could have started: the
                              whole transfer without prefetch, from their first "waiting-for-data" to the
                              data's arrival with it
  data_hidden_hours           transfer hours that overlapped a job's wait in the queue (prefetch): the
                              transfer's length less the hours it held the job
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.analysis.runs.cost import window_s
from engine.analysis.runs.egress import per_gb
from engine.sim.output.result import SimulationResult
from engine.world.data_model import DataModel

KPI_KEYS = ("data_moved_gb", "data_transfers", "replicas_created", "replica_storage_usd", "replica_egress_usd",
            "replica_egress_saved_usd", "compression_cpu_hours", "data_wait_hours", "data_hidden_hours")
MONTH_S = 30 * 86_400.0


def storage_usd(result: SimulationResult, model: DataModel) -> float:
    """Dollars of storing the run's replicas from their completion to the end of the window."""
    if result.datasets is None or result.datasets.empty:
        return 0.0
    horizon = window_s(result)
    months = [(size, max(horizon - float(t), 0.0) / MONTH_S) for size, times in
              zip(result.datasets["size_gb"].astype(float), result.datasets["replica_s"]) for t in
              (times.split(";") if times else [])]
    return float(sum(size * month for size, month in months) * model.storage_usd_per_gb_month)


def data_kpis(result: SimulationResult, regions: pd.DataFrame, model: DataModel) -> dict[str, float]:
    """KPI_KEYS -> float for a run with a transfers table ({} without one)."""
    moves = result.transfers
    if moves is None:
        return {}
    price = moves["from_region"].astype(str).map(per_gb(regions)).fillna(0.0).to_numpy(float)
    kind = moves["kind"].to_numpy(object)
    moved = moves["moved_gb"].to_numpy(float)
    length = (moves["ready_s"] - moves["start_s"]).to_numpy(float)
    waited = moves["waited_s"].to_numpy(float)
    replica, hit = kind == "replica", kind == "replica-hit"
    return {
        "data_moved_gb": float(moved.sum()),
        "data_transfers": float((moved > 0).sum()),
        "replicas_created": float(replica.sum()),
        "replica_storage_usd": storage_usd(result, model),
        "replica_egress_usd": float((moved * price)[replica].sum()),
        "replica_egress_saved_usd": float((moves["raw_gb"].to_numpy(float) / model.compression_ratio * price)[hit].sum()),
        "compression_cpu_hours": float(moves["cpu_s"].sum() / 3600.0),
        "data_wait_hours": float(waited.sum() / 3600.0),
        "data_hidden_hours": float(np.maximum(length - waited, 0.0).sum() / 3600.0),
    }

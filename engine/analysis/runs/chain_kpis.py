"""Workflow KPIs of a run with chains (engine.sim.processes.chains: its `chains` table), as flat KPIs; {}
for a run without. A chain is its first job and every job linked to it; it is complete when every stage
ended (completed or failed).

  chains                          chains in the run
  chains_completed                chains whose every stage ended
  chain_makespan_mean_s           mean over complete chains of (the last stage's end - the first stage's submit)
  chain_predecessor_wait_hours    hours stages waited for the stage before them to end: sum over links of
                                  max(0, predecessor_end_s - submit_s) (to the run's end for a predecessor
                                  that never ended)
  chain_handover_hours            hours of checkpoint transfers between regions: sum of transfer_s
  chain_handover_gb               GB of checkpoints handed over between regions
"""
from __future__ import annotations

import numpy as np

from engine.sim.output.result import SimulationResult

KPI_KEYS = ("chains", "chains_completed", "chain_makespan_mean_s", "chain_predecessor_wait_hours",
            "chain_handover_hours", "chain_handover_gb")


def chain_kpis(result: SimulationResult) -> dict[str, float]:
    """KPI_KEYS -> float for a run with a chains table ({} without one)."""
    links = result.chains
    if links is None:
        return {}
    submit = result.jobs["submit_s"].to_numpy(np.float64)
    heads = links["chain_row"].to_numpy(np.int64)
    ended = links["end_s"].notna().to_numpy(bool)
    chain_ids, chain_of = np.unique(heads, return_inverse=True)
    complete = np.ones(len(chain_ids), bool)
    np.logical_and.at(complete, chain_of, ended)
    last = np.full(len(chain_ids), -np.inf)
    np.maximum.at(last, chain_of, np.where(ended, links["end_s"].to_numpy(np.float64), -np.inf))
    spans = (last - submit[chain_ids])[complete]
    held = links["held_s"].to_numpy(np.float64)
    transfer = np.nan_to_num(links["transfer_s"].to_numpy(np.float64))
    waited = np.minimum(np.maximum(links["predecessor_end_s"].to_numpy(np.float64) - links["submit_s"].to_numpy(np.float64),
                                   0.0), held)
    waited = np.where(np.isnan(waited), held, waited)  # never handed over: held to the run's end
    moved = links["ready_s"].notna().to_numpy(bool) & (transfer > 0)
    return {
        "chains": float(len(chain_ids)), "chains_completed": float(complete.sum()),
        "chain_makespan_mean_s": float(spans.mean()) if len(spans) else 0.0,
        "chain_predecessor_wait_hours": float(waited.sum() / 3600.0),
        "chain_handover_hours": float(transfer.sum() / 3600.0),
        "chain_handover_gb": float(links["checkpoint_gb"].to_numpy(np.float64)[moved].sum()),
    }

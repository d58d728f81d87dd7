"""Tables of a finished simulation run: the per-job table, the timeline, the decision log and the
fragmentation samples, as a `SimulationResult` (engine.sim.result describes every column)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.reasons import DECISIONS, REASONS
from engine.sim.result import SimulationResult


def run_tables(run, scenario: str) -> SimulationResult:
    """The result of a finished run (engine.sim.simulator._Run) named `scenario`."""
    w = run.w
    names = np.full(len(w), "", object)
    for j, nodes in run.nodes_of.items():
        held = run.region_of[j].names[nodes]
        names[j] = held[0] if len(held) == 1 else ";".join(held)
    jobs = pd.DataFrame({
        "job_id": w.job_id, "region": np.asarray(run.region_name, object), "home_region": w.region,
        "workload_class": w.workload_class, "team": w.team,
        "submit_s": w.submit_s, "start_s": run.start, "end_s": run.end,
        "wait_s": run.start - w.submit_s, "run_s": run.end - run.start, "gpus": w.gpus,
        "gpus_allocated": run.alloc_gpus,
        "failed": w.failed, "started": np.isfinite(run.start), "nodes": names,
        "reason": np.asarray(REASONS, object)[run.reason], "latency_ms": run.latency_ms})
    timeline = pd.DataFrame(run.timeline, columns=["time_s", "region", "busy_gpus", "queue_length"])
    logged = np.asarray(run.log_j, np.int64)
    decisions = pd.DataFrame({"time_s": np.asarray(run.log_t, np.float64), "job_id": w.job_id[logged],
                              "region": np.asarray(run.region_name, object)[logged],
                              "decision": np.asarray(DECISIONS, object)[np.asarray(run.log_c, np.int64)]})
    capacity = {r: f.capacity_gpus for r, f in run.regions.items()}
    return SimulationResult(scenario, jobs, timeline, decisions, capacity, w.origin_utc, w.notes,
                            w.observed_end_s, run.sampler.table(), run.latency_slo_ms)

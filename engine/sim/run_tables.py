"""Tables of a finished simulation run: the per-job table, the timeline, the decision log, the
segments and the fragmentation samples, as a `SimulationResult` (engine.sim.result describes every
column)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.sim.queue_classes import queue_table
from engine.sim.reasons import DECISIONS, REASONS
from engine.sim.result import SimulationResult

SEGMENT_COLUMNS = ["row", "job_id", "region", "nodes", "start_s", "end_s", "gpus_allocated", "outcome", "lost_s"]


def run_tables(run, scenario: str) -> SimulationResult:
    """The result of a finished run (engine.sim.simulator._Run) named `scenario`."""
    w, sharing = run.w, run.sharing
    names = np.full(len(w), "", object)
    for j in run.nodes_of:
        names[j] = run.node_names(j)
    ledger = sharing.ledger
    jobs = pd.DataFrame({
        "job_id": w.job_id, "region": np.asarray(run.region_name, object), "home_region": w.region,
        "workload_class": w.workload_class, "team": w.team,
        "submit_s": w.submit_s, "start_s": run.start, "end_s": run.end,
        "wait_s": run.start - w.submit_s, "run_s": run.end - run.start, "gpus": w.gpus,
        "gpus_allocated": run.alloc_gpus,
        "failed": w.failed, "started": np.isfinite(run.start), "nodes": names,
        "reason": np.asarray(REASONS, object)[run.reason], "latency_ms": run.latency_ms,
        "user": np.asarray(ledger.user_names, object)[ledger.user] if len(w) else np.zeros(0, object),
        "project": np.asarray(ledger.project_names, object)[ledger.project] if len(w) else np.zeros(0, object),
        "queue": np.asarray([q.name for q in sharing.queues], object)[sharing.qclass],
        "priority": w.priority, "deadline_s": w.deadline_s,
        "preemptions": sharing.preemptions, "lost_gpu_hours": sharing.lost_gpu_s / 3600.0,
        "spot_interruptions": sharing.spot.interruptions if sharing.spot else np.zeros(len(w), np.int64)})
    timeline = pd.DataFrame(run.timeline, columns=["time_s", "region", "busy_gpus", "queue_length"])
    logged = np.asarray(run.log_j, np.int64)
    decisions = pd.DataFrame({"time_s": np.asarray(run.log_t, np.float64), "row": logged, "job_id": w.job_id[logged],
                              "region": np.asarray(run.region_name, object)[logged],
                              "decision": np.asarray(DECISIONS, object)[np.asarray(run.log_c, np.int64)]})
    capacity = {r: f.capacity_gpus for r, f in run.regions.items()}
    return SimulationResult(scenario, jobs, timeline, decisions, capacity, w.origin_utc, w.notes,
                            w.observed_end_s, run.sampler.table(), run.latency_slo_ms,
                            segments=_segments(run, jobs), teams=_teams(run), queue_classes=queue_table(sharing.queues),
                            burst=run.bursts.table())


def _segments(run, jobs: pd.DataFrame) -> pd.DataFrame:
    """Evicted pieces, then each started job's last piece (to its end, or still running)."""
    sharing = run.sharing
    evicted = pd.DataFrame(sharing.segments, columns=["job", "region", "nodes", "start_s", "end_s",
                                                      "gpus_allocated", "lost_s"])
    rows = evicted.pop("job").to_numpy(np.int64)
    evicted.insert(0, "row", rows)
    evicted.insert(1, "job_id", run.w.job_id[rows])
    evicted["outcome"] = "preempted"
    started = np.flatnonzero(jobs["started"].to_numpy(bool) & ~np.isin(np.arange(len(jobs)), list(run.pods)))
    running = np.asarray(sorted(run.pods), np.int64)
    last = np.concatenate([started, running])
    last.sort()
    end = run.end[last]
    failed = run.w.failed[last]
    outcome = np.where(np.isnan(end), "running", np.where(failed, "failed", "completed"))
    final = pd.DataFrame({"row": last, "job_id": run.w.job_id[last], "region": jobs["region"].to_numpy(object)[last],
                          "nodes": jobs["nodes"].to_numpy(object)[last],
                          "start_s": np.asarray(sharing.seg_start, np.float64)[last], "end_s": end,
                          "gpus_allocated": run.alloc_gpus[last], "outcome": outcome, "lost_s": 0.0})
    if not len(evicted):
        return final[SEGMENT_COLUMNS]
    both = pd.concat([evicted[SEGMENT_COLUMNS], final[SEGMENT_COLUMNS]], ignore_index=True)
    return both.sort_values(["start_s", "row"], kind="stable").reset_index(drop=True)


def _teams(run) -> pd.DataFrame:
    ledger, sharing = run.sharing.ledger, run.sharing
    weight = ledger.weight
    nominal = np.full(len(ledger.teams), np.nan)
    if sharing.gated and not sharing.by_queue:
        nominal = np.sum([book.nominal for book in sharing.gate.books], axis=0)
        nominal = np.where(np.isfinite(nominal), nominal, np.nan)
    return pd.DataFrame({"team": list(ledger.teams), "weight": weight,
                         "entitlement": weight / weight.sum() if weight.sum() > 0 else weight,
                         "nominal_gpus": nominal})

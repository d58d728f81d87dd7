"""What a simulation produces: a per-job table, a timeline and a decision log, with export.

Times are seconds from the workload's time 0 (`origin_utc`). Why a job waited or never ran (the
`reason` column) and the decisions of the log are named and explained in engine.core.reasons.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from engine.core.escaping import to_spreadsheet_csv


@dataclass(frozen=True)
class SimulationResult:
    """jobs: job_id, region (where it ran, or queued), home_region (its region in the data),
    workload_class, team, submit_s, start_s, end_s, wait_s, run_s,
    gpus (asked for), gpus_allocated (held; gang jobs hold whole nodes), failed, started,
    nodes (node names joined by ';'; "" never started), reason (why it waited), latency_ms (round-trip time from the
    job's home region, where its users are, to the region it ran in; 0 at home), user, project,
    queue (its queue class: engine.scenario.queues), priority (the recorded field), deadline_s
    (+inf: none), preemptions (times evicted and requeued), lost_gpu_hours (GPU-hours of work lost to
    those evictions: the work since each last checkpoint), spot_interruptions (of those evictions, how
    many were spot reclamations); under [rightsize] only (engine.sim.processes.oom_restarts), sized_gpus
    (GPUs first given), oom_restarts and oom_lost_gpu_hours. start_s is the first start and end_s the
    final end: for a preempted job wait_s is the wait before its first start and run_s runs from
    the first start to the end, time spent requeued included (the segments table has each piece);
    nodes and gpus_allocated are those of its last piece, also for a job evicted and still waiting
    at the end (nodes "" and gpus_allocated 0 once it was routed to another region).
    segments: one row per piece of running: row (its job's position in jobs), job_id, region, nodes, start_s, end_s (NaN: still
    running at the end), gpus_allocated, outcome (completed, failed, preempted, out-of-memory, running), lost_s
    (seconds of work lost when preempted: since the last checkpoint; 0 otherwise). Without
    preemption a job has one segment, equal to its row in jobs.
    teams: team, weight (share weight), entitlement (weight / sum of the weights of the teams in the
    run), nominal_gpus (its quota in GPUs over all regions; NaN: no quota).
    queue_classes: queue, priority (tier 0-1), max_wait_s (the class's maximum-wait SLA; inf: none),
    starve_after_s (a job waiting longer is starved), guaranteed (production capacity: starts at
    once, preempting other work), preemptible, checkpoint_s (0: no checkpoints), spot (its jobs may
    run on spot nodes).
    timeline: time_s, region, busy_gpus, queue_length, sampled after every event batch.
    decisions: time_s, row (the job's position in jobs: job ids may repeat), job_id, region, decision.
    capacity_gpus: GPUs per region.
    window_s: end of the measurement window in seconds from time 0 (the input data's observed end),
    0 = none (KPIs then measure up to the makespan).
    fragmentation: time_s, region, idle_gpus, frag_gpus (FGD's fragmentation amount for the
    workload's typical pod shapes, GPUs), sampled on a grid of at least an hour (engine.sim.output.frag_sampler);
    None when not sampled.
    latency_slo_ms: the inference latency SLO the run was given (engine.world.latency).
    burst: one row per cloud node rented (engine.sim.processes.burst): region, node, gpu_type, gpus,
    usd_per_gpu_hour, rented_s, up_s, returned_s (NaN: still rented at the end), trigger_job_id;
    None when the scenario had no [[burst]] pools. Burst GPUs are not in capacity_gpus.
    quotas: one row per region and quota holder (engine.sim.cycle.quota_gate): region, holder (a team or
    queue class), by ("team" or "queue"), nominal_gpus, borrowing_limit_gpus, lending_limit_gpus,
    cap_gpus (inf: none; without kueue quotas nominal and borrowing are inf, lending 0) and most_gpus
    (the most the holder can ever hold there: a job asking more is turned away, "exceeds-quota");
    None when the scenario has no quota policy.
    relaxations: one row per soft constraint the router relaxed for a job (engine.policies.constraints):
    row, job_id, team, home_region, time_s (when it was routed), region (where it was sent), constraint,
    cost (what relaxing it cost, in cost_unit), cost_unit (a job routed again because its region went down
    has rows for each routing); the per-job table then also has `relaxed`, the job's relaxed constraints
    joined by ';' ("" none). None when the routing policy relaxes nothing.
    interconnect: one row per start of a multi-node job under an [interconnect] (engine.sim.processes.interconnect):
    row, job_id, workload_class, region, start_s, nodes, level (rack, cluster, region), slowdown, extra_s,
    extra_gpu_hours; None when the scenario has none.
    partitions: one row per piece of running on a MIG instance or a shared GPU and per MIG mode switch of a
    GPU under [partitions] (engine.sim.processes.partitions): event (instance, shared, to-mig, to-whole),
    row, job_id, workload_class, region, node, gpu, profile, start_slice, start_s, end_s, gpu_share,
    slowdown, co_tenants, drain_gpu_hours; None when the scenario has none.
    transfers, datasets: the input data moved for jobs sent away from their dataset's region, and the
    datasets with their replicas (engine.sim.processes.data_moves); None unless the scenario's [data]
    table turns on replicas, prefetch, compression or incremental sync.
    clusters: one row per node of the fleet the run scheduled on: region, cluster (the fleet's `cluster`
    column after the scenario's [clusters] split; the region's name for a node without one), node,
    gpus; the ground of the by-cluster table (engine.analysis.runs.clusters). None for a result built
    by hand.
    scaling: the rentals of [predictive_scaling] (engine.sim.processes.forecast_scaling), with burst's
    columns (trigger_job_id "forecast"); forecast: its forecast's error on held-out weeks per pool
    (engine.scenario.predictive.ERROR_COLUMNS); both None unless the scenario turns it on.
    handoffs: one row per move of running work under [handoff] (engine.sim.processes.handoff): row,
    job_id, from_region, to_region, time_s (the checkpoint started), reason, gpus, checkpoint_s,
    transfer_s, restart_s, lost_s (their sum), lost_gpu_hours (lost_s x gpus), moved_gpu_hours (the
    work left at the move x gpus); the per-job table then also has `handoffs` (moves) and
    `handoff_lost_gpu_hours`. None unless the scenario turns it on.
    chains: one row per job of a staged workflow that waits for a predecessor (engine.sim.processes.chains:
    its CHAIN_COLUMNS, hand-over times and the seconds each stage was held); None when no job has one.
    experiments: per team of a scenario's [experiments], its forecast idle gap, the GPU-hours planned and
    run to fill it (engine.sim.processes.experiment_fill); None without [experiments].
    roles: region, roles (its [roles], joined by ","; engine.world.roles); None without a [roles] table.
    checkpoints: one row per checkpoint of an evicted job kept in an archive region
    (engine.sim.processes.archive.CHECKPOINT_COLUMNS); None unless [roles] checkpoints = "archive".
    archived_datasets: one row per period a dataset spent in an archive region, with its restore
    (engine.sim.processes.dataset_archive.DATASET_COLUMNS); None unless [roles] archives datasets."""

    scenario: str
    jobs: pd.DataFrame
    timeline: pd.DataFrame
    decisions: pd.DataFrame
    capacity_gpus: dict[str, float]
    origin_utc: pd.Timestamp
    notes: tuple[str, ...] = ()
    window_s: float = 0.0
    fragmentation: pd.DataFrame | None = None
    latency_slo_ms: float = 100.0
    segments: pd.DataFrame | None = None
    teams: pd.DataFrame | None = None
    queue_classes: pd.DataFrame | None = None
    burst: pd.DataFrame | None = None
    quotas: pd.DataFrame | None = None
    relaxations: pd.DataFrame | None = None
    interconnect: pd.DataFrame | None = None
    partitions: pd.DataFrame | None = None
    transfers: pd.DataFrame | None = None
    datasets: pd.DataFrame | None = None
    clusters: pd.DataFrame | None = None
    scaling: pd.DataFrame | None = None
    forecast: pd.DataFrame | None = None
    handoffs: pd.DataFrame | None = None
    chains: pd.DataFrame | None = None
    experiments: pd.DataFrame | None = None
    roles: pd.DataFrame | None = None
    checkpoints: pd.DataFrame | None = None
    archived_datasets: pd.DataFrame | None = None

    def held(self) -> pd.DataFrame:
        """The pieces of GPU holding: `segments` with each job's team, workload_class and failed,
        or, for a result without segments, the started jobs' rows (one piece per job). Columns:
        row (the position of the piece's job in `jobs`: job ids may repeat), job_id, region, team,
        workload_class, failed, nodes, start_s, end_s, gpus_allocated, outcome, lost_s."""
        jobs = self.jobs
        if self.segments is None:
            held = jobs.loc[jobs["started"], ["job_id", "region", "team", "workload_class", "failed", "nodes",
                                              "start_s", "end_s", "gpus_allocated"]]
            outcome = held["failed"].map({True: "failed", False: "completed"}).where(held["end_s"].notna(), "running")
            held = held.assign(outcome=outcome, lost_s=0.0)
            held.insert(0, "row", np.flatnonzero(jobs["started"].to_numpy(bool)))
            return held.reset_index(drop=True)
        row = self.segments["row"].to_numpy()
        extra = jobs[["team", "workload_class", "failed"]].iloc[row].reset_index(drop=True)
        pieces = self.segments.reset_index(drop=True)
        return pd.concat([pieces, extra], axis=1)[
            ["row", "job_id", "region", "team", "workload_class", "failed", "nodes", "start_s", "end_s",
             "gpus_allocated", "outcome", "lost_s"]]

    def _tables(self) -> dict[str, pd.DataFrame]:
        tables = {"jobs": self.jobs, "timeline": self.timeline, "decisions": self.decisions}
        for name in ("segments", "fragmentation", "burst", "quotas", "relaxations", "interconnect", "partitions",
                     "transfers", "datasets", "scaling", "forecast", "handoffs", "chains", "experiments", "roles",
                     "checkpoints", "archived_datasets"):
            if getattr(self, name) is not None:
                tables[name] = getattr(self, name)
        return tables

    def to_csv(self, directory: str | Path) -> list[Path]:
        """Write jobs.csv, timeline.csv, decisions.csv (and segments.csv, fragmentation.csv, burst.csv,
        quotas.csv, relaxations.csv, interconnect.csv, partitions.csv, transfers.csv, datasets.csv, roles.csv,
        checkpoints.csv and archived_datasets.csv when the result has them) into `directory`; return the paths.
        Spreadsheet-safe (engine.core.escaping.to_spreadsheet_csv): a job id such as "=HYPERLINK(...)"
        is written as text a spreadsheet never evaluates; the Parquet files keep every value as it is."""
        return self._export(Path(directory), "csv")

    def to_parquet(self, directory: str | Path) -> list[Path]:
        """Write jobs.parquet, timeline.parquet, decisions.parquet (and segments, fragmentation,
        burst, quotas, relaxations, transfers, datasets, roles, checkpoints and archived_datasets when the result
        has them) into
        `directory`; return the paths."""
        return self._export(Path(directory), "parquet")

    def _export(self, directory: Path, kind: str) -> list[Path]:
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, table in self._tables().items():
            path = directory / f"{name}.{kind}"
            if kind == "csv":
                path.write_bytes(to_spreadsheet_csv(table))
            else:
                table.to_parquet(path, index=False)
            paths.append(path)
        return paths

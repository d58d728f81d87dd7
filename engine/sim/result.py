"""What a simulation produces: a per-job table, a timeline and a decision log, with export.

Times are seconds from the workload's time 0 (`origin_utc`). Reasons a job waited or never ran:
"started" (no wait), "waiting-in-queue" (never reached the front), "blocked-by-capacity" (at the
front, or a backfill candidate, but no node had room), "blocked-by-reservation" (would have
delayed the head job's reservation), "rejected-by-admission", "never-fits" (larger than its
region's fleet, or asks for a GPU model the region lacks). Decisions in the log: "started",
"backfilled", "blocked-by-capacity", "blocked-by-reservation", "rejected-by-admission", "never-fits".
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class SimulationResult:
    """jobs: job_id, region (where it ran, or queued), home_region (its region in the data),
    workload_class, team, submit_s, start_s, end_s, wait_s, run_s,
    gpus (asked for), gpus_allocated (held; gang jobs hold whole nodes), failed, started,
    nodes (node names joined by ';'), reason (why it waited), latency_ms (round-trip time from the
    job's home region, where its users are, to the region it ran in; 0 at home).
    timeline: time_s, region, busy_gpus, queue_length, sampled after every event batch.
    decisions: time_s, job_id, region, decision.
    capacity_gpus: GPUs per region.
    window_s: end of the measurement window in seconds from time 0 (the input data's observed end),
    0 = none (KPIs then measure up to the makespan).
    fragmentation: time_s, region, idle_gpus, frag_gpus (FGD's fragmentation amount for the
    workload's typical pod shapes, GPUs), sampled on a grid of at least an hour (engine.sim.frag_sampler);
    None when not sampled.
    latency_slo_ms: the inference latency SLO the run was given (engine.world.latency)."""

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

    def _tables(self) -> dict[str, pd.DataFrame]:
        tables = {"jobs": self.jobs, "timeline": self.timeline, "decisions": self.decisions}
        if self.fragmentation is not None:
            tables["fragmentation"] = self.fragmentation
        return tables

    def to_csv(self, directory: str | Path) -> list[Path]:
        """Write jobs.csv, timeline.csv, decisions.csv (and fragmentation.csv when sampled) into
        `directory`; return the paths."""
        return self._export(Path(directory), "csv")

    def to_parquet(self, directory: str | Path) -> list[Path]:
        """Write jobs.parquet, timeline.parquet, decisions.parquet (and fragmentation.parquet when
        sampled) into `directory`; return the paths."""
        return self._export(Path(directory), "parquet")

    def _export(self, directory: Path, kind: str) -> list[Path]:
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, table in self._tables().items():
            path = directory / f"{name}.{kind}"
            if kind == "csv":
                table.to_csv(path, index=False)
            else:
                table.to_parquet(path, index=False)
            paths.append(path)
        return paths

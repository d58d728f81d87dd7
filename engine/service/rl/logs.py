"""The logs an agent trains on: an SWF trace, or a dataset of the telemetry store, as RLScheduler's jobs.

A trace is read with RLScheduler's semantics (engine/service/experiments/swf_jobs.py). A dataset
becomes the same arrays: its finished jobs (a start and an end after it) in submit order, run time
= end - start, requested time = the requested runtime (the run time where there is none),
processors = GPUs; the cluster is one pool of all the fleet's GPUs, one GPU per node, so a job
needs ceil(GPUs) of them (regions, GPU models and node boundaries are not seen: RLScheduler's
cluster model). User, team and workload class stand for SWF's user, group and executable
numbers, memory is the memory asked for (GiB). Jobs wider than the pool are left out.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from engine.service.experiments.swf_jobs import SwfJobs

_DIGESTED = ("submit_s", "run_s", "requested_s", "procs", "memory", "user", "group", "executable")


def data_digest(jobs: SwfJobs) -> str:
    """sha256 (hex) of what training reads of a log: its jobs' arrays and its cluster."""
    h = hashlib.sha256(f"{jobs.max_nodes}:{jobs.max_procs}:{len(jobs)}".encode())
    for name in _DIGESTED:
        values = getattr(jobs, name)
        if values is not None:
            h.update(name.encode())
            h.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return h.hexdigest()


def dataset_jobs(jobs: pd.DataFrame, fleet: pd.DataFrame, name: str) -> tuple[SwfJobs, int, np.ndarray]:
    """(the dataset's log as RLScheduler's jobs, how many finished jobs were wider than the pool, the
    positions in `jobs` of the log's jobs, in the log's order)."""
    submit = pd.to_datetime(jobs["submit_utc"], utc=True)
    start = pd.to_datetime(jobs["start_utc"], utc=True)
    end = pd.to_datetime(jobs["end_utc"], utc=True)
    run = (end - start).dt.total_seconds().to_numpy()
    gpus = pd.to_numeric(jobs["gpus"], errors="coerce").to_numpy(dtype=float)
    pool = int(np.floor(pd.to_numeric(fleet["gpus"], errors="coerce").fillna(0).sum()))
    finished = np.isfinite(run) & (run > 0) & np.isfinite(gpus) & (gpus > 0)
    wide = finished & (np.ceil(gpus) > pool)
    keep = np.flatnonzero(finished & ~wide)
    origin = submit.iloc[keep].min() if len(keep) else pd.Timestamp(0, tz="UTC")
    submit_s = (submit.iloc[keep] - origin).dt.total_seconds().to_numpy()
    order = np.argsort(submit_s, kind="stable")
    keep, submit_s = keep[order], submit_s[order]
    requested = pd.to_numeric(jobs.get("requested_runtime_s"), errors="coerce")
    requested = (requested.to_numpy(dtype=float)[keep] if requested is not None
                 else np.full(len(keep), np.nan))
    requested = np.where(np.isfinite(requested) & (requested > 0), requested, run[keep])

    def codes(column: str) -> np.ndarray | None:
        if column not in jobs:
            return None
        values = jobs[column].astype("string").fillna("")
        codes_, _ = pd.factorize(values, sort=True)
        return codes_[keep].astype(float) + 1.0

    memory = (pd.to_numeric(jobs["memory_gib"], errors="coerce").fillna(-1).to_numpy(dtype=float)[keep]
              if "memory_gib" in jobs else None)
    log = SwfJobs(source=name, job_id=np.arange(1, len(keep) + 1), submit_s=submit_s, run_s=run[keep],
                  requested_s=requested, procs=np.ceil(gpus[keep]), max_nodes=max(pool, 1), max_procs=max(pool, 1),
                  memory=memory, user=codes("user_name"), group=codes("team"), executable=codes("workload_class"))
    return log, int(wide.sum()), keep

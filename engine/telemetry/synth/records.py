"""Turn job streams and their FIFO replay into the canonical `jobs` and `utilization` tables.

Statuses follow what a scheduler log exported at the end of the window shows: jobs still
running have no end, jobs still queued have no start, jobs whose user gave up while queued
are cancelled with no start.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.telemetry.synth.clock import HOUR_S, WINDOW_END_S, WINDOW_START_S
from engine.telemetry.synth.fifo import Replay
from engine.telemetry.synth.world import GPU_SPEC

JOB_FILE_COLUMNS = (
    "job_id", "user_name", "team", "project", "workload_class", "priority", "qos", "queue",
    "submit_utc", "start_utc", "end_utc", "gpus", "gpu_milli", "gpu_type", "cpus", "memory_gib",
    "nodes", "region", "cluster", "status", "requested_runtime_s", "deadline_utc",
    "data_location", "data_size_gb", "residency", "gpu_util_pct", "gpus_used_max",
    "memory_used_gib_max",
)


def statuses(specs: pd.DataFrame, replay: Replay) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(status, start_s, end_s) as seen at the end of the window; -1 = no value."""
    start, end = replay.start_s.copy(), replay.end_s.copy()
    status = specs["outcome"].to_numpy(dtype=object).copy()
    running = (start >= 0) & (end > WINDOW_END_S)
    pending = (start < 0) & ~replay.gave_up
    status[replay.gave_up] = "cancelled"
    status[running] = "running"
    status[pending] = "pending"
    end[running | pending] = -1
    return status, start, end


def _iso(seconds: np.ndarray) -> np.ndarray:
    """Unix seconds -> 'YYYY-MM-DDTHH:MM:SSZ' strings; -1 -> None (NULL)."""
    text = np.char.add(np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s"), "Z").astype(object)
    text[seconds < 0] = None
    return text


def requested_memory_gib(specs: pd.DataFrame) -> np.ndarray:
    """The jobs' `memory_gib`: their GPUs x their GPU type's GiB of host memory per GPU, to 0.1 GiB."""
    gib_per_gpu = specs["gpu_type"].map({t: g for t, (_, g) in GPU_SPEC.items()}).to_numpy(dtype=float)
    return np.round(specs["gpus"].to_numpy(dtype=float) * gib_per_gpu, 1)


def jobs_table(specs: pd.DataFrame, status: np.ndarray, start_s: np.ndarray, end_s: np.ndarray,
               usage: dict[str, np.ndarray]) -> pd.DataFrame:
    """The jobs file's rows (timestamps as ISO-8601 text), ids numbered in submit order; `usage`
    holds the measured columns (`usage.job_usage`'s GPU use, `memory.job_memory`'s memory_used_gib_max)."""
    cpus_per_gpu = specs["gpu_type"].map({t: c for t, (c, _) in GPU_SPEC.items()}).to_numpy(dtype=float)
    gpus = specs["gpus"].to_numpy(dtype=float)
    deadline = specs["deadline_s"].to_numpy(dtype=float)
    table = pd.DataFrame({
        "job_id": [f"j{i:07d}" for i in range(1, len(specs) + 1)],
        "user_name": specs["user_name"].to_numpy(dtype=object),
        "team": specs["team"].to_numpy(dtype=object),
        "project": specs["project"].to_numpy(dtype=object),
        "workload_class": specs["workload_class"].to_numpy(dtype=object),
        "priority": specs["priority"].astype("int64"),
        "qos": specs["qos"].to_numpy(dtype=object),
        "queue": specs["queue"].to_numpy(dtype=object),
        "submit_utc": _iso(specs["submit_s"].to_numpy(dtype=np.int64)),
        "start_utc": _iso(start_s),
        "end_utc": _iso(end_s),
        "gpus": gpus,
        "gpu_milli": specs["gpu_milli"].astype("int64"),
        "gpu_type": specs["gpu_type"].to_numpy(dtype=object),
        "cpus": np.round(gpus * cpus_per_gpu, 1),
        "memory_gib": requested_memory_gib(specs),
        "nodes": specs["nodes"].astype("int64"),
        "region": specs["region"].to_numpy(dtype=object),
        "cluster": (specs["region"] + "-" + specs["gpu_type"].str.lower()).to_numpy(dtype=object),
        "status": status,
        "requested_runtime_s": pd.array(specs["requested_runtime_s"].to_numpy(dtype=float), dtype="Int64"),
        "deadline_utc": _iso(np.where(np.isnan(deadline), -1, deadline).astype(np.int64)),
        "data_location": specs["data_location"].to_numpy(dtype=object),
        "data_size_gb": specs["data_size_gb"].to_numpy(dtype=float),
        "residency": specs["residency"].to_numpy(dtype=object),
        "gpu_util_pct": usage["gpu_util_pct"],
        "gpus_used_max": usage["gpus_used_max"],
        "memory_used_gib_max": usage["memory_used_gib_max"],
    })
    return table[list(JOB_FILE_COLUMNS)]


def utilization_table(fleet: pd.DataFrame, cluster: np.ndarray, gpus: np.ndarray,
                      start_s: np.ndarray, end_s: np.ndarray) -> pd.DataFrame:
    """Hourly mean busy GPUs per cluster over the window (jobs still running count to its end)."""
    hours = np.arange(WINDOW_START_S, WINDOW_END_S + 1, HOUR_S, dtype=np.int64)
    totals = fleet.groupby("cluster", sort=True)["gpus"].sum()
    frames = []
    for name, total in totals.items():
        mine = (cluster == name) & (start_s >= 0)
        begin = start_s[mine]
        finish = np.where(end_s[mine] >= 0, end_s[mine], WINDOW_END_S)
        busy = np.diff(_busy_area(begin, finish, gpus[mine], hours)) / HOUR_S
        region = fleet.loc[fleet["cluster"] == name, "region"].iloc[0]
        frames.append(pd.DataFrame({
            "ts_utc": _iso(hours[:-1]), "region": region, "cluster": name,
            "busy": np.round(busy, 3), "total": float(total),
            "util_pct": np.round(100 * busy / total, 2), "unit": "gpus"}))
    return pd.concat(frames, ignore_index=True)


def _busy_area(begin: np.ndarray, finish: np.ndarray, gpus: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Integral of busy GPUs (GPU-seconds) from the first event up to each instant of `at`."""
    times = np.concatenate([begin, finish])
    delta = np.concatenate([gpus, -gpus])
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(delta[order])
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
    k = np.searchsorted(times, at, side="right") - 1
    inside = k >= 0
    result = np.zeros(len(at))
    result[inside] = area[k[inside]] + level[k[inside]] * (at[inside] - times[k[inside]])
    return result

"""Shared pieces of every job stream: durations, outcomes, runtime requests, the frame.

A job stream is a DataFrame with the columns in `SPEC_COLUMNS`; times are integer Unix
seconds, `run_s` is how long the job runs once started (already shortened for jobs that
fail or are cancelled), `patience_s` is how long a job that will be cancelled waits in
the queue before its user gives up (-1: never gives up).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.telemetry.synth.clock import HOUR_S

SPEC_COLUMNS = (
    "workload_class", "team", "user_name", "project", "priority", "qos", "queue", "region",
    "gpu_type", "submit_s", "run_s", "outcome", "patience_s", "nodes", "gpus", "gpu_milli",
    "node_milli", "requested_runtime_s", "deadline_s", "data_location", "data_size_gb", "residency",
)


def lognormal_s(rng: np.random.Generator, n: int, median_s: float, sigma: float,
                low_s: float, high_s: float) -> np.ndarray:
    """n durations in whole seconds, log-normal around `median_s`, clipped to [low, high]."""
    values = median_s * np.exp(sigma * rng.standard_normal(n))
    return np.clip(values, low_s, high_s).round().astype(np.int64)


def outcomes(rng: np.random.Generator, full_s: np.ndarray, p_fail: float,
             p_cancel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outcome, run_s, patience_s): failed jobs stop part-way, cancelled ones are stopped
    by their user part-way, or given up on after `patience_s` if still queued."""
    n = len(full_s)
    draw = rng.random(n)
    outcome = np.where(draw < p_fail, "failed", np.where(draw < p_fail + p_cancel, "cancelled", "completed"))
    fraction = np.where(outcome == "failed", rng.uniform(0.02, 0.9, n),
                        np.where(outcome == "cancelled", rng.uniform(0.01, 0.7, n), 1.0))
    run_s = np.maximum(60, (full_s * fraction).round()).astype(np.int64)
    patience = np.where(outcome == "cancelled",
                        lognormal_s(rng, n, 3 * HOUR_S, 1.0, 10 * 60, 48 * HOUR_S), -1)
    return outcome, run_s, patience.astype(np.int64)


def requested_s(rng: np.random.Generator, full_s: np.ndarray, typical_factor: float = 4.0) -> np.ndarray:
    """Users' runtime requests: the full runtime times a factor (mostly 2-10x), in 15-minute steps."""
    factor = np.clip(typical_factor * np.exp(0.45 * rng.standard_normal(len(full_s))), 1.2, 12.0)
    quarter = 15 * 60
    return (np.ceil(full_s * factor / quarter) * quarter).astype(np.float64)


def users(team: str, count: int) -> list[str]:
    return [f"{team}-u{k:02d}" for k in range(1, count + 1)]


def spec_columns(n: int, **columns) -> dict[str, np.ndarray]:
    """The columns of a job stream of n rows; scalar values are repeated, absent columns are null."""
    data = {}
    for name in SPEC_COLUMNS:
        value = columns.pop(name, None)
        if value is None or isinstance(value, str):
            value = np.full(n, value, dtype=object)
        elif np.isscalar(value):
            value = np.full(n, value)
        data[name] = np.asarray(value)
    if columns:
        raise ValueError(f"unknown job-stream columns {sorted(columns)}")
    return data


def spec_frame(n: int, **columns) -> pd.DataFrame:
    return pd.DataFrame(spec_columns(n, **columns))


def concat_specs(parts: list[dict[str, np.ndarray]]) -> pd.DataFrame:
    """One frame from many `spec_columns` results (cheaper than concatenating frames)."""
    return pd.DataFrame({name: np.concatenate([part[name] for part in parts]) for name in SPEC_COLUMNS})

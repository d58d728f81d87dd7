"""The per-job features a learned queue order reads: RLScheduler's (Zhang et al., SC'20) eight.

Each waiting job is one row of `FEATURES` values in [0, 1), normalised as RLScheduler does:
- wait: seconds waited / 12 h, at most 1 - 1e-5;
- requested: requested runtime / the log's longest run time, at most 1 - 1e-5;
- processors: processors (GPUs) asked for / the cluster's, at most 1 - 1e-5;
- memory, user, group, executable: the value / the log's largest, at most 1 - 1e-5; 1 when the log
  does not record it (SWF's -1);
- can_start: 1 - 1e-5 when the job fits in the free processors now, else 1e-5.
A row of `PADDING` marks an empty slot of a fixed-size observation. `PREDICTED_FEATURES` adds the
runtime predictors' P10, P50 and P90 (engine/predict), each normalised like the requested runtime.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_WAIT_S = 12 * 3600.0
NEAR_ONE = 1.0 - 1e-5
NEAR_ZERO = 1e-5
FEATURES = ("wait", "requested", "processors", "memory", "user", "group", "executable", "can_start")
PREDICTED_FEATURES = FEATURES + ("p10", "p50", "p90")
FEATURE_SETS = {"rlscheduler": FEATURES, "predicted": PREDICTED_FEATURES}
PADDING = np.array([0.0, 1, 1, 1, 1, 1, 1, 0])


@dataclass(frozen=True)
class Scales:
    """What the features are divided by: the log's longest run time (s), the cluster's processors,
    and the largest memory, user, group and executable numbers (<= 0: the log has none)."""

    max_runtime_s: float
    max_procs: float
    max_memory: float = 0.0
    max_user: float = 0.0
    max_group: float = 0.0
    max_executable: float = 0.0

    def as_dict(self) -> dict:
        return {name: float(getattr(self, name)) for name in self.__dataclass_fields__}


def padding(width: int) -> np.ndarray:
    """The row that marks an empty slot, `width` features wide (predicted runtimes padded with 1)."""
    return np.concatenate([PADDING, np.ones(width - len(PADDING))])


def job_features(scales: Scales, wait_s, requested_s, procs, fits, memory=None, user=None, group=None,
                 executable=None, predicted_s=None) -> np.ndarray:
    """(n, 8) rows, or (n, 11) with `predicted_s` ((n, 3) P10/P50/P90 seconds). `memory`, `user`,
    `group`, `executable`: the log's values (negative or None: not recorded)."""
    n = len(wait_s)
    columns = [
        np.minimum(np.asarray(wait_s, float) / MAX_WAIT_S, NEAR_ONE),
        _ratio(requested_s, scales.max_runtime_s, n),
        _ratio(procs, scales.max_procs, n),
        _recorded(memory, scales.max_memory, n),
        _recorded(user, scales.max_user, n),
        _recorded(group, scales.max_group, n),
        _recorded(executable, scales.max_executable, n),
        np.where(np.asarray(fits, bool), NEAR_ONE, NEAR_ZERO),
    ]
    if predicted_s is not None:
        columns += [_ratio(predicted_s[:, k], scales.max_runtime_s, n) for k in range(3)]
    return np.column_stack(columns) if n else np.zeros((0, len(columns)))


def _ratio(values, scale: float, n: int) -> np.ndarray:
    if scale <= 0:
        return np.full(n, NEAR_ONE)
    return np.minimum(np.maximum(np.asarray(values, float), 0.0) / scale, NEAR_ONE)


def _recorded(values, scale: float, n: int) -> np.ndarray:
    """value / scale, or 1 where the log has no value (negative, or no column at all)."""
    if values is None or scale <= 0:
        return np.ones(n)
    values = np.asarray(values, float)
    return np.where(values < 0, 1.0, np.minimum(values / scale, NEAR_ONE))

"""EASY++'s runtime prediction (Tsafrir, Etsion and Feitelson, TPDS 2007): the mean of the runtimes
of the user's last two jobs that finished in this run, no longer than the job's request.

`UserHistory(workload)` codes each job's user; `finished(j, runtime_s)` records a job's runtime when
it ends (in the simulation, not the record: what a scheduler running this replay would have seen);
`expected(j, requested_s)` is job j's prediction now, its request when its user has finished nothing
yet (or is unknown). The same statistic as engine.predict.history.FinishedBefore.rolling(values, user,
2, "mean") over the recorded history, made online as the simulated jobs end.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


class UserHistory:
    """The last two simulated runtimes of each user."""

    def __init__(self, w) -> None:
        users = w.user if w.user is not None else np.full(len(w), "")
        codes, names = pd.factorize(pd.Series(users, dtype=object).fillna(""))
        unknown = [k for k, name in enumerate(names) if name == ""]
        self.user = np.where(np.isin(codes, unknown), -1, codes).astype(np.int64)
        self.user_list = self.user.tolist()
        self.last = [[] for _ in range(len(names))]  # per user: up to two runtimes, oldest first
        self.mean = np.full(len(names) + 1, np.nan)  # per user (the last entry: unknown users)

    def finished(self, j: int, runtime_s: float) -> None:
        u = self.user_list[j]
        if u < 0 or not math.isfinite(runtime_s):
            return
        last = self.last[u]
        last.append(float(runtime_s))
        if len(last) > 2:
            del last[0]
        self.mean[u] = sum(last) / len(last)

    def expected(self, j: int, requested_s: float) -> float:
        predicted = self.mean[self.user_list[j]]
        return float(requested_s) if predicted != predicted else min(float(predicted), float(requested_s))

    def expected_many(self, jobs: np.ndarray, requested_s: np.ndarray) -> np.ndarray:
        predicted = self.mean[self.user[jobs]]
        return np.where(np.isnan(predicted), requested_s, np.minimum(predicted, requested_s))

"""The simple predictors every model is compared with.

Runtime (seconds):
- `request`: the user's requested runtime; jobs without a request get `fallback_s` (in
  engine/predict/evaluate.py the median runtime of the training rows).
- `last_two`: the mean of the user's last two finished runtimes (Tsafrir, Etsion and
  Feitelson, IEEE TPDS 2007), capped at the request as in that paper (the job is killed there
  anyway); the request when the user has no finished job yet.

Failure (probability 0-1):
- `base_rate`: the training rows' failure rate, the same for every job.
- `user_recent`: the user's failure rate over their last finished jobs (`features.user_fail_rate`);
  the base rate when the user has none.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def request_s(X: pd.DataFrame, fallback_s: float) -> np.ndarray:
    """The requested runtime in seconds, `fallback_s` where there is none."""
    request = np.exp(X["log_request_s"].to_numpy(dtype=np.float64))
    return np.where(np.isfinite(request), request, fallback_s)


def last_two_s(X: pd.DataFrame, fallback_s: float) -> np.ndarray:
    """Mean of the user's last two runtimes, at most the request; else the request (or `fallback_s`)."""
    request = request_s(X, fallback_s)
    history = np.exp(X["log_user_last2_s"].to_numpy(dtype=np.float64))
    known = np.isfinite(X["log_request_s"].to_numpy(dtype=np.float64))
    capped = np.where(known, np.minimum(history, request), history)
    return np.where(np.isfinite(history), capped, request)


def base_rate(X: pd.DataFrame, rate: float) -> np.ndarray:
    return np.full(len(X), rate)


def user_recent(X: pd.DataFrame, rate: float) -> np.ndarray:
    recent = X["user_fail_rate"].to_numpy(dtype=np.float64)
    return np.where(np.isfinite(recent), recent, rate)

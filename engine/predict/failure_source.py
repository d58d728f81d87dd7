"""Predicted failure probabilities for the scheduler: what failure-aware policies see.

`with_failure_probability(jobs, cut, tz)` fits the failure model (engine.predict.failure) on the
jobs that had ended by `cut` with a known outcome, and gives every job submitted at or after `cut`
its calibrated probability of failing or being cancelled in a `fail_prob` column (0-1). Jobs before
the cut get NaN: they are the model's past. Features are submit-time only
(engine.predict.features), so no probability sees a job that had not finished when it was made.

The simulator hands `fail_prob` to queue orders (engine.core.views.QueueView.fail_prob, 0 where
unknown); engine.policies.failure_aware orders by it. Like engine.predict.runtime_source, the last
result is memoised by a hash of the whole jobs table and the arguments.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.predict.failure import FailureModel
from engine.predict.features import TimeZones, failed, features, has_outcome, seconds
from engine.predict.runtime_source import MIN_TRAIN_JOBS, NotEnoughHistory, memo_key

_MEMO: dict = {}


def with_failure_probability(jobs: pd.DataFrame, cut: pd.Timestamp, tz: TimeZones = None) -> pd.DataFrame:
    """A copy of `jobs` with `fail_prob` for the jobs submitted at or after `cut` (NaN before).
    Raises NotEnoughHistory when fewer than MIN_TRAIN_JOBS jobs with an outcome had ended by `cut`."""
    key = memo_key(jobs, cut, tz)
    if key not in _MEMO:
        _MEMO.clear()
        _MEMO[key] = _predict(jobs, pd.Timestamp(cut), tz)
    return _MEMO[key].copy()


def _predict(jobs: pd.DataFrame, cut: pd.Timestamp, tz: TimeZones) -> pd.DataFrame:
    submit = pd.to_datetime(jobs["submit_utc"])
    before = (submit < cut).to_numpy()
    ended = (pd.to_datetime(jobs["end_utc"]) <= cut).to_numpy()
    train = before & ended & has_outcome(jobs)
    if train.sum() < MIN_TRAIN_JOBS:
        raise NotEnoughHistory(f"failure probabilities need at least {MIN_TRAIN_JOBS} jobs with an outcome that "
                               f"ended before {cut:%Y-%m-%d %H:%M} UTC to train on; found {int(train.sum())}")
    X = features(jobs, tz)
    rows = np.flatnonzero(train)
    rows = rows[np.argsort(seconds(jobs["submit_utc"])[rows], kind="stable")]  # calibration on the newest
    model = FailureModel().fit(X.iloc[rows], failed(jobs)[rows])
    out = jobs.copy()
    prob = np.full(len(jobs), np.nan)
    prob[~before] = model.predict(X[~before])
    out["fail_prob"] = prob
    return out

"""Predicted runtimes in place of the users' requests: the runtime the scheduler sees.

`with_predicted_runtimes(jobs, cut, quantile)` fits the runtime model (engine.predict.runtime) on
the jobs that had ended by `cut` with a known outcome and runtime, and gives every job
submitted at or after `cut` the model's runtime at `quantile` (P10, P50, P90 or "sched", the
asymmetric point prediction) as its `requested_runtime_s` (the interval's bounds calibrated, their
offsets tracked over the outcomes known at each submit: engine/predict/conformal.py); the user's own request moves to `user_requested_runtime_s`. Jobs before
the cut keep their requests (they are the model's past). Features are submit-time only
(engine.predict.features), so no prediction sees a job that had not finished when it was made.

Policies read `requested_runtime_s` and nothing else about a job's length (engine.sim.state.workload),
so orders (SJF, WFP3, ...) and backfilling use the predictions; the simulator still runs each job
for its true runtime and never kills one that outlives its prediction: backfilling treats a
running job past its expected end as ending now, so reservations are re-planned at every pass.

The last result is memoised (keyed by a hash of the whole jobs table and the arguments), since a
scenario's jobs are prepared more than once per run (the simulation, then its cost report).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.predict.features import TimeZones, features, has_outcome, runtime_s, seconds
from engine.predict.runtime import RuntimeModel

COLUMNS = {"p10": "p10_s", "p50": "p50_s", "p90": "p90_s", "sched": "sched_s"}
MIN_TRAIN_JOBS = 200
_MEMO: dict = {}


class NotEnoughHistory(ValueError):
    """Too few jobs before the cut to train on."""


def memo_key(jobs: pd.DataFrame, *args) -> tuple:
    """A key for a result that depends on the whole jobs table and `args` (time zone mappings by items)."""
    frozen = tuple(tuple(sorted(a.items())) if isinstance(a, dict) else a for a in args)
    return (int(pd.util.hash_pandas_object(jobs, index=False).sum()), len(jobs), tuple(jobs.columns), frozen)


def with_predicted_runtimes(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: str = "p50",
                            tz: TimeZones = None) -> pd.DataFrame:
    """A copy of `jobs` whose jobs submitted at or after `cut` carry the model's runtime at `quantile`
    as requested_runtime_s (user_requested_runtime_s keeps the request). Raises NotEnoughHistory
    when fewer than MIN_TRAIN_JOBS finished jobs were submitted before the cut."""
    if quantile not in COLUMNS:
        raise ValueError(f"quantile must be one of {', '.join(COLUMNS)}, got {quantile!r}")
    key = memo_key(jobs, pd.Timestamp(cut), quantile, tz)
    if key not in _MEMO:
        _MEMO.clear()
        _MEMO[key] = _predict(jobs, pd.Timestamp(cut), quantile, tz)
    return _MEMO[key].copy()


def _predict(jobs: pd.DataFrame, cut: pd.Timestamp, quantile: str, tz: TimeZones) -> pd.DataFrame:
    submit = pd.to_datetime(jobs["submit_utc"])
    before = (submit < cut).to_numpy()
    run = runtime_s(jobs)
    ended = (pd.to_datetime(jobs["end_utc"]) <= cut).to_numpy()  # outcomes known at the cut, none later
    train = before & ended & has_outcome(jobs) & np.isfinite(run)
    if train.sum() < MIN_TRAIN_JOBS:
        raise NotEnoughHistory(f"predicted runtimes need at least {MIN_TRAIN_JOBS} finished jobs submitted before "
                               f"{cut:%Y-%m-%d %H:%M} UTC to train on; found {int(train.sum())}")
    X = features(jobs, tz)
    column = COLUMNS[quantile]
    end = seconds(jobs["end_utc"])
    model = RuntimeModel(outputs=("p50_s", column) if column != "p10_s" and column != "p90_s" else
                         ("p10_s", "p50_s", "p90_s")).fit(X[train], run[train], end[train])
    predicted = model.predict_tracked(X, run, end, seconds(jobs["submit_utc"]),
                                      np.flatnonzero(~before))[column].to_numpy()
    out = jobs.copy()
    requested = pd.to_numeric(out["requested_runtime_s"], errors="coerce") if "requested_runtime_s" in out \
        else pd.Series(np.nan, index=out.index)
    out["user_requested_runtime_s"] = requested
    values = requested.to_numpy(dtype=np.float64).copy()
    values[~before] = predicted
    out["requested_runtime_s"] = values
    return out

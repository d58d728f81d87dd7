"""Time-ordered evaluation of the predictors against their baselines.

Split: jobs are ranked by submit time (stable, so ties keep table order); the first
`train_share` (70 %) are the training part and the rest the test part, never shuffled. The
cutoff is the submit time of the first test job. A model may learn only from labels known at the
cutoff, so training rows are training-part jobs that had also *ended* by then (a job submitted
before the cutoff but still running is left out). Test rows are test-part jobs whose label is
known: a runtime (start and end) for the runtime model, a final status with an end for the
failure model. Features are computed once over the whole table; they only look at jobs finished
before each submit (engine/predict/features.py), so test rows see the history a live predictor
would have seen, while the model itself stays frozen at the cutoff.

The runtime report scores the P50 (`model`) and the runtime to schedule with (`sched`) against the
request and last-two baselines, and the P10-P90 interval (engine/predict/conformal.py) as a live
predictor would have given it: its offsets tracked over the outcomes known at each test job's submit
(`coverage`, `below_p10`, `above_p90`, `width_ratio_median`), and with the split-conformal offsets alone
(`coverage_split`).

Both reports are plain dicts of floats, ints and strings (JSON-ready) and deterministic: the
same jobs, time zone and settings give the same dict. `runtime_evaluation` and
`failure_evaluation` also hand back the fitted model and its test rows (`Evaluated`), so that
more can be measured on exactly what was scored (engine/predict/importance.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.predict import baselines
from engine.predict.failure import FailureModel, FailureSettings
from engine.predict.features import TimeZones, failed, features, has_outcome, runtime_s, seconds
from engine.predict.metrics import calibration_table, coverage, failure_metrics, interval_metrics, runtime_metrics
from engine.predict.runtime import RuntimeModel, RuntimeSettings

TRAIN_SHARE = 0.7


@dataclass(frozen=True)
class TimeSplit:
    """Boolean row masks over the jobs table (in its own order) and the cutoff (epoch seconds)."""

    train: np.ndarray
    test: np.ndarray
    cutoff_s: float

    @classmethod
    def of(cls, jobs: pd.DataFrame, train_share: float = TRAIN_SHARE) -> "TimeSplit":
        submit = seconds(jobs["submit_utc"])
        order = np.argsort(submit, kind="stable")
        rank = np.empty(len(jobs), dtype=np.int64)
        rank[order] = np.arange(len(jobs))
        n_train = int(len(jobs) * train_share)
        cutoff = submit[order[n_train]] if n_train < len(jobs) else np.inf
        ended = seconds(jobs["end_utc"]) <= cutoff
        return cls((rank < n_train) & ended, rank >= n_train, float(cutoff))

    @property
    def cutoff_utc(self) -> str:
        return pd.Timestamp(self.cutoff_s, unit="s").isoformat() + "Z" if np.isfinite(self.cutoff_s) else ""


@dataclass(frozen=True)
class Evaluated:
    """A report, the model it scored (fitted on the training part) and the test rows: features and
    labels (runtimes in seconds, or failed booleans), in submit order."""

    report: dict
    model: object
    X_test: pd.DataFrame
    y_test: np.ndarray


def evaluate_runtime(jobs: pd.DataFrame, tz: TimeZones = None, train_share: float = TRAIN_SHARE,
                     settings: RuntimeSettings = RuntimeSettings()) -> dict:
    """P50 against the request and last-two baselines, and the P10-P90 coverage, on the test part."""
    return runtime_evaluation(jobs, tz, train_share, settings).report


def evaluate_failure(jobs: pd.DataFrame, tz: TimeZones = None, train_share: float = TRAIN_SHARE,
                     settings: FailureSettings = FailureSettings()) -> dict:
    """Calibrated failure probability against the base-rate and user-recent baselines on the test part.

    With a single class in the test part the AUCs are NaN (only the Brier score is defined).
    """
    return failure_evaluation(jobs, tz, train_share, settings).report


def runtime_evaluation(jobs: pd.DataFrame, tz: TimeZones = None, train_share: float = TRAIN_SHARE,
                       settings: RuntimeSettings = RuntimeSettings(), X: pd.DataFrame | None = None) -> Evaluated:
    """evaluate_runtime's report with its model and test rows; `X`: the jobs' features, when computed."""
    X, split = features(jobs, tz) if X is None else X, TimeSplit.of(jobs, train_share)
    run, end, submit = runtime_s(jobs), seconds(jobs["end_utc"]), seconds(jobs["submit_utc"])
    ran = np.isfinite(run)
    train, test = in_submit_order(jobs, split.train & ran), in_submit_order(jobs, split.test & ran)
    model = RuntimeModel(settings).fit(X.iloc[train], run[train], end[train])
    predicted = model.predict_tracked(X, run, end, submit, rows=test)
    split_only = model.predict(X.iloc[test])
    actual, fallback = run[test], float(np.median(run[train]))
    report = {
        "cutoff_utc": split.cutoff_utc, "jobs_train": int(len(train)), "jobs_test": int(len(test)),
        "model": {**runtime_metrics(actual, predicted["p50_s"]),
                  **interval_metrics(actual, predicted["p10_s"].to_numpy(), predicted["p90_s"].to_numpy()),
                  "coverage_split": coverage(actual, split_only["p10_s"].to_numpy(), split_only["p90_s"].to_numpy())},
        "sched": runtime_metrics(actual, predicted["sched_s"]),
        "request": runtime_metrics(actual, baselines.request_s(X.iloc[test], fallback)),
        "last_two": runtime_metrics(actual, baselines.last_two_s(X.iloc[test], fallback)),
    }
    return Evaluated(report, model, X.iloc[test], actual)


def failure_evaluation(jobs: pd.DataFrame, tz: TimeZones = None, train_share: float = TRAIN_SHARE,
                       settings: FailureSettings = FailureSettings(), X: pd.DataFrame | None = None) -> Evaluated:
    """evaluate_failure's report with its model and test rows; `X`: the jobs' features, when computed."""
    X, split = features(jobs, tz) if X is None else X, TimeSplit.of(jobs, train_share)
    known, label = has_outcome(jobs), failed(jobs)
    train, test = in_submit_order(jobs, split.train & known), in_submit_order(jobs, split.test & known)
    model = FailureModel(settings).fit(X.iloc[train], label[train])
    prob, y = model.predict(X.iloc[test]), label[test]
    rate = float(label[train].mean()) if len(train) else 0.0
    report = {
        "cutoff_utc": split.cutoff_utc, "jobs_train": int(len(train)), "jobs_test": int(len(test)),
        "train_failure_rate": rate,
        "model": failure_metrics(y, prob),
        "base_rate": failure_metrics(y, baselines.base_rate(X.iloc[test], rate)),
        "user_recent": failure_metrics(y, baselines.user_recent(X.iloc[test], rate)),
        "calibration": calibration_table(y, prob).to_dict(orient="records"),
    }
    return Evaluated(report, model, X.iloc[test], y)


def in_submit_order(jobs: pd.DataFrame, mask: np.ndarray) -> np.ndarray:
    """Positions of the rows in `mask`, in submit order (stable)."""
    rows = np.flatnonzero(mask)
    return rows[np.argsort(seconds(jobs["submit_utc"])[rows], kind="stable")]

"""Runtime quantiles and the runtime to schedule with, in seconds, from submit-time features.

One scikit-learn Pipeline per output: the categorical encoder (engine/predict/encoding.py) then a
HistGradientBoostingRegressor with the pinball (quantile) loss on ln(runtime), runtimes floored at
1 s. A quantile of ln(runtime) is the ln of the runtime's quantile, so exponentiating gives
seconds. Fixed iterations, no early stopping and no subsampling: the same rows and seed give the
same model. Outputs (`predict`):

- `p50_s`: the median, fitted on every training row.
- `p10_s`, `p90_s`: the 80 % interval, calibrated (engine/predict/conformal.py): its two quantile
  models are fitted on the older 1 - CALIBRATION_SHARE of the training rows (given in submit order)
  and each bound is moved by the split-conformal offset measured on the newest rows, so that each is
  crossed by 10 % of runtimes; `predict` takes offsets tracked online from later outcomes too. Both
  bounds are kept on their side of the P50.
- `sched_s`: the point prediction a scheduler should plan with: the `schedule_quantile` (0.7) of
  ln(runtime), fitted on every row. Its pinball loss costs an underestimate tau / (1 - tau) = 2.3 times
  an overestimate of the same log size, the asymmetry Gaussier et al. (SC'15) found a backfilling
  scheduler needs: a job that outlives its prediction delays the reservation planned behind it.

Clipping: predictions are always floored at 1 s. Clipping them to the job's requested runtime
(`clip_to_request`) is off by default, decided by measurement: batch systems kill a job at its
request plus a grace period, yet 9.3 % of CTC-SP2's and 7.3 % of HPC2N's jobs ran past their
request (1.2 % and 1.5 % by more than 10 %), and the model already sees the request as a feature.
Clipping moved the P50's mean absolute log error by less than 0.003 on both logs (1.1065 -> 1.1062
on CTC-SP2, 1.6613 -> 1.6642 on HPC2N) and cut the P10-P90 coverage by 1.8 and 2.5 points
(benchmarks/RESULTS.md). A scheduler that kills at the request may still take min(prediction,
request) itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.pipeline import Pipeline

from engine.predict import conformal
from engine.predict.encoding import categorical_mask, encoder
from engine.predict.features import CATEGORICAL, MIN_RUNTIME_S
from engine.predict.threads import openmp_threads

QUANTILE_COLUMNS = {0.1: "p10_s", 0.5: "p50_s", 0.9: "p90_s"}
OUTPUT_COLUMNS = ("p10_s", "p50_s", "p90_s", "sched_s")


@dataclass(frozen=True)
class RuntimeSettings:
    """How the runtime model is fitted."""

    max_iter: int = field(default=200, metadata={"help": "boosting iterations per quantile"})
    learning_rate: float = field(default=0.1, metadata={"help": "shrinkage of each tree"})
    max_leaf_nodes: int = field(default=31, metadata={"help": "leaves per tree"})
    categorical: tuple[str, ...] = field(default=CATEGORICAL,
                                         metadata={"help": "categorical features the trees see"})
    min_jobs: int = field(default=20, metadata={
        "help": "training jobs a user (team, queue) needs for its own code; rarer ones are pooled"})
    clip_to_request: bool = field(default=False,
                                  metadata={"help": "clip predictions to the job's requested runtime"})
    schedule_quantile: float = field(default=0.7, metadata={
        "help": "quantile of the runtime to schedule with (sched_s): above 0.5 underestimates cost more"})
    seed: int = field(default=0, metadata={"help": "random_state of the boosting"})
    threads: int = field(default=1, metadata={
        "help": "OpenMP threads while fitting and predicting (engine/predict/threads.py)"})


def quantile_pipeline(quantile: float, settings: RuntimeSettings) -> Pipeline:
    """Encoder + quantile gradient boosting on ln(runtime s) for one quantile."""
    booster = HistGradientBoostingRegressor(
        loss="quantile", quantile=quantile, max_iter=settings.max_iter,
        learning_rate=settings.learning_rate, max_leaf_nodes=settings.max_leaf_nodes,
        categorical_features=categorical_mask(settings.categorical), early_stopping=False, random_state=settings.seed)
    return Pipeline([("encode", encoder(settings.categorical, settings.min_jobs)), ("boost", booster)])


class RuntimeModel:
    """P10/P50/P90 and sched runtime predictor; `fit` on feature rows and runtimes, then `predict`.

    `outputs`: the columns to fit and predict (OUTPUT_COLUMNS by default); a caller that needs one
    (a scenario that schedules with the P50) fits one pipeline, not four. Fitted state: `pipelines`
    (output column -> Pipeline), `offsets_` (the split-conformal Offsets of the interval) and
    `horizon_s_` (the newest end time among the training rows, when `fit` was given end times: outcomes
    after it can track the offsets further)."""

    def __init__(self, settings: RuntimeSettings = RuntimeSettings(), outputs: tuple[str, ...] = OUTPUT_COLUMNS):
        unknown = sorted(set(outputs) - set(OUTPUT_COLUMNS))
        if unknown or not outputs or ("p10_s" in outputs) != ("p90_s" in outputs):
            raise ValueError(f"outputs must be some of {', '.join(OUTPUT_COLUMNS)}, p10_s and p90_s together; "
                             f"got {outputs!r}")
        if not 0 < settings.schedule_quantile < 1:
            raise ValueError(f"schedule_quantile must be in (0, 1), got {settings.schedule_quantile}")
        self.settings = settings
        self.outputs = tuple(c for c in OUTPUT_COLUMNS if c in outputs)
        taus = {"p10_s": 0.1, "p50_s": 0.5, "p90_s": 0.9, "sched_s": settings.schedule_quantile}
        self.pipelines = {column: quantile_pipeline(taus[column], settings) for column in self.outputs}
        self.offsets_ = conformal.Offsets()
        self.horizon_s_ = -np.inf

    @property
    def interval(self) -> bool:
        return "p10_s" in self.outputs

    def fit(self, X: pd.DataFrame, runtime_s: np.ndarray, end_s: np.ndarray | None = None) -> "RuntimeModel":
        """`X`: rows of `features.features` in submit order; `runtime_s`: their runtimes (all known);
        `end_s`: their end times (epoch seconds), to know which later outcomes the model has not seen."""
        target = np.log(np.maximum(np.asarray(runtime_s, dtype=np.float64), MIN_RUNTIME_S))
        calibrating = int(len(target) * conformal.CALIBRATION_SHARE) if self.interval else 0
        if calibrating < conformal.MIN_CALIBRATION:
            calibrating = 0
        older = len(target) - calibrating
        with openmp_threads(self.settings.threads):
            for column, pipeline in self.pipelines.items():
                rows = slice(0, older) if column in ("p10_s", "p90_s") else slice(None)
                pipeline.fit(X.iloc[rows], target[rows])
            if calibrating:
                low, high = self._bounds_log(X.iloc[older:])
                self.offsets_ = conformal.split_offsets(low, high, target[older:])
        if end_s is not None and len(end_s):
            self.horizon_s_ = float(np.nanmax(end_s))
        return self

    def _bounds_log(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """The raw interval (ln seconds) of the rows, its ends in order."""
        low, high = (self.pipelines[c].predict(X) for c in ("p10_s", "p90_s"))
        return np.minimum(low, high), np.maximum(low, high)

    def track(self, X: pd.DataFrame, runtime_s: np.ndarray, end_s: np.ndarray, submit_s: np.ndarray) -> conformal.Track:
        """The interval's offsets tracked online over these outcomes (rows the model was not fitted on,
        their runtimes, end and submit times), from the split-conformal ones (engine/predict/conformal.py)."""
        if not self.interval or not len(X):
            return conformal.Track(self.offsets_, np.zeros(0), np.zeros(0), np.zeros(0))
        with openmp_threads(self.settings.threads):
            low, high = self._bounds_log(X)
            middle = self.pipelines["p50_s"].predict(X) if "p50_s" in self.pipelines else None
        actual = np.log(np.maximum(np.asarray(runtime_s, dtype=np.float64), MIN_RUNTIME_S))
        return conformal.track(self.offsets_, low, high, actual, end_s, submit_s, middle)

    def predict_tracked(self, X: pd.DataFrame, runtime_s: np.ndarray, end_s: np.ndarray, submit_s: np.ndarray,
                        rows: np.ndarray | None = None) -> pd.DataFrame:
        """`predict` for the rows of `X` at positions `rows` (default all), the interval's offsets tracked over
        the outcomes of `X` the model was not fitted on (a known runtime, ending after `horizon_s_`), each
        row with the offsets in force at its submit: what a live predictor would have said then.
        `runtime_s`, `end_s`, `submit_s`: per row of `X`, epoch seconds (NaN where unknown)."""
        end, submit = np.asarray(end_s, dtype=np.float64), np.asarray(submit_s, dtype=np.float64)
        after = np.flatnonzero(np.isfinite(np.asarray(runtime_s, dtype=np.float64)) & (end > self.horizon_s_))
        tracked = self.track(X.iloc[after], np.asarray(runtime_s)[after], end[after], submit[after])
        rows = np.arange(len(X)) if rows is None else np.asarray(rows)
        return self.predict(X.iloc[rows], tracked.at(submit[rows]))

    def predict(self, X: pd.DataFrame, offsets: tuple | None = None) -> pd.DataFrame:
        """The fitted output columns (seconds), index of `X`. `offsets`: (lower, upper) per row or
        scalars, in ln units (a Track's `at`); default the split-conformal ones."""
        lower, upper = offsets if offsets is not None else (self.offsets_.lower, self.offsets_.upper)
        with openmp_threads(self.settings.threads):
            logs = {column: pipeline.predict(X) for column, pipeline in self.pipelines.items()}
        if self.interval:
            low, high = np.minimum(logs["p10_s"], logs["p90_s"]), np.maximum(logs["p10_s"], logs["p90_s"])
            logs["p10_s"], logs["p90_s"] = low - np.asarray(lower), high + np.asarray(upper)
            if "p50_s" in logs:
                logs["p10_s"] = np.minimum(logs["p10_s"], logs["p50_s"])
                logs["p90_s"] = np.maximum(logs["p90_s"], logs["p50_s"])
        seconds = np.maximum(np.exp(np.column_stack([logs[c] for c in self.outputs])), MIN_RUNTIME_S)
        if self.settings.clip_to_request:
            request = np.exp(X["log_request_s"].to_numpy(dtype=np.float64))[:, None]
            capped = np.minimum(seconds, np.maximum(request, MIN_RUNTIME_S))
            seconds = np.where(np.isfinite(request), capped, seconds)
        return pd.DataFrame(seconds, columns=list(self.outputs), index=X.index)

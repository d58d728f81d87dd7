"""Runtime quantiles: P10, P50 and P90 of a job's runtime in seconds, from submit-time features.

One scikit-learn Pipeline per quantile: the categorical encoder (engine/predict/encoding.py) then a
HistGradientBoostingRegressor with the pinball (quantile) loss on ln(runtime), runtimes floored at
1 s. A quantile of ln(runtime) is the ln of the runtime's quantile, so exponentiating gives
seconds. Fixed iterations, no early stopping and no subsampling: the same rows and seed give the
same model. The three quantiles are fitted independently and then sorted per job so that
P10 <= P50 <= P90 always holds.

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

from engine.predict.encoding import categorical_mask, encoder
from engine.predict.features import CATEGORICAL, MIN_RUNTIME_S
from engine.predict.threads import openmp_threads

QUANTILE_COLUMNS = {0.1: "p10_s", 0.5: "p50_s", 0.9: "p90_s"}


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
    """P10/P50/P90 runtime predictor; `fit` on feature rows and runtimes, then `predict`."""

    def __init__(self, settings: RuntimeSettings = RuntimeSettings()):
        self.settings = settings
        self.pipelines = {q: quantile_pipeline(q, settings) for q in QUANTILE_COLUMNS}

    def fit(self, X: pd.DataFrame, runtime_s: np.ndarray) -> "RuntimeModel":
        """`X`: rows of `features.features`; `runtime_s`: their runtimes (all known)."""
        target = np.log(np.maximum(np.asarray(runtime_s, dtype=np.float64), MIN_RUNTIME_S))
        with openmp_threads(self.settings.threads):
            for pipeline in self.pipelines.values():
                pipeline.fit(X, target)
        return self

    def predict(self, X: pd.DataFrame) -> pd.DataFrame:
        """Columns p10_s, p50_s, p90_s (seconds), index of `X`."""
        with openmp_threads(self.settings.threads):
            logs = np.sort(np.column_stack([p.predict(X) for p in self.pipelines.values()]), axis=1)
        seconds = np.maximum(np.exp(logs), MIN_RUNTIME_S)
        if self.settings.clip_to_request:
            request = np.exp(X["log_request_s"].to_numpy(dtype=np.float64))[:, None]
            capped = np.minimum(seconds, np.maximum(request, MIN_RUNTIME_S))
            seconds = np.where(np.isfinite(request), capped, seconds)
        return pd.DataFrame(seconds, columns=list(QUANTILE_COLUMNS.values()), index=X.index)

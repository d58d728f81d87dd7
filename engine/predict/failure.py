"""Failure probability: how likely a job is to fail or be cancelled, from submit-time features.

A scikit-learn Pipeline (the categorical encoder of engine/predict/encoding.py, then a
HistGradientBoostingClassifier) is fitted on the older part of the training rows, and its scores
are calibrated on the newest part (`calibration_share`, in submit order: time-ordered, never
shuffled) by `CalibratedClassifierCV` around the frozen classifier. `method` is "sigmoid" (Platt
scaling) by default: on CTC-SP2's test part it gave a Brier score of 0.1449 against isotonic
regression's 0.1461 (PR-AUC 0.442 against 0.418), and it cannot overfit a small calibration set
into steps; on the synthetic sample isotonic was 0.0003 better (benchmarks/RESULTS.md). Fixed
iterations, no early stopping: the same rows and seed give the same probabilities.

The trees see teams, classes and queues as categoricals but not the user's own code, with a
lower learning rate than the runtime model (0.05, 100 iterations): failures are noisier than
runtimes and user codes overfit them. On CTC-SP2 (uncalibrated, fitted on the whole training
part) the user code and 200 iterations at 0.1 gave a test ROC-AUC of 0.70; without the code, at
0.05, and with `user_last_failed`, 0.74. The user's history features carry what is known of them.

A label is 1 when the job's status is failed or cancelled (`features.FAILED_STATUSES`). When the
training rows hold a single class the model predicts that class's rate (0 or 1) for every job.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import Pipeline

from engine.predict.encoding import categorical_mask, encoder
from engine.predict.threads import openmp_threads


@dataclass(frozen=True)
class FailureSettings:
    """How the failure model is fitted and calibrated."""

    max_iter: int = field(default=100, metadata={"help": "boosting iterations"})
    learning_rate: float = field(default=0.05, metadata={"help": "shrinkage of each tree"})
    max_leaf_nodes: int = field(default=31, metadata={"help": "leaves per tree"})
    categorical: tuple[str, ...] = field(default=("team", "workload_class", "queue"),
                                         metadata={"help": "categorical features the trees see"})
    min_jobs: int = field(default=20, metadata={
        "help": "training jobs a user (team, queue) needs for its own code; rarer ones are pooled"})
    method: str = field(default="sigmoid", metadata={"help": "calibration: 'sigmoid' (Platt) or 'isotonic'"})
    calibration_share: float = field(default=0.2, metadata={
        "help": "newest share of the training rows held out to calibrate on"})
    seed: int = field(default=0, metadata={"help": "random_state of the boosting"})
    threads: int = field(default=1, metadata={
        "help": "OpenMP threads while fitting and predicting (engine/predict/threads.py)"})


def classifier_pipeline(settings: FailureSettings) -> Pipeline:
    """Encoder + gradient-boosted classifier (uncalibrated scores)."""
    booster = HistGradientBoostingClassifier(
        max_iter=settings.max_iter, learning_rate=settings.learning_rate,
        max_leaf_nodes=settings.max_leaf_nodes, categorical_features=categorical_mask(settings.categorical),
        early_stopping=False, random_state=settings.seed)
    return Pipeline([("encode", encoder(settings.categorical, settings.min_jobs)), ("boost", booster)])


class FailureModel:
    """Calibrated P(fail or cancel); `fit` on feature rows in submit order, then `predict`."""

    def __init__(self, settings: FailureSettings = FailureSettings()):
        self.settings = settings
        self.calibrated: CalibratedClassifierCV | None = None
        self.constant: float | None = None

    def fit(self, X: pd.DataFrame, failed: np.ndarray) -> "FailureModel":
        """`X`: rows of `features.features` in submit order; `failed`: their labels."""
        failed = np.asarray(failed, dtype=bool)
        split = int(round(len(failed) * (1.0 - self.settings.calibration_share)))
        if len(np.unique(failed[:split])) < 2 or len(np.unique(failed[split:])) < 2:
            self.constant, self.calibrated = float(failed.mean()) if len(failed) else 0.0, None
            return self
        with openmp_threads(self.settings.threads):
            base = classifier_pipeline(self.settings).fit(X.iloc[:split], failed[:split])
            self.calibrated = CalibratedClassifierCV(FrozenEstimator(base), method=self.settings.method)
            self.calibrated.fit(X.iloc[split:], failed[split:])
        self.constant = None
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Probability (0-1) that each job fails or is cancelled."""
        if self.calibrated is None:
            return np.full(len(X), self.constant)
        with openmp_threads(self.settings.threads):
            return self.calibrated.predict_proba(X)[:, 1]

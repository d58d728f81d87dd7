"""Permutation feature importance of the predictors, measured on the future.

What each submit-time feature (engine/predict/features.py) is worth to a model: the columns of a
sample of the test rows are shuffled one at a time (`repeats` times each) and the model's score
drops by the importance (sklearn.inspection.permutation_importance). The model is the one the
evaluation fitted on the training part of the time-ordered split and scored
(engine/predict/evaluate.py `runtime_evaluation`, `failure_evaluation`), so the figures belong to
that model and are measured on jobs it never saw; importance measured on the training rows would
reward what the model overfits.

- Runtime: the P50 pipeline on ln(runtime) scored by mean absolute error, so a feature's
  importance is the increase of the P50's mean absolute log error (MALE, engine/predict/metrics.py)
  when the feature is shuffled: 0 = unused, 0.1 = the P50 is exp(0.1) = 1.105x further off.
- Failure: the failure model scored by ROC-AUC, so the importance is the drop in ROC-AUC.
  Undefined (no features listed, a `note` says why) when the training rows or the test
  sample hold a single class.

The shuffling is done on the encoded columns (the pipeline's encoder applied once, then the
booster scored on each shuffle), which is the same as shuffling the raw columns, since the encoder
maps each row on its own, and spares the encoder's fixed cost on every one of the
features x `repeats` predictions. For the failure model the booster is scored without its
calibration: ROC-AUC depends only on the order of the scores, and calibration keeps it (Platt's
sigmoid is increasing for any model that ranks better than chance; an isotonic map is
non-decreasing), so the figures are the calibrated model's, up to the ties an isotonic map makes.

Both functions return {"score": "male" or "roc_auc", "rows": the sample's size, "repeats",
"baseline": the unshuffled score on the sample (None when undefined), "features": [{"feature",
"mean", "std"}, ...] (the importance over the repeats), and "note" when it is undefined}.

The test sample is at most `rows` jobs drawn without replacement by a generator seeded with `seed`;
everything is deterministic. Only the features the model sees are listed (the failure model drops
the user's own code, engine/predict/failure.py), sorted by importance, largest first.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.inspection import permutation_importance

from engine.predict.failure import FailureModel
from engine.predict.features import COLUMNS, MIN_RUNTIME_S, NUMERIC
from engine.predict.metrics import failure_metrics
from engine.predict.runtime import RuntimeModel
from engine.predict.threads import openmp_threads

SAMPLE_ROWS = 5000
REPEATS = 5


def runtime_importance(model: RuntimeModel, X_test: pd.DataFrame, run_test: np.ndarray, rows: int = SAMPLE_ROWS,
                       repeats: int = REPEATS) -> dict:
    """Increase of the P50's MALE per shuffled feature: {"score", "rows", "repeats", "baseline", "features"}."""
    settings = model.settings
    sample = _sample(len(X_test), rows, settings.seed)
    y = _log(run_test[sample])
    pipeline = model.pipelines["p50_s"]
    with openmp_threads(settings.threads):
        encoded, booster = pipeline[:-1].transform(X_test.iloc[sample]), pipeline[-1]
        result = permutation_importance(booster, encoded, y, scoring="neg_mean_absolute_error",
                                        n_repeats=repeats, random_state=settings.seed)
        baseline = float(np.mean(np.abs(booster.predict(encoded) - y)))
    return {"score": "male", "rows": int(len(sample)), "repeats": repeats, "baseline": baseline,
            "features": _ranked(settings.categorical, result)}


def failure_importance(model: FailureModel, X_test: pd.DataFrame, failed_test: np.ndarray, rows: int = SAMPLE_ROWS,
                       repeats: int = REPEATS) -> dict:
    """Drop of ROC-AUC per shuffled feature: {"score", "rows", "repeats", "baseline", "features"[, "note"]}."""
    settings = model.settings
    sample = _sample(len(X_test), rows, settings.seed)
    y = np.asarray(failed_test, dtype=bool)[sample]
    out = {"score": "roc_auc", "rows": int(len(sample)), "repeats": repeats, "baseline": None, "features": []}
    if model.calibrated is None:
        return {**out, "note": "the training part holds a single class: the model is a constant"}
    if len(np.unique(y)) < 2:
        return {**out, "note": "the test sample holds a single class: ROC-AUC is undefined"}
    pipeline = model.calibrated.estimator.estimator   # CalibratedClassifierCV(FrozenEstimator(pipeline))
    with openmp_threads(settings.threads):
        encoded, booster = pipeline[:-1].transform(X_test.iloc[sample]), pipeline[-1]
        result = permutation_importance(booster, encoded, y, scoring="roc_auc",
                                        n_repeats=repeats, random_state=settings.seed)
        baseline = failure_metrics(y, booster.predict_proba(encoded)[:, 1])["roc_auc"]
    return {**out, "baseline": baseline, "features": _ranked(settings.categorical, result)}


def _log(run_s: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(run_s, dtype=np.float64), MIN_RUNTIME_S))


def _sample(n: int, rows: int, seed: int) -> np.ndarray:
    """At most `rows` of range(n), drawn without replacement, in ascending order."""
    if n <= rows:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=rows, replace=False))


def _ranked(categorical: tuple[str, ...], result) -> list[dict]:
    """[{"feature", "mean", "std"}] per encoder output (`categorical`, then NUMERIC: engine/predict/encoding.py),
    largest mean first, ties in `features.COLUMNS` order."""
    names = list(categorical) + list(NUMERIC)
    order = sorted(range(len(names)), key=lambda i: (-result.importances_mean[i], COLUMNS.index(names[i])))
    return [{"feature": names[i], "mean": float(result.importances_mean[i]),
             "std": float(result.importances_std[i])} for i in order]

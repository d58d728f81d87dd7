"""Quantile regressors for a target the caller prepares (the ETA's learned wait correction uses them
on ln(remaining wait + 60 s)): one scikit-learn HistGradientBoostingRegressor per quantile, fitted and
applied on one OpenMP thread so that a replay's worker processes do not oversubscribe the cores."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

from engine.predict.threads import openmp_threads


def fit_quantiles(X: pd.DataFrame, y: np.ndarray, quantiles: tuple[float, ...], seed: int = 0) -> tuple:
    """One fitted model per quantile, in the order given."""
    with openmp_threads(1):
        return tuple(HistGradientBoostingRegressor(
            loss="quantile", quantile=q, max_iter=100, max_leaf_nodes=15, min_samples_leaf=40,
            early_stopping=False, random_state=seed).fit(X, y) for q in quantiles)


def predict_quantiles(models: tuple, X: pd.DataFrame) -> np.ndarray:
    """(rows, quantiles) predictions, each row sorted so that the quantiles never cross."""
    with openmp_threads(1):
        return np.sort(np.column_stack([m.predict(X) for m in models]), axis=1)

"""The front of every predictor's pipeline: categorical codes learned at fit time only.

The chosen categorical columns (users, teams, classes, queues) become ordinal codes for
HistGradientBoosting's native categorical splits; the rest of `features.COLUMNS` passes through
as numbers. Codes come from the training rows alone: a category seen fewer than `min_jobs` times
there is pooled with the other rare ones into one code, so is any beyond the 250 most frequent
(HistGradientBoosting allows at most 255 bins), and a category first seen at prediction time is
missing (NaN), which the trees send down their learned default side. Categorical columns not
chosen are dropped. A numeric feature with no value at all in the training rows (a log without
memory requests, say) is given 0 everywhere (`EmptyAsZero`): the trees cannot split on it either way,
and scikit-learn 1.9's binning fails on an all-missing column.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OrdinalEncoder

from engine.predict.features import CATEGORICAL, NUMERIC

MAX_CATEGORIES = 250


def encoder(categorical: tuple[str, ...], min_jobs: int) -> ColumnTransformer:
    """`categorical` first (as codes), then `features.NUMERIC`, in that order."""
    unknown = set(categorical) - set(CATEGORICAL)
    if unknown:
        raise ValueError(f"not categorical features: {sorted(unknown)}; choose from {CATEGORICAL}")
    codes = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=np.nan,
                           min_frequency=min_jobs, max_categories=MAX_CATEGORIES)
    return ColumnTransformer([("codes", codes, list(categorical)), ("numbers", EmptyAsZero(), list(NUMERIC))])


class EmptyAsZero(TransformerMixin, BaseEstimator):
    """Numbers as they are, but a column with no value in the fitted rows becomes 0 (see the docstring)."""

    def fit(self, X, y=None):
        self.empty_ = np.isnan(np.asarray(X, dtype=np.float64)).all(axis=0)
        return self

    def transform(self, X):
        out = np.asarray(X, dtype=np.float64).copy()
        out[:, self.empty_] = 0.0
        return out


def categorical_mask(categorical: tuple[str, ...]) -> list[bool]:
    """Which encoder outputs HistGradientBoosting should treat as categorical."""
    return [True] * len(categorical) + [False] * len(NUMERIC)

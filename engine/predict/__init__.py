"""Predictors learned from job history: runtime quantiles and the probability of failure.

Everything here uses only what is known when a job is submitted (`features.features`), so the
same function builds the training rows and the rows of a job to predict. Models are
scikit-learn pipelines (HistGradientBoosting), seeded and deterministic; `evaluate` scores them
on a time-ordered split (train on the past, test on the future) against simple baselines.

Modules:
- `history`: per user, what had *finished* before each submit (last runtimes, failure rate).
- `features`: the submit-time feature table, one row per job.
- `runtime`: P10/P50/P90 runtime (seconds) by quantile gradient boosting on log runtime.
- `failure`: calibrated probability that a job fails or is cancelled.
- `metrics`: runtime and probability metrics, the calibration table.
- `evaluate`: the time-ordered split and the model-vs-baseline reports.

This is the only package allowed to import scikit-learn (tests/test_layering.py).
"""

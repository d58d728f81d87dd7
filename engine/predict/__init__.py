"""Predictors learned from job history: runtime quantiles and the probability of failure.

Everything here uses only what is known when a job is submitted (`features.features`), so the
same function builds the training rows and the rows of a job to predict. Models are
scikit-learn pipelines (HistGradientBoosting), seeded and deterministic; `evaluate` scores them
on a time-ordered split (train on the past, test on the future) against simple baselines.

Modules:
- `history`: per user, what had *finished* before each submit (last runtimes, failure rate).
- `features`: the submit-time feature table, one row per job.
- `encoding`: categorical codes learned at fit time (the front of every pipeline).
- `runtime`: P10/P50/P90 runtime (seconds) by quantile gradient boosting on log runtime.
- `failure`: calibrated probability that a job fails or is cancelled.
- `baselines`: the user's request, the last-two mean, the base rate, the user's recent rate.
- `metrics`: runtime and probability metrics, the calibration table.
- `evaluate`: the time-ordered split and the model-vs-baseline reports.
- `threads`: the OpenMP thread cap the models fit and predict under.
- `registry`: trained models versioned per dataset, stored beside the database (the lifecycle).
- `class_features`, `classify`: the workload class of a log without labels, learned on a labelled one.
- `gpu_need`: the GPUs a job will use (its peak share of its request), predicted at submit from utilisation telemetry.
- `importance`: permutation importance of each model's features on the time split.
- `runtime_source`, `failure_source`: predictions handed to a scenario's scheduler.
- `eta`, `eta_backtest`: a queued job's predicted start interval, and its backtested coverage.
- `cli`: `meridian predict train|models|show|job|forget`.

This is the only package allowed to import scikit-learn (tests/test_layering.py).
"""

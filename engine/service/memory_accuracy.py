"""How well the memory-need model (engine.predict.gpu_need.NeedModel, resource "memory") predicts at submit
the host memory a job will use, on held-out later jobs (issue 27, item 4).

Split: the predictors' time-ordered 70/30 split (engine.predict.evaluate.TimeSplit): the model learns from
the jobs measured for memory (`memory_used_gib_max`) that had ended by the cutoff; the test jobs are the
later jobs that ran, ended and were measured. Per safety margin m, each test job is given
g = min(request, ceil(need x (1 + m / 100))) GiB, as [rightsize] memory = true gives it
(engine.predict.size_source), by three predictors:
- model: the model's need at `settings.quantile` of the used share;
- user_last: the used share of the user's most recently finished measured job x the request (the
  request when the user has none), a rule a scheduler could apply without a model;
- request: the request itself (nothing saved, nothing risked).
For each: `covered` (share of test jobs whose peak <= g: they would not run out of memory),
`saved_share` (1 - sum g / sum request over the test jobs), `pinball` (the mean quantile loss of the
predicted share at the model's quantile, before the margin; lower is better) and `mae_gib` (mean
|need - peak|, GiB).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from engine.core.sizing import memory_gib
from engine.predict.evaluate import TRAIN_SHARE, TimeSplit
from engine.predict.features import zones_of
from engine.predict.gpu_need import NeedModel, NeedSettings, need_features, used_share

MARGINS = (0.0, 10.0, 25.0)


def memory_need_accuracy(jobs: pd.DataFrame, regions: pd.DataFrame | None = None,
                         settings: NeedSettings = NeedSettings(), train_share: float = TRAIN_SHARE,
                         margins: tuple[float, ...] = MARGINS) -> dict:
    """The module docstring's figures as a JSON-ready dict: cutoff_utc, quantile, jobs_train, jobs_test and
    per predictor and margin {covered, saved_share, pinball, mae_gib}."""
    tz = zones_of(regions)
    split = TimeSplit.of(jobs, train_share)
    share = used_share(jobs, "memory")
    ran = pd.to_datetime(jobs["start_utc"]).notna().to_numpy() & pd.to_datetime(jobs["end_utc"]).notna().to_numpy()
    test = split.test & ran & np.isfinite(share)
    model = NeedModel(settings, "memory").fit(jobs, tz, split.train)
    asked = pd.to_numeric(jobs["memory_gib"], errors="coerce").to_numpy(np.float64)[test]
    peak = pd.to_numeric(jobs["memory_used_gib_max"], errors="coerce").to_numpy(np.float64)[test]
    last = need_features(jobs, tz, "memory")["user_used_last"].to_numpy(np.float64)[test]
    shares = {"model": model.predict(jobs, tz, test) / np.where(asked > 0, asked, np.nan),
              "user_last": np.where(np.isfinite(last), last, 1.0), "request": np.ones(len(asked))}
    out = {"cutoff_utc": split.cutoff_utc, "quantile": settings.quantile,
           "jobs_train": int((split.train & np.isfinite(share)).sum()), "jobs_test": int(test.sum())}
    for name, predicted in shares.items():
        predicted = np.nan_to_num(predicted, nan=1.0)
        out[name] = {f"margin_{m:g}": _scored(predicted, share[test], asked, peak, m, settings.quantile)
                     for m in margins}
    return out


def _scored(predicted: np.ndarray, actual: np.ndarray, asked: np.ndarray, peak: np.ndarray, margin: float,
            quantile: float) -> dict:
    given = np.minimum(asked, memory_gib(predicted * asked, margin))
    error = actual - predicted
    return {"covered": float((peak <= given + 1e-9).mean()), "saved_share": float(1.0 - given.sum() / asked.sum()),
            "pinball": float(np.maximum(quantile * error, (quantile - 1.0) * error).mean()),
            "mae_gib": float(np.abs(predicted * asked - peak).mean())}

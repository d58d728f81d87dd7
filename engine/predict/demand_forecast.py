"""A seasonal forecast of GPU demand per hour of the week, and its error on held-out weeks.

Demand. For a set of jobs (one region's jobs of one GPU type, say), the demand of UTC hour
[h, h + 1 h) is the time-average over the hour of the GPUs requested by jobs waiting or running in
it: sum over jobs of gpus x overlap([submit, end), [h, h + 1 h)) / 3600 s. A job still running at
the history's end (no end) counts to the end.

Forecast. The demand of hour h is forecast from the same hour of the week in the `weeks` whole weeks
before the forecast starts (h - 168 k hours, k = 1..weeks): their `quantile` (0.5: the median; higher
quantiles leave headroom). The seasonal-naive baseline is the same hour one week before (weeks = 1).

Error. `backtest` holds out each whole week after the first `weeks` of a series, forecasts it from
the weeks before it alone, and reports over all held-out hours
  MAE  = mean |forecast - actual| (GPUs)
  MAPE = 100 x sum |forecast - actual| / sum actual (%; a weighted MAPE, defined when a held-out hour
         has no demand)
for the forecast and for the seasonal-naive baseline on the same hours.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.core.intervals import integrate

WEEK_H = 168
HOUR = pd.Timedelta(hours=1)


def hourly_demand(jobs: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> np.ndarray:
    """GPUs waiting or running per UTC hour from `start` (an hour boundary) to `end`: one value per
    hour (see the module docstring), integrated exactly by engine.core.intervals (the Time zones
    page's demand, busy + queued, is the same integral). `jobs`: submit_utc, end_utc (NaT: still
    running) and gpus."""
    hours = max(int(np.ceil((end - start) / HOUR)), 0)
    if not hours or not len(jobs):
        return np.zeros(hours)
    submit = (pd.to_datetime(jobs["submit_utc"]) - start) / HOUR
    finish = (pd.to_datetime(jobs["end_utc"]).fillna(end) - start) / HOUR
    return integrate(submit.to_numpy(np.float64), np.maximum(finish, submit).to_numpy(np.float64),
                     jobs["gpus"].to_numpy(np.float64), np.arange(hours + 1, dtype=np.float64))


def seasonal_forecast(history: np.ndarray, horizon: int, weeks: int, quantile: float) -> np.ndarray:
    """The next `horizon` hours after `history` (hourly demand whose last value is the hour just
    before the forecast), each the `quantile` of the same hour of the week over the last `weeks`
    whole weeks of history (fewer when the history is shorter; at least one whole week needed)."""
    usable = min(weeks, len(history) // WEEK_H)
    if usable < 1:
        raise ValueError(f"a seasonal forecast needs at least one week ({WEEK_H} hours) of history, "
                         f"got {len(history)} hours")
    recent = history[len(history) - usable * WEEK_H:].reshape(usable, WEEK_H)
    profile = np.quantile(recent, quantile, axis=0)
    return np.resize(profile, horizon)


@dataclass(frozen=True)
class ForecastError:
    """A forecast's error on held-out weeks beside the seasonal-naive baseline's (module docstring)."""

    held_out_weeks: int
    mae_gpus: float
    mape_pct: float
    naive_mae_gpus: float
    naive_mape_pct: float


def _errors(forecast: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    gap = np.abs(forecast - actual)
    total = float(actual.sum())
    return float(gap.mean()), (100.0 * float(gap.sum()) / total if total > 0 else float("nan"))


def backtest(series: np.ndarray, weeks: int, quantile: float) -> ForecastError | None:
    """Every whole week after the first `weeks` held out in turn and forecast from the weeks before
    it; None when the series has no week to hold out."""
    whole = len(series) // WEEK_H
    if whole <= weeks:
        return None
    forecasts, naives, actuals = [], [], []
    for week in range(weeks, whole):
        before = series[:week * WEEK_H]
        forecasts.append(seasonal_forecast(before, WEEK_H, weeks, quantile))
        naives.append(seasonal_forecast(before, WEEK_H, 1, 0.5))
        actuals.append(series[week * WEEK_H:(week + 1) * WEEK_H])
    actual = np.concatenate(actuals)
    mae, mape = _errors(np.concatenate(forecasts), actual)
    naive_mae, naive_mape = _errors(np.concatenate(naives), actual)
    return ForecastError(whole - weeks, mae, mape, naive_mae, naive_mape)

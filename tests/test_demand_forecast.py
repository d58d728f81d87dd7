"""The seasonal demand forecast (engine.predict.demand_forecast): demand per hour from jobs, the
forecast, and its error on held-out weeks of a synthetic seasonal series, worked out by hand."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.predict.demand_forecast import WEEK_H, backtest, hourly_demand, seasonal_forecast

S = pd.Timestamp("2026-01-05")


def test_demand_is_the_hour_average_of_gpus_waiting_or_running():
    jobs = pd.DataFrame({"submit_utc": [S + pd.Timedelta(minutes=30), S - pd.Timedelta(hours=5)],
                         "end_utc": [S + pd.Timedelta(hours=2, minutes=15), pd.NaT], "gpus": [8, 2]})
    # hour 0: 8 GPUs for half of it + 2 all of it; hour 2: 8 for a quarter + 2; the unfinished job to the end
    assert hourly_demand(jobs, S, S + pd.Timedelta(hours=4)).tolist() == [6.0, 10.0, 4.0, 2.0]


def _seasonal(weeks: int, swing: float) -> np.ndarray:
    """A weekly profile 10 + h % 24, plus `swing` on even weeks and minus it on odd ones."""
    profile = 10.0 + np.arange(WEEK_H) % 24
    return np.concatenate([profile + (swing if k % 2 == 0 else -swing) for k in range(weeks)])


def test_the_median_of_four_weeks_halves_the_seasonal_naive_error_on_an_alternating_series():
    series = _seasonal(8, 3.0)
    error = backtest(series, weeks=4, quantile=0.5)
    # the median of p-3, p+3, p-3, p+3 is p: off by 3 every hour; last week's value is off by 6
    assert error.held_out_weeks == 4
    assert error.mae_gpus == pytest.approx(3.0) and error.naive_mae_gpus == pytest.approx(6.0)
    actual = series[4 * WEEK_H:]
    assert error.mape_pct == pytest.approx(100 * 3.0 * len(actual) / actual.sum())
    assert error.naive_mape_pct == pytest.approx(2 * error.mape_pct)


def test_a_quantile_above_the_median_leaves_headroom():
    series = _seasonal(4, 3.0)
    forecast = seasonal_forecast(series, 2 * WEEK_H, weeks=4, quantile=1.0)
    assert np.allclose(forecast, np.tile(10.0 + np.arange(WEEK_H) % 24 + 3.0, 2))


def test_a_forecast_needs_a_whole_week_and_a_backtest_a_week_to_hold_out():
    with pytest.raises(ValueError, match="at least one week"):
        seasonal_forecast(np.ones(WEEK_H - 1), 24, weeks=4, quantile=0.5)
    assert backtest(np.ones(2 * WEEK_H), weeks=2, quantile=0.5) is None


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 1e4), min_size=WEEK_H, max_size=WEEK_H), st.integers(1, 5), st.integers(1, 6),
       st.floats(0, 1))
def test_a_week_repeated_is_forecast_exactly_whatever_the_weeks_and_quantile(week, repeats, weeks, quantile):
    series = np.tile(np.asarray(week), repeats)
    assert np.allclose(seasonal_forecast(series, WEEK_H + 5, weeks, quantile), np.resize(week, WEEK_H + 5))

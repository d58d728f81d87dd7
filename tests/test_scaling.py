"""Predictive-scaling suggestions from the hourly table: hand-built days with a queue every morning
in one region and idle nights in another."""
import numpy as np
import pandas as pd

from engine.analysis.telemetry.scaling import COLUMNS, suggestions


def _hourly(region, days, queued, idle, offset=0):
    """`days` days of 24 UTC hours; queued/idle: functions of (day, local hour) -> GPUs."""
    bins = pd.date_range("2026-08-03", periods=24 * days, freq="h")
    local = (bins.hour + offset) % 24
    day = np.arange(len(bins)) // 24
    return pd.DataFrame({"region": region, "bin_start_utc": bins, "capacity_gpus": 64.0,
                         "queued_gpu_hours": [queued(d, h) for d, h in zip(day, local)],
                         "idle_gpu_hours": [idle(d, h) for d, h in zip(day, local)], "local_hour": local})


def test_a_morning_queue_on_most_days_asks_for_more_gpus_and_idle_nights_for_fewer():
    # "a" (UTC+2): 20 GPUs queued 09:00-12:00 local on 5 of 6 days; "b": 30 GPUs idle 00:00-03:00 every night,
    # with a queue at other hours
    a = _hourly("a", 6, lambda d, h: 20.0 if 9 <= h < 12 and d != 3 else 0.0, lambda d, h: 0.0, offset=2)
    b = _hourly("b", 6, lambda d, h: 0.0 if h < 3 else 5.0, lambda d, h: 30.0 if h < 3 else 0.0)
    table = suggestions(pd.concat([a, b], ignore_index=True))
    assert list(table.columns) == COLUMNS
    rows = table.set_index(["region", "action"])
    assert rows.loc[("a", "add"), ["local_start_hour", "local_end_hour", "gpus", "gpu_hours_per_day"]].tolist() \
        == [9, 12, 20.0, 60.0]
    assert rows.loc[("a", "add"), "days_share"] == 5 / 6
    assert rows.loc[("b", "release"), ["local_start_hour", "local_end_hour", "gpus"]].tolist() == [0, 3, 30.0]
    assert ("a", "release") not in rows.index and ("b", "add") in rows.index   # b's queue runs 03:00-24:00
    assert "about 20 more GPUs 09:00-12:00 local" in rows.loc[("a", "add"), "sentence"]


def test_too_few_days_or_no_data_suggest_nothing():
    two_days = _hourly("a", 2, lambda d, h: 10.0, lambda d, h: 0.0)
    assert suggestions(two_days).empty
    assert suggestions(two_days.iloc[0:0]).empty
